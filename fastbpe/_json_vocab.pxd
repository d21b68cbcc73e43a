# cython: language_level=3
"""A tokenizer.json vocabulary kept as its UTF-8 keys in a C table (see _json_vocab.pyx)."""
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcmp, memcpy


cdef struct Slot:
    uint64_t hash
    int64_t offset          # in the arena; -1: free
    uint32_t length
    uint32_t id


cdef struct Entry:          # a key in the order the file gives it (the dict's order)
    int64_t offset
    uint32_t length
    uint32_t id


cdef struct Table:
    Slot* slots
    uint64_t mask
    uint8_t* arena
    Py_ssize_t used, cap, count
    Entry* entries          # count of them, room for entries_cap
    Py_ssize_t entries_cap


cdef inline uint64_t _hash2(const uint8_t* a, Py_ssize_t na, const uint8_t* b, Py_ssize_t nb) noexcept nogil:
    cdef uint64_t h = 0xCBF29CE484222325ULL
    cdef Py_ssize_t i
    for i in range(na):
        h = (h ^ a[i]) * 0x100000001B3ULL
    for i in range(nb):
        h = (h ^ b[i]) * 0x100000001B3ULL
    return h ^ (h >> 29)


cdef inline int64_t table_find(const Table* t, const uint8_t* a, Py_ssize_t na, const uint8_t* b, Py_ssize_t nb) noexcept nogil:
    """The id of the token whose UTF-8 is a + b, or -1."""
    cdef uint64_t h = _hash2(a, na, b, nb), i = h & t.mask
    cdef const Slot* sl
    while t.slots[i].offset >= 0:
        sl = &t.slots[i]
        if sl.hash == h and sl.length == na + nb and memcmp(t.arena + sl.offset, a, na) == 0 \
                and memcmp(t.arena + sl.offset + na, b, nb) == 0:
            return sl.id
        i = (i + 1) & t.mask
    return -1


cdef int table_init(Table* t, Py_ssize_t key_bytes) except -1
cdef void table_free(Table* t) noexcept
cdef int table_put(Table* t, const uint8_t* key, Py_ssize_t n, uint32_t tid) except -1
cdef bint utf8_valid(const uint8_t* s, Py_ssize_t n) noexcept nogil


cdef class JsonVocab:
    cdef Table t
    cdef readonly Py_ssize_t max_id     # the largest id (-1: no token)
    cdef int64_t _lookup(self, token) except -2
