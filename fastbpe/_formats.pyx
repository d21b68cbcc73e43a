# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""C parser for `.tiktoken` files: `base64(token) rank` per line.

Parsing 200k lines with Python's base64 takes most of the time of loading an encoding; this
does it in one pass over the bytes, with strict validation and line numbers in errors.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport uint8_t, int64_t
from libc.stdlib cimport malloc, free

cdef signed char B64[256]


cdef void _init_b64() noexcept:
    cdef int i
    cdef bytes alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    for i in range(256):
        B64[i] = -1
    for i in range(64):
        B64[alphabet[i]] = i


_init_b64()


cdef Py_ssize_t _b64_decode(const uint8_t* s, Py_ssize_t n, uint8_t* out) noexcept nogil:
    """Strict base64 (with '=' padding to a multiple of 4); the decoded length, or -1."""
    cdef Py_ssize_t i, o = 0, pad = 0
    cdef unsigned int acc
    cdef int v, k
    if n == 0 or n % 4 != 0:
        return -1
    if s[n - 1] == 61:
        pad = 2 if s[n - 2] == 61 else 1
    i = 0
    while i < n:
        acc = 0
        for k in range(4):
            if i + k >= n - pad:
                v = 0
            else:
                v = B64[s[i + k]]
                if v < 0:
                    return -1
            acc = (acc << 6) | <unsigned int>v
        out[o] = <uint8_t>(acc >> 16)
        out[o + 1] = <uint8_t>(acc >> 8)
        out[o + 2] = <uint8_t>acc
        o += 3
        i += 4
    return o - pad


def parse_tiktoken(const uint8_t[::1] data, str source="<bytes>"):
    """The tokens of a `.tiktoken` file as a list indexed by rank (None for unused ranks).

    ValueError, naming the line, for a malformed line, bad base64, a bad or repeated rank,
    or an empty file."""
    cdef Py_ssize_t n = data.shape[0], pos = 0, line_start, sp, end, lineno = 0
    cdef Py_ssize_t n_lines = 0, i, count = 0, dlen
    cdef int64_t rank, max_rank = -1
    cdef const uint8_t* s = &data[0] if n else NULL
    cdef uint8_t buf[1024]
    cdef list tokens = []
    cdef list ranks_seen
    cdef object token
    # first pass: the largest rank, so the result list can be sized once
    entries = []
    while pos < n:
        line_start = pos
        while pos < n and s[pos] != 10:
            pos += 1
        end = pos
        pos += 1
        lineno += 1
        if end > line_start and s[end - 1] == 13:
            end -= 1
        if end == line_start:
            continue
        sp = line_start
        while sp < end and s[sp] != 32:
            sp += 1
        if sp == end or sp == line_start or sp + 1 == end:
            raise ValueError(f"{source}:{lineno}: expected 'base64 rank', got {bytes(s[line_start:end])[:60]!r}")
        if sp - line_start > 1360:
            raise ValueError(f"{source}:{lineno}: token longer than 1 KiB")
        dlen = _b64_decode(s + line_start, sp - line_start, buf)
        if dlen <= 0:
            raise ValueError(f"{source}:{lineno}: bad base64 {bytes(s[line_start:sp])[:60]!r}")
        rank = 0
        for i in range(sp + 1, end):
            if s[i] < 48 or s[i] > 57 or rank > 0x7FFFFFFF:
                raise ValueError(f"{source}:{lineno}: bad rank {bytes(s[sp + 1:end])[:30]!r}")
            rank = rank * 10 + (s[i] - 48)
        if rank > 0x7FFFFFFF:
            raise ValueError(f"{source}:{lineno}: bad rank {bytes(s[sp + 1:end])[:30]!r}")
        entries.append((rank, PyBytes_FromStringAndSize(<char*>buf, dlen), lineno))
        if rank > max_rank:
            max_rank = rank
    if not entries:
        raise ValueError(f"{source}: no tokens")
    if max_rank > 16 * len(entries) + 65536:
        raise ValueError(f"{source}: ranks are too sparse (largest {max_rank} for {len(entries)} tokens)")
    tokens = [None] * (max_rank + 1)
    for rank, token, lineno in entries:
        if tokens[rank] is not None:
            raise ValueError(f"{source}:{lineno}: rank {rank} appears twice")
        tokens[rank] = token
    return tokens
