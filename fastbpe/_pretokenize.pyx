# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Exact pre-tokenizer for the known split patterns, over UTF-8 bytes, without the GIL.

For each pattern in ``fastbpe.patterns`` a small hand-written matcher returns the end of
the piece that starts at a byte offset, exactly as ``regex.findall(pattern, text)`` would
cut the text (leftmost alternative first, greedy/possessive quantifiers, the
``\\s+(?!\\S)`` give-back).  Per-code-point properties come from
``_unicode_tables.h``, generated from the ``regex`` package by
``tools/gen_unicode_tables.py`` but on tiktoken's Unicode version (``UNICODE_VERSION``):
on the few thousand code points where ``regex``'s newer Unicode differs
(``tools/tiktoken_unicode_overrides.txt``), the scanner cuts as tiktoken does, not as
``regex.findall``.  Design notes: ``docs/pretokenize.md``.

Patterns that behave identically share a matcher (the docs show why):
R50K == GPT2 == HF_GPT2 (tokenizers' ByteLevel regex), GPT4 == LLAMA3 == CL100K without its
``\\s++$`` alternative, and QWEN2 is LLAMA3 with single digits.
"""
from libc.stdint cimport uint8_t, uint32_t

from fastbpe import patterns as _patterns


cdef object _np():
    """numpy on first use (encoding does not need it; importing it doubles `import fastbpe`)."""
    import numpy
    return numpy


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

cdef inline Py_ssize_t decode_multi(const uint8_t* s, Py_ssize_t n, Py_ssize_t p,
                                    uint32_t* cp) noexcept nogil:
    """Decode the non-ASCII character at s[p]; return its length in bytes.

    Invalid or truncated sequences decode as a 1-byte U+FFFD, so reads never pass s[n-1]
    and the code point always indexes the tables.
    """
    cdef uint32_t b0 = s[p]
    cdef uint32_t c
    if b0 < 0xC2:
        cp[0] = 0xFFFD
        return 1
    if b0 < 0xE0:
        if p + 1 < n:
            cp[0] = ((b0 & 0x1F) << 6) | (s[p + 1] & 0x3F)
            return 2
    elif b0 < 0xF0:
        if p + 2 < n:
            cp[0] = ((b0 & 0x0F) << 12) | ((s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F)
            return 3
    elif b0 < 0xF5:
        if p + 3 < n:
            c = (((b0 & 0x07) << 18) | ((s[p + 1] & 0x3F) << 12)
                 | ((s[p + 2] & 0x3F) << 6) | (s[p + 3] & 0x3F))
            if c <= 0x10FFFF:
                cp[0] = c
                return 4
    cp[0] = 0xFFFD
    return 1


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
    cdef uint8_t b0 = s[pos], f0, f1
    cdef Py_ssize_t l0, l1, e, u, uw
    l0 = char_at(s, n, pos, &f0)
    if f0 & FB_L:
        # A or B without the optional first character (a letter is not in it).
        e = o200k_letters(s, n, pos, &u, &uw)
        if e > u:                 # A: U* then a W run
            return o200k_tail(s, n, e)
        if uw >= 0:               # A: U* gives back to its last U-and-W character
            return o200k_tail(s, n, uw)
        return o200k_tail(s, n, e)  # B: the U run (non-empty: s[pos] is Lu or Lt)
    if not (f0 & FB_N) and b0 != CH_LF and b0 != CH_CR:
        # s[pos] is in [^\r\n\p{L}\p{N}]: try A, then B, with it as the optional character.
        e = o200k_letters(s, n, pos + l0, &u, &uw)
        if e > u:
            return o200k_tail(s, n, e)
        if uw >= 0:
            return o200k_tail(s, n, uw)
        if f0 & FB_M:
            # A without the optional character: a mark is U and W itself, and it is the
            # last U-and-W character of the U run (A failed above), so A ends after it.
            return o200k_tail(s, n, pos + l0)
        if u > pos + l0:          # B with the optional character (W run is empty here)
            return o200k_tail(s, n, u)
    elif f0 & FB_N:
        return run_digits3(s, n, pos + l0)
    # D: ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
    if not (f0 & FB_S):
        return run_newlines(s, n, run_none(s, n, pos + l0, LNS), True)
    if b0 == CH_SPACE and pos + 1 < n:
        l1 = char_at(s, n, pos + 1, &f1)
        if not (f1 & LNS):
            return run_newlines(s, n, run_none(s, n, pos + 1 + l1, LNS), True)
    return space_piece(s, n, pos, False, True)


# ---------------------------------------------------------------------------------------
# The C API (see _pretokenize.pxd)
# ---------------------------------------------------------------------------------------

cdef Py_ssize_t piece_end(int kind, const unsigned char* s, Py_ssize_t n,
                          Py_ssize_t pos) noexcept nogil:
    if pos >= n:
        return n
    if kind == PAT_CL100K:
        return piece_cl100k(s, n, pos, True)
    if kind == PAT_O200K:
        return piece_o200k(s, n, pos)
    if kind == PAT_GPT4 or kind == PAT_LLAMA3:
        return piece_cl100k(s, n, pos, False)
    if kind == PAT_R50K or kind == PAT_GPT2 or kind == PAT_HF_GPT2:
        return piece_r50k(s, n, pos)
    if kind == PAT_QWEN2:
        return piece_qwen2(s, n, pos)
    return n


cdef Py_ssize_t scan_pieces(int kind, const unsigned char* s, Py_ssize_t n, Py_ssize_t pos,
                            Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil:
    # One loop per matcher so that the matcher inlines into it.
    cdef Py_ssize_t k = 0
    if kind == PAT_CL100K:
        while pos < n and k < cap:
            pos = piece_cl100k(s, n, pos, True)
            ends[k] = pos
            k += 1
    elif kind == PAT_O200K:
        while pos < n and k < cap:
            pos = piece_o200k(s, n, pos)
            ends[k] = pos
            k += 1
    elif kind == PAT_GPT4 or kind == PAT_LLAMA3:
        while pos < n and k < cap:
            pos = piece_cl100k(s, n, pos, False)
            ends[k] = pos
            k += 1
    elif kind == PAT_R50K or kind == PAT_GPT2 or kind == PAT_HF_GPT2:
        while pos < n and k < cap:
            pos = piece_r50k(s, n, pos)
            ends[k] = pos
            k += 1
    elif kind == PAT_QWEN2:
        while pos < n and k < cap:
            pos = piece_qwen2(s, n, pos)
            ends[k] = pos
            k += 1
    elif pos < n and cap > 0:
        ends[0] = n
        k = 1
    return k


# ---------------------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------------------

REGEX_VERSION = FB_REGEX_VERSION.decode("ascii")          # the `regex` the tables come from
REGEX_UNICODE_VERSION = FB_REGEX_UNICODE_VERSION.decode("ascii")  # ... and its Unicode version
UNICODE_VERSION = FB_UNICODE_VERSION.decode("ascii")      # the tables' Unicode version
UNICODE_SOURCE = FB_UNICODE_SOURCE.decode("ascii")        # "tiktoken" (committed) or "regex"

KINDS = {
    "r50k": PAT_R50K,
    "gpt2": PAT_GPT2,
    "cl100k": PAT_CL100K,
    "gpt4": PAT_GPT4,
    "o200k": PAT_O200K,
    "llama3": PAT_LLAMA3,
    "qwen2": PAT_QWEN2,
    "hf_gpt2": PAT_HF_GPT2,
}

_PATTERN_KINDS = {
    _patterns.R50K_PATTERN: PAT_R50K,
    _patterns.GPT2_PATTERN: PAT_GPT2,
    _patterns.CL100K_PATTERN: PAT_CL100K,
    _patterns.CL100K_HF_PATTERN: PAT_CL100K,
    _patterns.GPT4_PATTERN: PAT_GPT4,
    _patterns.O200K_PATTERN: PAT_O200K,
    _patterns.LLAMA3_PATTERN: PAT_LLAMA3,
    _patterns.QWEN2_PATTERN: PAT_QWEN2,
    _patterns.HF_GPT2_PATTERN: PAT_HF_GPT2,
}


def pattern_kind(str pat_str):
    """The scanner for split pattern `pat_str` (its exact text), or -1 (PAT_NONE) when the
    pattern is not one of fastbpe.patterns and must go through the regex package."""
    return _PATTERN_KINDS.get(pat_str, PAT_NONE)


cdef inline int _check_kind(int kind) except -1:
    if kind < PAT_R50K or kind > PAT_HF_GPT2:
        raise ValueError("unknown pattern kind %d (see pattern_kind)" % kind)
    return 0


def piece_boundaries(const unsigned char[::1] data not None, int kind):
    """End offsets (numpy int64) of the pieces of UTF-8 `data` under pattern `kind`.

    The last entry is len(data) (none for empty data).  Scans with the GIL released.
    """
    _check_kind(kind)
    np = _np()
    cdef Py_ssize_t n = data.shape[0]
    cdef const unsigned char* s = &data[0] if n > 0 else NULL
    cdef Py_ssize_t pos = 0, k, cap = n // 4 + 64
    cdef Py_ssize_t[::1] chunk
    chunks = []
    while pos < n:
        arr = np.empty(cap, dtype=np.intp)
        chunk = arr
        with nogil:
            k = scan_pieces(kind, s, n, pos, &chunk[0], cap)
        pos = chunk[k - 1]
        chunk = None                       # drop the buffer view so the array can shrink
        if k < cap:
            arr.resize(k, refcheck=False)  # in place: no copy, no slack kept alive
        chunks.append(arr)
        cap = max(cap, (n - pos) // 4 + 64)
    if not chunks:
        return np.empty(0, dtype=np.int64)
    out = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
    return out.astype(np.int64, copy=False)


def split(str text, int kind):
    """The pieces of `text` (a list of str), as regex.findall(pattern, text) gives them."""
    _check_kind(kind)
    data = text.encode("utf-8", "surrogatepass")
    ends = piece_boundaries(data, kind)
    out = []
    cdef Py_ssize_t start = 0, end
    for end in ends:
        out.append(data[start:end].decode("utf-8", "surrogatepass"))
        start = end
    return out


# ---------------------------------------------------------------------------------------
# Introspection, for tests
# ---------------------------------------------------------------------------------------

FLAG_BITS = {"L": FB_L, "N": FB_N, "S": FB_S, "U": FB_U, "W": FB_W, "M": FB_M,
             "LT": FB_LT, "LM": FB_LM}


def code_point_flags():
    """The flag byte of every code point 0..0x10FFFF (numpy uint8), read from the tables."""
    out = _np().empty(0x110000, dtype="uint8")
    cdef uint8_t[::1] view = out
    cdef uint8_t* p = &view[0]
    cdef uint32_t cp
    with nogil:
        for cp in range(0x110000):
            p[cp] = fb_cp_flags(cp)
    return out


def piece_end_at(const unsigned char[::1] data not None, int kind, Py_ssize_t pos):
    """piece_end() from Python: the end of the piece that starts at byte offset `pos`."""
    _check_kind(kind)
    cdef Py_ssize_t n = data.shape[0]
    if pos < 0 or pos > n:
        raise IndexError("pos out of range")
    if n == 0:
        return 0
    return piece_end(kind, &data[0], n, pos)
