# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Merging from given initial ids, with optional BPE-dropout (HF `tokenizers` semantics),
on a `_core.BPETable`'s pair table."""
from libc.stdint cimport uint32_t, int32_t, uint64_t
from libc.stdlib cimport malloc, free

from fastbpe._core cimport BPETable
from fastbpe._vocab cimport DEAD, pair_get, tok_t
from fastbpe._heap cimport heap_pop, heap_push

# =========================================================================================
# Merging from given initial ids, with optional BPE-dropout (HF `tokenizers` semantics).
#
# Char-level HF models (byte_fallback, Metaspace, unk tokens, subword prefixes) start a word
# from ids that are not one per byte, and BPE-dropout skips merges at random: `merge_ids`
# runs the plain heap loop below on given ids.  (`_merge.merge_heap`, the byte path of every
# encode, has its own loop of sorted runs and a pile for long pieces; both take the lowest
# rank, leftmost on ties, and the tests check they agree.)  Dropout skips each popped
# candidate with probability `dropout`; skipped candidates go back on the heap after the
# next merge, as HF does.
# =========================================================================================

cdef inline uint64_t _splitmix64(uint64_t* state) noexcept nogil:
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef Py_ssize_t heap_merge_loop(BPETable table, tok_t* ids, int32_t* nxt, int32_t* prv, uint64_t* heap,
                                Py_ssize_t size, Py_ssize_t n, uint64_t* skipped, double dropout,
                                uint64_t seed) noexcept nogil:
    """The heap loop of `merge_ids`: parts ids[0..n)
    linked by nxt/prv, candidates (rank << 32 | position) in heap[0..size); merged-away parts
    become DEAD.  With dropout > 0 (skipped: room for as many entries as heap), each popped
    candidate is skipped with that probability and re-pushed after the next merge (HF's rule).
    Returns the number of parts left."""
    cdef Py_ssize_t n_skipped = 0, i, pos, right, after, before, survivors = n
    cdef uint32_t r, r2
    cdef tok_t nid
    cdef uint64_t top, rng = seed
    # skip when 53 random bits fall below dropout * 2^53
    cdef uint64_t cut = <uint64_t>(dropout * 9007199254740992.0) if dropout > 0 else 0
    while size > 0:
        top = heap_pop(heap, &size)
        if cut:
            if (_splitmix64(&rng) >> 11) < cut:
                skipped[n_skipped] = top
                n_skipped += 1
                continue
            for i in range(n_skipped):
                heap_push(heap, &size, skipped[i])
            n_skipped = 0
        r = <uint32_t>(top >> 32)
        pos = <Py_ssize_t>(top & 0xFFFFFFFFU)
        if ids[pos] == DEAD:
            continue
        right = nxt[pos]
        if right >= n:
            continue
        # stale if the pair at pos changed since the entry was pushed
        if not pair_get(&table.pairs, ids[pos], ids[right], &r2, &nid) or r2 != r:
            continue
        ids[pos] = nid
        ids[right] = DEAD
        survivors -= 1
        after = nxt[right]
        nxt[pos] = <int32_t>after
        if after < n:
            prv[after] = <int32_t>pos
            if pair_get(&table.pairs, nid, ids[after], &r2, &nid):
                heap_push(heap, &size, (<uint64_t>r2 << 32) | <uint64_t>pos)
        before = prv[pos]
        if before >= 0:
            if pair_get(&table.pairs, ids[before], ids[pos], &r2, &nid):
                heap_push(heap, &size, (<uint64_t>r2 << 32) | <uint64_t>before)
    return survivors


cdef Py_ssize_t merge_ids_kernel(BPETable table, tok_t* ids, int32_t* nxt, int32_t* prv,
                                 uint64_t* heap, uint64_t* skipped, Py_ssize_t n,
                                 double dropout, uint64_t seed) noexcept nogil:
    """Merge the n parts ids[0..n) in place (see heap_merge_loop); heap and skipped hold 3n
    entries each.  Returns the number of parts left."""
    cdef Py_ssize_t size = 0, i
    cdef uint32_t r
    cdef tok_t nid
    for i in range(n):
        nxt[i] = <int32_t>(i + 1)
        prv[i] = <int32_t>(i - 1)
    for i in range(n - 1):
        if pair_get(&table.pairs, ids[i], ids[i + 1], &r, &nid):
            heap_push(heap, &size, (<uint64_t>r << 32) | <uint64_t>i)
    return heap_merge_loop(table, ids, nxt, prv, heap, size, n, skipped, dropout, seed)


def merge_ids(BPETable table, initial_ids, double dropout=0.0, uint64_t seed=0):
    """Merge a word given as its initial part ids with table's merges (lowest rank first,
    leftmost on ties); each candidate merge is skipped with probability `dropout`, drawn
    from a generator seeded with `seed` (same seed, same result).  Returns (ids, starts):
    the final ids and, for each, the index of its first initial part."""
    cdef Py_ssize_t n = len(initial_ids), i, k
    cdef tok_t* ids
    cdef int32_t* nxt
    cdef int32_t* prv
    cdef uint64_t* heap
    cdef uint64_t* skipped
    cdef object t
    if not 0.0 <= dropout <= 1.0:
        raise ValueError(f"dropout must be between 0 and 1, got {dropout}")
    if n >= 0x7FFFFFFF // 4:
        raise ValueError("a word of 512 Mi parts or more cannot be merged")
    ids = <tok_t*>malloc((n + 1) * sizeof(tok_t))
    nxt = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    prv = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    heap = <uint64_t*>malloc((3 * n + 4) * sizeof(uint64_t))
    skipped = <uint64_t*>malloc((3 * n + 4) * sizeof(uint64_t))
    try:
        if ids == NULL or nxt == NULL or prv == NULL or heap == NULL or skipped == NULL:
            raise MemoryError()
        i = 0
        for t in initial_ids:
            if i >= n:
                break
            if t < 0 or t >= table.tok.n_ids:
                raise ValueError(f"initial id {t} is outside the vocabulary")
            ids[i] = <tok_t>t
            i += 1
        with nogil:
            merge_ids_kernel(table, ids, nxt, prv, heap, skipped, n, dropout, seed)
        out_ids = []
        starts = []
        k = 0
        while k < n:
            out_ids.append(ids[k])
            starts.append(k)
            k = nxt[k]
        return out_ids, starts
    finally:
        free(ids)
        free(nxt)
        free(prv)
        free(heap)
        free(skipped)
