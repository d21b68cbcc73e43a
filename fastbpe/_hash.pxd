# Hash functions shared by the kernels (inline, so every module that cimports them compiles
# its own copy: no cross-module call in the hot loops).
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy


cdef inline uint64_t mix64(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    return h


cdef inline uint64_t hash_bytes(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """A fast non-cryptographic hash of a short byte string, 8 bytes at a time."""
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ (<uint64_t>n * 0x2545F4914F6CDD1DULL)
    cdef uint64_t w
    while n >= 8:
        memcpy(&w, p, 8)
        h = (h ^ w) * 0x100000001B3ULL
        h ^= h >> 29
        p += 8
        n -= 8
    if n > 0:
        w = 0
        memcpy(&w, p, <size_t>n)
        h = (h ^ w) * 0x100000001B3ULL
    return mix64(h)


cdef extern from *:
    """
    #if defined(_WIN32) || (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
    #define FB_LITTLE_ENDIAN 1
    #else
    #define FB_LITTLE_ENDIAN 0
    #endif
    """
    const bint FB_LITTLE_ENDIAN


cdef inline uint64_t load_word(const uint8_t* p, Py_ssize_t n, const uint8_t* end) noexcept nogil:
    """p[:n] (1 <= n <= 8) as a zero-padded word, the same value as memcpy into a zeroed word.
    Inside a text (8 bytes readable before end) it is one load and a mask instead of a
    variable-length copy."""
    cdef uint64_t w
    if FB_LITTLE_ENDIAN and p + 8 <= end:
        memcpy(&w, p, 8)
        return w if n >= 8 else w & ((<uint64_t>1 << (8 * n)) - 1)
    w = 0
    memcpy(&w, p, <size_t>(n if n < 8 else 8))
    return w


cdef inline uint64_t hash_in_text(const uint8_t* p, Py_ssize_t n, const uint8_t* end) noexcept nogil:
    """hash_bytes(p, n) (n >= 1) for a piece of a text that ends at end: the same value,
    with the last partial word read by load_word."""
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ (<uint64_t>n * 0x2545F4914F6CDD1DULL)
    cdef uint64_t w
    while n > 8:
        memcpy(&w, p, 8)
        h = (h ^ w) * 0x100000001B3ULL
        h ^= h >> 29
        p += 8
        n -= 8
    w = load_word(p, n, end)
    h = (h ^ w) * 0x100000001B3ULL
    if n == 8:   # hash_bytes takes a whole last word in its loop, then nothing
        h ^= h >> 29
    return mix64(h)


cdef inline uint64_t pow2_at_least(uint64_t n) noexcept nogil:
    """The smallest power of two >= n, at least 16 (hash table capacities)."""
    cdef uint64_t c = 16
    while c < n:
        c <<= 1
    return c


cdef inline uint64_t probe(const uint64_t* keys, size_t stride, uint64_t mask, uint64_t i,
                           uint64_t key, uint64_t empty) noexcept nogil:
    """Open addressing with linear probing, the one probe loop of the kernels' hash tables:
    from slot i, the slot whose key is `key`, or else the first free one (key `empty`).
    Slot s's key is keys[s * stride]: a table of bare keys has stride 1, a table of structs
    that start with their uint64 key has stride sizeof(struct) / 8.  To insert a key known
    to be absent, pass key = empty: the first free slot, one compare per step."""
    cdef uint64_t k
    while True:
        k = keys[i * stride]
        if k == key or k == empty:
            return i
        i = (i + 1) & mask


# ---- packed keys of short pieces ----------------------------------------------------------
# A piece of 2..15 bytes is two words: k0 = bytes 0..7, k1 = bytes 8..14 with the length in
# the top byte (both zero padded).  Equal pieces give equal keys and different pieces
# different keys, so a cache compares two words instead of the bytes, and the hash of the
# key is the piece's hash for every table (`piece_hash`): one hash per piece, computed once.

cdef enum:
    PACKED_MAX = 15          # the longest piece with a packed key

cdef extern from *:
    """
    static const uint64_t fb_low_mask[16] = {
        0ULL, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL, 0xFFFFFFFFULL, 0xFFFFFFFFFFULL,
        0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL,
        ~0ULL, ~0ULL};
    static const uint64_t fb_high_mask[16] = {
        0ULL, 0ULL, 0ULL, 0ULL, 0ULL, 0ULL, 0ULL, 0ULL, 0ULL, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL,
        0xFFFFFFFFULL, 0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL};
    """
    const uint64_t fb_low_mask[16]
    const uint64_t fb_high_mask[16]


cdef inline void packed_key(const uint8_t* p, Py_ssize_t n, const uint8_t* end,
                            uint64_t* k0, uint64_t* k1) noexcept nogil:
    """The key of p[:n] (1 <= n <= PACKED_MAX) into k0, k1.  Inside a text (16 bytes readable
    before end, little-endian) two loads and two masks; else a copy into zeroed words (the
    same value)."""
    cdef uint64_t w[2]
    if FB_LITTLE_ENDIAN and p + 16 <= end:
        memcpy(w, p, 16)
        k0[0] = w[0] & fb_low_mask[n]
        k1[0] = (w[1] & fb_high_mask[n]) | (<uint64_t>n << 56)
        return
    w[0] = 0
    w[1] = 0
    memcpy(w, p, <size_t>n)
    k0[0] = w[0]
    k1[0] = w[1] | (<uint64_t>n << 56)   # byte 15 of w is zero: n <= 15


cdef extern from "_portable.h" nogil:
    uint64_t fb_bswap64(uint64_t x)


cdef inline uint64_t packed_hash(uint64_t k0, uint64_t k1) noexcept nogil:
    """The hash of a packed key.  The top bits of a product depend on every bit of its
    input, the low bits only on the input's low bits; tables index with the low bits, so
    the top byte comes down to the bottom (a byte swap).  A rotation by 32 put bits 32-49
    there, which bytes 6-7 of a key barely reach: " report" and " reports" shared a slot
    (2,285 of 92,685 short pieces of English missed the grown piece cache on text seen
    before, 880 now, as with random slots); a rotation by 16 left o200k's 2^20-slot token
    table indexed partly by bits that depend only on the first byte (7 MB/s instead of 50)."""
    cdef uint64_t x = (k0 + k1 * 0x9E3779B97F4A7C15ULL) * 0xBF58476D1CE4E5B9ULL
    return fb_bswap64(x)


cdef inline uint64_t piece_hash(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """The hash the token table and the piece caches use for p[:n] (n >= 1): the packed
    key's for short pieces, hash_bytes for longer ones."""
    cdef uint64_t k0, k1
    if n <= PACKED_MAX:
        packed_key(p, n, p + n, &k0, &k1)
        return packed_hash(k0, k1)
    return hash_bytes(p, n)
