# The scanner programs' backtracking matcher, as `regex` matches (inline, for
# _scan_program.pyx): leftmost-first alternatives, greedy / lazy / possessive repeats, atomic
# groups, lookaheads; a greedy class run remembers where what follows it failed, so a long run
# costs O(run).  Used where a program has no automaton (pattern_dfa), or where one read far.
from libc.stdint cimport uint8_t, uint32_t

from fastbpe._scan_dfa cimport back_one, decode, has
from fastbpe._scan_types cimport (
    C_ITEMS, C_REPEAT, C_STOP, M_LAZY, M_POSSESSIVE, T_CLASS, T_DOLLAR, T_END, T_GROUP, T_LOOK, T_NLOOK, UNBOUNDED,
    Cls, Cont, Ctx, Item, Prog,
)


# ---------------------------------------------------------------------------------------
# Characters
# ---------------------------------------------------------------------------------------

cdef inline uint32_t dec(const Prog* P, const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                         int* ln) noexcept nogil:
    """The character at s[p] as the program reads it: a code point, or one byte."""
    if P.byte_level:
        ln[0] = 1
        return s[p]
    return decode(s, n, p, ln)


cdef inline Py_ssize_t back(const Prog* P, const uint8_t* s, Py_ssize_t p, Py_ssize_t floor) noexcept nogil:
    return p - 1 if P.byte_level else back_one(s, p, floor)


# ---------------------------------------------------------------------------------------
# The backtracking matcher: each function returns the end of the whole match, or -1
# ---------------------------------------------------------------------------------------

cdef inline Py_ssize_t m_cont(Ctx* x, Py_ssize_t pos, const Cont* k) noexcept nogil:
    if k == NULL or k.kind == C_STOP:
        return pos
    if k.kind == C_ITEMS:
        return m_items(x, k.item, k.end, pos, k.next)
    return m_repeat(x, k.item, k.end, k.count, k.start, pos, k.next)


cdef inline Py_ssize_t m_alt(Ctx* x, int a, Py_ssize_t pos, const Cont* k) noexcept nogil:
    cdef const Prog* P = x.p
    cdef int i, seq, f, ln = 0
    cdef uint32_t cp = dec(x.p, x.s, x.n, pos, &ln) if pos < x.n else 0x110000
    cdef Py_ssize_t r
    x.steps += 1
    for i in range(P.alt_start[a], P.alt_end[a]):
        seq = P.alt_seqs[i]
        f = P.seq_first[seq]
        if f >= 0 and not has(&P.classes[f], cp):
            continue
        r = m_items(x, P.seq_start[seq], P.seq_end[seq], pos, k)
        if r >= 0:
            return r
    return -1


cdef inline Py_ssize_t m_items(Ctx* x, int it, int end, Py_ssize_t pos, const Cont* k) noexcept nogil:
    cdef const Item* item
    cdef Py_ssize_t r
    cdef int ln = 0
    cdef Cont stop               # the end of a lookahead's match (not NULL: no memo there)
    x.steps += 1
    while it < end:          # one character of a class (a literal, most often): no recursion
        item = &x.p.items[it]
        if item.type != T_CLASS or item.max != 1 or item.min != 1:
            break
        if pos >= x.n or not has(&x.p.classes[item.arg], dec(x.p, x.s, x.n, pos, &ln)):
            return -1
        pos += ln
        it += 1
    if it == end:
        return m_cont(x, pos, k)
    item = &x.p.items[it]
    if item.type == T_CLASS:
        return m_class(x, it, end, pos, k)
    if item.type == T_GROUP:
        if item.mode == M_POSSESSIVE:
            return m_atomic(x, it, end, pos, k)
        return m_repeat(x, it, end, 0, -1, pos, k)
    if item.type == T_LOOK or item.type == T_NLOOK:
        stop.kind = C_STOP
        r = m_alt(x, item.arg, pos, &stop)
        if (r >= 0) != (item.type == T_LOOK):
            return -1
        return m_items(x, it + 1, end, pos, k)
    if item.type == T_DOLLAR:   # end of text, or before a newline that ends it
        if pos == x.n or (pos + 1 == x.n and x.s[pos] == 10):
            return m_items(x, it + 1, end, pos, k)
        return -1
    if pos == x.n:              # T_END
        return m_items(x, it + 1, end, pos, k)
    return -1


cdef inline Py_ssize_t m_class(Ctx* x, int it, int end, Py_ssize_t pos, const Cont* k) noexcept nogil:
    cdef const Item* item = &x.p.items[it]
    cdef const Cls* c = &x.p.classes[item.arg]
    cdef const uint8_t* s = x.s
    cdef Py_ssize_t n = x.n, p = pos, floor = pos, r, top, lo
    cdef int count = 0, ln = 0, mn = item.min, mx = item.max
    cdef bint memo = k == NULL and mx >= UNBOUNDED     # the run's end does not depend on pos
    if item.mode == M_LAZY:
        while True:
            if count >= mn:
                r = m_items(x, it + 1, end, p, k)
                if r >= 0:
                    return r
            if count >= mx or p >= n or not has(c, dec(x.p, s, n, p, &ln)):
                return -1
            p += ln
            count += 1
            x.steps += 1
    if memo and x.memo_n[it] == n and x.memo_start[it] <= pos < x.memo_end[it]:
        # inside a run seen before (a search moving on, or a later piece): same end
        while count < mn and p < x.memo_end[it]:
            dec(x.p, s, n, p, &ln)
            p += ln
            count += 1
        if count < mn:
            return -1
        floor = p
        p = x.memo_end[it]
        count = mx if p > floor else mn     # only compared with mn below
    else:
        while count < mx and p < n:
            if not has(c, dec(x.p, s, n, p, &ln)):
                break
            p += ln
            count += 1
            if count == mn:
                floor = p
        x.steps += count
        if count < mn:
            return -1
        if memo:
            x.memo_n[it] = n
            x.memo_start[it] = pos
            x.memo_end[it] = p
            x.memo_lo[it] = p + 1
    if it + 1 == end and k == NULL:       # nothing follows: the longest run is the match
        return p
    if item.mode == M_POSSESSIVE or count == mn:
        if memo and x.memo_lo[it] <= p:
            return -1
        r = m_items(x, it + 1, end, p, k)
        if memo and r < 0:
            x.memo_lo[it] = p
        return r
    # greedy: give back one character at a time, down to `floor` (min characters taken);
    # positions from memo_lo to the run's end already failed what follows
    top = p
    if memo:
        lo = x.memo_lo[it]
        if lo <= p:
            if lo <= floor:
                return -1
            top = back(x.p, s, lo, floor)
    # what follows starts with a class that needs a character: only try where it has one
    cdef const Cls* nxt = NULL
    if it + 1 < end and x.p.items[it + 1].type == T_CLASS and x.p.items[it + 1].min >= 1:
        nxt = &x.p.classes[x.p.items[it + 1].arg]
    while True:
        if nxt == NULL or (top < n and has(nxt, dec(x.p, s, n, top, &ln))):
            r = m_items(x, it + 1, end, top, k)
            if r >= 0:
                return r
        if memo:
            x.memo_lo[it] = top
        if top <= floor:
            return -1
        top = back(x.p, s, top, floor)
        x.steps += 1


cdef inline Py_ssize_t m_repeat(Ctx* x, int it, int end, int count, Py_ssize_t start, Py_ssize_t pos,
                         const Cont* k) noexcept nogil:
    """A greedy or lazy group after `count` iterations (the last one began at `start`)."""
    cdef const Item* item = &x.p.items[it]
    cdef Cont c
    cdef Py_ssize_t r
    x.steps += 1
    if count > 0 and pos == start:          # an empty iteration: repeating it changes nothing
        return m_items(x, it + 1, end, pos, k)
    c.kind = C_REPEAT
    c.item = it
    c.end = end
    c.count = count + 1
    c.start = pos
    c.next = k
    if item.mode == M_LAZY:
        if count >= item.min:
            r = m_items(x, it + 1, end, pos, k)
            if r >= 0:
                return r
        return m_alt(x, item.arg, pos, &c) if count < item.max else -1
    if count < item.max:
        r = m_alt(x, item.arg, pos, &c)
        if r >= 0:
            return r
    return m_items(x, it + 1, end, pos, k) if count >= item.min else -1


cdef inline Py_ssize_t m_atomic(Ctx* x, int it, int end, Py_ssize_t pos, const Cont* k) noexcept nogil:
    """A possessive or atomic group: the first way the whole repeat matches (backtracking
    inside it as a greedy repeat would), never given back to what follows."""
    cdef Cont stop
    stop.kind = C_STOP
    cdef Py_ssize_t r = m_repeat(x, it, it + 1, 0, -1, pos, &stop)
    if r < 0:
        return -1
    return m_items(x, it + 1, end, r, k)
