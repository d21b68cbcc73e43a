# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Texts cut at their added tokens and encoded, in one GIL-free call.

A tokenizer.json's added tokens are cut out of a text before the rest is encoded.  When they
occur everywhere (Phi-2's and CodeGen's runs of spaces are added tokens) a text holds hundreds
of them, and cutting in Python (a tuple per piece, a str per segment, a list of lists to
stitch) cost several times the kernel's own work.  Here the automaton (`_token_trie`) finds
them in the str's code units and each segment between two is scanned and merged straight from
the text's UTF-8 (`BPETable.encode_utf8`), its ids appended to one list per text.

HF's order is kept: the raw (not normalized) tokens are found in the whole text first,
leftmost-longest; each stretch between two raw ones is normalized (the file's normalizer
program, `_normalize.run_ops`, when it has one) and its normalized tokens found in that; a text
is its own piece boundary, as HF cuts it.  GPT-NeoX (NFC, and runs of spaces as normalized
added tokens) took the Python plan per text before: callgrind, its code part, 171M
instructions against GPT-2's 37M.

A token's value holds its id in the low 32 bits and what HF's `find_matches` does around it
(`AddedVocabulary.cut_matchers` sets them): STRIP_LEFT drops the spaces before it from the
stretch it ends (lstrip: never past the previous token's end), STRIP_RIGHT takes those after it
(rstrip), WHITE_SPACE says those spaces are Unicode's White_Space (Rust's char::is_whitespace)
rather than C's isspace, AS_TEXT leaves the match as text (encode_special_tokens).  As HF's
automaton, the search goes on from a match's own end, whatever its rstrip took; a token found
inside the spaces the previous one took is still cut (HF's overlapping splits: the text after it
is encoded from its end), and one its lstrip leaves empty is dropped.

llama.cpp's special tokens (the GGUF front end) come here too: their strips take C's spaces
(" \\t\\n\\v\\f\\r"), and tokens whose occurrences can overlap are cut level by level
(`CutLevels`: llama.cpp cuts the longest token first, so each level's tokens are found in the
stretches between the previous levels' ones).  A level that strips has no token beginning
(rstrip) or ending (lstrip) with a C space (`gguf/special_cut.py`), so HF's rule above cuts as
llama.cpp's, whose search goes on after the spaces taken."""
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE

from fastbpe._core cimport BPETable, thread_cache
from fastbpe._id_output cimport idbufs_lists
from fastbpe._memory cimport xrealloc
from fastbpe._normalize cimport Program, run_ops
from fastbpe._normalize_buf cimport Buf, View, buf_free
from fastbpe._piece_cache cimport PieceCache
from fastbpe._token_trie cimport TokenTrie
from fastbpe._utf8 cimport (Utf8Text, utf8_text_check, utf8_text_close, utf8_text_convert, utf8_text_open,
                            utf8_texts_free, utf8_texts_open)
from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport IdBuf, Work, idbuf_reserve, idbufs_free, work_free

# a token's value: its id in the low 32 bits, and what is done around it (the module's doc)
STRIP_LEFT = 1 << 32
STRIP_RIGHT = 1 << 33
WHITE_SPACE = 1 << 34
AS_TEXT = 1 << 35
cdef int64_t _STRIP_LEFT = STRIP_LEFT, _STRIP_RIGHT = STRIP_RIGHT, _WHITE_SPACE = WHITE_SPACE, _AS_TEXT = AS_TEXT


cdef class CutLevels:
    """Tries searched one after the other: each level's tokens are found in the stretches
    between the ones of the levels before (`trie`, then `deeper`'s levels)."""
    cdef readonly TokenTrie trie
    cdef readonly CutLevels deeper

    def __init__(self, TokenTrie trie, CutLevels deeper=None):
        self.trie, self.deeper = trie, deeper


cdef inline int units_kind(const Utf8Text* u) noexcept nogil:
    return u.kind if u.kind else 1     # an ASCII str's bytes are its latin-1 code units


cdef inline const void* units(const Utf8Text* u) noexcept nogil:
    return u.data if u.kind else <const void*>u.s


cdef inline uint32_t unit_at(const Utf8Text* u, Py_ssize_t i) noexcept nogil:
    cdef int k = units_kind(u)
    if k == 1:
        return (<const uint8_t*>units(u))[i]
    if k == 2:
        return (<const uint16_t*>units(u))[i]
    return (<const uint32_t*>units(u))[i]


cdef inline bint c_space(uint32_t c) noexcept nogil:
    """C's isspace in the "C" locale, which llama.cpp's lstrip / rstrip use."""
    return c == 32 or 9 <= c <= 13


cdef inline bint white_space(uint32_t c) noexcept nogil:
    """Unicode's White_Space (Rust's char::is_whitespace), which HF's lstrip / rstrip use."""
    if c < 0x80:
        return c == 32 or 9 <= c <= 13
    return (c == 0x85 or c == 0xA0 or c == 0x1680 or 0x2000 <= c <= 0x200A or c == 0x2028 or c == 0x2029
            or c == 0x202F or c == 0x205F or c == 0x3000)


cdef inline bint strip_space(uint32_t c, int64_t v) noexcept nogil:
    return white_space(c) if v & _WHITE_SPACE else c_space(c)


cdef inline Py_ssize_t left_stripped(const Utf8Text* u, Py_ssize_t done, Py_ssize_t s, int64_t v) noexcept nogil:
    """Where the text before a token of value v found at s ends: s, or before its spaces, but
    not before `done` (the previous token's end: HF's max(start, start_offset))."""
    if v & _STRIP_LEFT:
        while s > done and strip_space(unit_at(u, s - 1), v):
            s -= 1
        if s < done:
            return done
    return s


cdef inline Py_ssize_t right_stripped(const Utf8Text* u, Py_ssize_t e, Py_ssize_t end, int64_t v) noexcept nogil:
    """Where the text after a token of value v ending at e goes on: e, or after its spaces."""
    if v & _STRIP_RIGHT:
        while e < end and strip_space(unit_at(u, e), v):
            e += 1
    return e


cdef inline bint next_cut(TokenTrie trie, const Utf8Text* u, Py_ssize_t end, Py_ssize_t* pos, Py_ssize_t done,
                          Py_ssize_t* a, Py_ssize_t* b, int64_t* v, Py_ssize_t* steps) noexcept nogil:
    """The next token cut out of text[:end] found at or after pos[0] (moved past it): its span
    with what it strips, [a, b), and its value; False when there is none (or no trie)."""
    cdef Py_ssize_t s, e
    if trie is None:
        return False
    while pos[0] < end:
        s = -1
        trie.search_at(units_kind(u), units(u), end, pos[0], &s, &e, v, steps)
        if s < 0:
            return False
        pos[0] = e
        if (v[0] >> 32) == 0:    # the usual token: nothing done around it
            a[0], b[0] = s, e
            return True
        if v[0] & _AS_TEXT:
            continue
        a[0] = left_stripped(u, done, s, v[0])
        b[0] = right_stripped(u, e, end, v[0])
        if a[0] < b[0]:          # else lstrip left it nothing (HF would panic): dropped
            return True
    return False


cdef struct Cursor:          # a character position and its byte offset in the text's UTF-8
    Py_ssize_t char_pos, byte_pos


ctypedef fused unit_t:       # a str's code unit, by its kind
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t utf8_bytes(const unit_t* d, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    """The UTF-8 length of d[i:j] (no surrogates: the text converted)."""
    cdef Py_ssize_t total = j - i
    cdef uint32_t c
    while i < j:
        c = d[i]
        total += (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
        i += 1
    return total


cdef inline Py_ssize_t byte_at(const Utf8Text* u, Cursor* at, Py_ssize_t char_pos) noexcept nogil:
    """The UTF-8 offset of char_pos (>= the cursor's), moving the cursor there (the text's
    end, the usual stretch end, without a walk)."""
    if u.kind == 0:          # an ASCII str: characters are bytes
        return char_pos
    if char_pos == u.length:
        return u.n
    if char_pos < at.char_pos:   # a token inside the spaces the one before took: back to the start
        at.char_pos = at.byte_pos = 0
    if u.kind == 1:
        at.byte_pos += utf8_bytes(<const uint8_t*>u.data, at.char_pos, char_pos)
    elif u.kind == 2:
        at.byte_pos += utf8_bytes(<const uint16_t*>u.data, at.char_pos, char_pos)
    else:
        at.byte_pos += utf8_bytes(<const uint32_t*>u.data, at.char_pos, char_pos)
    at.char_pos = char_pos
    return at.byte_pos


cdef inline int encode_part(BPETable table, int kind, CutLevels deeper, const Utf8Text* u, Cursor* at,
                     Py_ssize_t start, Py_ssize_t end, IdBuf* out, Work* w) except -1 nogil:
    """text[start:end] (no token of the levels above it): cut by the `deeper` levels, else encoded."""
    cdef Py_ssize_t b0, b1
    if deeper is not None:
        return encode_stretch(table, kind, deeper.trie, deeper.deeper, u, at, start, end, out, w)
    b0 = byte_at(u, at, start)
    b1 = byte_at(u, at, end)
    table.encode_utf8(u.s + b0, b1 - b0, kind, out, w)
    return 0


cdef inline void put_id(IdBuf* out, int64_t v) noexcept nogil:
    idbuf_reserve(out, 1)
    out.data[out.len] = <tok_t>v
    out.len += 1


cdef int encode_stretch(BPETable table, int kind, TokenTrie normalized, CutLevels deeper, const Utf8Text* u,
                        Cursor* at, Py_ssize_t start, Py_ssize_t end, IdBuf* out, Work* w) except -1 nogil:
    """text[start:end] (between raw tokens): its normalized tokens' ids, the stretches between
    them cut by the `deeper` levels (or None), the rest encoded."""
    cdef Py_ssize_t pos = start, done = start, a, b, steps = 0
    cdef int64_t v = 0
    cdef bint found = True
    while found:             # one call of encode_part in the loop: it is inlined
        found = next_cut(normalized, u, end, &pos, done, &a, &b, &v, &steps)
        if not found:
            a = end
        if done < a:
            encode_part(table, kind, deeper, u, at, done, a, out, w)
        if found:
            put_id(out, v)
            done = b
    return 0


cdef struct Scratch:         # a normalized stretch: the normalizer's two buffers, its UTF-8
    Buf bufs[2]
    uint8_t* utf8
    Py_ssize_t cap
    bint bad                 # the normalizer put a surrogate (from a Replace's content)


cdef int to_utf8(Scratch* sc, const uint32_t* ch, Py_ssize_t n, Utf8Text* out) except -1 nogil:
    """ch[:n] (a normalizer's output) as a Utf8Text over sc.utf8, code units of kind 4."""
    cdef Py_ssize_t i, k = 0
    cdef uint32_t c
    if 4 * n > sc.cap:
        sc.cap = 4 * n if 4 * n > 2 * sc.cap else 2 * sc.cap
        sc.utf8 = <uint8_t*>xrealloc(sc.utf8, sc.cap + 1)
    i = 0
    while i < n:
        if i + 4 <= n and (ch[i] | ch[i + 1] | ch[i + 2] | ch[i + 3]) < 0x80:   # ASCII, four at a time
            sc.utf8[k], sc.utf8[k + 1], sc.utf8[k + 2], sc.utf8[k + 3] = ch[i], ch[i + 1], ch[i + 2], ch[i + 3]
            k += 4
            i += 4
            continue
        c = ch[i]
        if c < 0x80:
            sc.utf8[k] = <uint8_t>c
            k += 1
        elif c < 0x800:
            sc.utf8[k] = <uint8_t>(0xC0 | (c >> 6))
            sc.utf8[k + 1] = <uint8_t>(0x80 | (c & 0x3F))
            k += 2
        elif c < 0x10000:
            if 0xD800 <= c < 0xE000:
                sc.bad = True
            sc.utf8[k] = <uint8_t>(0xE0 | (c >> 12))
            sc.utf8[k + 1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
            sc.utf8[k + 2] = <uint8_t>(0x80 | (c & 0x3F))
            k += 3
        else:
            sc.utf8[k] = <uint8_t>(0xF0 | (c >> 18))
            sc.utf8[k + 1] = <uint8_t>(0x80 | ((c >> 12) & 0x3F))
            sc.utf8[k + 2] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
            sc.utf8[k + 3] = <uint8_t>(0x80 | (c & 0x3F))
            k += 4
        i += 1
    out.s, out.n, out.data, out.length, out.kind = sc.utf8, k, ch, n, 4 if k > n else 0   # 0: ASCII
    return 0


cdef int normalize_stretch(BPETable table, int kind, TokenTrie normalized, CutLevels deeper, Program program,
                           const Utf8Text* u,
                           Cursor* at, Py_ssize_t start, Py_ssize_t end, IdBuf* out, Work* w,
                           Scratch* sc) except -1 nogil:
    """text[start:end] normalized by program (when it has one and it changes something), then
    as encode_stretch."""
    cdef View v
    cdef int r = -1
    cdef Utf8Text nu
    cdef Cursor nat
    if program is not None and not (program.ascii_stable and u.kind == 0):
        v.kind = units_kind(u)
        v.data = <const char*>units(u) + start * v.kind
        v.n = end - start
        r = run_ops(program.ops, program.n_ops, v, sc.bufs)
    if r < 0:
        return encode_stretch(table, kind, normalized, deeper, u, at, start, end, out, w)
    to_utf8(sc, sc.bufs[r].ch, sc.bufs[r].n, &nu)
    if sc.bad:
        return 0             # the caller raises, as encoding the normalized str would
    nat.char_pos = nat.byte_pos = 0
    return encode_stretch(table, kind, normalized, deeper, &nu, &nat, 0, nu.length, out, w)


def encode_cut_texts(BPETable table, int kind, TokenTrie raw, TokenTrie normalized, list texts,
                     Program program=None, bint as_bytes=False, CutLevels deeper=None):
    """The ids of each text (exact str) with its added tokens cut out as HF cuts them: `raw`
    (or None) over the whole text, then, in each stretch between them normalized by `program`
    (a `_normalize.Program` or None), `normalized` (or None); the other stretches encoded with
    scanner `kind`.  One GIL-free pass; a list of ids per text (as_bytes: bytes of uint32s,
    what an Encoding holds, as `BPETable.encode_texts` gives them); `deeper`: levels of tokens
    found after `normalized`'s in the stretches between (see CutLevels).  Raises UnicodeEncodeError
    for a lone surrogate (in the text, or put by the normalizer)."""
    table.require_byte_pairs()
    cdef Py_ssize_t n = PyList_GET_SIZE(texts), i, total = 0, pos, done, a, b, steps = 0, bad_text = 0
    cdef int64_t v = 0
    cdef bint found
    cdef Utf8Text* us = <Utf8Text*>calloc(n + 1, sizeof(Utf8Text))
    cdef IdBuf* outs = <IdBuf*>calloc(n + 1, sizeof(IdBuf))
    cdef Work w
    cdef Cursor at
    cdef PieceCache cache
    cdef Scratch sc
    memset(&sc, 0, sizeof(Scratch))
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
                pos = done = 0
                found = True
                while found and not sc.bad:   # one call of normalize_stretch: it is inlined
                    found = next_cut(raw, &us[i], us[i].length, &pos, done, &a, &b, &v, &steps)
                    if not found:
                        a = us[i].length
                    if done < a:
                        normalize_stretch(table, kind, normalized, deeper, program, &us[i], &at, done, a,
                                          &outs[i], &w, &sc)
                    if found and not sc.bad:
                        put_id(&outs[i], v)
                        done = b
                utf8_text_close(&us[i])
                if sc.bad:
                    bad_text = i
                    break
        for i in range(n):
            utf8_text_check(<object>PyList_GET_ITEM(texts, i), &us[i])
        if sc.bad:
            raise UnicodeEncodeError("utf-8", program.normalize(texts[bad_text]), 0, 1, "surrogates not allowed")
        if as_bytes:
            return [PyBytes_FromStringAndSize(<char*>outs[i].data, outs[i].len * sizeof(tok_t)) for i in range(n)]
        return idbufs_lists(outs, n, table.id_objects)   # (all made before any is filled)
    finally:
        idbufs_free(outs, n)
        utf8_texts_free(us, n)
        work_free(&w)
        buf_free(&sc.bufs[0])
        buf_free(&sc.bufs[1])
        free(sc.utf8)
