# The char-level merge's memo of the pairs a call asks (Work.pair_memo): the words of a text ask
# the same pairs again and again, and a hit skips the pair filter and a slot of a table of
# several MiB.  _char_bpe opens it; _merge.scan_parts reads through it when given one.
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from fastbpe._vocab cimport NO_PAIR, PairTable, pair_hash, pair_maybe, pair_probe
from fastbpe._workspace cimport Work

cdef enum:
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
