# cython: language_level=3
"""The tables of the training kernels (_train.pyx, _count.pyx): the pair map, the heap of
candidate merges, int vectors and the pair table, in _train_pairs.pyx; the small helpers
the merge loops call per pair are inline here."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset

from fastbpe._hash cimport mix64, probe
from fastbpe._memory cimport xrealloc

cdef extern from *:
    """
    #define FASTBPE_EMPTY_KEY 0xFFFFFFFFFFFFFFFFULL
    """
    uint64_t EMPTY_KEY "FASTBPE_EMPTY_KEY"


# Open-addressing hash map from a pair key (left << 32 | right) to an int32 index.
cdef struct PairMap:
    uint64_t* keys      # EMPTY_KEY marks a free slot
    int32_t* vals
    size_t mask         # capacity - 1; capacity is a power of two
    size_t size


# One candidate merge in the max-heap.  Higher count wins; on equal counts the smaller
# ``tie`` wins (the pair key for the default rule, the first position for minbpe's rule).
cdef struct HeapItem:
    int64_t count
    uint64_t tie
    int32_t pair


cdef struct Heap:
    HeapItem* items
    size_t size
    size_t cap


# A growable int32 vector (the pieces where one pair occurs).
cdef struct IntVec:
    int32_t* data
    int32_t size
    int32_t cap


# The pairs a trainer has seen, numbered in order of appearance: both trainers' table.
# A trainer keeps its own per-pair arrays beside these, grown to the same `cap`.
cdef struct Pairs:
    PairMap map         # pair key -> number
    int32_t n
    int32_t cap
    int32_t* left
    int32_t* right
    int64_t* count
    uint8_t* is_new     # made or grown by the current merge (listed in new_list)
    IntVec new_list


cdef inline uint64_t pair_key(int32_t a, int32_t b) noexcept nogil:
    return (<uint64_t><uint32_t>a << 32) | <uint32_t>b


cdef inline int32_t pairmap_get(const PairMap* m, uint64_t key) noexcept nogil:
    """The value for ``key``, or -1.  (The probe loop of _hash.probe, returning the value
    from inside the loop: the merge loops call this per pair, and this shape keeps it small
    enough that the compiler inlines their callers.)"""
    cdef size_t i = mix64(key) & m.mask
    cdef uint64_t k
    while True:
        k = m.keys[i]
        if k == key:
            return m.vals[i]
        if k == EMPTY_KEY:
            return -1
        i = (i + 1) & m.mask


cdef inline bint heap_above(const HeapItem* x, const HeapItem* y) noexcept nogil:
    return x.count > y.count or (x.count == y.count and x.tie < y.tie)


cdef inline int intvec_push(IntVec* v, int32_t x) except -1 nogil:
    if v.size == v.cap:
        v.cap = 2 * v.cap if v.cap else 4
        v.data = <int32_t*>xrealloc(v.data, v.cap * sizeof(int32_t))
    v.data[v.size] = x
    v.size += 1
    return 0


# in _train_pairs.pyx
cdef int pairmap_init(PairMap* m, size_t expected) except -1 nogil
cdef void pairmap_free(PairMap* m) noexcept nogil
cdef int pairmap_put_new(PairMap* m, uint64_t key, int32_t val) except -1 nogil
cdef int heap_push(Heap* h, int64_t count, uint64_t tie, int32_t pair) except -1 nogil
cdef HeapItem heap_pop(Heap* h) noexcept nogil
cdef void intvec_free(IntVec* v) noexcept nogil
cdef void pairs_free(Pairs* p) noexcept nogil
cdef int32_t pairs_add(Pairs* p, int32_t a, int32_t b) except -1 nogil
