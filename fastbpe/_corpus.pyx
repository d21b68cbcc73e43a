# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The corpus kernels: cutting a file's bytes into documents (`find_separators`, no
vocabulary needed) and encoding a block of documents in one GIL-free call
(`encode_documents`)."""
from libc.stdint cimport uint8_t, int64_t, UINT32_MAX
from libc.stdlib cimport realloc, free
from libc.string cimport memchr, memcmp, memcpy, memset

from fastbpe._core cimport BPETable, thread_cache
from fastbpe._id_output cimport idbuf_to_numpy
from fastbpe._piece_cache cimport PieceCache
from fastbpe._vocab cimport tok_t
from fastbpe._utf8 cimport utf8_valid
from fastbpe._workspace cimport IdBuf, Work, idbuf_free, idbuf_reserve, work_free


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


def encode_documents(BPETable table, const uint8_t[::1] data, const int64_t[::1] starts,
                     const int64_t[::1] ends, int kind, int64_t separator):
    """Encode the documents data[starts[i]:ends[i]] (valid UTF-8) in one GIL-free pass,
    with `separator` appended after each when it is >= 0.  Returns (uint32 ids, int64
    stops): the ids of document i, its separator included, stop at stops[i].  The corpus
    path (fastbpe/corpus.py) calls this once per block of a file, its documents located
    in place, so many small documents cost one call, one array and no copies."""
    table.require_byte_pairs()
    cdef Py_ssize_t n_docs = starts.shape[0], i
    cdef IdBuf out
    cdef Work w
    cdef PieceCache cache
    if kind < 0:
        raise ValueError("encode_documents needs a pattern the C scanner knows")
    if ends.shape[0] != n_docs:
        raise ValueError("starts and ends differ in length")
    if separator >= table.tok.n_ids or separator > UINT32_MAX:
        raise ValueError(f"separator {separator} is not a token of this vocabulary")
    for i in range(n_docs):
        if starts[i] < 0 or starts[i] > ends[i] or ends[i] > data.shape[0]:
            raise ValueError(f"document {i} ({starts[i]}:{ends[i]}) is not inside data")
    np = _np()
    stops = np.empty(n_docs, dtype=np.int64)
    cdef int64_t[::1] stops_view = stops
    cdef bint valid = True
    with nogil:
        for i in range(n_docs):
            if not utf8_valid(&data[0] + starts[i], ends[i] - starts[i]):
                valid = False
                break
    if not valid:
        return None
    cache = thread_cache(table)
    memset(&out, 0, sizeof(IdBuf))
    memset(&w, 0, sizeof(Work))
    cache.lend(&w, ends[n_docs - 1] - starts[0] if n_docs else 0)
    try:
        with nogil:
            idbuf_reserve(&out, data.shape[0] // 4 + n_docs + 16)
            for i in range(n_docs):
                if ends[i] > starts[i]:
                    table.encode_utf8(&data[0] + starts[i], ends[i] - starts[i], kind, &out, &w)
                if separator >= 0:
                    idbuf_reserve(&out, 1)
                    out.data[out.len] = <tok_t>separator
                    out.len += 1
                stops_view[i] = out.len
        return idbuf_to_numpy(&out), stops
    finally:
        idbuf_free(&out)
        work_free(&w)
