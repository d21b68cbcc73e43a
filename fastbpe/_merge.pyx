# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The merge loops of the encode kernel: a piece's bytes -> its token ids.

Both merge the pair of lowest rank first and the leftmost on ties, until nothing merges
(DESIGN.md §3), so they give identical ids; they differ only in how they find that pair:

* `merge_scan` (pieces up to SCAN_PIECE bytes, see merge_piece): the parts' ids and the pairs they
  start in two dense arrays, a linear scan for the lowest rank and a shift of the shorter
  side (head or tail) per merge.  O(n^2) with a tiny constant, for the short pieces of real
  text.  (A vector scan of ranks at fixed positions, tried in this round, ran fewer
  instructions but was 5-15% slower in wall time: its vector loads read ranks just stored
  one by one.)
* `merge_heap` (longer pieces): a linked list and candidate merges in sorted runs and a heap,
  O(n log n): never quadratic however long the piece.

Each is the building of a piece's first parts, then its loop (`scan_parts`, `heap_parts`);
`merge_parts` runs the same loops on first parts given as ids (char-level models).
"""
from libc.stdint cimport uint8_t, uint32_t, int32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from fastbpe._heap cimport heap_pop, heap_push
from fastbpe._pair_memo cimport memo_pair
from fastbpe._vocab cimport CHAR2_SIZE, NO_PAIR, PairTable, pair_hash, pair_maybe, pair_probe, pair_word, tok_t
from fastbpe._workspace cimport IdBuf, SmallPart, Work

cdef extern from "_portable.h":   # __builtin_prefetch, or MSVC's, or nothing
    void prefetch "fb_prefetch"(const void* p) noexcept nogil

cdef extern from *:   # a test whose answer is a coin toss: GCC then selects instead of branching
    """
    #if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9   /* GCC 9 added it */
    #define fb_unpredictable(x) __builtin_expect_with_probability(!!(x), 1, 0.5)
    #else
    #define fb_unpredictable(x) (x)
    #endif
    /* hides where a pointer came from, so the compiler keeps it in a register of its own */
    #if defined(__GNUC__) || defined(__clang__)
    #define fb_opaque_ptr(p) __asm__("" : "+r"(p))
    #else
    #define fb_opaque_ptr(p) ((void)0)
    #endif
    """
    bint unpredictable "fb_unpredictable"(bint x) noexcept nogil
    void opaque_ptr "fb_opaque_ptr"(const SmallPart* p) noexcept nogil

cdef extern from *:   # keeps a loop that moves a few parts a loop, not a memmove call
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define fb_no_memmove() __asm__ __volatile__("" ::: "memory")
    #else
    #define fb_no_memmove() ((void)0)
    #endif
    """
    void no_memmove "fb_no_memmove"() noexcept nogil

cdef enum:
    MAX_RUNS = 32            # sorted runs of candidate merges at once (see merge_heap)
    PILE_TO_HEAP = 64        # a smaller pile of candidates goes into the heap, not a run
    SORT_SMALL = 32          # sort_keys: up to this many keys by insertion, not by radix

cdef uint64_t UINT64_MAX_KEY = 0xFFFFFFFFFFFFFFFFULL   # above every candidate merge


cdef inline Py_ssize_t char_part(const MergeTables* t, const uint8_t* p, Py_ssize_t i,
                                  Py_ssize_t n, tok_t* part) noexcept nogil:
    """The first part at byte i: a 2- or 3-byte character's token when t.char_tokens allows
    starting from it next to the bytes around it (_vocab.build_char_tokens), else the
    byte's token; its length."""
    cdef uint8_t b = p[i]
    cdef int32_t c = -1
    cdef Py_ssize_t ln = 1
    cdef int left, right
    if b >= 0xC0 and t.char_tokens != NULL:
        if b < 0xE0:
            if i + 1 < n and (p[i + 1] & 0xC0) == 0x80:
                c = t.char_tokens[((b & 0x1F) << 6) | (p[i + 1] & 0x3F)]
                ln = 2
        elif b < 0xF0:
            if i + 2 < n and (p[i + 1] & 0xC0) == 0x80 and (p[i + 2] & 0xC0) == 0x80:
                c = t.char_tokens[CHAR2_SIZE + (((b & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6)
                                                 | (p[i + 2] & 0x3F))]
                ln = 3
        if c >= 0:
            # the kinds of neighbour: none, a multi-byte character's part, any; the two tests
            # as one branch
            left = 0 if i == 0 else 1 if (p[i - 1] & 0xC0) == 0x80 else 2
            right = 0 if i + ln == n else 1 if p[i + ln] >= 0xC0 else 2
            if (left <= ((c >> 2) & 3)) & (right <= (c & 3)):
                part[0] = <tok_t>(c >> 4)
                return ln
    part[0] = <tok_t>t.byte_id[b]
    return 1


cdef inline uint64_t first_pair(const MergeTables* t, const PairTable* pairs, const uint8_t* p,
                                Py_ssize_t i, Py_ssize_t len_i, Py_ssize_t j, Py_ssize_t len_j,
                                tok_t left, tok_t right) noexcept nogil:
    """The pair of the first parts at bytes i and j: two single bytes from the byte pair
    table, else from the pair table."""
    if len_i == 1 and len_j == 1:
        return t.byte_pairs[(<Py_ssize_t>p[i] << 8) | p[j]]
    return pair_word(pairs, left, right)


cdef inline bint has_lead_bytes(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Whether a byte of p[:n] (n >= 2) is >= 0xC0 (starts a multi-byte UTF-8 character): only
    there may char_part start from a character's token.  8 bytes a step: bits 7 and 6 both set
    (a byte's bits stay in its own 8 bits of a word in either byte order).  The tail is the
    last 8 (or 4) bytes again, overlapping: copies of a fixed size, not a memcpy call."""
    cdef uint64_t w, seen = 0
    cdef uint32_t lo, hi
    cdef Py_ssize_t i = 0
    if n >= 8:
        while i + 8 < n:
            memcpy(&w, p + i, 8)
            seen |= w & (w << 1)
            i += 8
        memcpy(&w, p + n - 8, 8)
    elif n >= 4:
        memcpy(&lo, p, 4)
        memcpy(&hi, p + n - 4, 4)
        w = lo | (<uint64_t>hi << 32)
    else:
        w = p[0] | (<uint64_t>p[1] << 8) | (<uint64_t>p[n - 1] << 16)
    seen |= w & (w << 1)
    return (seen & 0x8080808080808080ULL) != 0


cdef void merge_scan(const MergeTables* t, const uint8_t* p, Py_ssize_t n, IdBuf* out,
                     Work* w) noexcept nogil:
    """Linear scan: merge the lowest rank, leftmost on ties, until nothing merges.

    The parts are one dense array of (pair, id) (w.parts): parts[i].pair is (rank << 32 |
    new id) of parts i and i+1.  The scan compares ranks alone with a strict <, so equal
    ranks (SentencePiece scores) merge leftmost first, as merge_heap does; a merge moves
    the shorter side of the array by one part.  One array, not separate ids and pairs: one
    move a merge instead of two.  scan_parts reads three parts past the last, so p goes to
    merge_heap when w.parts has no room for n + 3 (never for merge_piece's pieces: w.cap is
    at least 256; merge_parts' callers pass w.parts too)."""
    cdef SmallPart* parts = w.parts
    cdef const int32_t* byte_id = t.byte_id
    cdef const uint64_t* byte_pairs = t.byte_pairs
    # the pair table by value: the stores into parts would otherwise make the compiler load
    # its fields again for every lookup (this module is built without strict aliasing)
    cdef PairTable pairs = t.pairs[0]
    cdef Py_ssize_t m = 0, i, pos = 0, ln, last_len
    cdef tok_t part, last
    if n + 3 > w.cap:   # no room for scan_parts' three parts past the last (see there)
        merge_heap(t, p, n, out, w)
        return
    # char_part and first_pair give bytes and byte_pairs where no byte starts a multi-byte
    # character (English and code pieces): that loop, without their branches per byte
    if t.char_tokens == NULL or not has_lead_bytes(p, n):
        for i in range(n - 1):
            parts[i].id = <tok_t>byte_id[p[i]]
            parts[i].pair = byte_pairs[(<Py_ssize_t>p[i] << 8) | p[i + 1]]
        parts[n - 1].id = <tok_t>byte_id[p[n - 1]]
        m = n
    else:
        last_len = pos = char_part(t, p, 0, n, &part)
        parts[0].id = last = part
        m = 1
        while pos < n:
            ln = char_part(t, p, pos, n, &part)
            parts[m].id = part
            parts[m - 1].pair = first_pair(t, &pairs, p, pos - last_len, last_len, pos, ln, last, part)
            last = part
            last_len = ln
            pos += ln
            m += 1
    parts[m - 1].pair = NO_PAIR
    scan_parts(t.pairs, parts, m, out, NULL, 0)


cdef inline Py_ssize_t lowest_pair(const SmallPart* parts, Py_ssize_t m) noexcept nogil:
    """Where the pair of lowest rank of parts[0..m-1) starts (m >= 2), leftmost on ties: by
    rank alone, with a strict <, so equal ranks (SentencePiece scores) merge leftmost first.
    Four parts a step, each by its own address register and a select (cmov); parts[m-1..m+3)
    must not merge (scan_parts keeps them so), so the step count changes once in four merges
    and the loop's exit is mostly predicted (it mispredicted on nearly every scan when each
    part was a step)."""
    cdef const SmallPart* q0 = parts
    cdef const SmallPart* q1 = parts + 1
    cdef const SmallPart* q2 = parts + 2
    cdef const SmallPart* q3 = parts + 3
    cdef const SmallPart* end = parts + m - 1
    cdef const SmallPart* best_p = parts
    cdef uint32_t best = 0xFFFFFFFFU, r0, r1, r2, r3
    opaque_ptr(q1)
    opaque_ptr(q2)
    opaque_ptr(q3)
    while q0 < end:
        r0 = <uint32_t>(q0[0].pair >> 32)
        r1 = <uint32_t>(q1[0].pair >> 32)
        r2 = <uint32_t>(q2[0].pair >> 32)
        r3 = <uint32_t>(q3[0].pair >> 32)
        if unpredictable(r0 < best):
            best = r0
            best_p = q0
        if unpredictable(r1 < best):
            best = r1
            best_p = q1
        if unpredictable(r2 < best):
            best = r2
            best_p = q2
        if unpredictable(r3 < best):
            best = r3
            best_p = q3
        q0 += 4
        q1 += 4
        q2 += 4
        q3 += 4
    return best_p - parts


cdef inline void scan_parts(const PairTable* table, SmallPart* parts, Py_ssize_t m, IdBuf* out,
                            uint64_t* memo, uint64_t mask) noexcept nogil:
    """merge_scan's loop on m parts whose ids and pairs are set (parts[m - 1].pair = NO_PAIR):
    the result's ids appended to out.  memo (NULL: none): the new pairs asked through a pair
    memo (_pair_memo; the char-level kernel's words), else through the filter and a prefetch."""
    # the pair table by value: the stores into parts would otherwise make the compiler load
    # its fields again for every lookup (this module is built without strict aliasing)
    cdef PairTable pairs = table[0]
    cdef Py_ssize_t i, best_i
    cdef uint64_t bp, key_r = 0, h_r = 0, key_l = 0, h_l = 0
    cdef tok_t merged
    cdef bint right, left
    # lowest_pair reads up to three parts past the last: they do not merge.  The last part's
    # pair is NO_PAIR and stays so: a head move keeps the array's end, a tail move leaves the
    # old last behind it.  (The array has room for m + 3 parts: see merge_scan.)
    parts[m].pair = NO_PAIR
    parts[m + 1].pair = NO_PAIR
    parts[m + 2].pair = NO_PAIR
    while m > 1:
        best_i = lowest_pair(parts, m)
        bp = parts[best_i].pair
        if bp >= NO_PAIR:
            break
        merged = <tok_t>(bp & 0xFFFFFFFFU)
        # the two pairs the new part makes: the filter asked now, and only a pair it lets
        # through has its slot fetched from memory while the parts move (a large
        # vocabulary's pair table is several MiB) and looked up after the move
        right = best_i + 2 < m
        if right:
            key_r = (<uint64_t>merged << 32) | parts[best_i + 2].id
            if memo == NULL:
                h_r = pair_hash(key_r)
                right = pair_maybe(&pairs, h_r)
                if right:
                    prefetch(&pairs.slots[h_r >> pairs.shift])
        left = best_i > 0
        if left:
            key_l = (<uint64_t>parts[best_i - 1].id << 32) | merged
            if memo == NULL:
                h_l = pair_hash(key_l)
                left = pair_maybe(&pairs, h_l)
                if left:
                    prefetch(&pairs.slots[h_l >> pairs.shift])
        # parts best_i and best_i+1 become one: the shorter side moves by one part, part by
        # part (a memmove call cost more than the two or three parts it usually moves)
        m -= 1
        if 2 * best_i < m:   # the head moves up; the array then starts one part later
            for i in range(best_i, 0, -1):
                parts[i] = parts[i - 1]
                no_memmove()
            parts += 1
        else:
            for i in range(best_i + 1, m):
                parts[i] = parts[i + 1]
                no_memmove()
        parts[best_i].id = merged
        if memo != NULL:
            parts[best_i].pair = memo_pair(memo, mask, &pairs, key_r) if right else NO_PAIR
            if left:
                parts[best_i - 1].pair = memo_pair(memo, mask, &pairs, key_l)
        else:
            parts[best_i].pair = pair_probe(&pairs, key_r, h_r) if right else NO_PAIR
            if best_i > 0:
                parts[best_i - 1].pair = pair_probe(&pairs, key_l, h_l) if left else NO_PAIR
    for i in range(m):
        out.data[out.len + i] = parts[i].id
    out.len += m


cdef inline void pile_pair(const PairTable* pairs, SmallPart* parts, Py_ssize_t left,
                           Py_ssize_t right, uint64_t* space, Py_ssize_t* pile_lo,
                           uint64_t* pile_min) noexcept nogil:
    """Set the pair the part at `left` now starts with the part at `right` and, if it merges,
    pile it as a candidate (see merge_heap)."""
    cdef uint64_t bp = pair_word(pairs, parts[left].id, parts[right].id)
    cdef uint64_t key
    parts[left].pair = bp
    if bp == NO_PAIR:
        return
    key = (bp & 0xFFFFFFFF00000000ULL) | <uint64_t>left
    pile_lo[0] -= 1
    space[pile_lo[0]] = key
    if key < pile_min[0]:
        pile_min[0] = key


cdef inline void insertion_sort(uint64_t* keys, Py_ssize_t n) noexcept nogil:
    """Sort a few 64-bit keys whole (a radix pass clears and sums 256 counters a byte)."""
    cdef Py_ssize_t i, j
    cdef uint64_t k
    for i in range(1, n):
        k = keys[i]
        j = i
        while j > 0 and keys[j - 1] > k:
            keys[j] = keys[j - 1]
            j -= 1
        keys[j] = k


cdef void sort_keys(uint64_t* keys, uint64_t* tmp, Py_ssize_t n, int first_byte) noexcept nogil:
    """Sort 64-bit keys by their bytes first_byte..7 (a stable LSD radix sort over the bytes
    that differ between keys; the others cost nothing); tmp has room for n keys.  With
    first_byte = 4 it sorts (rank << 32 | position) keys by rank alone, keeping the order of
    positions.  Up to SORT_SMALL keys are sorted whole instead (by rank, then position): the
    same order for keys whose positions ascend in each rank, and the order sort_pile ends with."""
    cdef Py_ssize_t count[8][256]
    cdef Py_ssize_t i, total, c
    cdef int byte, b, n_vary = 0
    cdef int vary[8]
    cdef uint64_t* src = keys
    cdef uint64_t* dst = tmp
    cdef uint64_t* swap
    cdef uint64_t k, all_or = 0, all_and = UINT64_MAX_KEY
    if n < 2:
        return
    if n <= SORT_SMALL:
        insertion_sort(keys, n)
        return
    for i in range(n):
        all_or |= keys[i]
        all_and &= keys[i]
    for byte in range(first_byte, 8):
        if ((all_or ^ all_and) >> (8 * byte)) & 0xFF:
            vary[n_vary] = byte
            n_vary += 1
    if n_vary == 0:
        return
    memset(count, 0, n_vary * sizeof(count[0]))   # only the rows used: short piles are common
    for i in range(n):
        k = keys[i]
        for b in range(n_vary):
            count[b][(k >> (8 * vary[b])) & 0xFF] += 1
    for b in range(n_vary):
        byte = vary[b]
        total = 0
        for c in range(256):
            i = count[b][c]
            count[b][c] = total
            total += i
        for i in range(n):
            c = <Py_ssize_t>((src[i] >> (8 * byte)) & 0xFF)
            dst[count[b][c]] = src[i]
            count[b][c] += 1
        swap = src
        src = dst
        dst = swap
    if src != keys:
        memcpy(keys, src, n * sizeof(uint64_t))


cdef void sort_pile(uint64_t* keys, uint64_t* tmp, Py_ssize_t n) noexcept nogil:
    """Sort the candidates that merges made (stored last-made first).  Merges of one rank
    run left to right, so in the order they were made the positions of one rank nearly
    always ascend: reverse, sort by rank alone, and sort by position too only if that left
    the keys out of order."""
    cdef Py_ssize_t i
    cdef uint64_t t
    for i in range(n // 2):
        t = keys[i]
        keys[i] = keys[n - 1 - i]
        keys[n - 1 - i] = t
    sort_keys(keys, tmp, n, 4)
    for i in range(n - 1):
        if keys[i] > keys[i + 1]:
            sort_keys(keys, tmp, n, 0)
            return


cdef void merge_heap(const MergeTables* t, const uint8_t* p, Py_ssize_t n, IdBuf* out,
                     Work* w) noexcept nogil:
    """Linked list of parts indexed by start byte (the first parts: bytes, or characters'
    tokens where a merge may start from them: char_part; a part lives at its first byte, the
    list skips the bytes inside it), merged by heap_parts.  O(n log n)."""
    cdef SmallPart* parts = w.parts
    cdef int32_t* nxt = w.nxt
    cdef int32_t* prv = w.prv
    cdef uint64_t* run = w.heap + 2 * w.cap
    cdef Py_ssize_t i, ln, last = -1, last_len = 0, run_len = 0
    cdef uint64_t bp
    cdef tok_t part
    i = 0
    while i < n:
        ln = char_part(t, p, i, n, &part)
        parts[i].id = part
        prv[i] = <int32_t>last
        if last >= 0:
            nxt[last] = <int32_t>i
            bp = first_pair(t, t.pairs, p, last, last_len, i, ln, parts[last].id, part)
            parts[last].pair = bp
            if bp < NO_PAIR:
                run[run_len] = (bp & 0xFFFFFFFF00000000ULL) | <uint64_t>last
                run_len += 1
        last = i
        last_len = ln
        i += ln
    nxt[last] = <int32_t>n
    parts[last].pair = NO_PAIR
    heap_parts(t.pairs, parts, nxt, prv, n, run_len, out, w)


cdef void heap_parts(const PairTable* pairs, SmallPart* parts, int32_t* nxt, int32_t* prv, Py_ssize_t n,
                     Py_ssize_t run_len, IdBuf* out, Work* w) noexcept nogil:
    """merge_heap's loop: the live parts form a list from position 0 (nxt/prv; n ends it),
    each with its id and the pair it starts (NO_PAIR for the last), and the candidates of those
    pairs, (rank << 32 | position) in ascending positions, are the run_len keys at
    w.heap + 2 * w.cap.  Candidates are taken smallest first: lowest rank, leftmost on ties;
    the result's ids are appended to out.

    parts[i].pair is the pair the live part at i starts now (NO_PAIR when none or the part
    is dead), so a candidate is stale exactly when its rank differs from it: no pair lookup
    to skip one.  (A candidate whose pair was replaced by another pair of the same rank
    merges that pair, which is then the right merge: lowest rank, leftmost.)

    Candidates wait in sorted runs, a 4-ary heap, or a pending pile: the first pairs
    are one run, sorted once; the pairs that merges make pile up unsorted and are
    ordered only when the pile holds the smallest candidate (as a new run when large,
    else into the heap).  On long pieces most candidates then leave a run at O(1)
    instead of a heap at O(log n): a 1 MiB piece is several times faster.

    w.heap has 5 * cap keys: [0, 2 cap) the heap growing up and the pile and its runs
    growing down (both together never exceed the 2n - 2 pairs merges make);
    [2 cap, 3 cap) the first run; [3 cap, 5 cap) scratch for sorting."""
    cdef uint64_t* space = w.heap
    cdef uint64_t* heap = space
    cdef uint64_t* tmp = space + 3 * w.cap
    cdef Py_ssize_t run_at[MAX_RUNS]
    cdef Py_ssize_t run_end[MAX_RUNS]
    cdef Py_ssize_t n_runs = 0, pile_lo = 2 * w.cap, pile_hi = 2 * w.cap
    cdef uint64_t pile_min = UINT64_MAX_KEY
    cdef Py_ssize_t size = 0, i, j, src, pos, right, after, before
    cdef uint64_t top, bp
    run_at[0] = 2 * w.cap
    run_end[0] = 2 * w.cap + run_len
    sort_keys(space + run_at[0], tmp, run_len, 4)   # positions ascend
    n_runs = 1
    while True:
        # the smallest candidate: heap top or a run's head ...
        top = UINT64_MAX_KEY
        src = -2
        if size > 0:
            top = heap[0]
            src = -1
        j = 0
        while j < n_runs:
            if run_at[j] == run_end[j]:      # used up: drop it
                n_runs -= 1
                run_at[j] = run_at[n_runs]
                run_end[j] = run_end[n_runs]
                continue
            if space[run_at[j]] < top:
                top = space[run_at[j]]
                src = j
            j += 1
        # ... unless the pile holds a smaller one: order the pile first
        if pile_lo < pile_hi and pile_min < top:
            if pile_hi - pile_lo < PILE_TO_HEAP or n_runs == MAX_RUNS:
                for i in range(pile_lo, pile_hi):
                    heap_push(heap, &size, space[i])
                pile_lo = pile_hi            # its space is free again
            else:
                sort_pile(space + pile_lo, tmp, pile_hi - pile_lo)
                run_at[n_runs] = pile_lo
                run_end[n_runs] = pile_hi
                n_runs += 1
                pile_hi = pile_lo            # the next pile grows below this run
            pile_min = UINT64_MAX_KEY
            continue
        if src == -2:
            break
        if src == -1:
            heap_pop(heap, &size)
        else:
            run_at[src] += 1
        pos = <Py_ssize_t>(top & 0xFFFFFFFFU)
        bp = parts[pos].pair
        if (bp >> 32) != (top >> 32):
            continue  # stale: the pair at pos changed, or the part died
        right = nxt[pos]
        parts[pos].id = <tok_t>(bp & 0xFFFFFFFFU)
        parts[pos].pair = NO_PAIR
        parts[right].pair = NO_PAIR   # right is merged into pos
        after = nxt[right]
        nxt[pos] = <int32_t>after
        if after < n:
            prv[after] = <int32_t>pos
            pile_pair(pairs, parts, pos, after, space, &pile_lo, &pile_min)
        before = prv[pos]
        if before >= 0:
            pile_pair(pairs, parts, before, pos, space, &pile_lo, &pile_min)
    i = 0
    while i < n:
        out.data[out.len] = parts[i].id
        out.len += 1
        i = nxt[i]


cdef void merge_piece(const MergeTables* t, const uint8_t* p, Py_ssize_t n, IdBuf* out,
                      Work* w) noexcept nogil:
    """merge_scan for pieces of up to SCAN_PIECE bytes, else merge_heap.  (Counting a piece's
    characters instead, so that a piece of 48 CJK characters, which mostly start as one
    part each, is scanned: the same instructions on multilingual text, measured.)"""
    if n <= SCAN_PIECE:
        merge_scan(t, p, n, out, w)
    else:
        merge_heap(t, p, n, out, w)


cdef void merge_parts(const PairTable* pairs, SmallPart* parts, Py_ssize_t m, IdBuf* out,
                      Work* w) noexcept nogil:
    """Merge m >= 1 parts whose ids are set (parts[0..m).id) and append the result to out:
    for models whose first parts are not a piece's bytes (_char_bpe: a word's characters'
    tokens).  Up to SCAN_PIECE parts scan_parts, else heap_parts, as merge_piece chooses."""
    cdef uint64_t* run = w.heap + 2 * w.cap
    cdef Py_ssize_t i, run_len = 0
    cdef uint64_t bp
    if m <= SCAN_PIECE:
        for i in range(m - 1):
            parts[i].pair = pair_word(pairs, parts[i].id, parts[i + 1].id)
        parts[m - 1].pair = NO_PAIR
        scan_parts(pairs, parts, m, out, NULL, 0)
        return
    for i in range(m - 1):
        # a long word is often a run of one character (or a few): a pair like the one before
        # is not looked up again
        if i == 0 or parts[i].id != parts[i - 1].id or parts[i + 1].id != parts[i].id:
            bp = pair_word(pairs, parts[i].id, parts[i + 1].id)
        parts[i].pair = bp
        w.nxt[i] = <int32_t>(i + 1)
        w.prv[i] = <int32_t>(i - 1)
        if bp < NO_PAIR:
            run[run_len] = (bp & 0xFFFFFFFF00000000ULL) | <uint64_t>i
            run_len += 1
    w.nxt[m - 1] = <int32_t>m
    w.prv[m - 1] = <int32_t>(m - 2)
    parts[m - 1].pair = NO_PAIR
    heap_parts(pairs, parts, w.nxt, w.prv, m, run_len, out, w)


cdef void merge_paired_parts(const PairTable* pairs, SmallPart* parts, Py_ssize_t m, IdBuf* out,
                             Work* w) noexcept nogil:
    """merge_parts of parts whose pairs are set too (parts[i].pair for i < m - 1; _char_bpe
    asks a word's first pairs through w's pair memo, and the scan asks the rest through it)."""
    if m <= SCAN_PIECE:
        parts[m - 1].pair = NO_PAIR
        scan_parts(pairs, parts, m, out, w.pair_memo, w.pair_memo_mask)
    else:
        merge_parts(pairs, parts, m, out, w)


cdef int merge_known_bytes(const MergeTables* t, const uint8_t* p, Py_ssize_t n, IdBuf* out,
                           Work* w) except -1 nogil:
    """merge_piece of p without its bytes that have no token: HF's BPE skips a character its
    vocabulary lacks, and the neighbours merge across the gap (Falcon lacks control bytes).
    p may hold none: then it is merge_piece."""
    cdef uint8_t* kept
    cdef Py_ssize_t i, m = 0
    for i in range(n):
        if t.byte_id[p[i]] < 0:
            break
    else:
        merge_piece(t, p, n, out, w)   # every byte has a token
        return 0
    kept = <uint8_t*>malloc(n)
    if kept == NULL:
        with gil:
            raise MemoryError()
    for i in range(n):
        if t.byte_id[p[i]] >= 0:
            kept[m] = p[i]
            m += 1
    if m == 1:
        out.data[out.len] = <tok_t>t.byte_id[kept[0]]
        out.len += 1
    elif m > 1:
        merge_piece(t, kept, m, out, w)
    free(kept)
    return 0
