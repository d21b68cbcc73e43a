# The o200k family: o200k itself, and Mistral tekken's split (tekken=True: o200k's without the
# contraction suffixes, one \p{N} a digit piece).  Included by _pretokenize.pyx, after the
# block scanner's helpers it uses (stops_early, block_digits3, block_other_run, block_space and
# the slow_* pointers); `tekken` is a constant at each call site of the scan loop.

cdef Py_ssize_t block_o200k_letters(fb_view w, const uint8_t* s, Py_ssize_t n,
                                    Py_ssize_t p, bint tekken) noexcept nogil:
    """Alternatives A, then B, at p (s[p] an ASCII letter; the optional first character,
    if any, is before p): an upper-case run, then a lower-case run.  ASCII letters are
    U or W, never both, so A ends after the W run if one follows and B after the U run.
    -1 when a character >= 0x80 or the window's end decides."""
    cdef Py_ssize_t u = fb_run_end(w, FB_C_UPPER, p), e
    if stops_early(w, s, n, u):
        return -1
    if fb_has(w, FB_C_LOWER, u):
        e = fb_run_end(w, FB_C_LOWER, u + 1)
        if stops_early(w, s, n, e):
            e = slow_run_any(s, n, e, FB_W)
    else:
        e = u
    if not tekken and e < n and s[e] == CH_QUOTE:
        return slow_o200k_tail(s, n, e)
    return e


cdef Py_ssize_t block_o200k_rest(const fb_window* win, const uint8_t* s, Py_ssize_t n,
                                 Py_ssize_t pos, bint tekken) noexcept nogil:
    cdef fb_view w = fb_view_of(win)       # by value: not reloaded after stores
    cdef uint8_t b0 = s[pos], b1, f0
    cdef Py_ssize_t e
    cdef piece_fn slow = slow_tekken if tekken else slow_o200k
    if b0 >= 0x80:
        if punct_2010(s, n, pos):                   # a curly quote: one character of O
            if fb_has(w, FB_C_LETTER, pos + 3):     # [^\r\n\p{L}\p{N}]? then letters
                e = block_o200k_letters(w, s, n, pos + 3, tekken)
                return e if e >= 0 else slow(s, n, pos)
            if pos + 3 >= n or s[pos + 3] < 0x80 or punct_2010(s, n, pos + 3):
                return run_newlines(s, n, block_other_run(w, s, n, pos + 3, LNS), True)
        return slow(s, n, pos)
    f0 = fb_ascii_flags[b0]
    if f0 & FB_L:
        e = block_o200k_letters(w, s, n, pos, tekken)
        return e if e >= 0 else slow(s, n, pos)
    if f0 & FB_N:
        return pos + 1 if tekken else block_digits3(w, s, n, pos)
    b1 = s[pos + 1] if pos + 1 < n else 0
    if b1 >= 0x80:
        if not punct_2010(s, n, pos + 1):           # maybe a letter that b0 goes before
            return slow(s, n, pos)
        if b0 == CH_SPACE or not (f0 & FB_S):       # ` ?` or b0, then an O run
            return run_newlines(s, n, block_other_run(w, s, n, pos + 1, LNS), True)
        e = block_space(w, s, n, pos, False, True)
        return e if e >= 0 else slow(s, n, pos)
    if b0 != CH_LF and b0 != CH_CR and fb_has(w, FB_C_LETTER, pos + 1):
        e = block_o200k_letters(w, s, n, pos + 1, tekken)
        return e if e >= 0 else slow(s, n, pos)
    if not (f0 & FB_S):
        return run_newlines(s, n, block_other_run(w, s, n, pos + 1, LNS), True)
    if b0 == CH_SPACE and fb_has(w, FB_C_OTHER, pos + 1):
        return run_newlines(s, n, block_other_run(w, s, n, pos + 2, LNS), True)
    e = block_space(w, s, n, pos, False, True)
    return e if e >= 0 else slow(s, n, pos)


cdef inline Py_ssize_t block_o200k_word(fb_view w, const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                                        unsigned long long letters, unsigned long long upper,
                                        bint tekken) noexcept nogil:
    """block_o200k_letters(w, s, n, p) from bits 0..62 of the LETTER and UPPER bitmaps at
    p (the caller's fetch, maybe shifted by one), when both runs end within them (nearly
    always)."""
    cdef unsigned long long not_upper = ~upper, lower
    cdef Py_ssize_t u = fb_ctz64(not_upper) if not_upper != 0 else 64, e
    if u >= 62:
        return block_o200k_letters(w, s, n, p, tekken)
    lower = ~((letters & not_upper) >> u)           # not 0: the top u bits are set
    e = fb_ctz64(lower)                             # the lower-case run after the U run
    if u + e >= 62:
        return block_o200k_letters(w, s, n, p, tekken)
    if e == 0:
        e = p + u
        if stops_early(w, s, n, e):                 # a character >= 0x80 may be W
            return -1
    else:
        e += p + u
        if stops_early(w, s, n, e):
            e = slow_run_any(s, n, e, FB_W)
    if not tekken and e < n and s[e] == CH_QUOTE:
        return slow_o200k_tail(s, n, e)
    return e


cdef inline Py_ssize_t block_o200k(const fb_window* win, fb_view w, const uint8_t* s, Py_ssize_t n,
                                   Py_ssize_t pos, bint tekken) noexcept nogil:
    cdef unsigned long long x = fb_bits(w, FB_C_LETTER, pos)
    cdef Py_ssize_t e
    if x & 1:
        e = block_o200k_word(w, s, n, pos, x, fb_bits(w, FB_C_UPPER, pos), tekken)
    elif s[pos] == CH_SPACE and x & 2:
        e = block_o200k_word(w, s, n, pos + 1, x >> 1, fb_bits(w, FB_C_UPPER, pos) >> 1, tekken)
    else:
        return block_o200k_rest(win, s, n, pos, tekken)
    if e >= 0:
        return e
    return slow_tekken(s, n, pos) if tekken else slow_o200k(s, n, pos)
