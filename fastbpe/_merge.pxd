# The two merge loops of the encode kernel (_merge.pyx): lowest rank first, leftmost on ties.
from libc.stdint cimport uint8_t, int32_t, uint64_t

from fastbpe._vocab cimport PairTable
from fastbpe._workspace cimport IdBuf, SmallPart, Work

cdef enum:
    SCAN_PIECE = 48          # merge_piece: pieces of up to this many bytes (parts) scan, longer ones heap


cdef struct MergeTables:             # what a merge reads, borrowed from a BPETable
    const PairTable* pairs
    const uint64_t* byte_pairs       # [256*256] (rank << 32 | new id) of two single-byte parts
    const int32_t* byte_id           # [256] the token of each byte
    const int32_t* char_tokens       # _vocab.build_char_tokens: where a merge may start from a
                                     # 2- or 3-byte character's token; NULL: always from bytes


# Both append the ids of p[:n] (n >= 2) to out; the caller has made room for n more ids
# (idbuf_reserve) and n parts (work_reserve).  They give identical ids on every input.
cdef void merge_scan(const MergeTables* t, const uint8_t* p, Py_ssize_t n, IdBuf* out,
                     Work* w) noexcept nogil
cdef void merge_heap(const MergeTables* t, const uint8_t* p, Py_ssize_t n, IdBuf* out,
                     Work* w) noexcept nogil
# merge_scan for short pieces (SCAN_PIECE bytes), else merge_heap
cdef void merge_piece(const MergeTables* t, const uint8_t* p, Py_ssize_t n, IdBuf* out,
                      Work* w) noexcept nogil
# merge_heap's sort of the candidates that merges made (declared for _testing's hook)
cdef void sort_pile(uint64_t* keys, uint64_t* tmp, Py_ssize_t n) noexcept nogil
# merge_piece of p without the bytes that have no single-byte token (none, or one left: as
# HF skips characters its vocabulary lacks); the same room as merge_piece
cdef int merge_known_bytes(const MergeTables* t, const uint8_t* p, Py_ssize_t n, IdBuf* out,
                           Work* w) except -1 nogil
# merge m >= 1 first parts given as ids (parts[0..m).id set; room for m more ids in out and m
# parts in w): the same loops, for models whose first parts are not bytes (_char_bpe)
cdef void merge_parts(const PairTable* pairs, SmallPart* parts, Py_ssize_t m, IdBuf* out,
                      Work* w) noexcept nogil
# merge_parts of m >= 1 parts whose pairs are set too (parts[i].pair for i < m - 1; room for
# m + 3 parts): the scan asks new pairs through w.pair_memo when w has one (_pair_memo)
cdef void merge_paired_parts(const PairTable* pairs, SmallPart* parts, Py_ssize_t m, IdBuf* out,
                             Work* w) noexcept nogil
