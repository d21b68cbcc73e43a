# The encode kernel's per-call memory: the growing output of ids and the scratch space for
# merging one piece.  Each call owns its own (never shared between threads), frees it in one
# place (idbuf_free / work_free in a `finally`), and only the pointers into a thread's piece
# cache are borrowed.  Inline: every kernel that encodes compiles its own copy.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int32_t, uint64_t
from libc.stdlib cimport malloc, realloc, free

from fastbpe._vocab cimport tok_t


cdef struct IdBuf:           # a growable array of token ids (the output of one call)
    tok_t* data
    Py_ssize_t len
    Py_ssize_t cap

cdef struct SmallPart:       # a part of a piece being merged (see _merge.merge_heap)
    uint64_t pair            # the pair it starts with the next part: (rank << 32 | new id)
    tok_t id

cdef struct PackedEntry:     # a short piece and its ids (see _piece_cache); 32 bytes, 2 per cache line
    uint64_t k0              # the piece's packed key (_hash.pxd); k1 == 0: empty entry
    uint64_t k1
    tok_t ids[3]
    uint32_t n_ids           # right after ids: a hit copies ids as one 16-byte block

cdef struct CacheEntry:      # a longer piece or one of more ids (see _piece_cache); 64 bytes
    uint64_t hash
    unsigned char bytes[24]  # the piece itself, zero padded: entries never point into a text
    tok_t ids[6]
    unsigned short length    # 0: empty entry
    unsigned short n_ids

cdef struct SpillSlot:       # a piece the fixed entries cannot keep (see _piece_cache.spill_find)
    uint64_t hash            # the piece's hash; 0: empty slot
    uint32_t at              # where its bytes, then its ids, start in SpillCache.pool
    uint16_t n               # its length in bytes
    uint16_t n_ids

cdef struct SpillCache:      # long pieces, and non-ASCII ones of many ids -> ids (see _piece_cache)
    SpillSlot* slots         # direct mapped; NULL until first needed
    uint64_t mask            # slots - 1 (they grow with use, up to SPILL_SLOTS)
    uint8_t* pool            # each piece's bytes, then its ids (4-aligned)
    Py_ssize_t cap           # bytes of the pool (it grows with use, up to SPILL_POOL)
    Py_ssize_t used          # bytes of the pool in use
    Py_ssize_t count         # slots in use

cdef struct Work:            # scratch space for merging one piece; one per call, never shared
    SmallPart* parts         # the parts of the piece being merged
    int32_t* nxt
    int32_t* prv
    uint64_t* heap           # 5 * cap words: see _merge.merge_heap and merge_scan
    Py_ssize_t cap
    PackedEntry* packed      # this thread's PieceCache for the table (not owned), or NULL
    uint64_t packed_mask     # its packed entries - 1
    CacheEntry* cache        # its entries for longer pieces (NULL when packed is)
    SpillCache* spill        # its entries for pieces those cannot keep, or NULL
    IdBuf* ends              # when not NULL, encode_utf8 appends each piece's end byte here
    uint64_t* pair_memo      # the char-level merge's memo of pairs asked (_pair_memo; owned, NULL until made)
    uint64_t pair_memo_mask  # its entries - 1


cdef inline int idbuf_reserve(IdBuf* b, Py_ssize_t extra) except -1 nogil:
    """Room for `extra` more ids."""
    cdef Py_ssize_t need = b.len + extra
    cdef Py_ssize_t cap
    cdef tok_t* data
    if need <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 256
    while cap < need:
        cap *= 2
    data = <tok_t*>realloc(b.data, cap * sizeof(tok_t))
    if data == NULL:
        with gil:
            raise MemoryError()
    b.data = data
    b.cap = cap
    return 0


cdef inline void idbuf_free(IdBuf* b) noexcept nogil:
    free(b.data)
    b.data = NULL
    b.len = b.cap = 0


cdef inline void idbufs_free(IdBuf* bufs, Py_ssize_t n) noexcept nogil:
    """Free an array of n IdBufs (a batch's outputs) and their ids; NULL is nothing."""
    cdef Py_ssize_t i
    if bufs != NULL:
        for i in range(n):
            idbuf_free(&bufs[i])
        free(bufs)


cdef inline void work_arrays_free(Work* w) noexcept nogil:
    free(w.parts)
    free(w.nxt)
    free(w.prv)
    free(w.heap)
    w.parts = NULL
    w.nxt = NULL
    w.prv = NULL
    w.heap = NULL
    w.cap = 0


cdef inline void work_free(Work* w) noexcept nogil:
    free(w.pair_memo)
    w.pair_memo = NULL
    w.pair_memo_mask = 0
    work_arrays_free(w)


cdef inline int work_reserve(Work* w, Py_ssize_t n) except -1 nogil:
    """Make room to merge a piece of n bytes."""
    if n <= w.cap:
        return 0
    cdef Py_ssize_t cap = w.cap * 2 if w.cap else 256
    while cap < n:
        cap *= 2
    work_arrays_free(w)
    w.parts = <SmallPart*>malloc(cap * sizeof(SmallPart))
    w.nxt = <int32_t*>malloc(cap * sizeof(int32_t))
    w.prv = <int32_t*>malloc(cap * sizeof(int32_t))
    w.heap = <uint64_t*>malloc(5 * cap * sizeof(uint64_t))
    if w.parts == NULL or w.nxt == NULL or w.prv == NULL or w.heap == NULL:
        work_arrays_free(w)
        with gil:
            raise MemoryError()
    w.cap = cap
    return 0


cdef inline int idbuf_append_ends(IdBuf* out, const Py_ssize_t* ends, Py_ssize_t k) except -1 nogil:
    """Append k piece ends (byte offsets in a text of < 4 GiB) to out; an end with the
    scanner's DROPPED bit (bit 62: a removed piece, in a text of < 2 GiB) gets bit 31."""
    cdef Py_ssize_t i
    idbuf_reserve(out, k)
    for i in range(k):
        out.data[out.len + i] = <tok_t>ends[i] | (<tok_t>(ends[i] >> 62) << 31)
    out.len += k
    return 0
