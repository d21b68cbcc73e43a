# The thread's piece cache (_piece_cache) as a char-level model keys it (_char_bpe): a piece that
# starts with the meta character is keyed by the rest and a flag bit, so that "▁" + 15 bytes
# still gets a packed entry.  A piece's ids are a function of its bytes, so a whole word and a
# part of one share the cache (CharBPE.encode_words keeps words cut into parts whole).
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy

from fastbpe._hash cimport PACKED_MAX, hash_in_text, load_word, packed_hash, packed_key
from fastbpe._piece_cache cimport (CACHE_MAX_IDS, CACHE_MAX_PIECE, PACKED_MAX_IDS, cache_find, cache_store,
                                   packed_store, spill_find, spill_store)
from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport CacheEntry, IdBuf, PackedEntry, Work

cdef enum:
    SPILL_KEEP = 1024     # _piece_cache's SPILL_MAX_PIECE: longer pieces are not kept
cdef extern from *:
    """
    #define FB_META_KEY (1ULL << 63)
    """
    const uint64_t META_KEY "FB_META_KEY"   # a packed key's flag: the piece starts with the meta character


cdef struct PieceKey:    # a piece's key in the piece cache (cache_probe sets it, cache_keep reads it)
    uint64_t h, k0, k1
    bint packed


cdef inline uint64_t char_hash(uint64_t k0, uint64_t k1) noexcept nogil:
    # packed_hash's low bits (the slot) depend only on the key's first 6 bytes:
    # "▁▁▁III." and "▁▁▁VII." would share a slot; fold its high half in.  (Entries
    # that PieceCache.lend moves when it grows the table then land elsewhere, and
    # are lost once: misses, never wrong ids, since a hit compares the whole key.)
    cdef uint64_t h = packed_hash(k0, k1)
    return h ^ (h >> 16)


cdef inline bint cache_probe(const uint8_t* meta, Py_ssize_t ml, const uint8_t* p, Py_ssize_t n,
                             const uint8_t* end, IdBuf* out, Work* w, PieceKey* key) noexcept nogil:
    """Append the ids of the piece p[:n] (n >= 1) from the thread's piece cache and return
    True, else False with its key set for cache_keep (meta: the meta character's ml bytes).  The caller has made room in out
    for n + 8 ids.  A piece that starts with the meta character is keyed by the rest and
    a flag bit (the length takes the key's top byte's low 4 bits): pieces of up to 18
    bytes ("▁" is 3) get a packed entry."""
    cdef PackedEntry* pe
    cdef CacheEntry* e
    cdef Py_ssize_t count
    key.packed = True
    if n > ml and n - ml <= PACKED_MAX and p[0] == meta[0] and (ml < 2 or p[1] == meta[1]) and (
            ml < 3 or p[2] == meta[2]) and (ml < 4 or p[3] == meta[3]):
        packed_key(p + ml, n - ml, end, &key.k0, &key.k1)
        key.k1 |= META_KEY
    elif n <= PACKED_MAX:
        packed_key(p, n, end, &key.k0, &key.k1)
    else:
        key.packed = False
    if key.packed:
        key.h = char_hash(key.k0, key.k1)
        pe = &w.packed[key.h & w.packed_mask]
        if pe.k0 == key.k0 and pe.k1 == key.k1:
            if pe.n_ids:
                memcpy(out.data + out.len, pe.ids, 16)
                out.len += pe.n_ids
                return True
            e = cache_find(w.cache, p, n, key.h, load_word(p, n, end))
            if e != NULL:
                memcpy(out.data + out.len, e.ids, CACHE_MAX_IDS * sizeof(tok_t))
                out.len += e.n_ids
                return True
    else:
        key.h = hash_in_text(p, n, end)
        if n <= CACHE_MAX_PIECE:
            e = cache_find(w.cache, p, n, key.h, load_word(p, n, end))
            if e != NULL:
                memcpy(out.data + out.len, e.ids, CACHE_MAX_IDS * sizeof(tok_t))
                out.len += e.n_ids
                return True
    # pieces of many ids, and long ones, are kept in the spill tier
    if n <= SPILL_KEEP and w.spill != NULL:
        count = spill_find(w.spill, p, n, key.h, out.data + out.len)
        if count >= 0:
            out.len += count
            return True
    return False

cdef inline void cache_keep(const uint8_t* p, Py_ssize_t n, const PieceKey* key, const tok_t* ids,
                            Py_ssize_t count, Work* w) noexcept nogil:
    """Remember the piece p[:n] (key: from cache_probe) -> ids[:count]."""
    if key.packed and count <= PACKED_MAX_IDS:
        packed_store(w.packed, w.packed_mask, key.h, key.k0, key.k1, ids, count)
    elif n <= CACHE_MAX_PIECE and count <= CACHE_MAX_IDS:
        cache_store(w.cache, p, n, key.h, ids, count)
        if key.packed:
            packed_store(w.packed, w.packed_mask, key.h, key.k0, key.k1, NULL, 0)
    elif n <= SPILL_KEEP and w.spill != NULL:
        spill_store(w.spill, p, n, key.h, ids, count)


cdef inline void reverse_ids(tok_t* a, Py_ssize_t n) noexcept nogil:
    """Reverse a[:n] in place (CharBPE.encode_run_word swaps a word's ids and a run's by three)."""
    cdef Py_ssize_t i
    cdef tok_t t
    for i in range(n // 2):
        t = a[i]
        a[i] = a[n - 1 - i]
        a[n - 1 - i] = t
