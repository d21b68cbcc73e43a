# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Corpus helpers that need no vocabulary: cutting a file's bytes into documents."""
from libc.stdint cimport uint8_t, int64_t
from libc.stdlib cimport realloc, free
from libc.string cimport memchr, memcmp, memcpy


cdef object _np():
    """numpy, imported on first use (see _core._np)."""
    import numpy
    return numpy


def find_separators(const uint8_t[::1] data, const uint8_t[::1] sep, Py_ssize_t start=0):
    """Where `sep` occurs in data[start:], left to right without overlaps (where bytes.split
    cuts): an int64 array of match positions.  The corpus path cuts files into documents
    with it, without a Python object per document."""
    cdef Py_ssize_t n = data.shape[0], m = sep.shape[0], pos = start, count = 0, cap = 0
    cdef int64_t* hits = NULL
    cdef int64_t* grown
    cdef const uint8_t* p
    cdef bint failed = False
    cdef int64_t[::1] view
    if m == 0:
        raise ValueError("empty separator")
    if start < 0:
        raise ValueError("start must be >= 0")
    with nogil:
        while pos + m <= n:
            p = <const uint8_t*>memchr(&data[0] + pos, sep[0], <size_t>(n - m + 1 - pos))
            if p == NULL:
                break
            pos = p - &data[0]
            if memcmp(p, &sep[0], <size_t>m) != 0:
                pos += 1
                continue
            if count == cap:
                cap = cap * 2 if cap else 1024
                grown = <int64_t*>realloc(hits, cap * sizeof(int64_t))
                if grown == NULL:
                    failed = True
                    break
                hits = grown
            hits[count] = pos
            count += 1
            pos += m
    try:
        if failed:
            raise MemoryError()
        out = _np().empty(count, dtype=_np().int64)
        view = out
        if count:
            memcpy(&view[0], hits, count * sizeof(int64_t))
        return out
    finally:
        free(hits)
