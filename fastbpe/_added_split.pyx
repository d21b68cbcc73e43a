# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Texts cut at their added tokens and encoded, in one GIL-free call.

A tokenizer.json's added tokens are cut out of a text before the rest is encoded.  When they
occur everywhere (Phi-2's and CodeGen's runs of spaces are added tokens) a text holds hundreds
of them, and cutting in Python (a tuple per piece, a str per segment, a list of lists to
stitch) cost several times the kernel's own work.  Here the automaton (`_token_trie`) finds
them in the str's code units and each segment between two is scanned and merged straight from
the text's UTF-8 (`BPETable.encode_utf8`), its ids appended to one list per text.

HF's order is kept: the raw (not normalized) tokens are found in the whole text first,
leftmost-longest; the normalized ones then inside each stretch between two raw ones.  Only
tokens without lstrip / rstrip / single_word come here, and no normalizer (the caller checks:
`AddedVocabulary.plain_matching`); a text is its own piece boundary, as HF cuts it."""
from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE

from fastbpe._core cimport BPETable, thread_cache
from fastbpe._id_output cimport idbuf_to_list
from fastbpe._piece_cache cimport PieceCache
from fastbpe._str_units cimport code_point
from fastbpe._token_trie cimport TokenTrie
from fastbpe._utf8 cimport (Utf8Text, utf8_text_check, utf8_text_close, utf8_text_convert, utf8_text_open,
                            utf8_texts_free, utf8_texts_open)
from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport IdBuf, Work, idbuf_reserve, idbufs_free, work_free


cdef inline Py_ssize_t utf8_len(uint32_t c) noexcept nogil:
    return 1 if c < 0x80 else (2 if c < 0x800 else (3 if c < 0x10000 else 4))


cdef inline int units_kind(const Utf8Text* u) noexcept nogil:
    return u.kind if u.kind else 1     # an ASCII str's bytes are its latin-1 code units


cdef inline const void* units(const Utf8Text* u) noexcept nogil:
    return u.data if u.kind else <const void*>u.s


cdef struct Cursor:          # a character position and its byte offset in the text's UTF-8
    Py_ssize_t char_pos, byte_pos


cdef inline Py_ssize_t byte_at(const Utf8Text* u, Cursor* at, Py_ssize_t char_pos) noexcept nogil:
    """The UTF-8 offset of char_pos (>= the cursor's), moving the cursor there."""
    if u.kind == 0:          # an ASCII str: characters are bytes
        return char_pos
    while at.char_pos < char_pos:
        at.byte_pos += utf8_len(code_point(u.kind, u.data, at.char_pos))
        at.char_pos += 1
    return at.byte_pos


cdef int encode_stretch(BPETable table, int kind, TokenTrie normalized, const Utf8Text* u, Cursor* at,
                        Py_ssize_t start, Py_ssize_t end, IdBuf* out, Work* w) except -1 nogil:
    """text[start:end] (between raw tokens): its normalized tokens' ids, the rest encoded."""
    cdef Py_ssize_t s = -1, e = end, b0, b1, steps = 0
    cdef int64_t v = 0
    while start < end:
        if normalized is not None:
            normalized.search_at(units_kind(u), units(u), end, start, &s, &e, &v, &steps)
        if s < 0:
            s = e = end
        if s > start:
            b0 = byte_at(u, at, start)
            b1 = byte_at(u, at, s)
            table.encode_utf8(u.s + b0, b1 - b0, kind, out, w)
        if s < end:
            idbuf_reserve(out, 1)
            out.data[out.len] = <tok_t>v
            out.len += 1
        start = e
        s = -1
    return 0


def encode_cut_texts(BPETable table, int kind, TokenTrie raw, TokenTrie normalized, list texts):
    """The ids of each text (exact str) with its added tokens cut out as HF cuts them: `raw`
    (or None) over the whole text, then `normalized` (or None) inside the rest; the other
    stretches encoded with scanner `kind`.  One GIL-free pass; a list of ids per text.
    Raises UnicodeEncodeError for a lone surrogate."""
    table.require_byte_pairs()
    cdef Py_ssize_t n = PyList_GET_SIZE(texts), i, total = 0, pos, s, e, steps = 0
    cdef int64_t v = 0
    cdef Utf8Text* us = <Utf8Text*>calloc(n + 1, sizeof(Utf8Text))
    cdef IdBuf* outs = <IdBuf*>calloc(n + 1, sizeof(IdBuf))
    cdef Work w
    cdef Cursor at
    cdef PieceCache cache
    if kind < 0:
        raise ValueError("encode_cut_texts needs a pattern the C scanner knows")
    memset(&w, 0, sizeof(Work))
    try:
        if us == NULL or outs == NULL:
            raise MemoryError()
        total = utf8_texts_open(texts, us)
        cache = thread_cache(table)
        cache.lend(&w, total)
        w.ends = NULL
        with nogil:
            for i in range(n):
                if utf8_text_convert(&us[i]) != 0:
                    break
                at.char_pos = at.byte_pos = 0
                pos = 0
                while pos < us[i].length:
                    s = -1
                    if raw is not None:
                        raw.search_at(units_kind(&us[i]), units(&us[i]), us[i].length, pos, &s, &e, &v, &steps)
                    encode_stretch(table, kind, normalized, &us[i], &at, pos, s if s >= 0 else us[i].length,
                                   &outs[i], &w)
                    if s < 0:
                        break
                    idbuf_reserve(&outs[i], 1)
                    outs[i].data[outs[i].len] = <tok_t>v
                    outs[i].len += 1
                    pos = e
                utf8_text_close(&us[i])
        for i in range(n):
            utf8_text_check(<object>PyList_GET_ITEM(texts, i), &us[i])
        return [idbuf_to_list(&outs[i], table.id_objects) for i in range(n)]
    finally:
        idbufs_free(outs, n)
        utf8_texts_free(us, n)
        work_free(&w)
