# A str's code units read in place (latin-1, UCS-2 or UCS-4 by its kind), without the GIL:
# the CPython accessors and one code point by index, for the kernels that walk a str as it is
# stored (HF's normalizers, the added-token trie) rather than its UTF-8.
from libc.stdint cimport uint8_t, uint16_t, uint32_t

cdef extern from "Python.h":
    int PyUnicode_KIND(object u)
    void* PyUnicode_DATA(object u)
    Py_ssize_t PyUnicode_GET_LENGTH(object u)


cdef inline uint32_t code_point(int kind, const void* data, Py_ssize_t i) noexcept nogil:
    if kind == 1:
        return (<const uint8_t*>data)[i]
    if kind == 2:
        return (<const uint16_t*>data)[i]
    return (<const uint32_t*>data)[i]
