# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The training kernels' tables (declared in _train_pairs.pxd): the pair map, the heap of
candidate merges, int vectors and the pair table both trainers share."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from fastbpe._hash cimport mix64, probe


cdef int pairmap_init(PairMap* m, size_t expected) except -1 nogil:
    cdef size_t cap = 16
    while cap < 2 * expected:
        cap <<= 1
    m.keys = <uint64_t*>xrealloc(NULL, cap * sizeof(uint64_t))
    m.vals = <int32_t*>xrealloc(NULL, cap * sizeof(int32_t))
    memset(m.keys, 0xFF, cap * sizeof(uint64_t))
    m.mask = cap - 1
    m.size = 0
    return 0


cdef void pairmap_free(PairMap* m) noexcept nogil:
    free(m.keys)
    free(m.vals)
    m.keys = NULL
    m.vals = NULL


cdef int pairmap_put_new(PairMap* m, uint64_t key, int32_t val) except -1 nogil:
    """Insert a key known to be absent; doubles the table at load 1/2."""
    cdef size_t i, j, cap
    cdef uint64_t* keys
    cdef int32_t* vals
    if 2 * (m.size + 1) > m.mask + 1:
        cap = 2 * (m.mask + 1)
        keys = <uint64_t*>malloc(cap * sizeof(uint64_t))
        vals = <int32_t*>malloc(cap * sizeof(int32_t))
        if keys == NULL or vals == NULL:
            free(keys)
            free(vals)
            with gil:
                raise MemoryError()
        memset(keys, 0xFF, cap * sizeof(uint64_t))
        for j in range(m.mask + 1):
            if m.keys[j] != EMPTY_KEY:
                i = probe(keys, 1, cap - 1, mix64(m.keys[j]) & (cap - 1), EMPTY_KEY, EMPTY_KEY)  # a free slot
                keys[i] = m.keys[j]
                vals[i] = m.vals[j]
        free(m.keys)
        free(m.vals)
        m.keys = keys
        m.vals = vals
        m.mask = cap - 1
    i = probe(m.keys, 1, m.mask, mix64(key) & m.mask, EMPTY_KEY, EMPTY_KEY)   # absent: its free slot
    m.keys[i] = key
    m.vals[i] = val
    m.size += 1
    return 0


cdef int heap_push(Heap* h, int64_t count, uint64_t tie, int32_t pair) except -1 nogil:
    cdef size_t i, parent
    cdef HeapItem item
    if h.size == h.cap:
        h.cap = 2 * h.cap if h.cap else 1024
        h.items = <HeapItem*>xrealloc(h.items, h.cap * sizeof(HeapItem))
    item.count = count
    item.tie = tie
    item.pair = pair
    i = h.size
    h.size += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not heap_above(&item, &h.items[parent]):
            break
        h.items[i] = h.items[parent]
        i = parent
    h.items[i] = item
    return 0


cdef HeapItem heap_pop(Heap* h) noexcept nogil:
    """Remove and return the top item; the heap must not be empty."""
    cdef HeapItem top = h.items[0]
    cdef HeapItem last
    cdef size_t i = 0, child, n
    h.size -= 1
    n = h.size
    if n > 0:
        last = h.items[n]
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and heap_above(&h.items[child + 1], &h.items[child]):
                child += 1
            if not heap_above(&h.items[child], &last):
                break
            h.items[i] = h.items[child]
            i = child
        h.items[i] = last
    return top


cdef void intvec_free(IntVec* v) noexcept nogil:
    free(v.data)
    v.data = NULL
    v.size = 0
    v.cap = 0


cdef void pairs_free(Pairs* p) noexcept nogil:
    pairmap_free(&p.map)
    free(p.left)
    free(p.right)
    free(p.count)
    free(p.is_new)
    intvec_free(&p.new_list)
    p.left = p.right = NULL
    p.count = NULL
    p.is_new = NULL


cdef int32_t pairs_add(Pairs* p, int32_t a, int32_t b) except -1 nogil:
    """Number a new pair (a, b), count 0; the arrays grow by doubling (see Pairs.cap)."""
    cdef int32_t idx = p.n
    cdef int32_t cap
    if idx == p.cap:
        cap = 2 * p.cap if p.cap else 4096
        p.left = <int32_t*>xrealloc(p.left, cap * sizeof(int32_t))
        p.right = <int32_t*>xrealloc(p.right, cap * sizeof(int32_t))
        p.count = <int64_t*>xrealloc(p.count, cap * sizeof(int64_t))
        p.is_new = <uint8_t*>xrealloc(p.is_new, cap * sizeof(uint8_t))
        p.cap = cap
    pairmap_put_new(&p.map, pair_key(a, b), idx)
    p.left[idx] = a
    p.right[idx] = b
    p.count[idx] = 0
    p.is_new[idx] = 0
    p.n = idx + 1
    return idx
