# The per-character matchers of the pre-tokenizer (used by fastbpe/_pretokenize.pyx): for
# each known split pattern, the end of the piece that starts at a byte offset, found the
# way `regex` tries the alternatives, one character at a time.  Per-code-point properties
# come from _unicode_tables.h (tools/gen_unicode_tables.py).  The block scanner
# (_pretokenize.pyx, _block_classes.h) calls these where a character >= 0x80 decides, and
# use_scanner("char") runs them alone.  Design notes: docs/pretokenize.md.
#
# All inline: each scan loop gets its own copy, with no call per piece.
from libc.stdint cimport uint8_t, uint32_t


cdef extern from "_unicode_tables.h" nogil:
    uint8_t fb_cp_flags(uint32_t cp)
    int fb_contraction_letter(uint32_t cp)
    const uint8_t* fb_ascii_flags
    const char* FB_REGEX_VERSION
    const char* FB_REGEX_UNICODE_VERSION
    const char* FB_UNICODE_VERSION
    const char* FB_UNICODE_SOURCE
    enum:
        FB_L, FB_N, FB_S, FB_U, FB_W, FB_M, FB_LT, FB_LM


# The character classes of the patterns, as flag masks.
cdef enum:
    LNS = FB_L | FB_N | FB_S          # a character outside it is [^\s\p{L}\p{N}]
    CH_QUOTE = 0x27                   # '
    CH_SPACE = 0x20
    CH_LF = 0x0A
    CH_CR = 0x0D
    CH_SLASH = 0x2F


# ---------------------------------------------------------------------------------------
# UTF-8 decoding
# ---------------------------------------------------------------------------------------

cdef extern from * nogil:
    """
    /* UTF-8 for the per-character matchers (after _unicode_tables.h: fb_cp_flags).  Invalid
       or truncated sequences decode as a 1-byte U+FFFD, so reads never pass s[n-1] and the
       code point always indexes the tables. */
    #if defined(_MSC_VER)
    #define FB_FORCE_INLINE static __forceinline
    #define FB_NOINLINE static __declspec(noinline)
    #elif defined(__GNUC__) || defined(__clang__)
    #define FB_FORCE_INLINE static inline __attribute__((always_inline))
    #define FB_NOINLINE static __attribute__((noinline))
    #else
    #define FB_FORCE_INLINE static inline
    #define FB_NOINLINE static
    #endif
    FB_FORCE_INLINE Py_ssize_t fb_decode_multi(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint32_t* cp) {
        uint32_t b0 = s[p], c;
        if (b0 < 0xC2) { *cp = 0xFFFD; return 1; }
        if (b0 < 0xE0) {
            if (p + 1 < n) { *cp = ((b0 & 0x1F) << 6) | (s[p + 1] & 0x3F); return 2; }
        } else if (b0 < 0xF0) {
            if (p + 2 < n) {
                *cp = ((b0 & 0x0F) << 12) | ((uint32_t)(s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F);
                return 3;
            }
        } else if (b0 < 0xF5) {
            if (p + 3 < n) {
                c = ((b0 & 0x07) << 18) | ((uint32_t)(s[p + 1] & 0x3F) << 12)
                    | ((uint32_t)(s[p + 2] & 0x3F) << 6) | (s[p + 3] & 0x3F);
                if (c <= 0x10FFFF) { *cp = c; return 4; }
            }
        }
        *cp = 0xFFFD;
        return 1;
    }
    /* Out of line: 4-byte characters, invalid and truncated sequences. */
    FB_NOINLINE Py_ssize_t fb_multi_flags_rare(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint8_t* flags) {
        uint32_t cp;
        Py_ssize_t length = fb_decode_multi(s, n, p, &cp);
        *flags = fb_cp_flags(cp);
        return length;
    }
    /* Flag byte and length of the character at s[p] (p < n), 2- and 3-byte characters in line. */
    FB_FORCE_INLINE Py_ssize_t fb_char_flags(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint8_t* f) {
        uint32_t b = s[p];
        if (b < 0x80) { *f = fb_ascii_flags[b]; return 1; }
        if (b - 0xC2u < 0x1Eu && p + 1 < n) { *f = fb_cp_flags(((b & 0x1F) << 6) | (s[p + 1] & 0x3F)); return 2; }
        if (b - 0xE0u < 0x10u && p + 2 < n) {
            *f = fb_cp_flags(((b & 0x0F) << 12) | ((uint32_t)(s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F));
            return 3;
        }
        return fb_multi_flags_rare(s, n, p, f);
    }
    /* Where a word's letters start at pos: pos when the character there has a flag in
       `letters`, after it when it is the optional first character [^\r\n\p{L}\p{N}] (not a
       quote: a contraction is tried before), else -1. */
    FB_FORCE_INLINE Py_ssize_t fb_word_start(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, uint8_t letters) {
        uint32_t b = s[pos];
        uint8_t f;
        Py_ssize_t length;
        if (b == 0x20) return pos + 1;          /* the most common first character */
        if (b < 0x80) {
            f = fb_ascii_flags[b];
            if (f & letters) return pos;
            if ((f & FB_N) || b == 0x0A || b == 0x0D || b == 0x27) return -1;
            return pos + 1;
        }
        length = fb_char_flags(s, n, pos, &f);
        if (f & letters) return pos;
        return (f & FB_N) ? -1 : pos + length;
    }
    /* The end of the letter alternative of the cl100k family at pos,
       [^\r\n\p{L}\p{N}]?+\p{L}++ (Qwen3.5's [\p{L}\p{M}]+: `letters`), or 0 when it does not
       match there or a contraction may (a quote); no earlier alternative takes a letter or
       the optional first character.  Forced into the scan loop: one call per piece of the
       words of every script, 2- and 3-byte characters decoded in line. */
    FB_FORCE_INLINE Py_ssize_t fb_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, uint8_t letters) {
        Py_ssize_t start = fb_word_start(s, n, pos, letters), p = start;
        uint32_t b;
        uint8_t f;
        if (start < 0) return 0;
        while (p < n) {
            b = s[p];
            if (b < 0x80) {
                if (!(fb_ascii_flags[b] & letters)) break;
                p += 1;
            } else if (b - 0xC2u < 0x1Eu && p + 1 < n) {
                if (!(fb_cp_flags(((b & 0x1F) << 6) | (s[p + 1] & 0x3F)) & letters)) break;
                p += 2;
            } else if (b - 0xE0u < 0x10u && p + 2 < n) {
                if (!(fb_cp_flags(((b & 0x0F) << 12) | ((uint32_t)(s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F)) & letters)) break;
                p += 3;
            } else {
                Py_ssize_t length = fb_multi_flags_rare(s, n, p, &f);
                if (!(f & letters)) break;
                p += length;
            }
        }
        return p > start ? p : 0;
    }
    /* o200k: the end of " ?" and its first letter alternative, U*W+ (U = FB_U, W = FB_W), in
       the two cases that need no backtracking beyond one character: a W run after the U run
       (the match ends with it), or none after a U run whose last character is also W (Lm, Lo,
       M: caseless scripts; W+ takes that one).  0 when the matcher must decide (the second
       alternative, a character of both classes further back, a quote: a contraction may
       follow).  A space is the optional first character (any other, as fb_word_end takes it,
       cost o200k more than it saved); a mark there ends where this does. */
    FB_FORCE_INLINE Py_ssize_t fb_o200k_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) {
        Py_ssize_t start = pos + (s[pos] == 0x20), p = start, u, length = 0;
        uint8_t f = 0;
        int last_both = 0;
        while (p < n) {
            length = fb_char_flags(s, n, p, &f);
            if (!(f & FB_U)) break;
            last_both = (f & FB_W) != 0;
            p += length;
        }
        u = p;
        if (p < n && (f & FB_W)) {
            p += length;
            while (p < n) {
                length = fb_char_flags(s, n, p, &f);
                if (!(f & FB_W)) break;
                p += length;
            }
        } else if (u == start || !last_both) {
            return 0;
        }
        if (p < n && s[p] == 0x27) return 0;
        return p;
    }
    /* The end of the cl100k family's digit and punctuation alternatives at pos, where no word
       matches there (fb_word_end gave 0): \p{N}{1,3} (\p{N} when digits == 1) from an ASCII
       digit, and " ?[^\s\p{L}\p{N}]+[\r\n]*" (`letters` for \p{L}: Qwen3.5 leaves out \p{M}
       too); 0 when the matcher must decide: a quote first (a contraction), a character >= 0x80
       after fewer than three digits (it may be \p{N}), no run. */
    FB_FORCE_INLINE Py_ssize_t fb_punct_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, uint8_t letters,
                                           int digits) {
        uint32_t b = s[pos];
        uint8_t f, stop = FB_S | FB_N | letters;
        Py_ssize_t p = pos + 1, first;
        if (b - 0x30u < 10u) {
            if (digits == 1) return p;
            if (p < n && s[p] - 0x30u < 10u) {
                p++;
                if (p < n && s[p] - 0x30u < 10u) return p + 1;
            }
            return (p < n && s[p] >= 0x80) ? 0 : p;
        }
        if (b == 0x27) return 0;
        first = p = pos + (b == 0x20);
        while (p < n) {
            b = s[p];
            if (b < 0x80) {
                if (fb_ascii_flags[b] & stop) break;
                p += 1;
            } else {
                Py_ssize_t length = fb_char_flags(s, n, p, &f);
                if (f & stop) break;
                p += length;
            }
        }
        if (p == first) return 0;
        while (p < n && (s[p] == 0x0A || s[p] == 0x0D)) p++;
        return p;
    }
    """
    Py_ssize_t fb_decode_multi(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint32_t* cp)
    Py_ssize_t fb_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, uint8_t letters)
    Py_ssize_t fb_punct_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, uint8_t letters, int digits)
    Py_ssize_t fb_o200k_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos)


cdef inline Py_ssize_t decode_multi(const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                                    uint32_t* cp) noexcept nogil:
    """Decode the non-ASCII character at s[p]; return its length in bytes (fb_decode_multi:
    invalid or truncated sequences decode as a 1-byte U+FFFD)."""
    return fb_decode_multi(s, n, p, cp)


cdef inline Py_ssize_t char_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                               uint8_t* flags) noexcept nogil:
    """Length of the character at s[p] (p < n); its flag byte goes to *flags."""
    cdef uint32_t cp = s[p]
    cdef Py_ssize_t length
    if cp < 0x80:
        flags[0] = fb_ascii_flags[cp]
        return 1
    length = decode_multi(s, n, p, &cp)
    flags[0] = fb_cp_flags(cp)
    return length


cdef inline bint ascii_has(uint8_t b, uint8_t mask) noexcept nogil:
    """b is an ASCII byte whose character has a flag in `mask`."""
    return b < 0x80 and (fb_ascii_flags[b] & mask) != 0


cdef inline Py_ssize_t run_any(const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                               uint8_t mask) noexcept nogil:
    """Skip characters that have a flag in `mask`; return where the run ends."""
    cdef uint8_t b, f
    cdef Py_ssize_t length
    while p < n:
        b = s[p]
        if b < 0x80:
            if not (fb_ascii_flags[b] & mask):
                break
            p += 1
        else:
            length = char_at(s, n, p, &f)
            if not (f & mask):
                break
            p += length
    return p


cdef inline Py_ssize_t run_none(const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                                uint8_t mask) noexcept nogil:
    """Skip characters that have no flag in `mask`; return where the run ends."""
    cdef uint8_t b, f
    cdef Py_ssize_t length
    while p < n:
        b = s[p]
        if b < 0x80:
            if fb_ascii_flags[b] & mask:
                break
            p += 1
        else:
            length = char_at(s, n, p, &f)
            if f & mask:
                break
            p += length
    return p


cdef inline Py_ssize_t run_digits3(const uint8_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """\\p{N}{1,3} after its first character (which ends at p): up to two more."""
    cdef uint8_t f
    cdef Py_ssize_t length
    cdef int i
    for i in range(2):
        if p >= n:
            break
        length = char_at(s, n, p, &f)
        if not (f & FB_N):
            break
        p += length
    return p


cdef inline Py_ssize_t run_newlines(const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                                    bint slash) noexcept nogil:
    """[\\r\\n]* (or o200k's [\\r\\n/]* when `slash`)."""
    cdef uint8_t b
    while p < n:
        b = s[p]
        if b == CH_LF or b == CH_CR or (slash and b == CH_SLASH):
            p += 1
        else:
            break
    return p


cdef inline Py_ssize_t run_space(const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                                 Py_ssize_t* last, Py_ssize_t* nl_end) noexcept nogil:
    """The \\s run starting at p (s[p] is \\s).  Returns its end; *last gets the start of
    its last character and *nl_end the end of its last \\r or \\n (-1 if none)."""
    cdef uint8_t b, f
    cdef Py_ssize_t length
    cdef Py_ssize_t lst = p, nl = -1
    while p < n:
        b = s[p]
        if b < 0x80:
            if not (fb_ascii_flags[b] & FB_S):
                break
            lst = p
            p += 1
            if b == CH_LF or b == CH_CR:
                nl = p
        else:
            length = char_at(s, n, p, &f)
            if not (f & FB_S):
                break
            lst = p
            p += length
    last[0] = lst
    nl_end[0] = nl
    return p


cdef inline Py_ssize_t space_piece(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos,
                                   bint dollar, bint newline) noexcept nogil:
    """The whitespace alternatives at pos (s[pos] is \\s), in pattern order:
    `\\s++$` (when `dollar`), `\\s*[\\r\\n]` / `\\s*[\\r\\n]+` (when `newline`: up to and
    including the run's last \\r or \\n), `\\s+(?!\\S)` (the run, minus its last character
    when a non-space follows), and finally one whitespace character (`\\s` or `\\s+`)."""
    cdef Py_ssize_t last, nl_end
    cdef Py_ssize_t e = run_space(s, n, pos, &last, &nl_end)
    if dollar and e == n:
        return n
    if newline and nl_end >= 0:
        return nl_end
    if e == n or last == pos:
        return e
    return last


cdef inline Py_ssize_t contraction_ci(const uint8_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """End of (?i:'s|'t|'re|'ve|'m|'ll|'d) at p (s[p] == '\\''), or 0 if it does not match.
    Case-insensitive as regex does it (simple case folding: also U+017F LONG S)."""
    cdef uint32_t cp
    cdef Py_ssize_t q = p + 1, length
    cdef int c1, c2
    if q >= n:
        return 0
    cp = s[q]
    length = 1 if cp < 0x80 else decode_multi(s, n, q, &cp)
    c1 = fb_contraction_letter(cp)
    q += length
    if c1 == b's' or c1 == b't' or c1 == b'm' or c1 == b'd':
        return q
    if q >= n or not (c1 == b'r' or c1 == b'v' or c1 == b'l'):
        return 0
    cp = s[q]
    length = 1 if cp < 0x80 else decode_multi(s, n, q, &cp)
    c2 = fb_contraction_letter(cp)
    if (c1 == b'l' and c2 == b'l') or (c1 != b'l' and c2 == b'e'):
        return q + length
    return 0


# ---------------------------------------------------------------------------------------
# R50K / GPT2:
#   '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
#   GPT2 (non-possessive, no \s++$, final \s+) cuts identically.
# ---------------------------------------------------------------------------------------

cdef inline Py_ssize_t piece_r50k(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    cdef uint8_t b0 = s[pos], b1, b2, f
    cdef Py_ssize_t p, length
    if b0 == CH_QUOTE and pos + 1 < n:           # case-sensitive ASCII contractions
        b1 = s[pos + 1]
        if b1 == b's' or b1 == b't' or b1 == b'm' or b1 == b'd':
            return pos + 2
        if pos + 2 < n:
            b2 = s[pos + 2]
            if ((b1 == b'l' and b2 == b'l') or (b1 == b'v' and b2 == b'e')
                    or (b1 == b'r' and b2 == b'e')):
                return pos + 3
    p = pos + 1 if (b0 == CH_SPACE and pos + 1 < n) else pos    # the optional ' '
    length = char_at(s, n, p, &f)
    if f & FB_L:
        return run_any(s, n, p + length, FB_L)
    if f & FB_N:
        return run_any(s, n, p + length, FB_N)
    if not (f & FB_S):
        return run_none(s, n, p + length, LNS)
    return space_piece(s, n, pos, False, False)


# ---------------------------------------------------------------------------------------
# CL100K:
#   '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
#    ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
#   GPT4 and LLAMA3 cut identically except they lack \s++$ (dollar=False).
# ---------------------------------------------------------------------------------------

cdef inline Py_ssize_t piece_cl100k(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos,
                                    bint dollar) noexcept nogil:
    cdef uint8_t b0 = s[pos], f0, f1 = 0
    cdef Py_ssize_t l0, l1 = 0, e
    # Fast path for the most common pieces (an ASCII word, with or without a space), which
    # skips the contraction test and the optional-prefix test below.
    if ascii_has(b0, FB_L):
        return run_any(s, n, pos + 1, FB_L)
    if b0 == CH_SPACE and pos + 1 < n and ascii_has(s[pos + 1], FB_L):
        return run_any(s, n, pos + 2, FB_L)
    if b0 == CH_QUOTE:
        e = contraction_ci(s, n, pos)
        if e:
            return e
    l0 = char_at(s, n, pos, &f0)
    if f0 & FB_L:
        return run_any(s, n, pos + l0, FB_L)
    if f0 & FB_N:
        return run_digits3(s, n, pos + l0)
    # [^\r\n\p{L}\p{N}]?+\p{L}++ with the optional character present
    if b0 != CH_LF and b0 != CH_CR and pos + l0 < n:
        l1 = char_at(s, n, pos + l0, &f1)
        if f1 & FB_L:
            return run_any(s, n, pos + l0 + l1, FB_L)
    # ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
    if not (f0 & FB_S):
        return run_newlines(s, n, run_none(s, n, pos + l0, LNS), False)
    if b0 == CH_SPACE and pos + 1 < n and not (f1 & LNS):
        return run_newlines(s, n, run_none(s, n, pos + 1 + l1, LNS), False)
    return space_piece(s, n, pos, dollar, True)


# ---------------------------------------------------------------------------------------
# QWEN2: LLAMA3 with \p{N} instead of \p{N}{1,3}.  A piece that starts with a digit is
# that digit alone; no other alternative can start with one (the optional first character
# of the letter alternative excludes \p{N}), so every other piece is LLAMA3's.
# ---------------------------------------------------------------------------------------

cdef inline Py_ssize_t piece_qwen2(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    cdef uint8_t f
    cdef Py_ssize_t length
    if s[pos] < 0x80:
        if fb_ascii_flags[s[pos]] & FB_N:
            return pos + 1
        return piece_cl100k(s, n, pos, False)
    length = char_at(s, n, pos, &f)
    if f & FB_N:
        return pos + length
    return piece_cl100k(s, n, pos, False)


# ---------------------------------------------------------------------------------------
# QWEN35: QWEN2 with combining marks read as letters:
#   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}|
#    ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
# A mark may be the optional first character of the letter alternative too, but then the run
# from it ends where the run without it does, so a piece that starts with [\p{L}\p{M}] is
# that run.
# ---------------------------------------------------------------------------------------

cdef enum:
    LM_FLAGS = FB_L | FB_M            # [\p{L}\p{M}]
    LMNS = FB_L | FB_M | FB_N | FB_S  # a character outside it is [^\s\p{L}\p{M}\p{N}]


cdef inline Py_ssize_t piece_qwen35(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    cdef uint8_t b0 = s[pos], f0, f1 = 0
    cdef Py_ssize_t l0, l1 = 0, e
    if ascii_has(b0, FB_L):
        return run_any(s, n, pos + 1, LM_FLAGS)
    if b0 == CH_SPACE and pos + 1 < n and ascii_has(s[pos + 1], FB_L):
        return run_any(s, n, pos + 2, LM_FLAGS)
    if b0 == CH_QUOTE:
        e = contraction_ci(s, n, pos)
        if e:
            return e
    l0 = char_at(s, n, pos, &f0)
    if f0 & LM_FLAGS:
        return run_any(s, n, pos + l0, LM_FLAGS)
    if f0 & FB_N:
        return pos + l0
    # [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+ with the optional character present
    if b0 != CH_LF and b0 != CH_CR and pos + l0 < n:
        l1 = char_at(s, n, pos + l0, &f1)
        if f1 & LM_FLAGS:
            return run_any(s, n, pos + l0 + l1, LM_FLAGS)
    # ' ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*'
    if not (f0 & FB_S):
        return run_newlines(s, n, run_none(s, n, pos + l0, LMNS), False)
    if b0 == CH_SPACE and pos + 1 < n and not (f1 & LMNS):
        return run_newlines(s, n, run_none(s, n, pos + 1 + l1, LMNS), False)
    return space_piece(s, n, pos, False, True)


# ---------------------------------------------------------------------------------------
# O200K:
#   A: [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?
#   B: [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?
#   C: \p{N}{1,3}   D:  ?[^\s\p{L}\p{N}]+[\r\n/]*   E: \s*[\r\n]+   F: \s+(?!\S)   G: \s+
# Write U for the first letter class and W for the second.
# ---------------------------------------------------------------------------------------

cdef inline Py_ssize_t o200k_tail(const uint8_t* s, Py_ssize_t n, Py_ssize_t e) noexcept nogil:
    """The optional contraction that ends alternatives A and B."""
    cdef Py_ssize_t c
    if e < n and s[e] == CH_QUOTE:
        c = contraction_ci(s, n, e)
        if c:
            return c
    return e


cdef inline Py_ssize_t o200k_letters(const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                                     Py_ssize_t* u_end, Py_ssize_t* uw_end) noexcept nogil:
    """Scan U* W* from p.  Returns the end of the W run that follows the maximal U run;
    *u_end gets the end of the U run and *uw_end the end of the last character of the U
    run that is also in W (Lm, Lo or M), or -1.

    Backtracking of A at p, U*W+: if a W character follows the U run, the match is U run +
    W run; else U* gives back down to its last U-and-W character, which then is the W+
    (a single character: the U characters after it are Lu/Lt).  So A at p ends at the
    return value if it exceeds *u_end, else at *uw_end if >= 0, else fails.  B at p,
    U+W*, ends at the return value when the U run is non-empty."""
    cdef uint8_t b, f = 0
    cdef Py_ssize_t length = 0, uw = -1
    while p < n:
        b = s[p]
        if b < 0x80:
            f = fb_ascii_flags[b]
            length = 1
        else:
            length = char_at(s, n, p, &f)
        if not (f & FB_U):
            break
        p += length
        if f & FB_W:
            uw = p
    u_end[0] = p
    uw_end[0] = uw
    if p < n and (f & FB_W):
        return run_any(s, n, p + length, FB_W)
    return p


cdef inline Py_ssize_t piece_o200k(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_o200k_family(s, n, pos, False)


cdef inline Py_ssize_t piece_tekken(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    """Mistral tekken's split: o200k's without the contractions, with single \\p{N} digits."""
    return piece_o200k_family(s, n, pos, True)


cdef inline Py_ssize_t piece_o200k_family(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos,
                                          bint tekken) noexcept nogil:
    cdef uint8_t b0 = s[pos], f0, f1
    cdef Py_ssize_t l0, l1, e, u, uw
    l0 = char_at(s, n, pos, &f0)
    if f0 & FB_L:
        # A or B without the optional first character (a letter is not in it).
        e = o200k_letters(s, n, pos, &u, &uw)
        if e > u:                 # A: U* then a W run
            return e if tekken else o200k_tail(s, n, e)
        if uw >= 0:               # A: U* gives back to its last U-and-W character
            return uw if tekken else o200k_tail(s, n, uw)
        return e if tekken else o200k_tail(s, n, e)  # B: the U run (non-empty: s[pos] is Lu or Lt)
    if not (f0 & FB_N) and b0 != CH_LF and b0 != CH_CR:
        # s[pos] is in [^\r\n\p{L}\p{N}]: try A, then B, with it as the optional character.
        e = o200k_letters(s, n, pos + l0, &u, &uw)
        if e > u:
            return e if tekken else o200k_tail(s, n, e)
        if uw >= 0:
            return uw if tekken else o200k_tail(s, n, uw)
        if f0 & FB_M:
            # A without the optional character: a mark is U and W itself, and it is the
            # last U-and-W character of the U run (A failed above), so A ends after it.
            return pos + l0 if tekken else o200k_tail(s, n, pos + l0)
        if u > pos + l0:          # B with the optional character (W run is empty here)
            return u if tekken else o200k_tail(s, n, u)
    elif f0 & FB_N:
        return pos + l0 if tekken else run_digits3(s, n, pos + l0)
    # D: ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
    if not (f0 & FB_S):
        return run_newlines(s, n, run_none(s, n, pos + l0, LNS), True)
    if b0 == CH_SPACE and pos + 1 < n:
        l1 = char_at(s, n, pos + 1, &f1)
        if not (f1 & LNS):
            return run_newlines(s, n, run_none(s, n, pos + 1 + l1, LNS), True)
    return space_piece(s, n, pos, False, True)
