# The per-thread piece cache of the encode kernel (_piece_cache.pyx): piece bytes -> ids.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, memset

from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport CacheEntry, IdBuf, PackedEntry, SpillCache, SpillSlot, Work

cdef enum:
    PACKED_SIZE = 65536      # packed entries of a new piece cache (a power of two): 2 MiB
    PACKED_GROWN = 262144    # ... of one that has been given a long text: 8 MiB
    GROW_CALL = 262144       # characters of text in one call that grow it (PieceCache.lend)
    GROW_AFTER = 4194304     # ... or in all its calls
    PACKED_MAX_IDS = 3       # PackedEntry.ids
    CACHE_SIZE = 32768       # entries for longer pieces (a power of two): 2 MiB
    CACHE_MAX_PIECE = 24     # longer pieces are not cached (CacheEntry.bytes)
    CACHE_MAX_IDS = 6        # nor pieces of more ids (CacheEntry.ids)
    SPILL_SLOTS = 16384      # SpillCache: slots at most (a power of two, direct mapped) ...
    SPILL_POOL = 4194304     # ... and bytes of pieces and ids at most (then it empties when full)
    SPILL_SLOTS_FIRST = 1024     # ... and at first: both grow 4 times at a time as they fill,
    SPILL_POOL_FIRST = 65536     # so English text, which rarely spills, never pays for 4 MiB
    SPILL_MAX_PIECE = 1024   # longer pieces are not kept at all

cdef class PieceCache:        # piece -> ids of one table, used by one thread only
    cdef PackedEntry* packed
    cdef uint64_t packed_mask   # packed entries - 1
    cdef CacheEntry* entries
    cdef Py_ssize_t seen      # characters of text encoded with it, until it grows
    cdef SpillCache spill     # pieces the entries above cannot keep
    cdef Work scratch         # that thread's merge scratch for short calls (see _core.encode_text)
    cdef IdBuf kept_out       # ... and its output buffer for encode_text (up to _core.KEPT_IDS ids kept)
    cdef int lend(self, Work* w, Py_ssize_t nbytes) except -1


cdef inline void packed_store(PackedEntry* packed, uint64_t mask, uint64_t h, uint64_t k0,
                              uint64_t k1, const tok_t* ids, Py_ssize_t n_ids) noexcept nogil:
    """Remember the piece of packed key (k0, k1) and hash h -> ids (n_ids <= PACKED_MAX_IDS),
    evicting whatever held its entry.  n_ids = 0 marks a piece whose ids are in the long
    entries (4-6 ids): a hit on it looks there, a miss on it never does."""
    cdef PackedEntry* pe = &packed[h & mask]
    pe.k0, pe.k1, pe.n_ids = k0, k1, <uint32_t>n_ids
    memcpy(pe.ids, ids, <size_t>n_ids * sizeof(tok_t))


cdef inline CacheEntry* cache_find(CacheEntry* entries, const uint8_t* p, Py_ssize_t n,
                                   uint64_t h, uint64_t head) noexcept nogil:
    """The entry holding piece p[:n] (2 <= n <= CACHE_MAX_PIECE; head = its first 8 bytes,
    zero padded), or NULL."""
    cdef CacheEntry* e = &entries[h & (CACHE_SIZE - 1)]
    cdef uint64_t first
    if e.hash != h or e.length != n:
        return NULL
    memcpy(&first, e.bytes, 8)
    if first != head or (n > 8 and memcmp(e.bytes + 8, p + 8, <size_t>(n - 8)) != 0):
        return NULL
    return e


cdef inline void cache_store(CacheEntry* entries, const uint8_t* p, Py_ssize_t n, uint64_t h,
                             const tok_t* ids, Py_ssize_t n_ids) noexcept nogil:
    """Remember piece p[:n] -> ids, evicting whatever held its entry."""
    cdef CacheEntry* e = &entries[h & (CACHE_SIZE - 1)]
    e.hash = h
    memset(e.bytes, 0, sizeof(e.bytes))
    memcpy(e.bytes, p, <size_t>n)
    memcpy(e.ids, ids, <size_t>n_ids * sizeof(tok_t))
    e.length = <uint16_t>n
    e.n_ids = <uint16_t>n_ids


cdef int spill_store(SpillCache* c, const uint8_t* p, Py_ssize_t n, uint64_t h, const tok_t* ids,
                     Py_ssize_t n_ids) noexcept nogil


cdef inline Py_ssize_t spill_find(const SpillCache* c, const uint8_t* p, Py_ssize_t n, uint64_t h,
                                  tok_t* out) noexcept nogil:
    """If c keeps piece p[:n] (hash h), copy its ids to out and return how many, else -1.
    out has room for n ids (every id covers at least one byte)."""
    cdef const SpillSlot* s
    if c.slots == NULL:
        return -1
    s = &c.slots[h & c.mask]
    if s.hash != (h | 1) or s.n != n or memcmp(c.pool + s.at, p, <size_t>n) != 0:
        return -1
    memcpy(out, c.pool + s.at + ((n + 3) & ~3), <size_t>s.n_ids * sizeof(tok_t))
    return s.n_ids
