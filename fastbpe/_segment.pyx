# cython: boundscheck=False, wraparound=False, cdivision=True
"""Shortest segmentation: each piece cut into vocabulary tokens with the fewest tokens.

A right-to-left dynamic program over byte positions with `BPETable`'s bytes -> id lookup.
Ties: at each position the longest first token among the optimal ones wins (lengths are tried
longest first and only a strictly better count replaces), so the result is deterministic and,
read left to right, greedy-longest among all fewest-token segmentations.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, free

from fastbpe._core cimport BPETable


cdef int shortest_piece(BPETable table, const uint8_t* p, Py_ssize_t n, Py_ssize_t max_len,
                        int32_t* count, int32_t* first, list out) except -1:
    """Append the ids of the fewest-token segmentation of p[0:n] to `out`."""
    cdef Py_ssize_t i, k, longest
    cdef int32_t t
    with nogil:
        count[n] = 0
        i = n - 1
        while i >= 0:
            count[i] = 0x7FFFFFFF
            first[i] = 0
            longest = n - i if n - i < max_len else max_len
            k = longest
            while k >= 1:
                if count[i + k] != 0x7FFFFFFF and count[i + k] + 1 < count[i]:
                    t = table.lookup(p + i, k)
                    if t >= 0:
                        count[i] = count[i + k] + 1
                        first[i] = <int32_t>k
                k -= 1
            i -= 1
    if n and count[0] == 0x7FFFFFFF:
        raise ValueError("a byte of the text has no token in this vocabulary")
    i = 0
    while i < n:
        out.append(table.lookup(p + i, first[i]))
        i += first[i]
    return 0


def byte_ids(BPETable table):
    """The token of each single byte (a list of 256; -1 where the vocabulary has none)."""
    return [table.tok.byte_id[b] for b in range(256)]


cdef Py_ssize_t longest_token(BPETable table) noexcept:
    cdef Py_ssize_t i, longest = 1
    for i in range(table.n_bpe_tokens):
        if table.tok.start[i] >= 0 and table.tok.length[i] > longest:
            longest = table.tok.length[i]
    return longest


def shortest_ids(BPETable table, list pieces):
    """Ids of each piece (bytes) segmented into the fewest vocabulary tokens, concatenated."""
    cdef list out = []
    cdef Py_ssize_t max_len = longest_token(table)
    cdef Py_ssize_t longest = 0, n
    cdef bytes piece
    cdef int32_t* count
    cdef int32_t* first
    for piece in pieces:
        if len(piece) > longest:
            longest = len(piece)
    count = <int32_t*>malloc((longest + 1) * sizeof(int32_t))
    first = <int32_t*>malloc((longest + 1) * sizeof(int32_t))
    try:
        if count == NULL or first == NULL:
            raise MemoryError()
        for piece in pieces:
            n = len(piece)
            shortest_piece(table, <const uint8_t*><char*>piece, n, max_len, count, first, out)
    finally:
        free(count)
        free(first)
    return out
