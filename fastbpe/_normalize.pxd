# C API of fastbpe/_normalize.pyx: a compiled normalizer program, for kernels that normalize
# a text before encoding it (_short_call's ShortCall, _added_split's stretches between tokens).
from fastbpe._normalize_buf cimport Buf, View

cdef struct Op:
    int kind
    int arg
    const unsigned char* table
    const unsigned int* pattern
    Py_ssize_t pattern_n
    const Py_ssize_t* fail      # the literal's KMP failure table
    const unsigned int* content
    Py_ssize_t content_n
    unsigned long long ascii[2]     # a Replace's class (OP_REPLACE_RUN): bits of code points < 128,
    const unsigned short* index     # then a block of 32 bytes per 256 code points
    const unsigned char* blocks
    Py_ssize_t run_max              # a match: a run of 1..run_max class members
    bint then_lower                 # a replace_run whose content is one character, before a
    unsigned int lower_content      # Lowercase: both in one pass, with the content lowercased


cdef class Program:
    cdef Op* ops
    cdef int n_ops
    cdef bint ascii_stable   # no op changes an ASCII text (forms, StripAccents only)
    cdef list keep           # the bytes the ops point into

    cdef const unsigned int* _chars(self, str s, Py_ssize_t* n) except? NULL
    cdef const Py_ssize_t* _failure_table(self, const unsigned int* pattern, Py_ssize_t m) except? NULL
    cdef int _add(self, tuple spec) except -1
    # The normalized text; text itself when no op changes it.
    cpdef str normalize(self, str text)


# Every op of a program over text: the index (0 or 1) of bufs holding the result, or -1 when no
# op changed it (bufs zeroed by the caller, freed with buf_free; reused across calls).
cdef int run_ops(const Op* ops, int n_ops, View text, Buf* bufs) except -2 nogil
