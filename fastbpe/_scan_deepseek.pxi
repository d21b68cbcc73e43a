# DeepSeek-V3's pre-tokenizer: three HF Split(Isolated) steps, each cutting the pieces of the
# one before (patterns.DEEPSEEK_V3_SPLITS), as one built-in kind.  Included by _pretokenize.pyx.
#
#   level 1  \p{N}{1,3}                  digit pieces, and the text between them
#   level 2  [一-龥぀-ゟ゠-ヿ]+            runs of CJK (U+4E00..U+9FA5, U+3040..U+30FF), and the rest
#   level 3  a: [!"#...~][A-Za-z]+       an ASCII punctuation character then ASCII letters
#            b: [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
#            c:  ?[\p{P}\p{S}]+[\r\n]*   d: \s*[\r\n]+   e: \s+(?!\S)   f: \s+
#
# A text is a row of segments: digit runs, CJK runs and "other" runs (no \p{N}, no CJK).  A
# digit run is cut in threes (level 3 finds nothing in digits, so each is one piece).  Level 3
# cuts a CJK or other run as a text of its own: nothing it matches crosses the run's end, and
# its lookahead (?!\S) sees that end as the end of text.  Characters level 3 does not match are
# joined into one piece a gap (Isolated keeps them).  So every function below stops at a
# character of another segment (ds_out) as at the end of the text.  The piece that starts at a
# piece boundary depends on the text from there on only, so piece_deepseek_v3 needs no state.

cdef extern from "_unicode_ps.h" nogil:
    int fb_is_punct_symbol(uint32_t cp)      # [\p{P}\p{S}], as HF's Oniguruma reads it

cdef enum:
    DS_LM = 1          # [\p{L}\p{M}]
    DS_PS = 2          # [\p{P}\p{S}]
    DS_SP = 4          # \s
    DS_NL = 8          # \r or \n
    DS_AP = 16         # the ASCII punctuation of alternative a
    DS_AL = 32         # [A-Za-z]
    DS_N = 64          # \p{N}: level 1
    DS_CJK = 128       # level 2's class

cdef uint8_t ds_ascii[128]


cdef extern from * nogil:
    """
    /* DeepSeek-V3: 1 if the character at s[p] (p < n) is [\\p{L}\\p{M}] outside level 2's CJK ranges,
       2 if inside them, else 0; its length goes to *len (fb_decode_multi's: 1 for a bad byte). */
    FB_NOINLINE int fb_ds_letter_rare(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, Py_ssize_t* len) {
        uint32_t cp;
        *len = fb_decode_multi(s, n, p, &cp);
        return (fb_cp_flags(cp) & (FB_L | FB_M)) ? 1 : 0;      /* 4-byte or bad: never CJK */
    }
    FB_FORCE_INLINE int fb_ds_letter(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, Py_ssize_t* len) {
        uint32_t b = s[p], cp;
        if (b < 0x80) { *len = 1; return (fb_ascii_flags[b] & FB_L) != 0; }
        if (b - 0xC2u < 0x1Eu && p + 1 < n) {                   /* < U+0800: never CJK */
            *len = 2;
            return (fb_cp_flags(((b & 0x1F) << 6) | (s[p + 1] & 0x3F)) & (FB_L | FB_M)) != 0;
        }
        if (b - 0xE0u < 0x10u && p + 2 < n) {
            cp = ((b & 0x0F) << 12) | ((uint32_t)(s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F);
            *len = 3;
            if (!(fb_cp_flags(cp) & (FB_L | FB_M))) return 0;
            return (cp - 0x4E00u <= 0x9FA5u - 0x4E00u || cp - 0x3040u <= 0x30FFu - 0x3040u) ? 2 : 1;
        }
        return fb_ds_letter_rare(s, n, p, len);
    }
    /* The end of level 3's alternative b, " ?[\\p{L}\\p{M}]+", at pos when its run is the piece
       piece_deepseek_v3 cuts there, else 0: a letter at pos (the run of letters of its segment:
       CJK or not), or a space then a non-CJK letter (a CJK letter after a space starts another
       segment).  Forced into the scan loop: one step a word of every script, one loop per kind
       of segment (only lead bytes E3..E9 can start a character of level 2's ranges). */
    FB_FORCE_INLINE Py_ssize_t fb_ds_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) {
        Py_ssize_t start = pos + (s[pos] == 0x20), p = start, len;
        uint32_t b, cp;
        int kind;
        if (start >= n) return 0;
        kind = fb_ds_letter(s, n, start, &len);
        if (!kind || (kind == 2 && start > pos)) return 0;
        p += len;
        if (kind == 2) {                                    /* CJK: 3-byte characters only */
            while (p + 2 < n && (b = s[p]) - 0xE3u < 7u) {
                cp = ((b & 0x0F) << 12) | ((uint32_t)(s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F);
                if (cp - 0x4E00u > 0x9FA5u - 0x4E00u) {      /* U+4E00..U+9FA5 are all Lo */
                    if (cp - 0x3040u > 0x30FFu - 0x3040u || !(fb_cp_flags(cp) & (FB_L | FB_M))) break;
                }
                p += 3;
            }
            return p;
        }
        while (p < n) {
            b = s[p];
            if (b < 0x80) {
                if (!(fb_ascii_flags[b] & FB_L)) break;
                p += 1;
            } else if (b - 0xC2u < 0x1Eu && p + 1 < n) {
                if (!(fb_cp_flags(((b & 0x1F) << 6) | (s[p + 1] & 0x3F)) & (FB_L | FB_M))) break;
                p += 2;
            } else if (b - 0xE0u < 0x10u && b - 0xE3u >= 7u && p + 2 < n) {
                cp = ((b & 0x0F) << 12) | ((uint32_t)(s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F);
                if (!(fb_cp_flags(cp) & (FB_L | FB_M))) break;
                p += 3;
            } else {
                if (fb_ds_letter(s, n, p, &len) != 1) break;
                p += len;
            }
        }
        return p;
    }
    /* The bits of the ASCII [\\p{P}\\p{S}] characters (ds_init_ascii fills them). */
    static unsigned long long fb_ds_ps_ascii[2];
    #define FB_DS_PS_ASCII(b) ((fb_ds_ps_ascii[(b) >> 6] >> ((b) & 63)) & 1)
    /* The character at s[p] (p < n, s[p] >= 0x80) in a [\\p{P}\\p{S}] run of an "other" segment:
       its length when it is [\\p{P}\\p{S}] outside level 2's ranges, else 0 (it ends the run).
       Decoded as ds_char decodes (a bad byte: a 1-byte U+FFFD, a symbol). */
    FB_FORCE_INLINE Py_ssize_t fb_ds_ps_multi(const uint8_t* s, Py_ssize_t n, Py_ssize_t p) {
        uint32_t b = s[p], cp;
        Py_ssize_t len;
        if (b - 0xC2u < 0x1Eu && p + 1 < n) {
            cp = ((b & 0x1F) << 6) | (s[p + 1] & 0x3F);
            len = 2;
        } else if (b - 0xE0u < 0x10u && p + 2 < n) {
            cp = ((b & 0x0F) << 12) | ((uint32_t)(s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F);
            len = 3;
            if (cp - 0x4E00u <= 0x9FA5u - 0x4E00u || cp - 0x3040u <= 0x30FFu - 0x3040u) return 0;
        } else {
            len = fb_decode_multi(s, n, p, &cp);           /* 4 bytes (never CJK), or bad */
        }
        if (fb_cp_flags(cp) & (FB_L | FB_M | FB_N | FB_S)) return 0;
        return fb_is_punct_symbol(cp) ? len : 0;
    }
    /* The end of the piece at pos for the common starts that are not words, else 0 (then
       piece_deepseek_v3 decides): ASCII digits (level 1, up to three; a character >= 0x80
       after fewer may be \\p{N}), an ASCII punctuation character then [A-Za-z]+ (a), and
       " ?[\\p{P}\\p{S}]+[\\r\\n]*" (c) from an ASCII or non-CJK [\\p{P}\\p{S}] character.
       piece_deepseek_v3's order: nothing before c matches such a start. */
    FB_FORCE_INLINE Py_ssize_t fb_ds_other_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) {
        uint32_t b = s[pos];
        Py_ssize_t p = pos + 1, len;
        if (b - 0x30u < 10u) {
            if (p < n && s[p] - 0x30u < 10u) {
                p++;
                if (p < n && s[p] - 0x30u < 10u) return p + 1;
            }
            return (p < n && s[p] >= 0x80) ? 0 : p;
        }
        if (b == 0x20) {
            if (p >= n) return 0;
            b = s[p];
            if (b < 0x80) {
                if (!FB_DS_PS_ASCII(b)) return 0;
                p++;
            } else {
                if (!(len = fb_ds_ps_multi(s, n, p))) return 0;
                p += len;
            }
        } else if (b < 0x80) {
            if (!FB_DS_PS_ASCII(b)) return 0;
            if (p < n && (uint32_t)(s[p] | 0x20) - 0x61u < 26u) {     /* a */
                p++;
                while (p < n && (uint32_t)(s[p] | 0x20) - 0x61u < 26u) p++;
                return p;
            }
        } else {
            if (!(len = fb_ds_ps_multi(s, n, pos))) return 0;
            p += len - 1;
        }
        while (p < n) {                                      /* the rest of [\\p{P}\\p{S}]+ */
            b = s[p];
            if (b < 0x80) {
                if (!FB_DS_PS_ASCII(b)) break;
                p++;
            } else {
                if (!(len = fb_ds_ps_multi(s, n, p))) break;
                p += len;
            }
        }
        while (p < n && (s[p] == 0x0A || s[p] == 0x0D)) p++;
        return p;
    }
    """
    Py_ssize_t fb_ds_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos)
    Py_ssize_t fb_ds_other_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos)
    unsigned long long fb_ds_ps_ascii[2]


cdef inline uint8_t ds_class_cp(uint32_t cp) noexcept nogil:
    """The DS_* bits of a code point >= 0x80."""
    cdef uint8_t f = fb_cp_flags(cp), c
    if f & (FB_L | FB_M):
        c = DS_LM
    elif f & FB_N:
        c = DS_N
    elif f & FB_S:
        c = DS_SP
    elif fb_is_punct_symbol(cp):
        c = DS_PS
    else:
        c = 0
    if (0x3040 <= cp <= 0x30FF) or (0x4E00 <= cp <= 0x9FA5):
        c |= DS_CJK
    return c


cdef inline Py_ssize_t ds_char(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint8_t* c) noexcept nogil:
    """Length of the character at s[p] (p < n); its DS_* bits go to *c."""
    cdef uint32_t cp = s[p]
    cdef Py_ssize_t length
    if cp < 0x80:
        c[0] = ds_ascii[cp]
        return 1
    length = decode_multi(s, n, p, &cp)
    c[0] = ds_class_cp(cp)
    return length


cdef inline bint ds_out(uint8_t c, bint cjk) noexcept nogil:
    """A character of class c ends a CJK run (cjk) or an other run."""
    if cjk:
        return not (c & DS_CJK)
    return (c & (DS_N | DS_CJK)) != 0


cdef inline uint8_t ds_next(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, bint cjk,
                            Py_ssize_t* length) noexcept nogil:
    """The class of the character at p within the segment: 0 (length 0) at its end."""
    cdef uint8_t c
    if p >= n:
        length[0] = 0
        return 0
    length[0] = ds_char(s, n, p, &c)
    if ds_out(c, cjk):
        length[0] = 0
        return 0
    return c


cdef inline Py_ssize_t ds_run(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint8_t want,
                              bint cjk) noexcept nogil:
    """The end of the run of the segment's characters with a bit of `want` from p."""
    cdef uint8_t b, c
    cdef Py_ssize_t length
    while p < n:
        b = s[p]
        if b < 0x80:
            if cjk or not (ds_ascii[b] & want):
                break
            p += 1
        else:
            length = ds_char(s, n, p, &c)
            if not (c & want) or ds_out(c, cjk):
                break
            p += length
    return p


cdef inline Py_ssize_t ds_space(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    """d, e, f at pos (s[pos] is \\s, in an other run): space_piece's cut, with a digit or CJK
    character after the run read as the end of text."""
    cdef uint8_t c
    cdef Py_ssize_t last, nl_end, e = run_space(s, n, pos, &last, &nl_end)
    if nl_end >= 0:
        return nl_end
    if e < n and last > pos:
        ds_char(s, n, e, &c)
        if not ds_out(c, False):      # \S follows: e gives back the run's last character
            return last
    return e


cdef inline Py_ssize_t ds_match(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, bint cjk) noexcept nogil:
    """The end of level 3's match at pos (a character of the segment), or -1 if none starts
    there."""
    cdef uint8_t c0, c1
    cdef Py_ssize_t l0, l1, p1, e
    l0 = ds_char(s, n, pos, &c0)
    p1 = pos + l0
    c1 = ds_next(s, n, p1, cjk, &l1)
    if (c0 & DS_AP) and (c1 & DS_AL):                        # a
        p1 += 1
        while p1 < n and s[p1] < 0x80 and (ds_ascii[s[p1]] & DS_AL):
            p1 += 1
        return p1
    if c0 & DS_LM:                                           # b without its first character
        return ds_run(s, n, p1, DS_LM, cjk)
    if not (c0 & (DS_NL | DS_PS)) and (c1 & DS_LM):          # b with it
        return ds_run(s, n, p1 + l1, DS_LM, cjk)
    if c0 & DS_PS:                                           # c
        e = ds_run(s, n, p1, DS_PS, cjk)
        return e if cjk else run_newlines(s, n, e, False)
    if s[pos] == CH_SPACE and (c1 & DS_PS):
        return run_newlines(s, n, ds_run(s, n, p1 + l1, DS_PS, False), False)
    if c0 & DS_SP:                                           # d, e, f
        return ds_space(s, n, pos)
    return -1


cdef inline Py_ssize_t piece_deepseek_v3(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    cdef uint8_t c0, c
    cdef Py_ssize_t l0, length, p, e
    cdef bint cjk
    cdef int i
    l0 = ds_char(s, n, pos, &c0)
    if c0 & DS_N:                                            # level 1: up to three digits
        p = pos + l0
        for i in range(2):
            if p >= n:
                break
            length = ds_char(s, n, p, &c)
            if not (c & DS_N):
                break
            p += length
        return p
    cjk = (c0 & DS_CJK) != 0
    e = ds_match(s, n, pos, cjk)
    if e >= 0:
        return e
    p = pos + l0                                             # a gap: up to the next match
    while p < n:
        length = ds_char(s, n, p, &c)
        if ds_out(c, cjk) or ds_match(s, n, p, cjk) >= 0:
            break
        p += length
    return p


cdef void ds_init_ascii() noexcept:
    cdef int b
    cdef uint8_t f, c
    for b in range(128):
        f = fb_ascii_flags[b]
        c = 0
        if f & FB_L:
            c = DS_LM | DS_AL
        elif f & FB_N:
            c = DS_N
        elif f & FB_S:
            c = DS_SP | (DS_NL if b == CH_LF or b == CH_CR else 0)
        elif fb_is_punct_symbol(b):
            c = DS_PS | (DS_AP if 0x21 <= b <= 0x7E else 0)
            fb_ds_ps_ascii[b >> 6] |= (<unsigned long long>1) << (b & 63)
        ds_ascii[b] = c


ds_init_ascii()


# The block scanner's form (scan_block): ASCII read from the window's bitmaps, the per-character
# code above wherever a character >= 0x80 or the window's end decides.

cdef Py_ssize_t deepseek_v3_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    cdef Py_ssize_t e = fb_ds_word_end(s, n, pos)
    if e == 0:
        e = fb_ds_other_end(s, n, pos)
    return e if e else piece_deepseek_v3(s, n, pos)
cdef piece_fn slow_deepseek_v3
slow_deepseek_v3 = deepseek_v3_at


cdef inline Py_ssize_t ds_block_letters(fb_view w, const uint8_t* s, Py_ssize_t n, Py_ssize_t q,
                                        unsigned long long x) noexcept nogil:
    """[\\p{L}\\p{M}]+ from q (s[q] an ASCII letter; bits 0..62 of x are the LETTER bits at q)."""
    cdef unsigned long long rest = ~x
    cdef Py_ssize_t e = fb_ctz64(rest) if rest != 0 else 64
    if e >= 63:
        e = fb_run_end(w, FB_C_LETTER, q + 63)
    else:
        e += q
    if stops_early(w, s, n, e):
        return ds_run(s, n, e, DS_LM, False)
    return e


cdef inline Py_ssize_t ds_block_space(fb_view w, const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    """ds_space at pos (s[pos] ASCII \\s); -1 when a character >= 0x80 or the window's end
    follows the ASCII run."""
    cdef Py_ssize_t e = fb_run_end(w, FB_C_SPACE, pos + 1), nl
    if stops_early(w, s, n, e):
        return -1
    nl = fb_last_in(w, FB_C_NEWLINE, pos, e)
    if nl >= 0:
        return nl + 1
    if e == n or e == pos + 1 or fb_has(w, FB_C_DIGIT, e):    # a digit ends the segment
        return e
    return e - 1


cdef Py_ssize_t block_deepseek_v3_rest(const fb_window* win, const uint8_t* s, Py_ssize_t n,
                                       Py_ssize_t pos) noexcept nogil:
    cdef fb_view w = fb_view_of(win)
    cdef uint8_t b0 = s[pos], b1, c0
    cdef Py_ssize_t e
    if b0 >= 0x80:
        return slow_deepseek_v3(s, n, pos)
    c0 = ds_ascii[b0]
    if c0 & DS_N:
        return block_digits3(w, s, n, pos)
    b1 = s[pos + 1] if pos + 1 < n else 0
    if b1 >= 0x80:
        return slow_deepseek_v3(s, n, pos)
    if c0 & DS_PS:                                           # c (a: see block_deepseek_v3)
        return run_newlines(s, n, ds_run(s, n, pos + 1, DS_PS, False), False)
    if b0 == CH_SPACE and (ds_ascii[b1] & DS_PS):
        return run_newlines(s, n, ds_run(s, n, pos + 2, DS_PS, False), False)
    if c0 & DS_SP:
        e = ds_block_space(w, s, n, pos)
        if e >= 0:
            return e
    return slow_deepseek_v3(s, n, pos)


cdef inline Py_ssize_t block_deepseek_v3(const fb_window* win, fb_view w, const uint8_t* s, Py_ssize_t n,
                                         Py_ssize_t pos) noexcept nogil:
    cdef unsigned long long x = fb_bits(w, FB_C_LETTER, pos)
    cdef uint8_t b0, c0
    cdef Py_ssize_t e
    if x & 1:                                                # b: a letter run
        return ds_block_letters(w, s, n, pos, x)
    b0 = s[pos]
    if x & 2 and b0 < 0x80:                                  # an ASCII letter after s[pos]
        c0 = ds_ascii[b0]
        if c0 & DS_AP:                                       # a: ASCII letters only
            e = fb_run_end(w, FB_C_LETTER, pos + 1)
            while e < n and s[e] < 0x80 and (ds_ascii[s[e]] & DS_AL):
                e += 1
            return e
        if not (c0 & (DS_NL | DS_PS | DS_N)):                # b with its first character
            return ds_block_letters(w, s, n, pos + 1, x >> 1)
    return block_deepseek_v3_rest(win, s, n, pos)


cdef extern from "_ascii_deepseek.h" nogil:
    int fb_deepseek_v3_ascii_block(const uint8_t* s, Py_ssize_t pos, unsigned long long L,
                                   unsigned long long D, unsigned long long S, unsigned long long NL,
                                   unsigned long long O, unsigned long long SP, unsigned long long Q,
                                   Py_ssize_t* ends)


cdef Py_ssize_t scan_block_deepseek_v3(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos,
                                       Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil:
    cdef fb_window w
    cdef fb_view v
    cdef Py_ssize_t k = 0, lim = -1      # -1: the first piece extends the window
    cdef Py_ssize_t spare[64]
    cdef Py_ssize_t* out
    cdef int got
    fb_window_init(&w, pos)
    v = fb_view_of(&w)
    while pos < n and k < cap:
        if pos > lim:
            if fb_window_extend(&w, s, n, pos, False):
                k += scan_chars(PAT_DEEPSEEK_V3, s, n, pos, pos + CHAR_STRETCH, ends + k, cap - k)
                pos = ends[k - 1]
                continue                    # lim stays: the next piece refills
            v = fb_view_of(&w)
            lim = window_limit(v, n)
        if ascii_blocks_on and pos + 64 <= v.end:
            out = ends + k if cap - k >= 64 else spare
            # every piece that ends in the next 64 ASCII bytes at once (_ascii_deepseek.h)
            got = fb_deepseek_v3_ascii_block(
                s, pos, fb_bits(v, FB_C_LETTER, pos), fb_bits(v, FB_C_DIGIT, pos),
                fb_bits(v, FB_C_SPACE, pos), fb_bits(v, FB_C_NEWLINE, pos),
                fb_bits(v, FB_C_OTHER, pos), fb_bits(v, FB_C_SP, pos), fb_bits(v, FB_C_QUOTE, pos),
                out)
            if got:
                k += block_kept(ends, k, cap, out, got)
                pos = ends[k - 1]
                continue
        pos = block_deepseek_v3(&w, v, s, n, pos)
        ends[k] = pos
        k += 1
    return k
