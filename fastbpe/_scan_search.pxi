# Included by _scan_program.pyx (textually: these are its module globals): where one level's next
# match or class character is. The run of a one-class pattern (run_next), the next character of
# a class (class_next: eight ASCII bytes at a time, by a byte table or by range arithmetic),
# the next match after a position at which none starts (gap_end), and whether an anchored
# level can match in a piece at all (may_match), where the next non-ASCII or flagged byte is,
# an anchored level's next stop (stop_next) and a whole level's run of copied matches (copy_whole).

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


cdef inline Py_ssize_t ascii_run_next(const Prog* P, const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                                      bint* found) noexcept nogil:
    """From p, ASCII eight bytes at a time by arithmetic (the class's ASCII characters are one
    range or none: Prog.run_k1/k2): the first byte in the class (found set), or where a
    non-ASCII byte or the end stops the test (found unset)."""
    cdef uint64_t word
    while p + 8 <= n:
        memcpy(&word, s + p, 8)
        if word & 0x8080808080808080ULL:
            break
        word = (word + P.run_k1) & ~(word + P.run_k2) & 0x8080808080808080ULL
        if word:
            found[0] = True
            return p + (fb_ctz64(word) >> 3)
        p += 8
    found[0] = False
    return p


cdef Py_ssize_t run_next(const Prog* P, const uint8_t* s, Py_ssize_t B, Py_ssize_t pos,
                         bint* matched) noexcept nogil:
    """level_next for a pattern that is one class repeated (`[\\r\\n]`, `\\p{N}+`, a script's
    letters): the run at pos, or the text up to the next character of the class."""
    cdef const Cls* c = &P.classes[P.run_class]
    cdef Py_ssize_t p = pos
    cdef int count = 0, ln = 0
    cdef uint32_t b
    cdef bint found
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
                p = ascii_run_next(P, s, B, p, &found)
                if found:
                    return p
        elif P.byte_level or (P.run_lead[b >> 6] >> (b & 63)) & 1:
            if has(c, dec(P, s, B, p, &ln)):
                return p
            p += ln
        else:           # no character this byte starts is in the class: its length alone
            p += utf8_length(s, B, p)
    return p


cdef Py_ssize_t class_next(const Prog* P, const Cls* c, bint swar, const uint8_t* tab, const uint8_t* s,
                           Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """The first character at or after p (p a character start) that is in c, or n.  `tab`:
    per byte, whether a character of c can start there (an ASCII member, a lead byte of one);
    eight bytes without one are passed at a time (landing inside a character is harmless: a
    continuation byte starts none, and every reading of UTF-8 meets the same character starts).
    With `swar` (the class's ASCII characters are one range or none: Prog.run_k1/k2) ASCII
    is tested eight bytes at a time by arithmetic instead."""
    cdef uint32_t b
    cdef bint found
    cdef int ln = 0
    cdef Py_ssize_t stop = min(p + 4, n)       # (the next one is often near)
    while True:
        while p < stop:     # a byte at a time: over the eight that hold a start, or the last
            b = s[p]
            if not tab[b]:
                p += 1
            elif b < 0x80 or P.byte_level:
                return p
            elif has(c, decode(s, n, p, &ln)):
                return p
            else:
                p += ln
        if p >= n:
            return n
        if swar:
            p = ascii_run_next(P, s, n, p, &found)
            if found:
                return p
        else:
            while p + 8 <= n and not (tab[s[p]] | tab[s[p + 1]] | tab[s[p + 2]] | tab[s[p + 3]]
                                      | tab[s[p + 4]] | tab[s[p + 5]] | tab[s[p + 6]] | tab[s[p + 7]]):
                p += 8
        stop = min(p + 8, n)


cdef inline Py_ssize_t bytes_next(const Prog* P, const uint8_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """The next character of a run class that is one or two ASCII bytes (P.run_b: `[\r\n]`) at
    or after p, or n, by memchr (the eight-byte table test was ~2 instructions a byte: half of
    DeepSeek's `[\r\n]` level).  512 bytes at a time, the second byte searched only before
    the first's hit: a byte far away or absent is not searched for to the end from every
    position (a text of lone \r and no \n)."""
    cdef const uint8_t* r
    cdef Py_ssize_t e
    cdef bint hit
    while p < n:
        e = min(n, p + 512)
        r = <const uint8_t*>memchr(s + p, P.run_b[0], e - p)
        hit = r != NULL
        if hit:
            e = r - s
        if P.run_bytes == 2:
            r = <const uint8_t*>memchr(s + p, P.run_b[1], e - p)
            if r != NULL:
                return r - s
        if hit:
            return e
        p = e
    return n


cdef inline Py_ssize_t class_near(const Prog* P, const Cls* c, bint swar, const uint8_t* tab, const uint8_t* s,
                                  Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """class_next, without a call when the character at p or the one after it is an ASCII
    member (a word's first letter after its space: what a chain level asks after each match)."""
    if p < n and s[p] < 0x80:
        if tab[s[p]]:
            return p
        if p + 1 < n and s[p + 1] < 0x80 and tab[s[p + 1]]:
            return p + 1
    return class_next(P, c, swar, tab, s, n, p)


cdef inline bint char_in(const Prog* P, const Cls* c, const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                         int* ln) noexcept nogil:
    """Whether the character at s[p] (p < n) is in c; its length in ln."""
    cdef uint8_t b = s[p]
    if b < 0x80:
        ln[0] = 1
        return (c.ascii[b >> 6] >> (b & 63)) & 1
    return has(c, dec(P, s, n, p, ln))


cdef inline Py_ssize_t opt_run_match(const Prog* P, const uint8_t* s, Py_ssize_t n, Py_ssize_t q) noexcept nogil:
    """The end of the match at q of a pattern `S?C+` (Prog.opt_class, opt_run; greedy), or -1:
    S's character when a character of C follows it, else none; then C's longest run.  ASCII
    is tested by the class's bits, without a call."""
    cdef const Cls* c = &P.classes[P.opt_run]
    cdef int ln = 0, ln2 = 0
    cdef Py_ssize_t p
    cdef uint8_t b
    if q >= n:
        return -1
    if char_in(P, &P.classes[P.opt_class], s, n, q, &ln) and q + ln < n and char_in(P, c, s, n, q + ln, &ln2):
        p = q + ln + ln2
    elif char_in(P, c, s, n, q, &ln):
        p = q + ln
    else:
        return -1
    while p < n:
        b = s[p]
        if b < 0x80:
            if not (c.ascii[b >> 6] >> (b & 63)) & 1:
                break
            p += 1
        elif has(c, dec(P, s, n, p, &ln)):
            p += ln
        else:
            break
    return p


cdef inline Py_ssize_t opt_tail(const Cls* C, const Prog* P, const uint8_t* s, Py_ssize_t B,
                                Py_ssize_t p) noexcept nogil:
    """The end of the run of C's characters from p (ASCII by P.opt_tab's bit 1).  The ASCII
    loop small enough to be inlined in opt_cut (a call a word was ~15 instructions); a
    non-ASCII byte goes on in opt_tail_wide."""
    cdef const uint8_t* t = P.opt_tab
    while p < B and t[s[p]] & 1:
        p += 1
    if p < B and t[s[p]] & 4:
        return opt_tail_wide(C, P, s, B, p)
    return p


cdef Py_ssize_t opt_tail_wide(const Cls* C, const Prog* P, const uint8_t* s, Py_ssize_t B,
                              Py_ssize_t p) noexcept nogil:
    cdef uint8_t f
    cdef int ln = 0
    while p < B:
        f = P.opt_tab[s[p]]
        if f & 1:
            p += 1
        elif f & 4 and has(C, dec(P, s, B, p, &ln)):
            p += ln
        else:
            break
    return p


cdef inline Py_ssize_t opt_cut(const Prog* P, const uint8_t* s, Py_ssize_t q, Py_ssize_t B, Py_ssize_t W,
                               Py_ssize_t* out, Py_ssize_t on_match, Py_ssize_t on_gap,
                               Py_ssize_t* steps) noexcept nogil:
    """A level `S?C+` (opt_run_match's) cutting [q, B): its matches and the gaps between them
    into out (on_match / on_gap set) until one ends at B or at or after W; returns how many.
    A match is opt_run_match's; a gap runs to the first character that is in C or is in S
    with one of C after it.  ASCII by a per-byte table (P.opt_tab), without a call:
    cut_piece's generic loop asked class_near, gap_end and match_at per piece (~220
    instructions a DeepSeek-LLM English word at that level), opt_run_match's class bits ~10
    instructions a byte."""
    cdef const Cls* C = &P.classes[P.opt_run]
    cdef const Cls* S = &P.classes[P.opt_class]
    cdef const uint8_t* t = P.opt_tab
    cdef Py_ssize_t k = 0, e, p, q0 = q
    cdef uint8_t f, g
    cdef int ln = 0, ln2 = 0
    while q < B and q < W:
        f = t[s[q]]
        e = -1
        if f & 2:               # ASCII in S: S's character when one of C follows
            if q + 1 < B:
                g = t[s[q + 1]]
                if g & 1:
                    e = opt_tail(C, P, s, B, q + 2)
                elif g & 4 and char_in(P, C, s, B, q + 1, &ln2):
                    e = opt_tail(C, P, s, B, q + 1 + ln2)
            if e < 0 and f & 1:
                e = opt_tail(C, P, s, B, q + 1)
        elif f & 1:
            e = opt_tail(C, P, s, B, q + 1)
        elif f & 4:
            e = opt_run_match(P, s, B, q)
        if e > q:
            out[k] = e | on_match
            k += 1
            q = e
            continue
        p = q + char_length(P, s, B, q)
        while p < B:
            f = t[s[p]]
            if f == 0:
                p += 1
            elif f & 1:         # ASCII in C
                break
            elif f == 2:        # ASCII in S: a match when one of C follows
                if p + 1 < B and char_in(P, C, s, B, p + 1, &ln2):
                    break
                p += 1
            elif char_in(P, C, s, B, p, &ln):
                break
            elif char_in(P, S, s, B, p, &ln) and p + ln < B and char_in(P, C, s, B, p + ln, &ln2):
                break
            else:
                p += ln
        out[k] = p | on_gap
        k += 1
        q = p
    steps[0] += q - q0 + k
    return k


cdef inline int char_length(const Prog* P, const uint8_t* s, Py_ssize_t B, Py_ssize_t p) noexcept nogil:
    return 1 if P.byte_level or s[p] < 0x80 else utf8_length(s, B, p)


cdef inline Py_ssize_t gap_end(const Prog* P, Ctx* x, fb_chain_state* st, int j, const uint8_t* s,
                               Py_ssize_t n, Py_ssize_t B, Py_ssize_t pos, Py_ssize_t* r) noexcept nogil:
    """Where the next match after pos (at which none starts) starts inside [pos, B), its end in
    r; or B.  Only characters that can start a match are tried: where the next one is, is
    searched to the end of the text once and kept (st.nf/na), whatever piece asks."""
    cdef Py_ssize_t p = pos + char_length(P, s, B, pos), e
    while p < B:
        if P.root_first >= 0:
            if not (st.ff[j] <= p <= st.fa[j]):
                st.fa[j] = class_near(P, &P.classes[P.root_first], False, P.first_tab, s, n, p)
                st.ff[j] = p
            p = st.fa[j]
            if p >= B:
                break
        e = match_at(x, p)
        if e > p:
            x.steps += p - pos
            r[0] = e
            return p
        p += char_length(P, s, B, p)
    x.steps += B - pos
    return B


cdef inline bint may_match(const Prog* P, const uint8_t* s, Py_ssize_t q, Py_ssize_t B) noexcept nogil:
    """False when [q, B) surely holds no match of a pattern whose matches end with a character
    of P.last at the end of the text or before a stop (_anchored_end): the piece is ASCII, has
    no stop after q, and its last character is not in the class."""
    cdef Py_ssize_t p
    if P.last < 0 or B <= q:
        return True
    if s[q] >= 0x80 or (s[B - 1] < 0x80 and (P.classes[P.last].ascii[s[B - 1] >> 6] >> (s[B - 1] & 63)) & 1):
        return True
    for p in range(q + 1, B):
        if P.stop_tab[s[p]]:
            return True
    return False


cdef inline Py_ssize_t ascii_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """The first non-ASCII byte at or after p, or n (eight bytes at a time)."""
    cdef uint64_t word
    while p + 8 <= n:
        memcpy(&word, s + p, 8)
        word &= 0x8080808080808080ULL
        if word:
            return p + (fb_ctz64(word) >> 3)
        p += 8
    while p < n and s[p] < 0x80:
        p += 1
    return p


cdef inline Py_ssize_t byte_next(const uint8_t* tab, const uint8_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """The first byte at or after p flagged in tab, or n (eight bytes a test)."""
    while p + 8 <= n and not (tab[s[p]] | tab[s[p + 1]] | tab[s[p + 2]] | tab[s[p + 3]]
                              | tab[s[p + 4]] | tab[s[p + 5]] | tab[s[p + 6]] | tab[s[p + 7]]):
        p += 8
    while p < n and not tab[s[p]]:
        p += 1
    return p


cdef inline Py_ssize_t stop_next(const Prog* P, fb_chain_state* st, const uint8_t* s, Py_ssize_t n,
                                  Py_ssize_t q) noexcept nogil:
    """The anchored level's next stop byte at or after q (byte_next over P.stop_tab).  When its
    ASCII stops are one byte or none (`\s+$`: `\n`), the nearer of the next non-ASCII byte
    (kept in st.xf/xa, as the whole levels keep it) and memchr's next stop byte before it:
    byte_next's eight table reads a word were ~3 instructions a byte (DeepSeek-LLM)."""
    cdef const uint8_t* r
    if P.stop_one < 0:
        return byte_next(P.stop_tab, s, n, q)
    if not (st.xf <= q <= st.xa):
        st.xa = ascii_end(s, n, q)
        st.xf = q
    if P.stop_one and st.xa > q:
        r = <const uint8_t*>memchr(s + q, P.stop_b, st.xa - q)
        if r != NULL:
            return r - s
    return st.xa


cdef inline Py_ssize_t copy_whole(const Py_ssize_t* prev, Py_ssize_t m, Py_ssize_t xa, Py_ssize_t on_match,
                                   Py_ssize_t* out) noexcept nogil:
    """A whole level (Level.whole): prev[0] (an ASCII match of the level before, whole: the
    caller's test) and the matches after it that end at or before xa (no non-ASCII byte) and
    are not removed, each one match of this level; returns how many (a run of words)."""
    cdef Py_ssize_t k = 1, v
    out[0] = (prev[0] & ~FLAGS) | on_match
    while k < m:
        v = prev[k]
        if (v & FLAGS) != MATCHED or (v & ~FLAGS) > xa:
            break
        out[k] = (v & ~FLAGS) | on_match
        k += 1
    return k
