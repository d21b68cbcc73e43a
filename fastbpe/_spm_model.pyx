# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The two loops of loading a SentencePiece `.model` file that ran in Python (0.3 s of a 32k-piece
file): reading the ModelProto's pieces (`read_model`: every top-level field, each piece message
decoded here) and turning pieces into merge rows (`split_rows`: every split of a piece into two
pieces, found through a hash of the pieces' UTF-8; a polynomial hash, so all the splits of a
piece cost time linear in its length, not quadratic).  formats/sentencepiece_model.py and
sentencepiece/processor.py call them; the protobuf field numbers are sentencepiece_model.proto's."""
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp, memcpy

from fastbpe._memory cimport xrealloc

import array


cdef inline Py_ssize_t varint(const uint8_t* d, Py_ssize_t pos, Py_ssize_t end, uint64_t* out) noexcept nogil:
    """Read a varint at d[pos:end] into out; the position after it, -1 if it runs past end."""
    cdef uint64_t v = 0
    cdef int shift = 0
    while pos < end and shift <= 63:
        v |= <uint64_t>(d[pos] & 0x7F) << shift
        pos += 1
        if d[pos - 1] < 0x80:
            out[0] = v
            return pos
        shift += 7
    return -1


cdef inline Py_ssize_t skip(const uint8_t* d, Py_ssize_t pos, Py_ssize_t end, int wire) noexcept nogil:
    """The position after a field's value of this wire type at pos, -1 if broken."""
    cdef uint64_t n
    if wire == 0:
        return varint(d, pos, end, &n)
    if wire == 2:
        pos = varint(d, pos, end, &n)
        return -1 if pos < 0 or n > <uint64_t>(end - pos) else pos + <Py_ssize_t>n
    if wire == 5:
        return pos + 4 if pos + 4 <= end else -1
    if wire == 1:
        return pos + 8 if pos + 8 <= end else -1
    return -1


def read_model(bytes data, str path):
    """The ModelProto in data: (pieces, fields): pieces a list of (text, score, type) in id
    order (a piece without a type field is NORMAL = 1), fields {number: [(wire, value)]} of
    the other top-level fields (a length-delimited value as its (start, end) in data, a
    varint as an int).  Raises ValueError naming path for a malformed message."""
    cdef const uint8_t* d = <const uint8_t*>(<const char*>data)
    cdef Py_ssize_t end = len(data), pos = 0, start, stop, p, text_at, text_len, nxt
    cdef uint64_t key, value, n
    cdef int number, wire, kind
    cdef float score
    cdef uint32_t bits
    pieces, fields = [], {}
    while pos < end:
        pos = varint(d, pos, end, &key)
        if pos < 0:
            raise ValueError(f"{path}: not a SentencePiece model (a varint runs past the end)")
        number, wire = <int>(key >> 3), <int>(key & 7)
        if number == 1:
            if wire != 2:
                raise ValueError(f"{path}: not a SentencePiece model (field 1 is not a message)")
            start = varint(d, pos, end, &n)
            if start < 0 or n > <uint64_t>(end - start):
                raise ValueError(f"{path}: not a SentencePiece model (a field runs past its message)")
            stop = start + <Py_ssize_t>n
            text_at, text_len, score, kind, p = -1, 0, 0.0, 1, start
            while p < stop:
                p = varint(d, p, stop, &key)
                if p < 0:
                    break
                if key == 0x0A:            # 1: piece (string)
                    nxt = skip(d, p, stop, 2)
                    if nxt < 0:
                        p = -1
                        break
                    varint(d, p, stop, &n)
                    text_at, text_len, p = nxt - <Py_ssize_t>n, <Py_ssize_t>n, nxt
                elif key == 0x15:          # 2: score (float)
                    if p + 4 > stop:
                        p = -1
                        break
                    bits = d[p] | (d[p + 1] << 8) | (d[p + 2] << 16) | (<uint32_t>d[p + 3] << 24)
                    memcpy(&score, &bits, 4)
                    p += 4
                elif key == 0x18:          # 3: type (enum)
                    p = varint(d, p, stop, &value)
                    if p < 0:
                        break
                    kind = <int>value if value < 256 else 0
                else:
                    p = skip(d, p, stop, <int>(key & 7))
                    if p < 0:
                        break
            if p < 0:
                raise ValueError(f"{path}: not a SentencePiece model (piece {len(pieces)} is broken)")
            if text_at < 0 or not 1 <= kind <= 6:
                raise ValueError(f"{path}: not a SentencePiece model (piece {len(pieces)} has no text or an "
                                 "unknown type)")
            try:
                text = PyUnicode_DecodeUTF8(<const char*>d + text_at, text_len, NULL)
            except UnicodeDecodeError:
                raise ValueError(f"{path}: not a SentencePiece model (a string is not UTF-8)") from None
            pieces.append((text, score, kind))
            pos = stop
            continue
        if wire == 0:
            nxt = varint(d, pos, end, &value)
            if nxt >= 0:
                fields.setdefault(number, []).append((wire, value))
        elif wire == 2:
            nxt = skip(d, pos, end, 2)
            if nxt >= 0:
                varint(d, pos, end, &n)
                fields.setdefault(number, []).append((wire, (nxt - <Py_ssize_t>n, nxt)))
        else:
            nxt = skip(d, pos, end, wire)
        if nxt < 0:
            raise ValueError(f"{path}: not a SentencePiece model (field {number} is broken)")
        pos = nxt
    return pieces, fields


# a polynomial hash mod 2^64: a prefix's and a suffix's hash both follow from the running
# prefix hashes, so a piece's splits cost O(its length) in all
cdef uint64_t HASH_BASE = 1099511628211ULL


cdef inline uint64_t poly(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 0
    cdef Py_ssize_t i
    for i in range(n):
        h = h * HASH_BASE + p[i] + 1
    return h


def split_rows(list pieces, ranks, dict extra=None):
    """Merge rows from pieces: pieces[i] is piece i's text, or None when it takes no part in
    merging; ranks[i] piece i's rank.  For every piece p and every split of p into two pieces
    a + b, the row (id of a, id of b, id of p) with p's rank: (rows, row ranks), two
    array('q').  The first id of a repeated text is the one used.  With `extra` (llama.cpp's
    SentencePiece, where any character is a symbol): a half that is one character and no
    piece is a symbol too, its stand-in id n, n+1, ... kept in extra {character: id}."""
    cdef Py_ssize_t n = len(pieces), i, k, cap = 16, total = 0, a, b, ln, m = 0, room = 0
    cdef uint64_t h
    cdef const int64_t[::1] rk = array.array("q", ranks) if isinstance(ranks, (list, tuple)) else ranks
    cdef Py_ssize_t* starts
    cdef Py_ssize_t* lens
    cdef Py_ssize_t* slots
    cdef uint64_t* hashes
    cdef uint64_t* powers = NULL
    cdef uint64_t* prefix = NULL
    cdef uint64_t whole
    cdef Py_ssize_t longest = 0
    cdef int64_t* out = NULL
    cdef const uint8_t* t
    cdef bint stand_ins = extra is not None
    if rk.shape[0] != n:
        raise ValueError(f"{rk.shape[0]} ranks for {n} pieces")
    encoded = [None if p is None else (<str>p).encode("utf-8", "surrogatepass") for p in pieces]
    cdef bytes blob = b"".join([e for e in encoded if e is not None])
    t = <const uint8_t*>(<const char*>blob)
    while cap < 2 * n + 2:
        cap *= 2
    starts = <Py_ssize_t*>calloc(n + 1, sizeof(Py_ssize_t))
    lens = <Py_ssize_t*>calloc(n + 1, sizeof(Py_ssize_t))
    slots = <Py_ssize_t*>calloc(cap, sizeof(Py_ssize_t))   # id + 1, 0: empty
    hashes = <uint64_t*>calloc(n + 1, sizeof(uint64_t))
    try:
        if starts == NULL or lens == NULL or slots == NULL or hashes == NULL:
            raise MemoryError()
        for i in range(n):                 # where each piece's bytes are in blob; -1: none
            if encoded[i] is None:
                starts[i] = -1
            else:
                starts[i], lens[i] = total, len(<bytes>encoded[i])
                total += lens[i]
                longest = max(longest, lens[i])
        powers = <uint64_t*>calloc(longest + 1, sizeof(uint64_t))
        prefix = <uint64_t*>calloc(longest + 1, sizeof(uint64_t))
        if powers == NULL or prefix == NULL:
            raise MemoryError()
        with nogil:
            powers[0] = 1
            for k in range(1, longest + 1):
                powers[k] = powers[k - 1] * HASH_BASE
            for i in range(n):
                if starts[i] < 0:
                    continue
                hashes[i] = poly(t + starts[i], lens[i])
                h = hashes[i] & (cap - 1)
                while slots[h]:
                    a = slots[h] - 1
                    if hashes[a] == hashes[i] and lens[a] == lens[i] and \
                            memcmp(t + starts[a], t + starts[i], lens[i]) == 0:
                        break
                    h = (h + 1) & (cap - 1)
                if not slots[h]:
                    slots[h] = i + 1
            for i in range(n):
                ln = lens[i]
                if ln < 2:
                    continue
                whole = hashes[i]
                prefix[0] = 0
                for k in range(1, ln):
                    prefix[k] = prefix[k - 1] * HASH_BASE + t[starts[i] + k - 1] + 1
                    if (t[starts[i] + k] & 0xC0) == 0x80:
                        continue   # inside a character
                    a = find(t, starts, lens, hashes, slots, cap, t + starts[i], k, prefix[k])
                    if a < 0:
                        if not stand_ins or k != char_len(t[starts[i]]):
                            continue
                        a = -1 - starts[i]   # a stand-in: -1 - the character's place in blob
                    b = find(t, starts, lens, hashes, slots, cap, t + starts[i] + k, ln - k,
                             whole - prefix[k] * powers[ln - k])
                    if b < 0:
                        if not stand_ins or ln - k != char_len(t[starts[i] + k]):
                            continue
                        b = -1 - (starts[i] + k)
                    if m == room:
                        room = 2 * room + 1024
                        out = <int64_t*>xrealloc(out, 4 * room * sizeof(int64_t))
                    out[4 * m], out[4 * m + 1], out[4 * m + 2], out[4 * m + 3] = a, b, i, rk[i]
                    m += 1
        rows, row_ranks = array.array("q", bytes(24 * m)), array.array("q", bytes(8 * m))
        rv, rr = memoryview(rows), memoryview(row_ranks)
        fill(rv, rr, out, m)
        if stand_ins and m:
            for k in range(3 * m):
                if rows[k] < 0:
                    a = -1 - rows[k]
                    ch = blob[a:a + char_len(t[a])].decode("utf-8", "surrogatepass")
                    rows[k] = extra.setdefault(ch, n + len(extra))
        return rows, row_ranks
    finally:
        free(starts)
        free(lens)
        free(slots)
        free(hashes)
        free(powers)
        free(prefix)
        free(out)


cdef inline Py_ssize_t char_len(uint8_t lead) noexcept nogil:
    return 1 if lead < 0x80 else (2 if lead < 0xE0 else (3 if lead < 0xF0 else 4))


cdef inline Py_ssize_t find(const uint8_t* t, const Py_ssize_t* starts, const Py_ssize_t* lens,
                            const uint64_t* hashes, const Py_ssize_t* slots, Py_ssize_t cap, const uint8_t* s,
                            Py_ssize_t ln, uint64_t h) noexcept nogil:
    """The id whose bytes are s[:ln] (of hash h), -1 if none; bytes are compared only on an
    equal hash and length."""
    cdef uint64_t k = h & (cap - 1)
    cdef Py_ssize_t a
    while slots[k]:
        a = slots[k] - 1
        if hashes[a] == h and lens[a] == ln and memcmp(t + starts[a], s, ln) == 0:
            return a
        k = (k + 1) & (cap - 1)
    return -1


cdef void fill(int64_t[::1] rows, int64_t[::1] ranks, const int64_t* out, Py_ssize_t m) noexcept:
    cdef Py_ssize_t k
    for k in range(m):
        rows[3 * k], rows[3 * k + 1], rows[3 * k + 2], ranks[k] = out[4 * k], out[4 * k + 1], out[4 * k + 2], out[4 * k + 3]
