# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The scanner-program matcher: split patterns compiled by ``fastbpe.pattern_program`` (and
chains of them, llama.cpp's pre-tokenizers), run over UTF-8 bytes without the GIL.

A program is the pattern's alternation tree in flat arrays; the matcher backtracks as `regex`
does (leftmost-first alternatives, greedy / lazy / possessive repeats, atomic groups,
lookaheads), one character class test per character (an ASCII bitmap, else a two-level bitmap
over code points).  A greedy repeat of a class gives characters back one at a time; the
positions where what follows it already failed are remembered (per item, for the same run),
so a scan never tries them again: a long run costs O(run), not O(run^2).  Where
`pattern_dfa` built an automaton for the pattern, matches are made by it instead (one class
lookup and one transition per character, `_scan_dfa.pxd`), backtracking only where a run of
it read far past its result.

Programs are registered once, process-wide, and get a kind >= PROGRAM_BASE; scanning keeps the
text between matches as pieces, so the pieces tile the text.  Design notes: docs/pretokenize.md.
"""
from libc.stdint cimport int16_t, int32_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

from fastbpe._scan_backtrack cimport dec, m_alt
from fastbpe._scan_dfa cimport Cls, Dfa, dfa_match, has
from fastbpe._scan_types cimport DROP_GAPS, DROP_MATCHES, MAX_ITEMS, MAX_LEVELS, Chain, Ctx, Item, Level, Prog

cdef extern from "_portable.h" nogil:
    Py_ssize_t fb_ctz64(uint64_t x)

cdef extern from *:
    """
    /* Where a chain scan stopped, per thread: the kernel resumes at the last end it got, and a
       chain cannot restart inside a piece of an outer level without knowing that piece. */
    typedef struct {
        const unsigned char* s; Py_ssize_t n, pos; int kind;
        Py_ssize_t b[8], pend_s[8], pend_e[8], pend_B[8];
        int dropped[8];   /* the level's current piece is removed (a Removed level) */
        unsigned acc[8];  /* bit k: level k may start a match inside the level's current piece */
    } fb_chain_state;
    #if defined(_MSC_VER)
    static __declspec(thread) fb_chain_state fb_chain_tls;
    #else
    static _Thread_local fb_chain_state fb_chain_tls;
    #endif
    static fb_chain_state* fb_chain_state_get(void) { return &fb_chain_tls; }
    """
    ctypedef struct fb_chain_state:
        const unsigned char* s
        Py_ssize_t n, pos
        int kind
        Py_ssize_t b[8]
        Py_ssize_t pend_s[8]
        Py_ssize_t pend_e[8]
        Py_ssize_t pend_B[8]
        int dropped[8]
        unsigned acc[8]
    fb_chain_state* fb_chain_state_get() noexcept nogil

cdef Chain* chains[MAX_PROGRAMS]
cdef Py_ssize_t steps_total = 0   # Ctx.steps summed at the end of each scan (steps_taken)
cdef builtin_piece_fn builtin_piece_end = NULL
cdef builtin_scan_fn builtin_scan = NULL


cdef void set_builtin_piece_end(builtin_piece_fn f, builtin_scan_fn g) noexcept:
    global builtin_piece_end, builtin_scan
    builtin_piece_end = f
    builtin_scan = g


cdef bint program_known(int kind) noexcept nogil:
    return PROGRAM_BASE <= kind < PROGRAM_BASE + MAX_PROGRAMS and chains[kind - PROGRAM_BASE] != NULL


cdef Py_ssize_t match_at(Ctx* x, Py_ssize_t pos) noexcept nogil:
    """The end of the match at pos, or -1.  The automaton where the pattern has one, except
    where a run of it read far past its result: a search (or the next piece) starting inside
    what it read would read it again, quadratic in a long run (`\\s+\\Z` on spaces then a
    letter), so positions up to where it stopped go to the backtracking matcher, whose memo
    keeps such runs linear."""
    cdef Py_ssize_t r, stop = 0
    if x.p.dfa.trans != NULL and pos >= x.dfa_until:
        r = dfa_match(&x.p.dfa, x.p.byte_level, x.s, x.n, pos, &stop)
        x.steps += stop - pos + 1
        if stop - (r if r > pos else pos) > 64:
            x.dfa_until = stop
        return r
    return m_alt(x, x.p.root, pos, NULL)


# ---------------------------------------------------------------------------------------
# Scanning: matches and the text between them, level by level
# ---------------------------------------------------------------------------------------

cdef inline int utf8_length(const uint8_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """The length _scan_dfa.decode gives the character at s[p] >= 0x80 (1 for an invalid byte),
    without decoding it."""
    cdef uint8_t b = s[p]
    if b >= 0xC2 and b < 0xE0 and p + 1 < n and (s[p + 1] & 0xC0) == 0x80:
        return 2
    if b >= 0xE0 and b < 0xF0 and p + 2 < n and (s[p + 1] & 0xC0) == 0x80 and (s[p + 2] & 0xC0) == 0x80:
        return 3
    if (b >= 0xF0 and b < 0xF5 and p + 3 < n and (s[p + 1] & 0xC0) == 0x80 and (s[p + 2] & 0xC0) == 0x80
            and (s[p + 3] & 0xC0) == 0x80):
        return 4
    return 1


cdef Py_ssize_t run_next(const Prog* P, const uint8_t* s, Py_ssize_t B, Py_ssize_t pos,
                         bint* matched) noexcept nogil:
    """level_next for a pattern that is one class repeated (`[\\r\\n]`, `\\p{N}+`, a script's
    letters): the run at pos, or the text up to the next character of the class."""
    cdef const Cls* c = &P.classes[P.run_class]
    cdef Py_ssize_t p = pos
    cdef int count = 0, ln = 0
    cdef uint32_t b
    cdef uint64_t word
    cdef bint inside = ((c.ascii[s[pos] >> 6] >> (s[pos] & 63)) & 1 if s[pos] < 0x80
                        else has(c, dec(P, s, B, pos, &ln)))
    matched[0] = inside
    if inside:
        while p < B and count < P.run_max:
            b = s[p]
            if b < 0x80:        # ASCII without a call to decode
                if not (c.ascii[b >> 6] >> (b & 63)) & 1:
                    break
                p += 1
            elif has(c, dec(P, s, B, p, &ln)):
                p += ln
            else:
                break
            count += 1
        return p
    # the text up to the class's next character: ASCII eight bytes at a time when the
    # class's ASCII characters are one range (digits) or none (a script's letters), else a
    # byte at a time by the class's ASCII bits
    while p < B:
        b = s[p]
        if b < 0x80:
            if (c.ascii[b >> 6] >> (b & 63)) & 1:
                return p
            p += 1
            if P.run_swar:
                while p + 8 <= B:
                    memcpy(&word, s + p, 8)
                    if word & 0x8080808080808080ULL:
                        break
                    word = (word + P.run_k1) & ~(word + P.run_k2) & 0x8080808080808080ULL
                    if word:
                        return p + (fb_ctz64(word) >> 3)
                    p += 8
        elif P.byte_level or (P.run_lead[b >> 6] >> (b & 63)) & 1:
            if has(c, dec(P, s, B, p, &ln)):
                return p
            p += ln
        else:           # no character this byte starts is in the class: its length alone
            p += utf8_length(s, B, p)
    return p


cdef Py_ssize_t level_next(const Level* lv, Ctx* x, fb_chain_state* st, int j, const uint8_t* s,
                           Py_ssize_t B, Py_ssize_t pos, bint* matched) noexcept nogil:
    """End of the piece at pos of this level, inside [pos, B): a match, or the text up to
    the next match (which is kept for the next call); `matched` says which."""
    matched[0] = True
    if lv.builtin >= 0:
        return builtin_piece_end(lv.builtin, s, B, pos)
    if lv.prog.run_class >= 0:
        return run_next(&lv.prog, s, B, pos, matched)
    if st.pend_s[j] == pos and st.pend_B[j] == B:
        return st.pend_e[j]
    x.n = B
    cdef Py_ssize_t r = match_at(x, pos), p
    cdef int ln = 0
    cdef uint32_t cp
    cdef const Cls* first = &lv.prog.classes[lv.prog.root_first] if lv.prog.root_first >= 0 else NULL
    if r > pos:
        return r
    matched[0] = False
    dec(&lv.prog, s, B, pos, &ln)
    p = pos + ln
    while p < B:
        x.steps += 1
        cp = dec(&lv.prog, s, B, p, &ln)
        if first == NULL or has(first, cp):
            r = match_at(x, p)
            if r > p:
                st.pend_s[j] = p
                st.pend_e[j] = r
                st.pend_B[j] = B
                return p
        p += ln
    return B


cdef inline Py_ssize_t dfa_run(Ctx* x, const uint8_t* s, Py_ssize_t B, Py_ssize_t pos,
                               Py_ssize_t* ends, Py_ssize_t* k, Py_ssize_t cap, Py_ssize_t flag) noexcept nogil:
    """Matches of a level with an automaton one after another from pos inside [pos, B), each
    end (with `flag`) into ends[k[0]:cap]; stops at B, at cap, where no match starts (the text
    up to the next match is chain_step's) or where match_at would backtrack.  Returns where
    it stopped.  The same matches as match_at, without chain_step's work per piece."""
    cdef const Dfa* D = &x.p.dfa
    cdef bint byte_level = x.p.byte_level
    cdef Py_ssize_t r, stop = 0, i = k[0]
    while i < cap and pos < B and pos >= x.dfa_until:
        r = dfa_match(D, byte_level, s, B, pos, &stop)
        x.steps += stop - pos + 1
        if stop - (r if r > pos else pos) > 64:
            x.dfa_until = stop
        if r <= pos:
            break
        ends[i] = r | flag
        i += 1
        pos = r
    k[0] = i
    return pos


cdef inline Py_ssize_t chain_step(const Chain* ch, Ctx* xs, fb_chain_state* st, const uint8_t* s,
                                  Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    """The next piece end: levels whose piece ended at pos cut a new one, outer to inner;
    with DROPPED set when a Removed level removes the piece (or the piece it lies in).  A
    level no byte of whose outer piece can start a match of it (st.acc) keeps that piece
    whole without being asked (Digits inside a word)."""
    cdef int j = 0, L = ch.n_levels
    cdef bint matched
    cdef Py_ssize_t B, p
    cdef unsigned acc
    while j < L and st.b[j] > pos:
        j += 1
    for j in range(j, L):
        B = n if j == 0 else st.b[j - 1]
        if j > 0 and (not (st.acc[j - 1] >> j) & 1 or st.dropped[j - 1]):
            st.b[j] = B                         # (a removed piece is removed whole: no need to cut it)
            matched = False
            st.acc[j] = st.acc[j - 1]
        else:
            st.b[j] = level_next(&ch.levels[j], &xs[j], st, j, s, B, pos, &matched)
            if ch.track:
                acc = 0xFF
                if j > 0 and (st.acc[j - 1] & ~((<unsigned>2 << j) - 1)) == 0:
                    acc = st.acc[j - 1]             # nothing after it reacts in the outer piece
                elif (ch.track >> j) & 1:
                    acc = 0
                    for p in range(pos, st.b[j]):
                        acc |= ch.react[s[p]]
                st.acc[j] = acc
        st.dropped[j] = (j > 0 and st.dropped[j - 1]) or ch.levels[j].drop == (DROP_MATCHES if matched else DROP_GAPS)
    return st.b[L - 1] | (DROPPED if st.dropped[L - 1] else 0)


cdef inline int bulk_level(const Chain* ch, const fb_chain_state* st) noexcept nogil:
    """The outermost level that can cut the rest of its outer piece in bulk (Chain.bulk) with
    no level after it reacting inside that piece (st.acc), or -1."""
    cdef int m, L = ch.n_levels
    for m in range(L):
        if (ch.bulk >> m) & 1 and (m == L - 1 or (m > 0 and (st.acc[m - 1] & ~((<unsigned>2 << m) - 1)) == 0)):
            return m
    return -1


cdef void state_reset(fb_chain_state* st, Py_ssize_t pos) noexcept nogil:
    cdef int j
    for j in range(MAX_LEVELS):
        st.b[j] = pos
        st.pend_s[j] = -1
        st.dropped[j] = 0
        st.acc[j] = 0xFF


cdef Py_ssize_t program_scan(int kind, const unsigned char* s, Py_ssize_t n, Py_ssize_t pos,
                             Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil:
    global steps_total
    if not program_known(kind) or pos >= n or cap <= 0:
        if pos < n and cap > 0:
            ends[0] = n
            return 1
        return 0
    cdef const Chain* ch = chains[kind - PROGRAM_BASE]
    cdef Ctx xs[MAX_LEVELS]
    cdef Py_ssize_t memo[MAX_LEVELS][4][MAX_ITEMS]
    cdef fb_chain_state local
    cdef fb_chain_state* st = &local
    cdef Py_ssize_t k = 0, p
    cdef int j, i
    for j in range(ch.n_levels):
        xs[j].p = &ch.levels[j].prog
        xs[j].s = s
        xs[j].n = n
        xs[j].memo_end = memo[j][0]
        xs[j].memo_lo = memo[j][1]
        xs[j].memo_n = memo[j][2]
        xs[j].memo_start = memo[j][3]
        xs[j].steps = 0
        xs[j].dfa_until = 0
        for i in range(ch.levels[j].prog.n_items):
            memo[j][2][i] = -1
    if ch.n_levels == 1:
        state_reset(st, pos)            # one level restarts at any of its piece ends
    else:
        st = fb_chain_state_get()
        if not (pos > 0 and st.s == s and st.n == n and st.kind == kind and st.pos == pos):
            state_reset(st, 0)          # replay from the start to get the outer pieces at pos
            p = 0
            while p < pos:
                p = chain_step(ch, xs, st, s, n, p) & ~DROPPED
            if p != pos:                # pos was not a piece end: cut from it as a start
                state_reset(st, pos)
    cdef int L = ch.n_levels, m
    cdef Py_ssize_t B, flag, got
    while k < cap and pos < n:
        ends[k] = chain_step(ch, xs, st, s, n, pos)
        pos = ends[k] & ~DROPPED
        k += 1
        # the rest of the outer piece in bulk: the outermost level whose pieces can be cut many
        # at a time where no level after it reacts to a byte of its outer piece (Falcon's
        # GPT-2 level in a word without digits; any chain's innermost automaton)
        if k >= cap or (L > 1 and pos >= st.b[0]):
            continue                            # (the outermost piece ended: nothing to bulk)
        m = bulk_level(ch, st)
        if m < 0:
            continue
        B = n if m == 0 else st.b[m - 1]
        if pos >= B:
            continue
        flag = DROPPED if (m > 0 and st.dropped[m - 1]) or (ch.bulk_drop >> m) & 1 else 0
        if ch.levels[m].builtin >= 0:
            got = builtin_scan(ch.levels[m].builtin, s, B, pos, ends + k, cap - k)
            if flag:
                for i in range(k, k + got):
                    ends[i] |= flag
            k += got
            pos = ends[k - 1] & ~DROPPED
        else:
            pos = dfa_run(&xs[m], s, B, pos, ends, &k, cap, flag)
        st.b[m] = pos
    st.s = s
    st.n = n
    st.kind = kind
    st.pos = pos
    for j in range(ch.n_levels):
        steps_total += xs[j].steps
    return k


cdef Py_ssize_t program_piece_end(int kind, const unsigned char* s, Py_ssize_t n,
                                  Py_ssize_t pos) noexcept nogil:
    cdef Py_ssize_t end = n
    if pos >= n:
        return n
    program_scan(kind, s, n, pos, &end, 1)
    return end & ~DROPPED


# ---------------------------------------------------------------------------------------
# Registration (Python): a process-wide table, programs are never removed
# ---------------------------------------------------------------------------------------

cdef class _Owner:
    """Owns one registered chain: its C struct and the numpy arrays it points into."""
    cdef Chain* chain
    cdef list keep
    cdef readonly object key

    def __dealloc__(self):
        cdef int j
        if self.chain != NULL:
            for j in range(self.chain.n_levels):
                free(self.chain.levels[j].prog.classes)
            free(self.chain)


cdef list _owners = []
cdef dict _kinds = {}


cdef const int32_t* _ints(list keep, object arr) except NULL:
    cdef const int32_t[::1] view = arr
    keep.append(arr)
    return &view[0]


cdef const uint8_t* _bytes(list keep, object arr) except NULL:
    cdef const uint8_t[::1] view = arr
    keep.append(arr)
    return &view[0]


def _lead_bytes(table):
    """A 256-bit set: the UTF-8 lead bytes (0xC2-0xF4) that start some character of the class
    (run_next skips a character whose lead byte is not in it without decoding it).  Plain
    Python over the buffers (numpy arrays, or a cached program's arrays)."""
    _lo, _hi, index, blocks = table
    index = memoryview(index).tolist()
    data = memoryview(blocks).tobytes()
    nonzero = [any(data[i:i + 32]) for i in range(0, len(data), 32)]
    block_any = [nonzero[i] for i in index]             # per 256 code points
    bits = 0
    for b in range(0xC2, 0xE0):                          # 64 code points: 8 bytes of one block
        cp = (b & 0x1F) << 6
        at = index[cp >> 8] * 32 + ((cp & 255) >> 3)
        if any(data[at:at + 8]):
            bits |= 1 << b
    for b in range(0xE0, 0xF0):                          # 4096 code points: 16 blocks
        if any(block_any[(b & 0x0F) << 4:((b & 0x0F) + 1) << 4]):
            bits |= 1 << b
    for b in range(0xF0, 0xF5):                          # 0x40000 code points: 1024 blocks
        if any(block_any[(b & 0x07) << 10:((b & 0x07) + 1) << 10]):
            bits |= 1 << b
    return bits


def _ascii_range_test(ascii_bits):
    """(usable, k1, k2) for run_next's eight-bytes-at-a-time search: when a class's ASCII
    characters are one range lo..hi (or none), an ASCII byte x is in it exactly when bit 7 of
    x + k1 is set and bit 7 of x + k2 is not (k1 = 0x80 - lo, k2 = 0x7F - hi in every byte;
    no sum carries into the next byte)."""
    if ascii_bits is None:
        return False, 0, 0
    bits = ascii_bits[0] | (ascii_bits[1] << 64)
    members = [b for b in range(128) if (bits >> b) & 1]
    if not members:
        lo, hi = 1, 0
    elif members[len(members) - 1] - members[0] == len(members) - 1:    # (no wraparound here)
        lo, hi = members[0], members[len(members) - 1]
    else:
        return False, 0, 0
    return True, (0x80 - lo) * 0x0101010101010101, (0x7F - hi) * 0x0101010101010101


cdef int _fill(_Owner owner, Prog* P, object program) except -1:
    cdef const uint16_t[::1] index
    cdef const int16_t[::1] by_view
    cdef const uint8_t[::1] blocks
    cdef int i
    P.items = <const Item*>_ints(owner.keep, program.item_array)
    P.seq_start = _ints(owner.keep, program.seq_arrays[0])
    P.seq_end = _ints(owner.keep, program.seq_arrays[1])
    P.seq_first = _ints(owner.keep, program.seq_arrays[2])
    P.alt_start = _ints(owner.keep, program.alt_arrays[0])
    P.alt_end = _ints(owner.keep, program.alt_arrays[1])
    P.alt_seqs = _ints(owner.keep, program.alt_arrays[2])
    P.n_items = len(program.items)
    P.root = program.root
    P.root_first = program.root_first
    P.run_class, P.run_max = program.run if program.run is not None else (-1, 0)
    P.run_swar, P.run_k1, P.run_k2 = _ascii_range_test(program.tables[P.run_class][:2] if P.run_class >= 0 else None)
    lead = _lead_bytes(program.tables[P.run_class]) if P.run_class >= 0 else (1 << 256) - 1
    for i in range(4):
        P.run_lead[i] = (lead >> (64 * i)) & 0xFFFFFFFFFFFFFFFF
    P.byte_level = getattr(program, "byte_level", False)
    dfa = getattr(program, "dfa", None)
    if dfa is not None:
        P.dfa.trans = _ints(owner.keep, dfa.trans)
        P.dfa.low = _bytes(owner.keep, dfa.low)
        P.dfa.rows = _bytes(owner.keep, dfa.rows)
        index = dfa.index
        owner.keep.append(dfa.index)
        P.dfa.index = &index[0]
        P.dfa.width, P.dfa.eot, P.dfa.invalid = dfa.width, dfa.eot, dfa.invalid
        by = dfa.byte_table()
        by_view = by
        owner.keep.append(by)
        P.dfa.bytes = &by_view[0]
        if len(by) != dfa.n_states << 8:
            raise ValueError("a malformed automaton")
        if len(dfa.low) != 256 or len(dfa.index) != 0x110000 >> 8 or len(dfa.trans) % dfa.width:
            raise ValueError("a malformed automaton")
    if P.n_items > MAX_ITEMS:
        raise ProgramCapacity("a program has at most %d items" % MAX_ITEMS)
    P.classes = <Cls*>calloc(max(1, len(program.tables)), sizeof(Cls))
    if P.classes == NULL:
        raise MemoryError()
    for i, (lo, hi, index_arr, blocks_arr) in enumerate(program.tables):
        index = index_arr
        blocks = blocks_arr
        owner.keep.append(index_arr)
        owner.keep.append(blocks_arr)
        P.classes[i].ascii[0] = lo
        P.classes[i].ascii[1] = hi
        P.classes[i].index = &index[0]
        P.classes[i].blocks = &blocks[0]
    return 0


cdef int _fill_react(Chain* ch, list levels) except -1:
    """Chain.react, .track, .bulk and .bulk_drop: the bytes at which each level may start a
    match (a program's first characters: the byte itself when byte-level, else an ASCII byte
    or a UTF-8 lead byte of one; every byte for a built-in level or a program that may start
    anywhere), and which levels may cut in bulk."""
    cdef int j, b, L = ch.n_levels
    cdef const Level* lv
    cdef const Prog* P
    for j, level in enumerate(levels):
        lv = &ch.levels[j]
        P = &lv.prog
        if lv.builtin >= 0 or P.root_first < 0:
            for b in range(256):
                ch.react[b] |= 1 << j
        else:
            lead = 0 if P.byte_level else _lead_bytes(level.tables[P.root_first])
            for b in range(256):
                if (b < 128 or P.byte_level) and has(&P.classes[P.root_first], b) or (lead >> b) & 1:
                    ch.react[b] |= 1 << j
            if (P.run_class < 0 or not P.run_swar) and any(not (ch.react[b] >> j) & 1 for b in range(128)):
                # the levels before it note what reacts in their pieces: worth it for a level
                # some ASCII byte cannot start, unless its gaps are searched eight bytes at a
                # time anyway (DeepSeek's three levels: none is worth it)
                ch.track |= (1 << j) - 1
        if lv.builtin >= 0 and builtin_scan != NULL:
            ch.bulk |= 1 << j
        elif lv.builtin < 0 and P.run_class < 0 and P.dfa.trans != NULL and lv.drop != DROP_GAPS:
            ch.bulk |= 1 << j
        if lv.drop == DROP_MATCHES or any(ch.levels[i].drop == DROP_GAPS for i in range(j + 1, L)):
            ch.bulk_drop |= 1 << j
    return 0


class ProgramCapacity(ValueError):
    """The scanner's fixed tables cannot take this chain (too many levels, items or programs):
    the caller splits with a regex engine instead.  Any other error of `register` is a bug."""


def steps_taken() -> int:
    """The matcher's steps (calls, characters a class run went over, characters given back,
    search positions) since the last call: how tests check work is linear without timing.
    A diagnostic: threads scanning at once may lose counts."""
    global steps_total
    cdef Py_ssize_t n = steps_total
    steps_total = 0
    return n


def register(key, list levels):
    """Register a chain of levels under `key` (once: the same key gives the same kind).
    Each level is a built-in scanner kind (int, 0 <= kind < PROGRAM_BASE) or a compiled
    `pattern_program.Program`; each level cuts every piece of the level before it, keeping
    the text between matches (a program whose `drop` is "matches" or "gaps" removes those:
    their ends carry DROPPED).  Returns the kind."""
    got = _kinds.get(key)
    if got is not None:
        return got
    if not 1 <= len(levels) <= MAX_LEVELS:
        raise ProgramCapacity("a chain has 1 to %d levels, not %d" % (MAX_LEVELS, len(levels)))
    if len(_owners) >= MAX_PROGRAMS:
        raise ProgramCapacity("the program table is full (%d programs)" % MAX_PROGRAMS)
    cdef _Owner owner = _Owner()
    owner.keep = []
    owner.key = key
    owner.chain = <Chain*>calloc(1, sizeof(Chain))
    if owner.chain == NULL:
        raise MemoryError()
    owner.chain.n_levels = len(levels)
    for j, level in enumerate(levels):
        if isinstance(level, int):
            if not 0 <= level < PROGRAM_BASE or builtin_piece_end == NULL:
                raise ValueError("not a built-in scanner kind: %r" % (level,))
            owner.chain.levels[j].builtin = level
        else:
            owner.chain.levels[j].builtin = -1
            owner.chain.levels[j].drop = {None: 0, "matches": DROP_MATCHES, "gaps": DROP_GAPS}[getattr(level, "drop", None)]
            _fill(owner, &owner.chain.levels[j].prog, level)
    _fill_react(owner.chain, levels)
    kind = PROGRAM_BASE + len(_owners)
    _owners.append(owner)
    chains[kind - PROGRAM_BASE] = owner.chain
    _kinds[key] = kind
    return kind


def kind_of(key):
    """The kind registered under `key`, or -1."""
    return _kinds.get(key, -1)


def key_of(int kind):
    """The key a program kind was registered under (ValueError if none)."""
    if not program_known(kind):
        raise ValueError("unknown program kind %d" % kind)
    return _owners[kind - PROGRAM_BASE].key


def is_program(int kind):
    return program_known(kind)
