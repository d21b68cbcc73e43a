# Growing C arrays: realloc that raises MemoryError (with the GIL taken) instead of returning
# NULL, so a kernel grows a buffer in one line, with or without the GIL.
from libc.stdlib cimport realloc


cdef inline void* xrealloc(void* p, size_t nbytes) except NULL nogil:
    """realloc that raises MemoryError instead of returning NULL."""
    cdef void* q = realloc(p, nbytes if nbytes > 0 else 1)
    if q == NULL:
        with gil:
            raise MemoryError()
    return q


cdef extern from "_table_alloc.h":
    # a large table read at random: 2 MiB-aligned, transparent huge pages advised (Linux);
    # zero != 0 clears it; NULL when out of memory; free with free()
    void* fb_table_alloc(size_t nbytes, int zero) nogil
