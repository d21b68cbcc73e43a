# Word marks: HF BPE's continuing_subword_prefix / end_of_word_suffix in the byte-level kernel.
#
# HF's BPE starts a word's symbols as its characters, the first one as is and the others
# with the prefix, the last one with the suffix ("low" with "</w>": l, o, w</w>), then merges
# by rank.  The kernel says the same with two bytes UTF-8 never holds: a piece is merged as
# START + bytes + END, where START and END are single-byte tokens of their own (ids after
# the vocabulary's) and the lowest-ranked merges are (START, ##c) -> c and (c, END) -> c</w>
# (hf/word_affixes.py builds the table).  Those merges run first, so the merge loop then
# holds exactly HF's first symbols and goes on by the file's ranks.
from libc.stdint cimport int32_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from fastbpe._merge cimport MergeTables, merge_known_bytes, merge_piece
from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport IdBuf, Work, idbuf_free, idbuf_reserve, work_free, work_reserve

cdef enum:
    START_MARK = 0xF8        # before a piece (a file with continuing_subword_prefix)
    END_MARK = 0xF9          # after it (end_of_word_suffix)
    MARK_START = 1           # BPETable.word_marks bits
    MARK_END = 2


cdef inline int merge_marked(const MergeTables* t, int marks, bint partial, const uint8_t* p,
                             Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil:
    """Append the ids of piece p[:n] merged between its marks (partial: some bytes have no
    token and are skipped, as merge_known_bytes)."""
    cdef uint8_t small[64]
    cdef uint8_t* q = small
    cdef Py_ssize_t m = 0
    if n + 2 > 64:
        q = <uint8_t*>malloc(n + 2)
        if q == NULL:
            with gil:
                raise MemoryError()
    if marks & MARK_START:
        q[0] = START_MARK
        m = 1
    memcpy(q + m, p, <size_t>n)
    m += n
    if marks & MARK_END:
        q[m] = END_MARK
        m += 1
    try:
        work_reserve(w, m)
        idbuf_reserve(out, m)
        if m == 1:
            if t.byte_id[q[0]] >= 0:
                out.data[out.len] = <tok_t>t.byte_id[q[0]]
                out.len += 1
        elif partial:
            merge_known_bytes(t, q, m, out, w)
        else:
            merge_piece(t, q, m, out, w)
    finally:
        if q != small:
            free(q)
    return 0


cdef inline int marked_byte_ids(const MergeTables* t, int marks, bint partial, int32_t* ids) except -1:
    """ids[b]: the id of the one-byte piece b (-1: none, or more than one): its byte's token,
    or b merged between the marks."""
    cdef IdBuf out
    cdef Work w
    cdef int b
    cdef uint8_t byte
    memcpy(ids, t.byte_id, 256 * sizeof(int32_t))
    if not marks:
        return 0
    memset(&out, 0, sizeof(IdBuf))
    memset(&w, 0, sizeof(Work))
    try:
        for b in range(256):
            byte = <uint8_t>b
            out.len = 0
            merge_marked(t, marks, partial, &byte, 1, &out, &w)
            ids[b] = <int32_t>out.data[0] if out.len == 1 else -1
    finally:
        idbuf_free(&out)
        work_free(&w)
    return 0
