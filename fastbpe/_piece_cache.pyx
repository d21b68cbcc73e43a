# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The piece cache: piece bytes -> ids, per thread and per table, living across calls.

_core.thread_cache hands each thread its own PieceCache for a table; the encode loop
(_core.BPETable.encode_utf8) probes it before the token table and the merges."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t, uint16_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from fastbpe._memory cimport fb_table_alloc
from libc.string cimport memcmp, memcpy, memset

from fastbpe._workspace cimport idbuf_free, work_free

from fastbpe._hash cimport PACKED_MAX, packed_hash, packed_key, piece_hash
from fastbpe._vocab cimport load_head


cdef class PieceCache:
    """Two direct-mapped caches of piece -> ids for one table, used by one thread only.

    Text repeats its pieces (" the", " of", "()"), so most pieces are found here, in 4 MiB
    that stay warm across calls, instead of in the token table (several MiB) or merged
    again.  Pieces of up to 15 bytes and 3 ids (0.85-0.91 of English and code pieces,
    nearly all the rest being single bytes, which need no cache) live in packed entries:
    the key is the piece's bytes as two words (_hash.pxd), so a probe is two compares and a
    hit copies its ids as one 16-byte block.  Longer pieces (up to 24 bytes) and pieces of
    4-6 ids (a third of multilingual pieces) live in 64-byte entries holding the bytes.
    Pieces neither can keep (over 24 bytes, or non-ASCII ones of over 6 ids; up to
    SPILL_MAX_PIECE bytes: a third of multilingual text's bytes, runs of CJK characters) are
    kept in a spill cache (spill_store) made small on first need and grown as it fills, up
    to SPILL_POOL bytes: they were merged again on every call before.  Either way an entry is compared in full before it is used: a hash
    collision only evicts (never a wrong id).  Entries never point into a text."""

    def __cinit__(self):
        memset(&self.scratch, 0, sizeof(Work))
        memset(&self.kept_out, 0, sizeof(IdBuf))
        self.packed = <PackedEntry*>fb_table_alloc(PACKED_SIZE * sizeof(PackedEntry), 1)
        self.packed_mask = PACKED_SIZE - 1
        self.entries = <CacheEntry*>fb_table_alloc(CACHE_SIZE * sizeof(CacheEntry), 1)
        if self.packed == NULL or self.entries == NULL:
            raise MemoryError()

    cdef int lend(self, Work* w, Py_ssize_t nbytes) except -1:
        """Point w at this cache for a call that encodes about nbytes of text (with the GIL).

        The packed entries start at 2 MiB, enough for short calls, and grow to 8 MiB for a
        call of GROW_CALL characters or more, or once the calls together reach GROW_AFTER:
        the pieces of long texts then rarely evict each other (direct mapped; first-seen
        text +0-8%, text seen before +16-20%, measured).  The entries held so far move
        over.  Growing takes ~2 ms (clearing 8 MiB, moving the entries): it happens inside
        a long call, or once in millions of characters of short ones."""
        cdef PackedEntry* grown
        cdef uint64_t i
        if self.packed_mask < PACKED_GROWN - 1:
            self.seen += nbytes
            if nbytes >= GROW_CALL or self.seen >= GROW_AFTER:
                grown = <PackedEntry*>fb_table_alloc(PACKED_GROWN * sizeof(PackedEntry), 1)
                if grown == NULL:
                    raise MemoryError()
                for i in range(self.packed_mask + 1):
                    if self.packed[i].k1 != 0:
                        grown[packed_hash(self.packed[i].k0, self.packed[i].k1)
                              & (PACKED_GROWN - 1)] = self.packed[i]
                free(self.packed)
                self.packed = grown
                self.packed_mask = PACKED_GROWN - 1
        w.packed = self.packed
        w.packed_mask = self.packed_mask
        w.cache = self.entries
        w.spill = &self.spill
        return 0

    def __dealloc__(self):
        free(self.packed)
        free(self.entries)
        free(self.spill.slots)
        free(self.spill.pool)
        work_free(&self.scratch)
        idbuf_free(&self.kept_out)

    @property
    def packed_entries(self):
        """How many packed entries it has now (for tests: it grows with use)."""
        return self.packed_mask + 1

    def ids_of(self, bytes piece):
        """The cached ids of piece, or None (for tests)."""
        cdef Py_ssize_t n = PyBytes_GET_SIZE(piece)
        cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(piece)
        cdef uint64_t k0, k1, h
        cdef PackedEntry* pe
        cdef CacheEntry* e = NULL
        cdef tok_t spilled[SPILL_MAX_PIECE]
        cdef Py_ssize_t k
        if n < 2 or n > SPILL_MAX_PIECE:
            return None
        h = piece_hash(p, n)
        k = spill_find(&self.spill, p, n, h, spilled)
        if k >= 0:
            return [spilled[i] for i in range(k)]
        if n > CACHE_MAX_PIECE:
            return None
        if n <= PACKED_MAX:
            packed_key(p, n, p + n, &k0, &k1)
            pe = &self.packed[h & self.packed_mask]
            if pe.k0 == k0 and pe.k1 == k1 and pe.n_ids > 0:   # 0: in the long entries
                return [pe.ids[i] for i in range(pe.n_ids)]
        e = cache_find(self.entries, p, n, h, load_head(p, n))
        return None if e == NULL else [e.ids[i] for i in range(e.n_ids)]

    @property
    def spilled(self):
        """How many slots of the spill cache hold a piece now (for tests)."""
        return self.spill.count

    @staticmethod
    def slot_of(bytes piece, Py_ssize_t n_ids):
        """(which entries, index) a piece of n_ids ids is kept in by a cache that has not
        grown (for tests that make pieces collide)."""
        cdef Py_ssize_t n = PyBytes_GET_SIZE(piece)
        cdef uint64_t h = piece_hash(<const uint8_t*>PyBytes_AS_STRING(piece), n)
        if n <= PACKED_MAX and n_ids <= PACKED_MAX_IDS:
            return "packed", h & (PACKED_SIZE - 1)
        if n <= CACHE_MAX_PIECE and n_ids <= CACHE_MAX_IDS:
            return "long", h & (CACHE_SIZE - 1)
        return "spill", h & (SPILL_SLOTS_FIRST - 1)


cdef int spill_store(SpillCache* c, const uint8_t* p, Py_ssize_t n, uint64_t h, const tok_t* ids,
                     Py_ssize_t n_ids) noexcept nogil:
    """Keep piece p[:n] (2..SPILL_MAX_PIECE bytes, not kept yet) -> ids, evicting whatever
    held its slot (direct mapped: a probe is one compare).  Made small on first use; the
    slots grow when half of them are in use and the pool when it cannot take the piece, 4
    times at a time, up to SPILL_SLOTS and SPILL_POOL; a full pool at its largest empties
    (the pieces of the text at hand come back as they recur).  Out of memory, it keeps
    nothing new: a cache, never a failure."""
    cdef Py_ssize_t need = ((n + 3) & ~3) + n_ids * <Py_ssize_t>sizeof(tok_t), bigger
    cdef uint64_t i
    cdef uint8_t* grown
    if n > SPILL_MAX_PIECE:
        return 0
    if c.slots == NULL:
        c.slots = <SpillSlot*>calloc(SPILL_SLOTS_FIRST, sizeof(SpillSlot))
        c.pool = <uint8_t*>malloc(SPILL_POOL_FIRST)
        if c.slots == NULL or c.pool == NULL:
            free(c.slots)
            free(c.pool)
            c.slots = NULL
            c.pool = NULL
            return 0
        c.mask = SPILL_SLOTS_FIRST - 1
        c.cap = SPILL_POOL_FIRST
    if 2 * c.count > <Py_ssize_t>c.mask and c.mask + 1 < SPILL_SLOTS:
        spill_grow_slots(c)
    if c.used + need > c.cap:
        bigger = min(4 * c.cap, <Py_ssize_t>SPILL_POOL)
        grown = <uint8_t*>realloc(c.pool, <size_t>bigger) if bigger > c.cap else NULL
        if grown != NULL:   # entries hold offsets: they stay right
            c.pool = grown
            c.cap = bigger
        if c.used + need > c.cap:
            memset(c.slots, 0, (c.mask + 1) * sizeof(SpillSlot))
            c.count = 0
            c.used = 0
    i = h & c.mask
    h |= 1
    c.count += c.slots[i].hash == 0
    c.slots[i].hash = h
    c.slots[i].at = <uint32_t>c.used
    c.slots[i].n = <uint16_t>n
    c.slots[i].n_ids = <uint16_t>n_ids
    memcpy(c.pool + c.used, p, <size_t>n)
    memcpy(c.pool + c.used + ((n + 3) & ~3), ids, <size_t>n_ids * sizeof(tok_t))
    c.used += need
    return 0


cdef void spill_grow_slots(SpillCache* c) noexcept nogil:
    """Four times the slots, the entries moved to theirs (the last one in wins a slot two
    want).  Out of memory: the slots stay as they are."""
    cdef uint64_t mask = 4 * (c.mask + 1) - 1, i
    cdef SpillSlot* slots = <SpillSlot*>calloc(mask + 1, sizeof(SpillSlot))
    if slots == NULL:
        return
    c.count = 0
    for i in range(c.mask + 1):
        if c.slots[i].hash != 0:
            c.count += slots[c.slots[i].hash & mask].hash == 0
            slots[c.slots[i].hash & mask] = c.slots[i]
    free(c.slots)
    c.slots = slots
    c.mask = mask
