# cython: language_level=3
"""Finding added tokens in text: an Aho-Corasick automaton over code points, leftmost-longest.

HF's AddedVocabulary finds its tokens with a leftmost-longest Aho-Corasick automaton; a
tokenizer.json may hold 100k+ of them.  The trie is built from the sorted tokens breadth
first: a node is a run of sorted tokens sharing a prefix, its children the runs of their next
character, so each node is made by one scan of its run (linear in the tokens' total length),
children sit next to each other in character order (found by binary search; the root's BMP
children by a table), and failure links are set as nodes are made (parents first).  A search
follows one edge or failure link per step; at the root it first passes every position where no
token can start, judged by the character and the next one (GPT-NeoX's added tokens are runs of
two or more spaces: a single space between words is passed without entering the automaton);
where a character's tokens are all runs of it (those runs of spaces), a search from it counts
the run and takes the longest token no longer than it, the walk's leftmost-longest answer.
All memory is owned by the TokenTrie object; searches run without the GIL."""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int32_t, int64_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy, memset

from fastbpe._str_units cimport PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, code_point

cdef extern from *:
    """
    #include <string.h>
    #include <wchar.h>
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    #endif
    /* The first index >= j of code point c in a str's units (of `kind` bytes), or n: memchr
     * and (where wchar_t is 4 bytes) wmemchr, which glibc runs many units a step; 2-byte
     * units eight a step with SSE2 (English text with one curly quote is 2-byte: a loop of
     * one unit a step was a tenth of GPT-J's encode, whose added tokens all start with "<"). */
    static Py_ssize_t fb_find_unit(int kind, const void* data, Py_ssize_t n, Py_ssize_t j, uint32_t c) {
        if (kind == 1) {
            const char* p = c > 0xFF ? NULL : (const char*)memchr((const char*)data + j, (int)c, (size_t)(n - j));
            return p ? (Py_ssize_t)(p - (const char*)data) : n;
        }
        if (kind == 2) {
            const uint16_t* d = (const uint16_t*)data;
            if (c > 0xFFFF) return n;
    #if defined(__SSE2__) || defined(_M_X64)
            {
                const __m128i v = _mm_set1_epi16((short)c);
                while (j + 8 <= n
                       && !_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_loadu_si128((const __m128i*)(d + j)), v)))
                    j += 8;   /* (the unit itself is found by the loop below, within 8) */
            }
    #endif
            while (j < n && d[j] != c) j++;
            return j;
        }
    #if WCHAR_MAX > 0xFFFF
        {
            const wchar_t* p = wmemchr((const wchar_t*)data + j, (wchar_t)c, (size_t)(n - j));
            return p ? (Py_ssize_t)(p - (const wchar_t*)data) : n;
        }
    #else
        {
            const uint32_t* d = (const uint32_t*)data;
            while (j < n && d[j] != c) j++;
            return j;
        }
    #endif
    }
    """
    Py_ssize_t fb_find_unit(int kind, const void* data, Py_ssize_t n, Py_ssize_t j, uint32_t c) noexcept nogil


cdef extern from *:
    """
    #include "_portable.h"   /* fb_ctz64 */
    /* How many of p[0:lim] from the start are byte c (lim >= 1, p[0] == c): 8 bytes a step
     * (a run of spaces that is an added token, on every indented line of code). */
    static inline Py_ssize_t fb_byte_run(const uint8_t* p, Py_ssize_t lim, uint8_t c) {
        const uint64_t all = (uint64_t)c * 0x0101010101010101ULL;
        uint64_t w;
        Py_ssize_t r = 1;
        while (r + 8 <= lim) {
            memcpy(&w, p + r, 8);
            w ^= all;    /* little-endian: the first differing byte is the lowest set byte */
            if (w) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                return r + (Py_ssize_t)(fb_clz64(w) >> 3);
    #else
                return r + (Py_ssize_t)(fb_ctz64(w) >> 3);
    #endif
            }
            r += 8;
        }
        while (r < lim && p[r] == c) r++;
        return r;
    }
    """
    Py_ssize_t fb_byte_run(const uint8_t* p, Py_ssize_t lim, uint8_t c) noexcept nogil


cdef extern from *:
    """
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    #include "_portable.h"   /* fb_ctz64 */
    #define FB_TT_SSE2 1
    /* The first unit j' >= j equal to first[k] and followed by second[k] (any unit when
     * paired[k] is 0), for one of the four k, found 16 bytes a step (the first such unit of
     * the first step that holds one: its bit of the compare's mask, not the step's start,
     * so the caller's unit-by-unit check starts at the candidate); or where fewer than 16
     * bytes and one unit are left.  `size` is the unit's bytes (1 or 2); the values are
     * units of that size.  `two`: k = 2, 3 repeat k = 0 (at most two first characters: runs
     * of spaces and of tabs), so two are compared. */
    #define FB_TT_HIT(k, EQ) _mm_and_si128(EQ(w0, f[k]), _mm_or_si128(EQ(w1, s[k]), any[k]))
    #define FB_TT_LOOP(EQ, TERMS)                                                          \
        while (j + step + 1 <= n) {                                                        \
            w0 = _mm_loadu_si128((const __m128i*)(d + j * size));                          \
            w1 = _mm_loadu_si128((const __m128i*)(d + j * size + size));                   \
            m = TERMS;                                                                     \
            hits = _mm_movemask_epi8(m);                                                   \
            if (hits)                                                                      \
                return j + fb_ctz64((uint64_t)hits) / size;                                \
            j += step;                                                                     \
        }
    static inline Py_ssize_t fb_tt_skip16(const void* data, int size, Py_ssize_t n, Py_ssize_t j,
                                          const uint64_t* first, const uint64_t* second,
                                          const uint64_t* paired, int two) {
        const char* d = (const char*)data;
        __m128i f[4], s[4], any[4], w0, w1, m;
        Py_ssize_t step = 16 / size;
        int k, hits;
        for (k = 0; k < 4; k++) {
            f[k] = size == 1 ? _mm_set1_epi8((char)first[k]) : _mm_set1_epi16((short)first[k]);
            s[k] = size == 1 ? _mm_set1_epi8((char)second[k]) : _mm_set1_epi16((short)second[k]);
            any[k] = paired[k] ? _mm_setzero_si128() : _mm_set1_epi8(-1);
        }
        if (size == 1 && two) {
            FB_TT_LOOP(_mm_cmpeq_epi8, _mm_or_si128(FB_TT_HIT(0, _mm_cmpeq_epi8), FB_TT_HIT(1, _mm_cmpeq_epi8)))
        } else if (size == 1) {
            FB_TT_LOOP(_mm_cmpeq_epi8, _mm_or_si128(_mm_or_si128(FB_TT_HIT(0, _mm_cmpeq_epi8), FB_TT_HIT(1, _mm_cmpeq_epi8)),
                                                    _mm_or_si128(FB_TT_HIT(2, _mm_cmpeq_epi8), FB_TT_HIT(3, _mm_cmpeq_epi8))))
        } else if (two) {
            FB_TT_LOOP(_mm_cmpeq_epi16, _mm_or_si128(FB_TT_HIT(0, _mm_cmpeq_epi16), FB_TT_HIT(1, _mm_cmpeq_epi16)))
        } else {
            FB_TT_LOOP(_mm_cmpeq_epi16, _mm_or_si128(_mm_or_si128(FB_TT_HIT(0, _mm_cmpeq_epi16), FB_TT_HIT(1, _mm_cmpeq_epi16)),
                                                     _mm_or_si128(FB_TT_HIT(2, _mm_cmpeq_epi16), FB_TT_HIT(3, _mm_cmpeq_epi16))))
        }
        return j;
    }
    #else
    #define FB_TT_SSE2 0
    static inline Py_ssize_t fb_tt_skip16(const void* data, int size, Py_ssize_t n, Py_ssize_t j,
                                          const uint64_t* first, const uint64_t* second,
                                          const uint64_t* paired, int two) { return j; }
    #endif
    """
    int FB_TT_SSE2
    Py_ssize_t fb_tt_skip16(const void* data, int size, Py_ssize_t n, Py_ssize_t j, const uint64_t* first,
                            const uint64_t* second, const uint64_t* paired, int two) noexcept nogil


cdef enum:
    ROOT = 0
    NONE = -1
    ROOT_TABLE = 0x10000   # the root's children below U+10000 by direct lookup
    ONE_CHAR_TOKEN = 1     # start_class bits: the character is a token,
    PAIRS_BELOW_256 = 2    # tokens start with it and a second character < 256 (pair_bits),
    PAIRS_ABOVE = 4        # or one >= 256


ctypedef fused unit_t:   # a str's code unit, by its kind
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t skip_units(const unit_t* d, Py_ssize_t n, Py_ssize_t j, Py_ssize_t end,
                                  const uint8_t* start_class, const uint64_t* pair_bits,
                                  const int32_t* root_table) noexcept nogil:
    """TokenTrie.may_start's first true position in [j, end) (else end), with the units' type known."""
    cdef uint32_t c, c1
    cdef uint8_t f
    while j < end:
        c = d[j]
        if c < 256:
            f = start_class[c]
            if f != 0:
                if f & ONE_CHAR_TOKEN:
                    return j
                if j + 1 < n:
                    c1 = d[j + 1]
                    if c1 >= 256:
                        if f & PAIRS_ABOVE:
                            return j
                    elif (pair_bits[4 * c + (c1 >> 6)] >> (c1 & 63)) & 1:
                        return j
        elif c >= ROOT_TABLE or root_table[c] != NONE:
            return j
        j += 1
    return end


cdef inline Py_ssize_t skip_words(const unit_t* d, Py_ssize_t n, Py_ssize_t j, TokenTrie t) noexcept nogil:
    """skip_units, 8 bytes of units a step when a token starts with one of up to 4 characters:
    a step with none of them (followed by its one second character, when it has one) is
    passed after two unaligned loads, a compare per first character and a zero-unit test;
    a step with a candidate is read unit by unit.  The tests are the trie's (SwarSet, made
    at build: setting them up here was ~70 instructions a search, one search a stretch)."""
    cdef uint64_t ones = 0x0101010101010101ULL if unit_t is uint8_t else (
        0x0001000100010001ULL if unit_t is uint16_t else 0x0000000100000001ULL)
    cdef uint64_t highs = ones << (8 * sizeof(unit_t) - 1)
    cdef const SwarSet* ss = &t.swar_sets[0 if unit_t is uint8_t else (1 if unit_t is uint16_t else 2)]
    cdef const uint64_t* first = ss.first
    cdef const uint64_t* second = ss.second
    cdef const uint64_t* paired = ss.paired
    cdef uint64_t w0, w1, x, m
    cdef int count = ss.count
    cdef Py_ssize_t r, step = 8 // sizeof(unit_t), wide = 16 // sizeof(unit_t)
    if t.swar_n >= 0:
        if count == 0:
            return n         # no token starts with a character of this str kind
        if FB_TT_SSE2 and unit_t is not uint32_t:
            # 16 bytes a step (SSE2); a step with a candidate is read unit by unit from it
            while True:
                j = fb_tt_skip16(d, sizeof(unit_t), n, j, ss.vals, ss.vals2, paired, count <= 2)
                if j + wide + 1 > n:
                    break
                r = skip_units(d, n, j, j + wide, t.start_class, t.pair_bits, t.root_table)
                if r < j + wide:
                    return r
                j += wide
        while j + step + 1 <= n:
            memcpy(&w0, d + j, 8)
            memcpy(&w1, d + j + 1, 8)
            x = (w0 ^ first[0]) | ((w1 ^ second[0]) & paired[0])
            m = (x - ones) & ~x    # a unit is zero: its top bit (below the first zero)
            x = (w0 ^ first[1]) | ((w1 ^ second[1]) & paired[1])
            m |= (x - ones) & ~x
            if count > 2:
                x = (w0 ^ first[2]) | ((w1 ^ second[2]) & paired[2])
                m |= (x - ones) & ~x
                x = (w0 ^ first[3]) | ((w1 ^ second[3]) & paired[3])
                m |= (x - ones) & ~x
            if m & highs:
                r = skip_units(d, n, j, j + step, t.start_class, t.pair_bits, t.root_table)
                if r < j + step:
                    return r
            j += step
    return skip_units(d, n, j, n, t.start_class, t.pair_bits, t.root_table)


cdef class TokenTrie:
    """TokenTrie(tokens, values): `find(text)` gives the leftmost-longest non-overlapping
    occurrences as (start, end, value), in characters.  Empty tokens are ignored; a token
    given twice keeps its first value."""
    def __cinit__(self):
        self.chars = NULL
        self.first = self.fail = self.out = self.depth = self.token_of = self.root_table = NULL
        self.values = NULL
        self.start_class = NULL
        self.pair_bits = NULL
        cdef int k
        for k in range(4):
            self.run_nodes[k] = NULL
        memset(self.run_slot, 0, sizeof(self.run_slot))

    def __dealloc__(self):
        cdef int k
        for k in range(4):
            free(self.run_nodes[k])
        free(self.start_class)
        free(self.pair_bits)
        free(self.chars)
        free(self.first)
        free(self.fail)
        free(self.out)
        free(self.depth)
        free(self.token_of)
        free(self.values)
        free(self.root_table)

    def __init__(self, tokens, values):
        tokens = list(tokens)
        values = list(values)
        if len(tokens) != len(values):
            raise ValueError("TokenTrie needs one value per token")
        first_value = {}
        for token, value in zip(tokens, values):
            if not isinstance(token, str):
                raise TypeError(f"tokens must be str, not {type(token).__name__}")
            if token and token not in first_value:
                first_value[token] = value
        order = sorted(first_value)
        cdef Py_ssize_t n = len(order), total = 1, k
        for token in order:
            total += PyUnicode_GET_LENGTH(token)
        if total >= 2 ** 31 - 1:
            raise ValueError("added tokens too long in total for the matcher")
        cdef int* kinds = <int*>malloc((n + 1) * sizeof(int))
        cdef const void** datas = <const void**>malloc((n + 1) * sizeof(void*))
        cdef Py_ssize_t* lens = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        cdef int32_t* lo = <int32_t*>malloc(total * sizeof(int32_t))
        cdef int32_t* hi = <int32_t*>malloc(total * sizeof(int32_t))
        self.values = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        self.chars = <uint32_t*>malloc(total * sizeof(uint32_t))
        self.first = <int32_t*>malloc((total + 1) * sizeof(int32_t))
        self.fail = <int32_t*>malloc(total * sizeof(int32_t))
        self.out = <int32_t*>malloc(total * sizeof(int32_t))
        self.depth = <int32_t*>malloc(total * sizeof(int32_t))
        self.token_of = <int32_t*>malloc(total * sizeof(int32_t))
        self.root_table = <int32_t*>malloc(ROOT_TABLE * sizeof(int32_t))
        self.start_class = <uint8_t*>calloc(256, sizeof(uint8_t))
        self.pair_bits = <uint64_t*>calloc(256 * 4, sizeof(uint64_t))
        try:
            if (kinds == NULL or datas == NULL or lens == NULL or lo == NULL or hi == NULL or self.values == NULL
                    or self.chars == NULL or self.first == NULL or self.fail == NULL or self.out == NULL
                    or self.depth == NULL or self.token_of == NULL or self.root_table == NULL
                    or self.start_class == NULL or self.pair_bits == NULL):
                raise MemoryError()
            for k in range(n):
                token = order[k]
                kinds[k] = PyUnicode_KIND(token)
                datas[k] = PyUnicode_DATA(token)
                lens[k] = PyUnicode_GET_LENGTH(token)
                self.values[k] = first_value[token]
            with nogil:
                self._build(n, kinds, datas, lens, lo, hi)
        finally:
            free(kinds)
            free(datas)
            free(lens)
            free(lo)
            free(hi)

    cdef void _build(self, Py_ssize_t n_tokens, const int* kinds, const void** datas, const Py_ssize_t* lens,
                     int32_t* lo, int32_t* hi) noexcept nogil:
        cdef Py_ssize_t i, k, j, d, count = 1
        cdef uint32_t c
        cdef int32_t f, nxt
        for k in range(ROOT_TABLE):
            self.root_table[k] = NONE
        self.chars[ROOT] = 0
        self.depth[ROOT] = 0
        self.fail[ROOT] = ROOT
        self.out[ROOT] = NONE
        self.token_of[ROOT] = NONE
        lo[ROOT], hi[ROOT] = 0, <int32_t>n_tokens
        i = 0
        while i < count:   # nodes in the order made: breadth first
            d = self.depth[i]
            self.first[i] = <int32_t>count
            k = lo[i]
            if k < hi[i] and lens[k] == d:
                k += 1     # the token ending here sorts first in the run
            while k < hi[i]:
                c = code_point(kinds[k], datas[k], d)
                j = k + 1
                while j < hi[i] and code_point(kinds[j], datas[j], d) == c:
                    j += 1
                self.build_steps += j - k
                self.chars[count] = c
                self.depth[count] = <int32_t>(d + 1)
                lo[count], hi[count] = <int32_t>k, <int32_t>j
                self.token_of[count] = <int32_t>k if lens[k] == d + 1 else NONE
                if i == ROOT:
                    self.fail[count] = ROOT
                    self.n_firsts += 1
                    self.only_first = c
                    if c < ROOT_TABLE:
                        self.root_table[c] = <int32_t>count
                else:
                    f = self.fail[i]
                    while True:
                        self.build_steps += 1
                        nxt = self.child(f, c)
                        if nxt != NONE or f == ROOT:
                            break
                        f = self.fail[f]
                    self.fail[count] = nxt if nxt != NONE else ROOT
                self.out[count] = <int32_t>count if self.token_of[count] != NONE else self.out[self.fail[count]]
                count += 1
                k = j
            i += 1
        self.first[count] = <int32_t>count
        self.nodes = count
        self._start_classes()
        self._swar_sets()
        self._run_tables()

    cdef void _start_classes(self) noexcept nogil:
        """start_class and pair_bits from the root's children and theirs, and the 8-byte
        tests of next_start_latin1 (swar_*)."""
        cdef int32_t x, y
        cdef uint32_t c, c1
        self.swar_n = 0 if self.first[ROOT + 1] - self.first[ROOT] <= 4 else -1
        for x in range(self.first[ROOT], self.first[ROOT + 1]):
            if self.swar_n >= 0:
                self.swar_first[self.swar_n] = self.chars[x]
                self.swar_paired[self.swar_n] = self.token_of[x] == NONE and self.first[x + 1] - self.first[x] == 1
                self.swar_second[self.swar_n] = self.chars[self.first[x]] if self.swar_paired[self.swar_n] else 0
                self.swar_n += 1
            c = self.chars[x]
            if c >= 256:
                continue
            if self.token_of[x] != NONE:
                self.start_class[c] |= ONE_CHAR_TOKEN
            for y in range(self.first[x], self.first[x + 1]):
                c1 = self.chars[y]
                if c1 >= 256:
                    self.start_class[c] |= PAIRS_ABOVE
                else:
                    self.start_class[c] |= PAIRS_BELOW_256
                    self.pair_bits[4 * c + (c1 >> 6)] |= (<uint64_t>1) << (c1 & 63)

    cdef void _swar_sets(self) noexcept nogil:
        """swar_sets from swar_*: per str kind, the first characters its units can be, each
        with its second (paired) or any unit, repeated to four."""
        cdef int size, k, count
        cdef uint64_t ones, top
        cdef SwarSet* ss
        for size in range(3):
            ss = &self.swar_sets[size]
            ones = 0x0101010101010101ULL if size == 0 else (0x0001000100010001ULL if size == 1 else 0x0000000100000001ULL)
            top = 0xFF if size == 0 else (0xFFFF if size == 1 else 0xFFFFFFFF)
            count = 0
            for k in range(self.swar_n if self.swar_n > 0 else 0):
                if self.swar_first[k] > top:
                    continue     # no unit of this str kind is this character
                ss.first[count] = self.swar_first[k] * ones
                ss.paired[count] = <uint64_t>-1 if self.swar_paired[k] and self.swar_second[k] <= top else 0
                ss.second[count] = self.swar_second[k] * ones if ss.paired[count] else 0
                count += 1
            ss.count = count
            if count == 0:
                continue
            for k in range(count, 4):    # skip_words compares four: repeat the first
                ss.first[k], ss.second[k], ss.paired[k] = ss.first[0], ss.second[0], ss.paired[0]
            for k in range(4):
                ss.vals[k], ss.vals2[k] = ss.first[k] & top, ss.second[k] & top

    cdef void _run_tables(self) noexcept nogil:
        """run_slot and run_nodes for up to 4 characters < 256 whose every token is a run of
        that character (GPT-NeoX's and Phi-2's runs of spaces): their nodes are one chain."""
        cdef int32_t x, node, last, k
        cdef uint32_t c
        cdef int slot = 0
        for x in range(self.first[ROOT], self.first[ROOT + 1]):
            c = self.chars[x]
            if c >= 256 or slot == 4:
                continue
            node = x
            while self.first[node + 1] - self.first[node] == 1 and self.chars[self.first[node]] == c:
                node = self.first[node]
            if self.first[node + 1] != self.first[node] or self.depth[node] < 2:
                continue     # a token from c that is no run of c (or a lone c: nothing to gain)
            self.run_nodes[slot] = <int32_t*>malloc((self.depth[node] + 1) * sizeof(int32_t))
            if self.run_nodes[slot] == NULL:
                return       # (the walk answers instead)
            self.run_max[slot] = self.depth[node]
            last = NONE
            self.run_nodes[slot][0] = NONE
            node = x
            for k in range(1, self.run_max[slot] + 1):
                if self.token_of[node] != NONE:
                    last = node
                self.run_nodes[slot][k] = last
                if k < self.run_max[slot]:
                    node = self.first[node]
            self.run_slot[c] = <uint8_t>(slot + 1)
            slot += 1

    cdef inline int32_t child(self, int32_t node, uint32_t c) noexcept nogil:
        """node's child on character c, or NONE (children are in character order)."""
        if node == ROOT and c < ROOT_TABLE:
            return self.root_table[c]
        cdef int32_t a = self.first[node], b = self.first[node + 1], mid
        if b - a == 1:       # inside a long token, or a run of spaces: one child
            return a if self.chars[a] == c else NONE
        while a < b:
            mid = (a + b) >> 1
            if self.chars[mid] < c:
                a = mid + 1
            else:
                b = mid
        if a < self.first[node + 1] and self.chars[a] == c:
            return a
        return NONE

    cdef inline bint may_start(self, int kind, const void* data, Py_ssize_t n, Py_ssize_t j) noexcept nogil:
        """Whether a token may start at j: its character starts one and, unless it is one,
        it and the next character are a token's first two."""
        cdef uint32_t c = code_point(kind, data, j), c1
        cdef uint8_t f
        if c >= 256:
            return c >= ROOT_TABLE or self.root_table[c] != NONE
        f = self.start_class[c]
        if f & ONE_CHAR_TOKEN:
            return True
        if f == 0 or j + 1 >= n:
            return False
        c1 = code_point(kind, data, j + 1)
        if c1 >= 256:
            return (f & PAIRS_ABOVE) != 0
        return (self.pair_bits[4 * c + (c1 >> 6)] >> (c1 & 63)) & 1

    cdef Py_ssize_t next_start(self, int kind, const void* data, Py_ssize_t n, Py_ssize_t j) noexcept nogil:
        """The first position >= j where a token may start (may_start), or n.  When all
        tokens start with one character ("<"), its occurrences are found by memchr; a
        str's other characters take 8 bytes a step where they can (skip_words)."""
        if self.n_firsts == 1:
            while True:
                j = fb_find_unit(kind, data, n, j, self.only_first)
                if j >= n or self.may_start(kind, data, n, j):
                    return j
                j += 1
        if kind == 1:
            return skip_words(<const uint8_t*>data, n, j, self)
        if kind == 2:
            return skip_words(<const uint16_t*>data, n, j, self)
        return skip_words(<const uint32_t*>data, n, j, self)

    cdef Py_ssize_t search_at(self, int kind, const void* data, Py_ssize_t n, Py_ssize_t pos,
                            Py_ssize_t* found_start, Py_ssize_t* found_end, int64_t* found_value,
                            Py_ssize_t* steps) noexcept nogil:
        """The leftmost-longest occurrence at or after pos (its start, or -1 for none).  The
        state's string starts where no earlier match can start; once it starts past the best
        candidate's start, nothing later can beat that candidate."""
        cdef int32_t state = ROOT, nxt, hit
        cdef Py_ssize_t j = pos, s, best_start = -1, best_end = -1
        cdef int64_t best_value = NONE
        cdef uint32_t c
        cdef bint skip_at_root = self.out[ROOT] == NONE   # no empty token: the root emits nothing
        cdef Py_ssize_t taken = 0, run, lim
        cdef int slot
        while j < n:
            if state == ROOT and best_start < 0 and skip_at_root:
                # most positions start no token: pass them with a table load or two each
                # instead of a walk of the automaton (the same state after them: a character
                # that starts no token there, or whose next one ends every token it starts,
                # leaves the automaton at the root or at that next character's child of it)
                j = self.next_start(kind, data, n, j)
                if j >= n:
                    break
                c = code_point(kind, data, j)
                if c < 256 and self.run_slot[c]:
                    # every token from c is a run of c: the leftmost-longest one starting here is
                    # the longest no longer than the run (a shorter run holds none: passed whole)
                    slot = self.run_slot[c] - 1
                    lim = self.run_max[slot] if self.run_max[slot] < n - j else n - j
                    if kind == 1:
                        run = fb_byte_run(<const uint8_t*>data + j, lim, <uint8_t>c)
                    else:
                        run = 1
                        while run < lim and code_point(kind, data, j + run) == c:
                            run += 1
                    taken += run
                    hit = self.run_nodes[slot][run]
                    if hit != NONE:
                        found_start[0], found_end[0] = j, j + self.depth[hit]
                        found_value[0] = self.values[self.token_of[hit]]
                        steps[0] += taken
                        return j
                    j += run
                    continue
            c = code_point(kind, data, j)
            while True:
                taken += 1
                nxt = self.child(state, c)
                if nxt != NONE or state == ROOT:
                    break
                if best_start >= 0 and j - self.depth[state] >= best_start:
                    # every state down the failure chain starts past the candidate: done
                    # (a run of spaces ended, not its chain of shorter runs walked)
                    found_start[0], found_end[0], found_value[0] = best_start, best_end, best_value
                    steps[0] += taken
                    return best_start
                state = self.fail[state]
            state = nxt if nxt != NONE else ROOT
            j += 1
            if best_start >= 0 and j - self.depth[state] > best_start:
                break
            hit = self.out[state]
            if hit != NONE:
                s = j - self.depth[hit]
                if best_start < 0 or s < best_start or (s == best_start and j > best_end):
                    best_start, best_end, best_value = s, j, self.values[self.token_of[hit]]
        found_start[0], found_end[0], found_value[0] = best_start, best_end, best_value
        steps[0] += taken
        return best_start

    cdef list _find(self, str text, Py_ssize_t* steps):
        """find(text), adding the automaton steps taken to steps[0]."""
        cdef int kind = PyUnicode_KIND(text)
        cdef const void* data = PyUnicode_DATA(text)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), pos = 0, s, e
        cdef int64_t v
        out = []
        while pos < n:
            with nogil:
                self.search_at(kind, data, n, pos, &s, &e, &v, steps)
            if s < 0:
                break
            out.append((s, e, v))
            pos = e
        return out

    def find(self, str text):
        """[(start, end, value)] of the tokens in text, leftmost-longest, not overlapping."""
        cdef Py_ssize_t steps = 0
        return self._find(text, &steps)

    def search_steps(self, str text):
        """The automaton steps `find(text)` takes (edges tried): a measure of its work."""
        cdef Py_ssize_t steps = 0
        self._find(text, &steps)
        return steps

    def contains_any(self, str text):
        """Whether any token occurs in text."""
        cdef int kind = PyUnicode_KIND(text)
        cdef const void* data = PyUnicode_DATA(text)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), s, e, steps = 0
        cdef int64_t v
        with nogil:
            self.search_at(kind, data, n, 0, &s, &e, &v, &steps)
        return s >= 0
