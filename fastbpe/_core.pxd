# Declarations shared by the kernels: token and pair tables, and the per-call workspace.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int32_t, int64_t, uint64_t
from fastbpe._hash cimport mix64

ctypedef uint32_t tok_t

cdef enum:
    NO_RANK = 0xFFFFFFFF     # "this pair does not merge"
    DEAD = 0xFFFFFFFF        # a part that was merged into its left neighbour

cdef struct PairSlot:
    uint64_t key             # (left << 32) | right; EMPTY_KEY when the slot is free
    uint32_t rank            # lower merges first
    uint32_t new_id          # the token the pair becomes

cdef struct PairTable:
    PairSlot* slots
    uint64_t mask
    Py_ssize_t count

cdef struct TokenSlot:        # one entry of the bytes -> id table: 16 bytes, 4 per cache line
    uint64_t head            # the token's first 8 bytes (zero padded): short tokens compare here
    uint32_t tag             # high hash bits << 8 | min(length, 255)
    int32_t id               # -1 when the slot is free

cdef struct TokenTable:
    uint8_t* data            # every token's bytes, concatenated
    int64_t* start           # [n_ids] offset of token id in data; -1 for unused ids
    int32_t* length          # [n_ids]
    Py_ssize_t n_ids         # max id + 1 (BPE tokens and special tokens)
    TokenSlot* slots         # bytes -> id, open addressing over BPE tokens (not specials)
    uint64_t mask
    int32_t byte_id[256]     # the token of each single byte

cdef struct IdBuf:           # a growable array of token ids (the output of one call)
    tok_t* data
    Py_ssize_t len
    Py_ssize_t cap

cdef struct PackedEntry:     # a short piece and its ids (see PieceCache); 32 bytes, 2 per cache line
    uint64_t k0              # the piece's packed key (_hash.pxd); k1 == 0: empty entry
    uint64_t k1
    tok_t ids[3]
    uint32_t n_ids           # right after ids: a hit copies ids as one 16-byte block

cdef struct CacheEntry:      # a longer piece or one of more ids (see PieceCache); 64 bytes
    uint64_t hash
    uint8_t bytes[24]        # the piece itself, zero padded: entries never point into a text
    tok_t ids[6]
    uint16_t length          # 0: empty entry
    uint16_t n_ids

cdef struct SmallPart:       # a part of a short piece (see _merge_small)
    uint64_t pair            # the pair it starts with the next part: (rank << 32 | new id)
    tok_t id

cdef struct Work:            # scratch space for merging one piece; one per call, never shared
    SmallPart* parts         # the parts of the piece being merged
    int32_t* nxt
    int32_t* prv
    uint64_t* heap
    Py_ssize_t cap
    PackedEntry* packed      # this thread's PieceCache for the table (not owned), or NULL
    CacheEntry* cache        # its entries for longer pieces (NULL when packed is)
    IdBuf* ends              # when not NULL, encode_utf8 appends each piece's end byte here

cdef class PieceCache:        # piece -> ids of one table, used by one thread only (see _core.pyx)
    cdef PackedEntry* packed
    cdef CacheEntry* entries

cdef class BPETable:
    cdef TokenTable tok
    cdef PairTable pairs
    cdef uint64_t* byte_pairs   # [256*256] (rank << 32 | new id) of two single-byte parts; cache-friendly first round
    cdef bint whole_piece    # emit a piece that is itself a token directly (tiktoken semantics)
    cdef uint8_t* self_merging   # merge lists: per token, whether merging its bytes gives it (see encode_piece_hashed)
    cdef readonly Py_ssize_t n_bpe_tokens
    cdef list id_objects     # a Python int per id, so returning a list allocates nothing per token
    cdef readonly uint64_t serial   # unique per table in this process: names its piece caches
    cdef object last_cache   # the PieceCache of the thread that used the table last ...
    cdef unsigned long last_thread   # ... and that thread's ident (see thread_cache)

    cdef int encode_piece(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil
    cdef int32_t lookup(self, const uint8_t* p, Py_ssize_t n) noexcept nogil
    cdef int32_t lookup_hashed(self, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t head) noexcept nogil
    cdef int encode_piece_hashed(self, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t head,
                                 IdBuf* out, Work* w) except -1 nogil
    cdef int encode_utf8(self, const uint8_t* s, Py_ssize_t n, int kind, IdBuf* out, Work* w) except -1 nogil
    cdef void _merge_small(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) noexcept nogil
    cdef void _merge_heap(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) noexcept nogil
    cdef int _load_tokens(self, list token_bytes, dict special_bytes, bint unique) except -1
    cdef int _build_lookup(self, Py_ssize_t n_bpe, bint unique) except -1
    cdef int _check_bytes_present(self) except -1
    cdef int _build_split_table(self) except -1
    cdef int _build_byte_pairs(self) except -1

cdef int idbuf_reserve(IdBuf* b, Py_ssize_t extra) except -1 nogil
cdef void idbuf_free(IdBuf* b) noexcept nogil
cdef void work_free(Work* w) noexcept nogil
cdef PieceCache thread_cache(BPETable table)
cdef object idbuf_to_list(IdBuf* b, list id_objects)
cdef object idbuf_to_numpy(IdBuf* b)


# ----------------------------------------------------------------------------------------
# pair lookup, inline in every kernel that merges (_core, _merge_ids)

cdef extern from *:
    """
    #define FB_PAIR_SLOT_FREE 0xFFFFFFFFFFFFFFFFULL
    """
    const uint64_t PAIR_SLOT_FREE "FB_PAIR_SLOT_FREE"   # the key of a free PairSlot (_core's EMPTY_KEY)

cdef inline bint pair_get(const PairTable* t, tok_t left, tok_t right,
                          uint32_t* rank, tok_t* new_id) noexcept nogil:
    cdef uint64_t key = (<uint64_t>left << 32) | right
    cdef uint64_t i = mix64(key) & t.mask
    cdef const PairSlot* s
    while True:
        s = &t.slots[i]
        if s.key == key:
            rank[0] = s.rank
            new_id[0] = s.new_id
            return True
        if s.key == PAIR_SLOT_FREE:
            return False
        i = (i + 1) & t.mask
