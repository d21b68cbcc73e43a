# What the UBPE encoders share: Python's float summation, the tf-idf term, and the scratch,
# candidate pool and word cache of the segmentation DAG (see _ubpe_lookup.pyx).  Inline.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset, memcpy, memcmp
from libc.math cimport log, fabs, isfinite

from fastbpe._hash cimport mix64
from fastbpe._memory cimport xrealloc


# ---------------------------------------------------------------- Python's sum() of floats

cdef struct FSum:            # CPython >= 3.12 sums floats with Neumaier's compensation
    double f
    double c


cdef inline void fsum_add(FSum* s, double x) noexcept nogil:
    cdef double t = s.f + x
    if fabs(s.f) >= fabs(x):
        s.c += (s.f - t) + x
    else:
        s.c += (x - t) + s.f
    s.f = t


cdef inline double fsum_value(const FSum* s) noexcept nogil:
    if s.c != 0.0 and isfinite(s.c):
        return s.f + s.c
    return s.f


cdef inline double tf_idf_term(int64_t freq, double weight) noexcept nogil:
    return (1.0 + log(<double>freq)) * weight


# ---------------------------------------------------------------- prefix tree of token sequences

cdef struct Edge:            # (node << 32 | symbol) -> child node
    uint64_t key
    int32_t child

cdef enum:
    EDGE_STRIDE = 2          # sizeof(Edge) / 8: Edge slots for _hash.probe


cdef struct Cand:            # one segmentation of a suffix, sharing its tail with others (a cons list)
    int32_t token
    int32_t tail             # index of the rest in the pool; -1 at the end of the word
    int32_t length           # number of tokens
    double weight            # the reference's tf-idf value of the whole sequence
    double f                 # the compensated sum behind `weight` (see FSum)
    double c


cdef struct DagWork:         # scratch for one call; owned by the call
    Cand* pool
    Py_ssize_t pool_len, pool_cap
    int32_t* heads           # [(L + 1) * top_n] candidate indices per position, heap order
    Py_ssize_t pos_cap
    int32_t* n_heads         # [L + 1]
    int32_t* scratch         # tokens of one sequence
    Py_ssize_t scratch_cap   # of n_heads, scratch and order
    int64_t* freq            # [n_ids] token frequencies while summing (all zero between uses)
    int32_t* order           # distinct tokens in counter order


cdef inline int dag_reserve(DagWork* w, Py_ssize_t n_pos, Py_ssize_t top_n) except -1 nogil:
    """Room for a word of n_pos - 1 symbols and `top_n` candidates per position (the scratch
    outlives calls, whose words and top_n differ, so each array has its own capacity)."""
    cdef Py_ssize_t need = n_pos * top_n
    if need > w.pos_cap:
        free(w.heads)
        w.pos_cap = 0
        w.heads = <int32_t*>malloc(need * sizeof(int32_t))
        if w.heads == NULL:
            with gil:
                raise MemoryError()
        w.pos_cap = need
    if n_pos + 1 > w.scratch_cap:
        free(w.n_heads)
        free(w.scratch)
        free(w.order)
        w.scratch_cap = 0
        w.n_heads = <int32_t*>malloc((n_pos + 1) * sizeof(int32_t))
        w.scratch = <int32_t*>malloc((n_pos + 1) * sizeof(int32_t))
        w.order = <int32_t*>malloc((n_pos + 1) * sizeof(int32_t))
        if w.n_heads == NULL or w.scratch == NULL or w.order == NULL:
            with gil:
                raise MemoryError()
        w.scratch_cap = n_pos + 1
    return 0


cdef inline int pool_push(DagWork* w, int32_t token, int32_t tail, int32_t length, double weight,
                   const FSum* state) except -1 nogil:
    if w.pool_len == w.pool_cap:
        w.pool_cap = w.pool_cap * 2 if w.pool_cap else 1024
        w.pool = <Cand*>xrealloc(w.pool, w.pool_cap * sizeof(Cand))
    w.pool[w.pool_len].token = token
    w.pool[w.pool_len].tail = tail
    w.pool[w.pool_len].length = length
    w.pool[w.pool_len].weight = weight
    w.pool[w.pool_len].f = state.f
    w.pool[w.pool_len].c = state.c
    w.pool_len += 1
    return <int>(w.pool_len - 1)


cdef inline void dag_free(DagWork* w) noexcept nogil:
    free(w.pool)
    free(w.heads)
    free(w.n_heads)
    free(w.scratch)
    free(w.freq)
    free(w.order)


cdef inline bint cand_less(double wa, int32_t la, double wb, int32_t lb) noexcept nogil:
    """EncodingCandidate.__lt__: lower weight; on equal weight the longer sequence is smaller."""
    if wa == wb:
        return la > lb
    return wa < wb


cdef inline Py_ssize_t sift_up(int32_t* heap, const Cand* pool, Py_ssize_t pos, double wt,
                               int32_t length) noexcept nogil:
    """heapq's _siftdown for a new item at `pos`: parents greater than it move down; returns
    the slot where the item belongs."""
    cdef Py_ssize_t h
    while pos > 0:
        h = (pos - 1) >> 1
        if not cand_less(wt, length, pool[heap[h]].weight, pool[heap[h]].length):
            break
        heap[pos] = heap[h]
        pos = h
    return pos


# Encodings of words already seen (natural text repeats its words): per (word, top_n) the sorted
# candidates with their tokens, in arenas owned by the UBPELookup; emptied when it grows past
# CACHE_MAX_* so memory stays bounded.  Only touched with the GIL held.

cdef struct CacheEntry:
    uint64_t hash            # 0: free slot
    int64_t word_off         # symbols in `words`
    int64_t cand_off         # candidates in `cands`, best first
    int32_t word_len
    int32_t top_n
    int32_t n_cand


cdef struct CachedCand:
    double weight
    int64_t tok_off          # tokens in `toks`
    int32_t length


cdef struct WordCache:
    CacheEntry* entries
    uint64_t mask
    Py_ssize_t n_entries
    int32_t* words
    Py_ssize_t words_len, words_cap
    int32_t* toks
    Py_ssize_t toks_len, toks_cap
    CachedCand* cands
    Py_ssize_t cands_len, cands_cap


cdef enum:
    CACHE_SLOTS = 1 << 16           # emptied at half full
    CACHE_MAX_SYMBOLS = 1 << 22     # of the words kept


cdef inline uint64_t word_hash(const int32_t* word, Py_ssize_t n, Py_ssize_t top_n) noexcept nogil:
    cdef uint64_t h = <uint64_t>top_n * 0x9E3779B97F4A7C15ULL + <uint64_t>n
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ <uint32_t>word[i]) * 0x100000001B3ULL
    h = mix64(h)
    return h if h != 0 else 1


cdef inline CacheEntry* cache_find(WordCache* cc, uint64_t h, const int32_t* word, Py_ssize_t n,
                                   Py_ssize_t top_n, uint64_t* slot) noexcept:
    """The entry of (word, top_n), or NULL with *slot = the free slot where it would go."""
    cdef uint64_t i = h & cc.mask
    cdef CacheEntry* e
    while cc.entries[i].hash != 0:
        e = &cc.entries[i]
        if (e.hash == h and e.word_len == n and e.top_n == top_n and
                (n == 0 or memcmp(&cc.words[e.word_off], word, n * sizeof(int32_t)) == 0)):
            return e
        i = (i + 1) & cc.mask
    slot[0] = i
    return NULL


cdef inline int grow_array(void** data, Py_ssize_t* cap, Py_ssize_t need, size_t item) except -1:
    cdef Py_ssize_t new_cap = cap[0] if cap[0] else 1024
    cdef void* grown
    if need <= cap[0]:
        return 0
    while new_cap < need:
        new_cap *= 2
    grown = realloc(data[0], new_cap * item)
    if grown == NULL:
        raise MemoryError()
    data[0] = grown
    cap[0] = new_cap
    return 0
