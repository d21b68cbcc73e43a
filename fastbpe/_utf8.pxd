# UTF-8 of a str's own code units (latin-1, UCS-2 or UCS-4), without the GIL.
#
# CPython's encoder (str.encode / PyUnicode_AsUTF8String) walks a non-ASCII str one code
# unit at a time with the GIL held: on mostly-English text with a few curly quotes it was a
# fifth of the whole encode.  These loops copy ASCII runs several code units per step and
# run inside the kernels' GIL-free section, so batch threads convert in parallel.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

cdef extern from "Python.h":
    int PyUnicode_KIND(object s)
    void* PyUnicode_DATA(object s)


cdef inline Py_ssize_t utf8_capacity(int kind, Py_ssize_t n) noexcept nogil:
    """Bytes enough for the UTF-8 of n code units of this kind (1, 2 or 4 bytes each)."""
    return n * (2 if kind == 1 else (3 if kind == 2 else 4))


cdef inline Py_ssize_t utf8_put(uint32_t c, uint8_t* o) noexcept nogil:
    """Write the UTF-8 of one non-ASCII code point; return its length, 0 for a surrogate."""
    if c < 0x800:
        o[0] = <uint8_t>(0xC0 | (c >> 6))
        o[1] = <uint8_t>(0x80 | (c & 0x3F))
        return 2
    if c < 0x10000:
        if 0xD800 <= c <= 0xDFFF:
            return 0
        o[0] = <uint8_t>(0xE0 | (c >> 12))
        o[1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
        o[2] = <uint8_t>(0x80 | (c & 0x3F))
        return 3
    o[0] = <uint8_t>(0xF0 | (c >> 18))
    o[1] = <uint8_t>(0x80 | ((c >> 12) & 0x3F))
    o[2] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
    o[3] = <uint8_t>(0x80 | (c & 0x3F))
    return 4


cdef extern from "_ascii_runs.h" nogil:
    Py_ssize_t fb_ucs2_ascii_prefix(const uint16_t* src, Py_ssize_t n, uint8_t* out)
    Py_ssize_t fb_latin1_ascii_prefix(const uint8_t* src, Py_ssize_t n, uint8_t* out)


cdef inline Py_ssize_t utf8_encode(int kind, const void* data, Py_ssize_t n, uint8_t* out,
                                   Py_ssize_t* bad) noexcept nogil:
    """Write the UTF-8 of n code units to out (utf8_capacity bytes); return its length.
    A lone surrogate stops it: returns -1 with its index in bad[0].

    ASCII runs are copied a block at a time (_ascii_runs.h); the units between them one at a
    time, staying in that loop while they are non-ASCII (CJK text has no runs to look for)."""
    cdef const uint8_t* u1 = <const uint8_t*>data
    cdef const uint16_t* u2 = <const uint16_t*>data
    cdef const uint32_t* u4 = <const uint32_t*>data
    cdef Py_ssize_t i = 0, o = 0, w, k
    cdef uint32_t c
    while i < n:
        if kind == 1:
            k = fb_latin1_ascii_prefix(u1 + i, n - i, out + o)
        elif kind == 2:
            k = fb_ucs2_ascii_prefix(u2 + i, n - i, out + o)
        else:
            k = 0
        i += k
        o += k
        while i < n:
            c = u1[i] if kind == 1 else (u2[i] if kind == 2 else u4[i])
            i += 1
            if c < 0x80:
                out[o] = <uint8_t>c
                o += 1
                if kind != 4:
                    break     # maybe the start of an ASCII run: back to the block copy
                continue
            w = utf8_put(c, out + o)
            if w == 0:
                bad[0] = i - 1
                return -1
            o += w
    return o
