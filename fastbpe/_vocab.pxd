# The encode kernel's two tables, shared by every kernel that encodes or merges:
#   the token table: id -> bytes (one flat buffer) and bytes -> id (open addressing);
#   the pair table: (left id, right id) -> (rank, merged id).
# Lookups are inline (each kernel compiles its own copy: no cross-module call in a hot loop);
# the builders live in _vocab.pyx.
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t, uint64_t
from libc.string cimport memcmp, memcpy
from fastbpe._hash cimport piece_hash

ctypedef uint32_t tok_t

cdef enum:
    NO_RANK = 0xFFFFFFFF     # "this pair does not merge"
    DEAD = 0xFFFFFFFF        # a part that was merged into its left neighbour
    CHAR2_SIZE = 2048        # build_char_tokens: 2-byte UTF-8 characters (11 payload bits)
    CHAR3_SIZE = 65536       # ... then 3-byte ones (16 payload bits)

cdef extern from *:
    """
    #define FB_PAIR_SLOT_FREE 0xFFFFFFFFFFFFFFFFULL
    #define FB_NO_PAIR 0xFFFFFFFF00000000ULL
    """
    const uint64_t PAIR_SLOT_FREE "FB_PAIR_SLOT_FREE"   # the key of a free PairSlot
    const uint64_t NO_PAIR "FB_NO_PAIR"   # (NO_RANK << 32): a (rank << 32 | id) word that does not merge

cdef struct PairSlot:
    uint64_t key             # (left << 32) | right; PAIR_SLOT_FREE when the slot is free
    uint32_t rank            # lower merges first
    uint32_t new_id          # the token the pair becomes

cdef struct PairTable:
    PairSlot* slots
    uint64_t mask
    int shift                # 64 - log2(slots): pair_slot takes a product's top bits
    Py_ssize_t count
    uint64_t* absent         # a Bloom filter of the pairs: a word per key, 3 bits (pair_filter_bits)
    int absent_shift         # 64 - log2(words)

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

# builders (_vocab.pyx); each table is freed by its owner with *_free
cdef int token_table_load(TokenTable* tok, list token_bytes, dict special_bytes, bint unique) except -1
cdef void token_table_free(TokenTable* tok) noexcept nogil
cdef int pair_table_init(PairTable* t, Py_ssize_t expected) except -1 nogil
cdef void pair_table_free(PairTable* t) noexcept nogil
cdef bint pair_put(PairTable* t, tok_t left, tok_t right, uint32_t rank, tok_t new_id) noexcept nogil
cdef int build_split_table(const TokenTable* tok, Py_ssize_t n_bpe, PairTable* pairs) except -1
cdef uint64_t* build_byte_pairs(const TokenTable* tok, const PairTable* pairs) except NULL
cdef int32_t* build_char_tokens(const TokenTable* tok, const PairTable* pairs,
                                const uint64_t* byte_pairs) except NULL
cdef int check_bytes_present(const TokenTable* tok) except -1


cdef inline bint bytes_have_tokens(const TokenTable* tok, const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Whether every byte of p is a single-byte token (see BPETable.from_merges'
    skip_missing_bytes)."""
    cdef Py_ssize_t i
    for i in range(n):
        if tok.byte_id[p[i]] < 0:
            return False
    return True
cdef object decode_tokens(const TokenTable* tok, tokens)
cdef list token_list(token_bytes)


cdef inline uint32_t slot_tag(uint64_t h, Py_ssize_t n) noexcept nogil:
    """What a token slot stores to reject most non-matches without touching the token bytes:
    24 hash bits that the slot index does not use, and the length (capped at 255)."""
    return (<uint32_t>(h >> 40) << 8) | <uint32_t>(n if n < 255 else 255)


cdef inline uint64_t load_head(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """The first 8 bytes of p[:n], zero padded."""
    cdef uint64_t w = 0
    memcpy(&w, p, <size_t>(n if n < 8 else 8))
    return w


cdef inline int32_t token_lookup_hashed(const TokenTable* tok, const uint8_t* p, Py_ssize_t n,
                                        uint64_t h, uint64_t head) noexcept nogil:
    """The id of the BPE token whose bytes are p[:n], or -1; h = piece_hash(p, n), head =
    load_head(p, n)."""
    cdef uint64_t i = h & tok.mask
    cdef uint32_t tag = slot_tag(h, n)
    cdef const TokenSlot* slot
    while True:
        slot = &tok.slots[i]
        if slot.id < 0:
            return -1
        if slot.tag == tag and slot.head == head:
            if n <= 8:
                return slot.id  # the tag holds the exact length
            if (tok.length[slot.id] == n and
                    memcmp(tok.data + tok.start[slot.id] + 8, p + 8, <size_t>(n - 8)) == 0):
                return slot.id
        i = (i + 1) & tok.mask


cdef inline int32_t token_lookup(const TokenTable* tok, const uint8_t* p, Py_ssize_t n) noexcept nogil:
    return token_lookup_hashed(tok, p, n, piece_hash(p, n), load_head(p, n))


cdef inline uint64_t pair_hash(uint64_t key) noexcept nogil:
    """One multiply (Fibonacci hashing): its top bits, which depend on every bit of the key,
    pick the pair's slot and filter word.  Fewer instructions than mix64's five steps (a
    merge makes two lookups); the same wall time, measured, so the gain is small."""
    return key * 0x9E3779B97F4A7C15ULL


cdef inline uint64_t pair_slot(const PairTable* t, uint64_t key) noexcept nogil:
    """Where a pair's probe starts."""
    return pair_hash(key) >> t.shift


cdef inline uint64_t pair_filter_bits(uint64_t h) noexcept nogil:
    """The three bits a pair of product hash h sets in its filter word."""
    return ((<uint64_t>1 << (h & 63)) | (<uint64_t>1 << ((h >> 6) & 63))
            | (<uint64_t>1 << ((h >> 12) & 63)))


cdef inline bint pair_maybe(const PairTable* t, uint64_t h) noexcept nogil:
    """Whether the filter lets the pair of product hash h through (False: it never merges).
    Most pairs a merge asks about do not merge (35% of them in English text, 71% in
    multilingual), and a free slot of several MiB is as slow to reach as a full one: a
    filter of a few hundred KiB, which stays in the CPU's caches, answers most of them."""
    cdef uint64_t bits = pair_filter_bits(h)
    return (t.absent[h >> t.absent_shift] & bits) == bits


cdef inline uint64_t pair_probe(const PairTable* t, uint64_t key, uint64_t h) noexcept nogil:
    """(rank << 32 | merged id) of the pair key = (left << 32 | right) of product hash h
    (pair_hash), or NO_PAIR: the slots alone, for a pair pair_maybe let through."""
    cdef uint64_t i = h >> t.shift
    cdef const PairSlot* s
    while True:
        s = &t.slots[i]
        if s.key == key:
            return (<uint64_t>s.rank << 32) | s.new_id
        if s.key == PAIR_SLOT_FREE:
            return NO_PAIR
        i = (i + 1) & t.mask


cdef inline bint pair_get(const PairTable* t, tok_t left, tok_t right,
                          uint32_t* rank, tok_t* new_id) noexcept nogil:
    cdef uint64_t key = (<uint64_t>left << 32) | right
    cdef uint64_t h = pair_hash(key)
    cdef uint64_t w
    if not pair_maybe(t, h):
        return False
    w = pair_probe(t, key, h)
    if w == NO_PAIR:   # (a rank is below NO_RANK: no pair's word is NO_PAIR)
        return False
    rank[0] = <uint32_t>(w >> 32)
    new_id[0] = <tok_t>(w & 0xFFFFFFFFU)
    return True


cdef inline uint64_t pair_word(const PairTable* t, tok_t left, tok_t right) noexcept nogil:
    """(rank << 32 | merged id) of the pair, or NO_PAIR."""
    cdef uint64_t key = (<uint64_t>left << 32) | right
    cdef uint64_t h = pair_hash(key)
    return pair_probe(t, key, h) if pair_maybe(t, h) else NO_PAIR
