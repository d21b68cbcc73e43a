# cython: language_level=3
"""C structures shared by the training kernels (see _train.pyx)."""
from libc.stdint cimport int32_t, int64_t, uint64_t, uint8_t


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


# One unique piece in a PieceCounter: its bytes live in the counter's arena.
cdef struct PieceEntry:
    uint64_t hash
    int64_t count
    int64_t offset
    int64_t length
