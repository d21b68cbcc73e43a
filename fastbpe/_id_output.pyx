# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A call's ids (an IdBuf) as what Python gets back: a list of ints made from ready int
objects, a numpy uint32 array copied once, or an array.array('I') (no numpy import)."""
from array import array
from cpython.list cimport PyList_New
from cpython.ref cimport Py_INCREF, PyObject
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport IdBuf

cdef extern from "Python.h":
    ctypedef struct PyListObject:
        PyObject** ob_item
        Py_ssize_t allocated
    void Py_SET_SIZE(object o, Py_ssize_t n)
    void* PyMem_Malloc(size_t n)
    PyObject** PySequence_Fast_ITEMS(object o)   # a tuple's (or list's) item array
    PyObject* PyLong_FromUnsignedLong(unsigned long v)


cdef object _np():
    """numpy, imported on first use: encoding to lists never needs it."""
    import numpy
    return numpy


cdef object idbuf_to_list(IdBuf* b, tuple id_objects):
    """A list of Python ints; id_objects[i] is the int i (an id past them, an added token's
    past the table's, is made).  Both item arrays are read and written directly: a new
    reference per id and nothing else in the loop."""
    cdef Py_ssize_t i, known = len(id_objects)
    cdef list out
    cdef PyObject** src = PySequence_Fast_ITEMS(id_objects)
    cdef PyObject** dst
    if b.len == 0:
        return PyList_New(0)
    # the item array from PyMem_Malloc, not PyList_New's zeroed one: every slot is written
    # below before anything can look at the list (a memset of 8 bytes an id, 4% of an encode)
    dst = <PyObject**>PyMem_Malloc(b.len * sizeof(PyObject*))
    if dst == NULL:
        raise MemoryError()
    out = PyList_New(0)
    (<PyListObject*>out).ob_item = dst
    (<PyListObject*>out).allocated = b.len
    cdef const tok_t* ids = b.data
    cdef PyObject* v
    for i in range(b.len):
        if <Py_ssize_t>ids[i] < known:
            v = src[ids[i]]
            Py_INCREF(<object>v)
        else:
            v = PyLong_FromUnsignedLong(ids[i])
            if v == NULL:
                Py_SET_SIZE(out, i)     # the list owns the first i only
                raise MemoryError()
        dst[i] = v
    Py_SET_SIZE(out, b.len)
    return out


cdef object idbuf_to_numpy(IdBuf* b):
    np = _np()
    arr = np.empty(b.len, dtype=np.uint32)
    cdef uint32_t[::1] view = arr
    if b.len:
        memcpy(&view[0], b.data, b.len * sizeof(tok_t))
    return arr


cdef object idbuf_to_array(IdBuf* b):
    """An array.array('I') of the ids: what a caller that may never need numpy gets (the
    piece ends of a short Encoding); numpy reads it without a copy."""
    cdef object arr = array("I")
    if b.len:
        arr.frombytes((<char*>b.data)[:b.len * sizeof(tok_t)])
    return arr

