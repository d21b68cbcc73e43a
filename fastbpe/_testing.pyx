# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Test-only hooks into the kernels' C helpers: the tests compare them with Python's own
(bytes.decode, str.encode) and inspect the per-thread piece caches.  No product code imports
this module."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport uint8_t

from fastbpe._core cimport BPETable, thread_cache
from fastbpe._utf8 cimport (Utf8Text, utf8_text_check, utf8_text_close, utf8_text_convert,
                            utf8_text_open, utf8_valid)


def thread_piece_cache(BPETable table):
    """This thread's PieceCache for table (for tests and diagnostics)."""
    return thread_cache(table)


def is_valid_utf8(const uint8_t[::1] data):
    """utf8_valid for Python callers (the tests compare it with bytes.decode)."""
    if data.shape[0] == 0:
        return True
    return utf8_valid(&data[0], data.shape[0])


def utf8_of(str text):
    """The UTF-8 the GIL-free converter makes of text (the tests compare it with
    str.encode, lone surrogates included)."""
    cdef Utf8Text u
    utf8_text_open(text, &u)
    try:
        with nogil:
            utf8_text_convert(&u)
        utf8_text_check(text, &u)
        return PyBytes_FromStringAndSize(<const char*>u.s, u.n) if u.n else b""
    finally:
        utf8_text_close(&u)
