# The min-heap of candidate merges shared by the merge loops (_core's long pieces, _merge_ids).
# Inline, so each kernel compiles its own copy: no cross-module call in the hot loop.
from libc.stdint cimport uint64_t

# the min-heap of candidate merges: entries are (rank << 32 | position), so the smallest
# entry is the lowest rank and, among equal ranks, the leftmost position.  4-ary: half the
# depth of a binary heap, and a node's children share a cache line (a 1 MB piece has a
# heap of millions of entries, far beyond the caches).

cdef inline void heap_push(uint64_t* h, Py_ssize_t* size, uint64_t v) noexcept nogil:
    cdef Py_ssize_t i = size[0]
    cdef Py_ssize_t parent
    size[0] = i + 1
    while i > 0:
        parent = (i - 1) >> 2
        if h[parent] <= v:
            break
        h[i] = h[parent]
        i = parent
    h[i] = v


cdef inline uint64_t heap_pop(uint64_t* h, Py_ssize_t* size) noexcept nogil:
    cdef uint64_t top = h[0]
    cdef Py_ssize_t n = size[0] - 1
    cdef uint64_t v = h[n]
    cdef Py_ssize_t i = 0
    cdef Py_ssize_t c, k, best, lo, hi
    size[0] = n
    while True:
        c = 4 * i + 1
        if c >= n:
            break
        if c + 3 < n:    # four children: two pairs, then the pair winners (branch-free)
            lo = c if h[c] <= h[c + 1] else c + 1
            hi = c + 2 if h[c + 2] <= h[c + 3] else c + 3
            best = lo if h[lo] <= h[hi] else hi
        else:
            best = c
            for k in range(c + 1, n):
                if h[k] < h[best]:
                    best = k
        if v <= h[best]:
            break
        h[i] = h[best]
        i = best
    if n > 0:
        h[i] = v
    return top
