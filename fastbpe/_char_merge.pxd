# The char-level kernel's merge of a short first-seen word (_char_bpe.merge_word): the
# byte-level kernel's scan (_merge.scan_parts: lowest rank first, leftmost on ties, the
# shorter side moved by one part), inline in merge_word, so a word of English costs no call.
from libc.stdint cimport uint32_t, uint64_t

from fastbpe._vocab cimport NO_PAIR, PairTable, pair_hash, pair_maybe, pair_probe, tok_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from fastbpe._workspace cimport IdBuf, SmallPart, Work

cdef extern from "_portable.h":   # __builtin_prefetch, or MSVC's, or nothing
    void prefetch "fb_prefetch"(const void* p) noexcept nogil

cdef extern from *:   # keeps a loop that moves a few parts a loop, not a memmove call
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define fb_char_no_memmove() __asm__ __volatile__("" ::: "memory")
    #else
    #define fb_char_no_memmove() ((void)0)
    #endif
    """
    void no_memmove "fb_char_no_memmove"() noexcept nogil

cdef enum:
    SCAN_WORD = 48           # merge_word: words of up to this many parts scan, longer ones take the heap
    MEMO_SMALL = 512         # pair memo entries of a call's first merge (8 KiB: a short call's)
    MEMO_LARGE = 8192        # ... of a call of MEMO_LARGE_CALL bytes or more (128 KiB)
    MEMO_LARGE_CALL = 65536


cdef inline int memo_open(Work* w, Py_ssize_t entries) except -1 nogil:
    """Give w a pair memo of `entries` (a power of two) entries, all empty (key ~0: no pair
    of ids below 2^31 has it), unless it has one at least that large (0: any)."""
    cdef uint64_t* memo
    if (w.pair_memo != NULL and <Py_ssize_t>w.pair_memo_mask + 1 >= entries) or entries == 0:
        return 0
    memo = <uint64_t*>malloc(2 * entries * sizeof(uint64_t))
    if memo == NULL:
        with gil:
            raise MemoryError()
    memset(memo, 0xFF, 2 * entries * sizeof(uint64_t))
    free(w.pair_memo)
    w.pair_memo = memo
    w.pair_memo_mask = <uint64_t>(entries - 1)
    return 0


cdef inline uint64_t memo_pair(uint64_t* memo, uint64_t mask, const PairTable* pairs, uint64_t key) noexcept nogil:
    """pair_word of the pair key = (left << 32 | right), through a direct-mapped memo of the
    pairs asked so far (key, word at [2i, 2i + 1]): the words of a text ask the same pairs
    again and again (English: the filter's three bits and a slot of several MiB ~2 in 3 times)."""
    cdef uint64_t h = pair_hash(key)
    cdef uint64_t* e = memo + 2 * ((h >> 40) & mask)
    cdef uint64_t word
    if e[0] == key:
        return e[1]
    word = pair_probe(pairs, key, h) if pair_maybe(pairs, h) else NO_PAIR
    e[0] = key
    e[1] = word
    return word


cdef inline void scan_word(const PairTable* table, SmallPart* parts, Py_ssize_t m, IdBuf* out, uint64_t* memo,
                      uint64_t mask) noexcept nogil:
    """Merge m >= 1 parts whose ids and pairs are set (parts[m - 1].pair = NO_PAIR); append
    the result's ids to out (room made); the pairs merges make asked through memo_pair."""
    cdef PairTable pairs = table[0]   # by value: the stores into parts would reload its fields
    cdef Py_ssize_t i, best_i
    cdef uint32_t best, r
    cdef uint64_t bp, key_r = 0, h_r = 0, key_l = 0, h_l = 0
    cdef tok_t merged
    cdef bint right, left
    while m > 1:
        best = <uint32_t>(parts[0].pair >> 32)
        best_i = 0
        for i in range(1, m - 1):
            r = <uint32_t>(parts[i].pair >> 32)
            if r < best:   # by rank alone: equal ranks merge leftmost first
                best = r
                best_i = i
        bp = parts[best_i].pair
        if bp >= NO_PAIR:
            break
        merged = <tok_t>(bp & 0xFFFFFFFFU)
        right = best_i + 2 < m
        if right:
            key_r = (<uint64_t>merged << 32) | parts[best_i + 2].id
        left = best_i > 0
        if left:
            key_l = (<uint64_t>parts[best_i - 1].id << 32) | merged
        m -= 1
        if 2 * best_i < m:
            for i in range(best_i, 0, -1):
                parts[i] = parts[i - 1]
                no_memmove()
            parts += 1
        else:
            for i in range(best_i + 1, m):
                parts[i] = parts[i + 1]
                no_memmove()
        parts[best_i].id = merged
        parts[best_i].pair = memo_pair(memo, mask, &pairs, key_r) if right else NO_PAIR
        if left:
            parts[best_i - 1].pair = memo_pair(memo, mask, &pairs, key_l)
    for i in range(m):
        out.data[out.len + i] = parts[i].id
    out.len += m
