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
from libc.string cimport memchr, memcpy

from fastbpe._scan_backtrack cimport dec, m_alt
from fastbpe._scan_dfa cimport Cls, Dfa, back_one, decode, dfa_match, has
from fastbpe._scan_types cimport (
    DROP_GAPS, DROP_MATCHES, M_GREEDY, MAX_ITEMS, MAX_LEVELS, T_CLASS, T_DOLLAR, T_END, T_GROUP, T_LOOK, T_NLOOK,
    UNBOUNDED,
    Chain, Ctx, Item, Level, Prog,
)

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
        Py_ssize_t nf[8], na[8];  /* from nf on, the level's next run (need) class character is at na */
        Py_ssize_t ff[8], fa[8];  /* from ff on, the next character that can start a match is at fa */
        Py_ssize_t sf[8], sa[8];  /* from sf on, the anchored level's next stop byte is at sa */
        Py_ssize_t xf, xa;        /* from xf on, the next non-ASCII byte is at xa */
    } fb_chain_state;
    #if defined(_MSC_VER)
    static __declspec(thread) fb_chain_state fb_chain_tls;
    #else
    static _Thread_local fb_chain_state fb_chain_tls;
    #endif
    static fb_chain_state* fb_chain_state_get(void) { return &fb_chain_tls; }
    /* A piece end of an inner level with this bit: the piece is a match of that level (only
       where the next level keeps such pieces whole: Level.mark); never in the ends returned. */
    #define FB_MATCHED ((Py_ssize_t)1 << 61)
    #define FB_FLAGS (FB_DROPPED | FB_MATCHED)
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
        Py_ssize_t nf[8]
        Py_ssize_t na[8]
        Py_ssize_t ff[8]
        Py_ssize_t fa[8]
        Py_ssize_t sf[8]
        Py_ssize_t sa[8]
        Py_ssize_t xf, xa
    fb_chain_state* fb_chain_state_get() noexcept nogil
    const Py_ssize_t MATCHED "FB_MATCHED"
    const Py_ssize_t FLAGS "FB_FLAGS"

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


# ---------------------------------------------------------------------------------------
# Scanning: matches and the text between them, level by level
# ---------------------------------------------------------------------------------------

include "_scan_search.pxi"


cdef inline Py_ssize_t match_at(Ctx* x, Py_ssize_t pos) noexcept nogil:
    """The end of the match at pos, or -1.  The automaton where the pattern has one, except
    where a run of it read far past its result: a search (or the next piece) starting inside
    what it read would read it again, quadratic in a long run (`\\s+\\Z` on spaces then a
    letter), so positions up to where it stopped go to the backtracking matcher, whose memo
    keeps such runs linear."""
    cdef Py_ssize_t r, stop = 0
    if x.p.opt_run >= 0:
        r = opt_run_match(x.p, x.s, x.n, pos)
        x.steps += (r if r > pos else pos) - pos + 1
        return r
    if x.p.dfa.trans != NULL and pos >= x.dfa_until:
        r = dfa_match(&x.p.dfa, x.p.byte_level, x.s, x.n, pos, &stop)
        x.steps += stop - pos + 1
        if stop - (r if r > pos else pos) > 64:
            x.dfa_until = stop
        return r
    return m_alt(x, x.p.root, pos, NULL)



cdef inline Py_ssize_t cut_piece(const Level* lv, Ctx* x, fb_chain_state* st, int j, const uint8_t* s,
                                 Py_ssize_t n, Py_ssize_t q, Py_ssize_t B, Py_ssize_t W, Py_ssize_t* out,
                                 Py_ssize_t* c) noexcept nogil:
    """This level's pieces of [q, B) (an outer piece, or its rest), their ends (DROPPED where
    the level removes them) appended at out[c[0]], until one ends at B or at or after W;
    returns where the last ends."""
    cdef Py_ssize_t k = c[0], e, r = 0, i, got
    cdef Py_ssize_t on_match = (DROPPED if lv.drop == DROP_MATCHES else 0) | (MATCHED if lv.mark else 0)
    cdef Py_ssize_t on_gap = DROPPED if lv.drop == DROP_GAPS else 0
    cdef bint matched
    if lv.builtin >= 0:
        if B - q <= 48:     # a short piece: the block scanner's set-up (a 64-byte window) costs more
            while q < B and q < W:
                q = builtin_piece_end(lv.builtin, s, B, q)
                out[k] = q
                k += 1
            c[0] = k
            return q
        # many at a time; at most W - q pieces of one byte or more, then cut after the first
        # that reaches W (pieces after it start at or after W)
        got = builtin_scan(lv.builtin, s, B, q, out + k, W - q)
        for i in range(k, k + got):
            if out[i] >= W:
                got = i + 1 - k
                break
        c[0] = k + got
        return out[k + got - 1]
    cdef const Prog* P = &lv.prog
    if P.run_class >= 0:
        while q < B and q < W:
            if not (st.nf[j] <= q <= st.na[j]):
                st.na[j] = (bytes_next(P, s, n, q) if P.run_bytes else
                            class_near(P, &P.classes[P.run_class], P.run_swar, P.run_tab, s, n, q))
                st.nf[j] = q
            e = st.na[j]
            if e > q and (e >= B or char_length(P, s, B, e) == char_length(P, s, n, e)):
                q = e if e < B else B       # (a character cut by B: run_next reads it as B does)
                out[k] = q | on_gap
            else:
                q = run_next(P, s, B, q, &matched)
                out[k] = q | (on_match if matched else on_gap)
            k += 1
        c[0] = k
        return q
    if P.opt_run >= 0:
        i = opt_cut(P, s, q, B, W, out + k, on_match, on_gap, &x.steps)
        c[0] = k + i
        return out[k + i - 1] & ~FLAGS if i else q
    x.n = B
    if not may_match(P, s, q, B):
        out[k] = B | on_gap
        c[0] = k + 1
        return B
    while q < B and q < W:
        if P.need >= 0:     # no character every match holds is left in the piece: no match
            if not (st.nf[j] <= q <= st.na[j]):
                st.na[j] = class_near(P, &P.classes[P.need], False, P.need_tab, s, n, q)
                st.nf[j] = q
            if st.na[j] >= B:
                out[k] = B | on_gap
                k += 1
                q = B
                break
        if st.pend_s[j] == q and st.pend_B[j] == B:
            e = st.pend_e[j]
        else:
            e = match_at(x, q)
        if e > q:
            out[k] = e | on_match
            k += 1
            q = e
            continue
        q = gap_end(P, x, st, j, s, n, B, q, &r)
        out[k] = q | on_gap
        k += 1
        if q < B:
            if q < W:
                out[k] = r | on_match
                k += 1
                q = r
            else:                   # the match after the window's last gap: the next call's
                st.pend_s[j] = q
                st.pend_e[j] = r
                st.pend_B[j] = B
    c[0] = k
    return q


cdef inline Py_ssize_t copy_upto(const Py_ssize_t* prev, Py_ssize_t m, Py_ssize_t na, Py_ssize_t on_gap,
                                  Py_ssize_t* out) noexcept nogil:
    """Copies prev[0] (kept by the caller's test) and the pieces after it that end at or before
    na, of the m in prev, into out (MATCHED cleared, on_gap set); returns how many.  One tight
    loop: in chain_window the copy kept i and c in memory (callgrind, Falcon: 15 instructions a
    piece).  copy_upto_last: also stops at a piece whose last byte is in `last` (ASCII bitmap)."""
    cdef Py_ssize_t k = 1, v
    out[0] = (prev[0] & ~MATCHED) | on_gap
    while k < m:
        v = prev[k]
        if (v & ~FLAGS) > na:
            break
        out[k] = (v & ~MATCHED) | on_gap
        k += 1
    return k


cdef inline Py_ssize_t copy_upto_last(const Py_ssize_t* prev, Py_ssize_t m, Py_ssize_t na, Py_ssize_t on_gap,
                                       const uint64_t* last, const uint8_t* s, Py_ssize_t* out) noexcept nogil:
    cdef Py_ssize_t k = 1, v, B
    out[0] = (prev[0] & ~MATCHED) | on_gap
    while k < m:
        v = prev[k]
        B = v & ~FLAGS
        if B > na or (last[s[B - 1] >> 6] >> (s[B - 1] & 63)) & 1:
            break
        out[k] = (v & ~MATCHED) | on_gap
        k += 1
    return k


cdef Py_ssize_t chain_window(const Chain* ch, Ctx* xs, fb_chain_state* st, const uint8_t* s,
                             Py_ssize_t n, Py_ssize_t pos, Py_ssize_t W, Py_ssize_t* ends,
                             Py_ssize_t* bufs) noexcept nogil:
    """The pieces that start in [pos, W) (pos a piece end, W <= n), level by level: each level
    cuts the pieces of the level before it (every piece of one level in one pass; a level's
    piece that began before pos, st.b[j] > pos, is kept as it is), the innermost level's ends
    into ends (at most W - pos: pieces are never empty).  A removed piece is removed whole.
    Leaves in st each level's last piece (which holds the last end returned).  Returns the
    number of ends.  `bufs`: 2 * (W - pos) ends of scratch."""
    cdef int j, L = ch.n_levels, sk
    cdef Py_ssize_t* prev = NULL
    cdef Py_ssize_t* out
    cdef Py_ssize_t n_prev = 0, c, i, B, q, e, on_gap, on_match, na, k
    cdef const Prog* P
    cdef const uint8_t* sk_tab
    cdef bint swar, whole, anchored
    for j in range(L):
        # the class without whose characters an outer piece is one gap of this level: the
        # run's class, or one every match needs (where the next is, is kept: st.nf/na)
        P = &ch.levels[j].prog
        sk, sk_tab, swar = -1, NULL, False
        if ch.levels[j].builtin < 0:
            if P.run_class >= 0:
                sk, sk_tab, swar = P.run_class, P.run_tab, P.run_swar
            elif P.need >= 0:
                sk, sk_tab = P.need, P.need_tab
        on_gap = DROPPED if ch.levels[j].drop == DROP_GAPS else 0
        on_match = (DROPPED if ch.levels[j].drop == DROP_MATCHES else 0) | (MATCHED if ch.levels[j].mark else 0)
        whole = ch.levels[j].whole
        anchored = ch.levels[j].builtin < 0 and P.last >= 0
        if j > 0 and sk >= 0 and not anchored and on_gap == 0 and not whole and n_prev > 0 and (
                st.b[j] <= pos or st.b[j] == (prev[0] & ~FLAGS) and st.dropped[j] == ((prev[0] & DROPPED) != 0)):
            # no character of the class in the window's pieces: each would be copied as it is
            # (no MATCHED marks: the level before marks none when this level is not whole), so
            # the pieces of the level before are this level's (CJK, Digits on English text)
            q = prev[0] & ~FLAGS if st.b[j] > pos else pos
            if not (st.nf[j] <= q <= st.na[j]):
                st.na[j] = class_near(P, &P.classes[sk], swar, sk_tab, s, n, q)
                st.nf[j] = q
            if st.na[j] >= (prev[n_prev - 1] & ~FLAGS):
                if j == L - 1:
                    memcpy(ends, prev, n_prev * sizeof(Py_ssize_t))
                    prev = ends
                e = prev[n_prev - 1]
                st.b[j] = e & ~FLAGS
                st.dropped[j] = (e & DROPPED) != 0
                continue
        out = ends if j == L - 1 else (bufs if prev != bufs else bufs + (W - pos))
        c = 0
        q = pos
        if st.b[j] > pos:           # the level's piece that began before pos
            out[0] = st.b[j] | (DROPPED if st.dropped[j] else 0)
            c = 1
            q = st.b[j]
        if j == 0:
            if q < W:
                cut_piece(&ch.levels[0], &xs[0], st, 0, s, n, q, n, W, out, &c)
        else:
            i = -1
            while i + 1 < n_prev:
                i += 1
                if q >= W:
                    break
                e = prev[i]
                B = e & ~FLAGS
                if q >= B:
                    continue
                if e & DROPPED:     # inside a removed piece: removed whole
                    out[c] = e & ~MATCHED
                    c += 1
                    q = B
                    continue
                if B - q == 1 and on_gap == on_match:   # one character: one piece, a match or
                    out[c] = (e & ~MATCHED) | on_gap    # a gap alike (the "\n" of every line)
                    c += 1
                    q = B
                    continue
                if whole and e & MATCHED and i > 0 and q == (prev[i - 1] & ~FLAGS):
                    if not (st.xf <= q <= st.xa):
                        st.xa = ascii_end(s, n, q)
                        st.xf = q
                    if B <= st.xa:      # an ASCII match: a whole match here too (Level.whole)
                        k = copy_whole(prev + i, n_prev - i, st.xa, on_match, out + c)
                        c += k
                        i += k - 1
                        q = prev[i] & ~FLAGS
                        continue
                if sk >= 0:
                    if not (st.nf[j] <= q <= st.na[j]):
                        st.na[j] = class_near(P, &P.classes[sk], swar, sk_tab, s, n, q)
                        st.nf[j] = q
                    if st.na[j] >= B:       # this piece and the next ones before na: copied
                        k = copy_upto(prev + i, n_prev - i, st.na[j], on_gap, out + c)
                        c += k
                        i += k - 1
                        q = prev[i] & ~FLAGS
                        continue
                if anchored:        # an anchored level: a piece before the next stop byte whose
                    if not (st.sf[j] <= q <= st.sa[j]):     # last character is not in P.last
                        st.sa[j] = stop_next(P, st, s, n, q)            # holds no match (may_match)
                        st.sf[j] = q
                    na = st.sa[j]
                    if na >= B and not (P.classes[P.last].ascii[s[B - 1] >> 6] >> (s[B - 1] & 63)) & 1:
                        k = copy_upto_last(prev + i, n_prev - i, na, on_gap, P.classes[P.last].ascii, s, out + c)
                        c += k
                        i += k - 1
                        q = prev[i] & ~FLAGS
                        continue
                q = cut_piece(&ch.levels[j], &xs[j], st, j, s, n, q, B, W, out, &c)
        e = out[c - 1]
        st.b[j] = e & ~FLAGS
        st.dropped[j] = (e & DROPPED) != 0
        prev = out
        n_prev = c
    return n_prev


cdef void state_reset(fb_chain_state* st, Py_ssize_t pos) noexcept nogil:
    cdef int j
    for j in range(MAX_LEVELS):
        st.b[j] = pos
        st.pend_s[j] = -1
        st.dropped[j] = 0
        st.nf[j] = 1
        st.na[j] = 0
        st.ff[j] = 1
        st.fa[j] = 0
        st.sf[j] = 1
        st.sa[j] = 0
    st.xf = 1
    st.xa = 0


cdef enum:
    WINDOW = 1024     # bytes a chain window covers: each level's pieces of it in one pass


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
    cdef Py_ssize_t bufs[2 * WINDOW]
    cdef Py_ssize_t scratch[WINDOW]
    cdef fb_chain_state local
    cdef fb_chain_state* st = &local
    cdef Py_ssize_t k = 0, p, got, W
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
                got = chain_window(ch, xs, st, s, n, p, min(pos, p + WINDOW), scratch, bufs)
                p = scratch[got - 1] & ~DROPPED
            if p != pos:                # pos was not a piece end: cut from it as a start
                state_reset(st, pos)
    while k < cap and pos < n:
        W = min(n, pos + min(cap - k, <Py_ssize_t>WINDOW))
        got = chain_window(ch, xs, st, s, n, pos, W, ends + k, bufs)
        k += got
        pos = ends[k - 1] & ~DROPPED
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


include "_scan_facts.pxi"


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
    P.need = _needed_class(program) if P.run_class < 0 else -1
    P.opt_class, P.opt_run = _optional_then_run(program) if P.run_class < 0 else (-1, -1)
    for i in range(256):        # opt_cut's byte classes
        P.opt_tab[i] = 0 if P.opt_run < 0 else 4 if i >= 128 else (
            ((program.tables[P.opt_run][i >> 6] >> (i & 63)) & 1) | ((program.tables[P.opt_class][i >> 6] >> (i & 63)) & 1) << 1)
    P.last, stops = _anchored_end(program) if P.run_class < 0 else (-1, 0)
    for i in range(256):        # may_match's bytes that end its shortcut: the stops, non-ASCII
        P.stop_tab[i] = i >= 128 or (stops >> i) & 1
    members = [i for i in range(128) if (stops >> i) & 1]
    P.stop_one = len(members) if len(members) <= 1 else -1
    P.stop_b = members[0] if members else 0
    for i in range(4):
        P.run_lead[i] = (lead >> (64 * i)) & 0xFFFFFFFFFFFFFFFF
    P.byte_level = getattr(program, "byte_level", False)
    _start_bytes(P.run_tab, program, P.run_class, P.byte_level)
    members = [i for i in range(128) if P.run_tab[i]]     # bytes_next's: ASCII alone, 1 or 2
    P.run_bytes = len(members) if P.run_class >= 0 and 1 <= len(members) <= 2 and _ascii_only(program.tables[P.run_class]) else 0
    for i in range(P.run_bytes):
        P.run_b[i] = members[i]
    _start_bytes(P.first_tab, program, P.root_first, P.byte_level)
    _start_bytes(P.need_tab, program, P.need, P.byte_level)
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
        P.dfa.n_states = len(by) >> 8
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
            if j > 0 and owner.chain.levels[j - 1].builtin < 0:
                owner.chain.levels[j].whole = _whole_matches(&owner.chain.levels[j - 1].prog,
                                                             &owner.chain.levels[j].prog)
                owner.chain.levels[j - 1].mark = owner.chain.levels[j].whole
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


def whole_levels(int kind):
    """Per level of a registered chain: whether it keeps an ASCII match of the level before
    whole without matching it (Level.whole, decided at registration).  For tests."""
    if not program_known(kind):
        raise ValueError("unknown program kind %d" % kind)
    cdef const Chain* ch = chains[kind - PROGRAM_BASE]
    return [bool(ch.levels[j].whole) for j in range(ch.n_levels)]


def is_program(int kind):
    return program_known(kind)
