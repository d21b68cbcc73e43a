# A call's ids as Python objects (_id_output.pyx).
from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport IdBuf

cdef tuple id_ints(Py_ssize_t n_ids, Py_ssize_t n_tokens)
cdef object idbuf_to_list(IdBuf* b, tuple id_objects)
cdef object ids_to_list(const tok_t* ids, Py_ssize_t n, tuple id_objects)
cdef list batch_lists(const tok_t* ids, const Py_ssize_t* starts, Py_ssize_t n, tuple id_objects)
cdef list idbufs_lists(IdBuf* bufs, Py_ssize_t n, tuple id_objects)
cdef object idbuf_to_numpy(IdBuf* b)
cdef object idbuf_to_array(IdBuf* b)
