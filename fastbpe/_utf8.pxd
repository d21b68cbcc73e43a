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


cdef inline Py_ssize_t utf8_encode(int kind, const void* data, Py_ssize_t n, uint8_t* out,
                                   Py_ssize_t* bad) noexcept nogil:
    """Write the UTF-8 of n code units to out (utf8_capacity bytes); return its length.
    A lone surrogate stops it: returns -1 with its index in bad[0]."""
    cdef const uint8_t* u1 = <const uint8_t*>data
    cdef const uint16_t* u2 = <const uint16_t*>data
    cdef const uint32_t* u4 = <const uint32_t*>data
    cdef Py_ssize_t i = 0, o = 0, w
    cdef uint64_t block
    cdef uint32_t c
    if kind == 1:
        while i < n:
            if i + 8 <= n:
                memcpy(&block, u1 + i, 8)
                if block & 0x8080808080808080ULL == 0:
                    memcpy(out + o, &block, 8)
                    i += 8
                    o += 8
                    continue
            c = u1[i]
            i += 1
            if c < 0x80:
                out[o] = <uint8_t>c
                o += 1
            else:
                o += utf8_put(c, out + o)
        return o
    while i < n:
        if kind == 2:
            if i + 4 <= n:
                memcpy(&block, u2 + i, 8)
                if block & 0xFF80FF80FF80FF80ULL == 0:  # four ASCII code units
                    out[o] = <uint8_t>block
                    out[o + 1] = <uint8_t>(block >> 16)
                    out[o + 2] = <uint8_t>(block >> 32)
                    out[o + 3] = <uint8_t>(block >> 48)
                    i += 4
                    o += 4
                    continue
            c = u2[i]
        else:
            c = u4[i]
        if c < 0x80:
            out[o] = <uint8_t>c
            o += 1
        else:
            w = utf8_put(c, out + o)
            if w == 0:
                bad[0] = i
                return -1
            o += w
        i += 1
    return o
