# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A tokenizer.json's model.vocab and model.merges read straight from the file's bytes.

They are nearly all of the file (150k tokens and as many merges), and through `json.loads`
they cost a dict with a memo of every key, a str per merge, then a second pass that looks
each merge's two halves and their join up again.  Here one pass over the bytes fills a C table of
the tokens' UTF-8 (`_json_vocab.JsonVocab`: the {token: id} dict made only if asked for) and,
from it, the merges' (left, right, merged) id rows; the merges' text is kept as bytes, parsed
only if written back.

Strict on purpose: anything but the plain shape (one "model" key, one "vocab" object of
string keys and plain integer ids, one "merges" array of "a b" strings or [a, b] pairs of
strings, every token known, no lone surrogate escape, no key written with an escape in the
objects walked) gives None, and the caller parses the whole file with `json.loads` as before,
which raises the same errors it always did.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy

from fastbpe._core cimport BPETable
from fastbpe._json_vocab cimport JsonVocab, Table, table_find, table_init, table_put, utf8_valid

from array import array


cdef inline Py_ssize_t _ws(const uint8_t* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and (s[i] == 0x20 or s[i] == 0x0A or s[i] == 0x0D or s[i] == 0x09):
        i += 1
    return i


cdef Py_ssize_t _skip_string(const uint8_t* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """s[i] is a quote: the index after the closing one, or -1."""
    cdef const uint8_t* q
    cdef Py_ssize_t j
    i += 1
    while i < n:
        q = <const uint8_t*>memchr(s + i, 0x22, n - i)
        if q == NULL:
            return -1
        j = q - s
        while j > i and s[j - 1] == 0x5C:   # backslashes before it: an odd count escapes it
            j -= 1
        if (q - s - j) % 2 == 0:
            return q - s + 1
        i = q - s + 1
    return -1


cdef bint _STRUCTURAL[256]   # the bytes _skip_value stops at: " { } [ ]
_STRUCTURAL[0x22] = _STRUCTURAL[0x7B] = _STRUCTURAL[0x7D] = _STRUCTURAL[0x5B] = _STRUCTURAL[0x5D] = True


cdef Py_ssize_t _skip_value(const uint8_t* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The index after the JSON value at s[i] (structure only: json.loads checks the text
    around the model arrays), or -1."""
    cdef Py_ssize_t depth = 0
    if i >= n:
        return -1
    if s[i] == 0x22:
        return _skip_string(s, i, n)
    if s[i] == 0x7B or s[i] == 0x5B:
        while i < n:
            while i < n and not _STRUCTURAL[s[i]]:   # indentation, digits, colons, commas
                i += 1
            if i >= n:
                break
            if s[i] == 0x22:
                i = _skip_string(s, i, n)
                if i < 0:
                    return -1
                continue
            if s[i] == 0x7B or s[i] == 0x5B:
                depth += 1
            elif s[i] == 0x7D or s[i] == 0x5D:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return -1
    while i < n and not (s[i] == 0x2C or s[i] == 0x7D or s[i] == 0x5D or s[i] == 0x20
                         or s[i] == 0x0A or s[i] == 0x0D or s[i] == 0x09):
        i += 1
    return i


cdef Py_ssize_t _key(const uint8_t* s, Py_ssize_t i, Py_ssize_t n, Py_ssize_t* key_end) noexcept nogil:
    """s[i] starts an object key "k": its end in key_end, the index after its colon, or -1
    (an escape in the key: not the plain shape)."""
    cdef Py_ssize_t j
    if i >= n or s[i] != 0x22:
        return -1
    j = i + 1
    while j < n and s[j] != 0x22:
        if s[j] == 0x5C:
            return -1
        j += 1
    if j >= n:
        return -1
    key_end[0] = j + 1
    j = _ws(s, j + 1, n)
    if j >= n or s[j] != 0x3A:
        return -1
    return _ws(s, j + 1, n)


cdef inline bint _is(const uint8_t* s, Py_ssize_t start, Py_ssize_t end, const char* name, Py_ssize_t n) noexcept nogil:
    return end - start == n + 2 and memcmp(s + start + 1, name, n) == 0


def model_spans(const uint8_t[::1] data):
    """(vocab start, vocab end, merges start, merges end): the byte spans of the top-level
    "model" object's "vocab" object and "merges" array, or None (not the plain shape)."""
    cdef const uint8_t* s = &data[0] if data.shape[0] else NULL
    cdef Py_ssize_t n = data.shape[0], i, k, k_end, v_end, slot
    cdef Py_ssize_t spans[4]
    cdef bint in_model = False, seen_model = False
    spans[0] = spans[1] = spans[2] = spans[3] = -1
    if s == NULL:
        return None
    i = _ws(s, 0, n)
    if i >= n or s[i] != 0x7B:
        return None
    i = _ws(s, i + 1, n)
    while True:
        if i >= n:
            return None
        if s[i] == 0x7D:   # the end of an object
            if in_model:
                in_model = False
                i = _ws(s, i + 1, n)
            else:
                i = _ws(s, i + 1, n)
                break
        else:
            k = i
            i = _key(s, i, n, &k_end)
            if i < 0:
                return None
            if in_model and (_is(s, k, k_end, b"vocab", 5) or _is(s, k, k_end, b"merges", 6)):
                slot = 0 if _is(s, k, k_end, b"vocab", 5) else 2
                if spans[slot] >= 0 or i >= n or s[i] != (0x7B if slot == 0 else 0x5B):
                    return None
                v_end = _skip_value(s, i, n)
                if v_end < 0:
                    return None
                spans[slot], spans[slot + 1] = i, v_end
                i = _ws(s, v_end, n)
            elif not in_model and _is(s, k, k_end, b"model", 5):
                if seen_model or i >= n or s[i] != 0x7B:
                    return None
                seen_model = in_model = True
                i = _ws(s, i + 1, n)
                continue
            else:
                v_end = _skip_value(s, i, n)
                if v_end < 0:
                    return None
                i = _ws(s, v_end, n)
        if i < n and s[i] == 0x2C:
            i = _ws(s, i + 1, n)
            if i < n and s[i] == 0x7D:   # a trailing comma: json.loads says where
                return None
        elif i >= n or s[i] != 0x7D:
            return None
    if i != n or spans[0] < 0 or spans[2] < 0:
        return None
    return spans[0], spans[1], spans[2], spans[3]


def nesting_depth(const uint8_t[::1] data):
    """How deep the containers of this valid JSON text nest (the top-level one is 1; strings
    skipped): _nodes.check_nesting's bound read from the bytes, not by walking the document."""
    cdef const uint8_t* s = &data[0] if data.shape[0] else NULL
    cdef Py_ssize_t n = data.shape[0], i = 0, depth = 0, deepest = 0
    while i < n:
        if not _STRUCTURAL[s[i]]:   # indentation, digits, colons, commas
            pass
        elif s[i] == 0x22:
            i = _skip_string(s, i, n)
            if i < 0:
                break
            continue
        elif s[i] == 0x7B or s[i] == 0x5B:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
        i += 1
    return deepest


# -- JSON strings as UTF-8 -------------------------------------------------------------------

cdef inline int _hex4(const uint8_t* s) noexcept nogil:
    cdef int v = 0, k, c
    for k in range(4):
        c = s[k]
        if 0x30 <= c <= 0x39:
            v = v * 16 + c - 0x30
        elif 0x61 <= c <= 0x66:
            v = v * 16 + c - 0x61 + 10
        elif 0x41 <= c <= 0x46:
            v = v * 16 + c - 0x41 + 10
        else:
            return -1
    return v


cdef Py_ssize_t _string(const uint8_t* s, Py_ssize_t i, Py_ssize_t n, uint8_t* out, Py_ssize_t* out_len) noexcept nogil:
    """Decode the JSON string at s[i] (a quote) into out (room for the raw length): its UTF-8
    length in out_len, the index after the closing quote, or -1 (malformed, a control
    character, a lone surrogate)."""
    cdef Py_ssize_t o = 0
    cdef int c, lo
    cdef uint8_t e
    if i >= n or s[i] != 0x22:
        return -1
    i += 1
    while i < n:
        e = s[i]
        if e == 0x22:
            out_len[0] = o
            return i + 1
        if e < 0x20:
            return -1
        if e != 0x5C:
            out[o] = e
            o += 1
            i += 1
            continue
        if i + 1 >= n:
            return -1
        e = s[i + 1]
        i += 2
        if e == 0x22 or e == 0x5C or e == 0x2F:
            out[o] = e
        elif e == 0x62:
            out[o] = 0x08
        elif e == 0x66:
            out[o] = 0x0C
        elif e == 0x6E:
            out[o] = 0x0A
        elif e == 0x72:
            out[o] = 0x0D
        elif e == 0x74:
            out[o] = 0x09
        elif e == 0x75:
            if i + 4 > n:
                return -1
            c = _hex4(s + i)
            i += 4
            if c < 0 or 0xDC00 <= c <= 0xDFFF:
                return -1
            if 0xD800 <= c <= 0xDBFF:   # a pair, or a lone surrogate (json.loads keeps it: not here)
                if i + 6 > n or s[i] != 0x5C or s[i + 1] != 0x75:
                    return -1
                lo = _hex4(s + i + 2)
                if not 0xDC00 <= lo <= 0xDFFF:
                    return -1
                i += 6
                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00)
            if c < 0x80:
                out[o] = <uint8_t>c
            elif c < 0x800:
                out[o] = <uint8_t>(0xC0 | (c >> 6))
                out[o + 1] = <uint8_t>(0x80 | (c & 0x3F))
                o += 1
            elif c < 0x10000:
                out[o] = <uint8_t>(0xE0 | (c >> 12))
                out[o + 1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
                out[o + 2] = <uint8_t>(0x80 | (c & 0x3F))
                o += 2
            else:
                out[o] = <uint8_t>(0xF0 | (c >> 18))
                out[o + 1] = <uint8_t>(0x80 | ((c >> 12) & 0x3F))
                out[o + 2] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
                out[o + 3] = <uint8_t>(0x80 | (c & 0x3F))
                o += 3
        else:
            return -1
        o += 1
    return -1


cdef inline Py_ssize_t _after_item(const uint8_t* s, Py_ssize_t i, Py_ssize_t n, uint8_t close) noexcept nogil:
    """After an item: the index of the next item (after a comma), n + 1 at the closing
    bracket, or -1."""
    i = _ws(s, i, n)
    if i < n and s[i] == 0x2C:
        i = _ws(s, i + 1, n)
        return -1 if i >= n or s[i] == close else i
    if i < n and s[i] == close:
        return n + 1
    return -1


cdef inline Py_ssize_t _skip_chars(const uint8_t* s, Py_ssize_t n, Py_ssize_t chars) noexcept nogil:
    """The byte length of the first `chars` characters of UTF-8 s[:n] (all of it if fewer)."""
    cdef Py_ssize_t i = 0
    while chars > 0 and i < n:
        i += 1
        while i < n and (s[i] & 0xC0) == 0x80:
            i += 1
        chars -= 1
    return i


def vocab_and_merge_rows(const uint8_t[::1] data, spans, Py_ssize_t n_prefix):
    """(vocab, merge rows) from the model spans (`model_spans`): the vocabulary as a
    `_json_vocab.JsonVocab` (the dict json.loads would make, kept as UTF-8 in a C table), and
    an array.array('q') of (left, right, merged) ids per merge in file order, merged = the
    token a + b[n_prefix characters:] (continuing_subword_prefix), before hf_merge_rows'
    clean-up (`_formats.kept_merge_rows`).  None when anything is off the plain shape (see
    the module's doc)."""
    cdef const uint8_t* s = &data[0]
    cdef Py_ssize_t n = data.shape[0]
    cdef Py_ssize_t vs = spans[0], ve = spans[1], ms = spans[2], me = spans[3]
    cdef Py_ssize_t i, o_len, a_len, b_len, skip, cap_rows = 0, n_rows = 0, max_id = -1
    cdef unsigned long long value
    cdef JsonVocab vocab = JsonVocab.__new__(JsonVocab)
    cdef Table* t = &vocab.t
    cdef uint8_t* buf = NULL
    cdef int64_t* rows = NULL
    cdef int64_t* grown_rows
    cdef int64_t ia, ib, ic
    cdef const uint8_t* bp
    if not (0 <= vs < ve <= n and 0 <= ms < me <= n):
        return None
    try:
        table_init(t, ve - vs)
        buf = <uint8_t*>malloc(max(ve - vs, me - ms) + 16)
        if buf == NULL:
            raise MemoryError()
        # the vocabulary: "token": id, ...
        i = _ws(s, vs + 1, ve)
        if i < ve and s[i] == 0x7D:
            i = ve + 1
        while i <= ve - 1:
            i = _string(s, i, ve, buf, &o_len)
            if i < 0:
                return None
            i = _ws(s, i, ve)
            if i >= ve or s[i] != 0x3A:
                return None
            i = _ws(s, i + 1, ve)
            if i >= ve or not 0x30 <= s[i] <= 0x39 or (s[i] == 0x30 and i + 1 < ve and 0x30 <= s[i + 1] <= 0x39):
                return None
            value = 0
            while i < ve and 0x30 <= s[i] <= 0x39:
                value = value * 10 + (s[i] - 0x30)
                if value > 0xFFFFFFFFULL:   # (a C constant: a bare literal past int's range is a Python int)
                    return None
                i += 1
            if i < ve and (s[i] == 0x2E or s[i] == 0x65 or s[i] == 0x45):   # a float: checked_vocab's error
                return None
            if not utf8_valid(buf, o_len):   # (json.loads: a UnicodeDecodeError)
                return None
            table_put(t, buf, o_len, <uint32_t>value)
            if <Py_ssize_t>value > max_id:
                max_id = <Py_ssize_t>value
            i = _after_item(s, i, ve, 0x7D)
            if i < 0:
                return None
        # the merges: "a b" or ["a", "b"], ...
        cap_rows = 3 * ((me - ms) // 4 + 4)
        rows = <int64_t*>malloc(cap_rows * sizeof(int64_t))
        if rows == NULL:
            raise MemoryError()
        i = _ws(s, ms + 1, me)
        if i < me and s[i] == 0x5D:
            i = me + 1
        while i <= me - 1:
            if s[i] == 0x22:
                i = _string(s, i, me, buf, &o_len)
                if i < 0:
                    return None
                a_len = -1
                for skip in range(o_len):
                    if buf[skip] == 0x20:
                        if a_len >= 0:
                            return None   # two spaces: hf_merge_rows' error
                        a_len = skip
                if a_len < 0:
                    return None
                b_len = o_len - a_len - 1
                bp = buf + a_len + 1
            elif s[i] == 0x5B:
                i = _string(s, _ws(s, i + 1, me), me, buf, &a_len)
                if i < 0:
                    return None
                i = _ws(s, i, me)
                if i >= me or s[i] != 0x2C:
                    return None
                bp = buf + a_len
                i = _string(s, _ws(s, i + 1, me), me, bp, &b_len)
                if i < 0:
                    return None
                i = _ws(s, i, me)
                if i >= me or s[i] != 0x5D:
                    return None
                i += 1
            else:
                return None
            ia = table_find(t, buf, a_len, NULL, 0)
            ib = table_find(t, bp, b_len, NULL, 0)
            skip = _skip_chars(bp, b_len, n_prefix)
            ic = table_find(t, buf, a_len, bp + skip, b_len - skip)
            if ia < 0 or ib < 0 or ic < 0:
                return None
            if n_rows + 3 > cap_rows:
                cap_rows *= 2
                grown_rows = <int64_t*>realloc(rows, cap_rows * sizeof(int64_t))
                if grown_rows == NULL:
                    raise MemoryError()
                rows = grown_rows
            rows[n_rows], rows[n_rows + 1], rows[n_rows + 2] = ia, ib, ic
            n_rows += 3
            i = _after_item(s, i, me, 0x5D)
            if i < 0:
                return None
        out = array("q")
        if n_rows:
            out.frombytes((<char*>rows)[:n_rows * sizeof(int64_t)])
        vocab.max_id = max_id
        return vocab, out
    finally:
        free(buf)
        free(rows)


# -- what a loaded model's table learned, kept between processes (hf/model.py) -------------

def bytes_digest(tuple items, uint64_t seed=0):
    """A 64-bit digest of a tuple of bytes / None (each item's length and bytes): with the
    merge rows' checksums it names a table's cached whole-token states (program_cache.kept).
    Not a security boundary (the cache folder is the user's own), an accident detector."""
    cdef uint64_t h = seed ^ 0x9E3779B97F4A7C15ULL
    cdef Py_ssize_t k, i, n
    cdef const uint8_t* p
    cdef uint64_t w
    for k in range(len(items)):
        item = items[k]
        if item is None:
            h = (h ^ 0xFFFFFFFFFFFFFFFFULL) * 0x100000001B3ULL
            continue
        p = item
        n = len(<bytes>item)
        h = (h ^ <uint64_t>n) * 0x100000001B3ULL
        i = 0
        while i + 8 <= n:
            memcpy(&w, p + i, 8)
            h = (h ^ w) * 0x9E3779B97F4A7C15ULL
            h ^= h >> 29
            i += 8
        while i < n:
            h = (h ^ p[i]) * 0x100000001B3ULL
            i += 1
    return h


def rows_digest(const int64_t[::1] rows):
    """Two 64-bit digests (a tuple) of int64 merge rows, a word at a time, for the same key as
    bytes_digest (an accident detector, not a security boundary): zlib's crc32 + adler32 of
    the rows' bytes, which it replaces, cost GPT-2's load 9M instructions, this ~1M."""
    cdef uint64_t a = 0x9E3779B97F4A7C15ULL ^ <uint64_t>rows.shape[0], b = 0xC2B2AE3D27D4EB4FULL
    cdef Py_ssize_t k
    cdef uint64_t w
    for k in range(rows.shape[0]):
        w = <uint64_t>rows[k]
        a = (a ^ w) * 0x9E3779B97F4A7C15ULL
        a ^= a >> 29
        b = (b + w) * 0xC2B2AE3D27D4EB4FULL
        b ^= b >> 31
    return a, b


def whole_token_states(BPETable table, const uint8_t[::1] known=None):
    """BPETable.learn_whole_tokens' answers (one byte a BPE token: 0 not known, 1 merges back
    into itself, 2 does not) as bytes; with `known` (this call's bytes for a table of the same
    tokens and merges), set from them first.  None when the table keeps no answers (tiktoken
    semantics); ValueError for `known` of another length or with another value."""
    cdef Py_ssize_t n = table.n_bpe_tokens, k
    if table.self_merging == NULL:
        return None
    if known is not None:
        if known.shape[0] != n:
            raise ValueError(f"whole-token states for {known.shape[0]} tokens, the table has {n}")
        for k in range(n):
            if known[k] > 2:
                raise ValueError(f"whole-token state {known[k]} of token {k}")
        if n:
            memcpy(table.self_merging, &known[0], n)
    return (<char*>table.self_merging)[:n]
