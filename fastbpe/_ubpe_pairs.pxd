# The UBPE kernels' pair table: (left << 32 | right) -> occurrences and documents, by open
# addressing.  Inline, so the training loop and the classic encoder each compile their own copy.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset, memcpy, memcmp
from libc.math cimport log, fabs, isfinite

from fastbpe._hash cimport probe

cdef extern from *:
    """
    #define FB_UBPE_EMPTY 0xFFFFFFFFFFFFFFFFULL
    #define FB_UBPE_LOW32 0xFFFFFFFFULL
    """
    const uint64_t EMPTY "FB_UBPE_EMPTY"    # a free slot's key
    const uint64_t LOW32 "FB_UBPE_LOW32"


# ---------------------------------------------------------------- pair statistics (training)

cdef inline uint64_t pair_hash(uint64_t key) noexcept nogil:
    """A pair's slot hash: one multiply, the product's upper half (a pair is left << 32 | right,
    and both halves reach those bits); mix64's two rounds cost a third of counting."""
    return (key * 0x9E3779B97F4A7C15ULL) >> 32


cdef struct PairStat:
    uint64_t key         # left << 32 | right; EMPTY when free
    int64_t count        # occurrences in the corpus
    int64_t docs         # documents containing the pair
    int64_t listed       # 1 while the slot is in `used` (vanished pairs leave it, see top_candidates)


cdef struct PairStats:
    PairStat* slots
    uint64_t mask
    int64_t* used        # indices of listed slots (to scan without a full sweep)
    Py_ssize_t n_used
    Py_ssize_t n_occupied    # slots with a key, listed or not (the load factor)


cdef inline int stats_init(PairStats* t, uint64_t cap) except -1 nogil:
    t.slots = <PairStat*>malloc(cap * sizeof(PairStat))
    t.used = <int64_t*>malloc(cap * sizeof(int64_t))
    if t.slots == NULL or t.used == NULL:
        with gil:
            raise MemoryError()
    memset(t.slots, 0xFF, cap * sizeof(PairStat))
    t.mask = cap - 1
    t.n_used = 0
    t.n_occupied = 0
    return 0


cdef inline void stats_free(PairStats* t) noexcept nogil:
    free(t.slots)
    free(t.used)
    t.slots = NULL
    t.used = NULL


cdef enum:
    STAT_STRIDE = 4          # sizeof(PairStat) / 8: PairStat slots for _hash.probe


cdef inline PairStat* stats_find(const PairStats* t, uint64_t key) noexcept nogil:
    cdef uint64_t i = probe(&t.slots[0].key, STAT_STRIDE, t.mask, pair_hash(key) & t.mask, key, EMPTY)
    return &t.slots[i] if t.slots[i].key == key else NULL


cdef inline int stats_grow(PairStats* t) except -1 nogil:
    """Twice the slots, holding the listed entries (unlisted ones have count 0 and go)."""
    cdef PairStats bigger
    cdef Py_ssize_t k
    cdef PairStat* s
    cdef uint64_t i
    stats_init(&bigger, (t.mask + 1) * 2)
    for k in range(t.n_used):
        s = &t.slots[t.used[k]]
        i = probe(&bigger.slots[0].key, STAT_STRIDE, bigger.mask, pair_hash(s.key) & bigger.mask,
                  EMPTY, EMPTY)     # a free slot: the keys are distinct
        bigger.slots[i] = s[0]
        bigger.used[bigger.n_used] = <int64_t>i
        bigger.n_used += 1
    bigger.n_occupied = bigger.n_used
    stats_free(t)
    t[0] = bigger
    return 0


cdef inline PairStat* claim_slot(PairStats* t, uint64_t i, uint64_t key, bint listed) noexcept nogil:
    """Free slot i as the entry of `key` with zero counts, recorded in `used`."""
    cdef PairStat* s = &t.slots[i]
    s.key = key
    s.count = 0
    s.docs = 0
    s.listed = listed
    t.used[t.n_used] = <int64_t>i
    t.n_used += 1
    return s


cdef inline PairStat* stats_slot(PairStats* t, uint64_t key) except NULL nogil:
    """The entry of `key`, inserted with zero counts if absent, listed in `used` (valid until
    the next insert)."""
    cdef uint64_t i
    cdef PairStat* s
    if <uint64_t>(t.n_occupied + 1) * 2 > t.mask + 1:
        stats_grow(t)
    i = probe(&t.slots[0].key, STAT_STRIDE, t.mask, pair_hash(key) & t.mask, key, EMPTY)
    s = &t.slots[i]
    if s.key == key:
        if not s.listed:
            s.listed = 1
            t.used[t.n_used] = <int64_t>i
            t.n_used += 1
        return s
    t.n_occupied += 1
    return claim_slot(t, i, key, True)
