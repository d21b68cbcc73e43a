# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Exact pre-tokenizer for the known split patterns, over UTF-8 bytes, without the GIL.

Cuts text as ``regex.findall(pattern, text)`` would for each pattern in
``fastbpe.patterns`` (on tiktoken's Unicode version: ``UNICODE_VERSION``).  Two paths cut
identically: the per-character matchers (``_scan_chars.pxd``) and the block scanner here,
which reads ASCII classes from bitmaps made 16-32 bytes at a time (``_block_classes.h``)
and calls the per-character code where a character >= 0x80 decides.  ``use_scanner``
forces either path (the tests run both).  Design notes: ``docs/pretokenize.md``.
"""
from libc.stdint cimport uint8_t, uint32_t
from libc.string cimport memcpy

from fastbpe._scan_chars cimport (
    CH_CR, CH_LF, CH_QUOTE, CH_SPACE, FB_L, FB_LM, FB_LT, FB_M, FB_N, FB_REGEX_UNICODE_VERSION, FB_REGEX_VERSION,
    FB_S, FB_U, FB_UNICODE_SOURCE, FB_UNICODE_VERSION, FB_W, LM_FLAGS, LMNS, LNS, contraction_ci, fb_ascii_flags,
    char_at, decode_multi, fb_cp_flags, fb_o200k_word_end, fb_punct_end, fb_word_end, o200k_tail, piece_cl100k, piece_o200k,
    piece_qwen2, piece_qwen35, piece_r50k, piece_tekken, run_any,
    run_digits3, run_newlines, run_none, run_space,
)

from fastbpe._scan_program cimport DROPPED, PROGRAM_BASE, program_known, program_piece_end, program_scan, set_builtin_piece_end

import os as _os

from fastbpe import _scan_program, patterns as _patterns


cdef object _np():
    """numpy on first use (encoding does not need it; importing it doubles `import fastbpe`)."""
    import numpy
    return numpy


# ---------------------------------------------------------------------------------------
# The block scanner: the same cuts, with ASCII classified 16-32 bytes a step
# ---------------------------------------------------------------------------------------
# Each block_* function returns exactly what the piece_* function of its pattern returns.
# It decides from the window's ASCII bitmaps (_block_classes.h) when the characters that
# matter are ASCII, and otherwise calls the piece_* function (a byte >= 0x80 where a class
# test is needed) or continues a run with the per-character run_* function (a run that
# reaches a byte >= 0x80 or the end of the window).  Preconditions: pos < n, and the window
# holds [pos, pos + 64) or reaches n (scan_block keeps it so), so pos + 2 <= w.end whenever
# s[pos + 1] is read through it.

cdef extern from "_block_classes.h" nogil:
    ctypedef struct fb_window:
        Py_ssize_t start
        Py_ssize_t end
    enum:
        FB_C_LETTER, FB_C_UPPER, FB_C_LOWER, FB_C_DIGIT, FB_C_SPACE, FB_C_NEWLINE, FB_C_SP, FB_C_QUOTE, FB_C_OTHER
        FB_CLS_AUTO, FB_CLS_SWAR, FB_CLS_SSE2, FB_CLS_AVX2
    void fb_window_init(fb_window* w, Py_ssize_t pos)
    bint fb_window_extend(fb_window* w, const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, bint cases)
    ctypedef struct fb_view:
        Py_ssize_t start
        Py_ssize_t end
    fb_view fb_view_of(const fb_window* w)
    bint fb_has(fb_view w, int k, Py_ssize_t q)
    unsigned long long fb_bits(fb_view w, int k, Py_ssize_t q)
    Py_ssize_t fb_ctz64(unsigned long long x)
    Py_ssize_t fb_run_end(fb_view w, int k, Py_ssize_t q)
    Py_ssize_t fb_last_in(fb_view w, int k, Py_ssize_t a, Py_ssize_t b)
    int fb_classifier_set(int which)
    int fb_classifier()
    unsigned long long fb_word(const fb_window* w, int k, int i)


cdef extern from "_ascii_pieces.h" nogil:
    int fb_cl100k_ascii_block(const uint8_t* s, Py_ssize_t pos, unsigned long long L,
                              unsigned long long D, unsigned long long S, unsigned long long NL,
                              unsigned long long O, unsigned long long SP, unsigned long long Q,
                              int single_digits, Py_ssize_t* ends)
    int fb_o200k_ascii_block(const uint8_t* s, Py_ssize_t pos, unsigned long long L,
                             unsigned long long UP, unsigned long long D,
                             unsigned long long S, unsigned long long NL, unsigned long long O,
                             unsigned long long SP, unsigned long long Q, int tekken, Py_ssize_t* ends)
    int fb_r50k_ascii_block(const uint8_t* s, Py_ssize_t pos, unsigned long long L,
                            unsigned long long D, unsigned long long S, unsigned long long O,
                            unsigned long long SP, unsigned long long Q, Py_ssize_t* ends)


ctypedef Py_ssize_t (*piece_fn)(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil
ctypedef Py_ssize_t (*run_fn)(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint8_t mask) noexcept nogil


# What the block scanner calls only when a byte >= 0x80 decides: the per-character code,
# through pointers assigned at import, so that the compiler cannot inline it into the hot
# loops (inlined, its size made every piece pay for spilling registers).
cdef Py_ssize_t cl100k_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_cl100k(s, n, pos, True)
cdef Py_ssize_t gpt4_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_cl100k(s, n, pos, False)
cdef Py_ssize_t o200k_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_o200k(s, n, pos)
cdef Py_ssize_t tekken_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_tekken(s, n, pos)
cdef Py_ssize_t r50k_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_r50k(s, n, pos)
cdef Py_ssize_t qwen2_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_qwen2(s, n, pos)
cdef Py_ssize_t qwen35_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_qwen35(s, n, pos)
cdef Py_ssize_t run_any_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint8_t mask) noexcept nogil:
    return run_any(s, n, p, mask)
cdef Py_ssize_t run_none_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, uint8_t mask) noexcept nogil:
    return run_none(s, n, p, mask)
cdef Py_ssize_t o200k_tail_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t e) noexcept nogil:
    return o200k_tail(s, n, e)

cdef piece_fn slow_cl100k, slow_gpt4, slow_o200k, slow_tekken, slow_r50k, slow_qwen2, slow_qwen35, slow_o200k_tail
cdef run_fn slow_run_any, slow_run_none
slow_cl100k = cl100k_at
slow_gpt4 = gpt4_at
slow_o200k = o200k_at
slow_tekken = tekken_at
slow_r50k = r50k_at
slow_qwen2 = qwen2_at
slow_qwen35 = qwen35_at
slow_o200k_tail = o200k_tail_at
slow_run_any = run_any_at
slow_run_none = run_none_at


cdef inline bint punct_2010(const uint8_t* s, Py_ssize_t n, Py_ssize_t e) noexcept nogil:
    """s[e:] starts with one of U+2010..U+2027 (dashes, curly quotes, the ellipsis: UTF-8 E2 80
    90..A7), [\p{P}] and never \s, \p{L}, \p{M} or \p{N}: most of English text's non-ASCII."""
    return s[e] == 0xE2 and e + 2 < n and s[e + 1] == 0x80 and <uint8_t>(s[e + 2] - 0x90) < 0x18


cdef inline bint other_stops_early(fb_view w, const uint8_t* s, Py_ssize_t n,
                                   Py_ssize_t e) noexcept nogil:
    """A bitmap run that ended at e may go on: e holds a byte >= 0x80, or the window ended
    before the text did."""
    if e >= w.end:
        return e < n
    return s[e] >= 0x80


cdef inline bint stops_early(fb_view w, const uint8_t* s, Py_ssize_t n,
                             Py_ssize_t e) noexcept nogil:
    """other_stops_early for a run of letters, digits or whitespace, which punct_2010 ends."""
    if e >= w.end:
        return e < n
    return s[e] >= 0x80 and not punct_2010(s, n, e)


cdef inline Py_ssize_t block_run(fb_view w, const uint8_t* s, Py_ssize_t n,
                                 Py_ssize_t q, int cls, uint8_t flags) noexcept nogil:
    """End of the run of characters with a flag in `flags` from q (q <= w.end), where the
    ASCII members of `flags` are exactly bitmap class `cls`."""
    cdef Py_ssize_t e = fb_run_end(w, cls, q)
    if stops_early(w, s, n, e):
        return slow_run_any(s, n, e, flags)
    return e


cdef inline Py_ssize_t block_letters(fb_view w, const uint8_t* s, Py_ssize_t n,
                                     Py_ssize_t q, unsigned long long x, uint8_t letters) noexcept nogil:
    """\p{L}++ (letters: FB_L; Qwen3.5's [\p{L}\p{M}]+: LM_FLAGS) from q, where s[q] is a letter and
    bits 0..62 of x are those of fb_bits(w, FB_C_LETTER, q) (the caller may have shifted x, so bit
    63 is not trusted)."""
    cdef unsigned long long rest = ~x
    cdef Py_ssize_t e = fb_ctz64(rest) if rest != 0 else 64
    if e >= 63:                     # the known bits are all letters: go on word by word
        e = fb_run_end(w, FB_C_LETTER, q + 63)
    else:
        e += q
    if stops_early(w, s, n, e):
        return slow_run_any(s, n, e, letters)
    return e


cdef inline Py_ssize_t block_other_run(fb_view w, const uint8_t* s, Py_ssize_t n,
                                       Py_ssize_t q, uint8_t not_other) noexcept nogil:
    """[^\\s\\p{L}\\p{N}]++ from q (Qwen3.5's [^\\s\\p{L}\\p{M}\\p{N}]+: not_other=LMNS)."""
    cdef Py_ssize_t e = fb_run_end(w, FB_C_OTHER, q)
    if other_stops_early(w, s, n, e):
        return slow_run_none(s, n, e, not_other)
    return e


cdef inline Py_ssize_t block_digits3(fb_view w, const uint8_t* s, Py_ssize_t n,
                                     Py_ssize_t pos) noexcept nogil:
    """\\p{N}{1,3} at pos (s[pos] is an ASCII digit)."""
    cdef Py_ssize_t e = fb_run_end(w, FB_C_DIGIT, pos + 1)
    if e - pos >= 3:
        return pos + 3
    if stops_early(w, s, n, e):
        return run_digits3(s, n, pos + 1)
    return e


cdef inline Py_ssize_t block_space(fb_view w, const uint8_t* s, Py_ssize_t n,
                                   Py_ssize_t pos, bint dollar, bint newline) noexcept nogil:
    """space_piece() at pos (s[pos] is ASCII \\s); -1 when a character >= 0x80 (maybe \\s)
    or the window's end follows the ASCII run: the caller then uses the piece_* function."""
    cdef Py_ssize_t e = fb_run_end(w, FB_C_SPACE, pos + 1), nl
    if stops_early(w, s, n, e):
        return -1
    if dollar and e == n:
        return n
    if newline:
        nl = fb_last_in(w, FB_C_NEWLINE, pos, e)
        if nl >= 0:
            return nl + 1
    if e == n or e == pos + 1:
        return e
    return e - 1


include "_scan_cl100k.pxi"


# R50K / GPT2 / HF_GPT2

cdef Py_ssize_t block_r50k_rest(const fb_window* win, const uint8_t* s, Py_ssize_t n,
                                Py_ssize_t pos) noexcept nogil:
    cdef fb_view w = fb_view_of(win)       # by value: not reloaded after stores
    cdef uint8_t b0 = s[pos], c, f
    cdef Py_ssize_t p, e
    if b0 == CH_QUOTE:
        return slow_r50k(s, n, pos)
    p = pos + 1 if (b0 == CH_SPACE and pos + 1 < n) else pos    # the optional ' '
    c = s[p]
    if c >= 0x80:
        return slow_r50k(s, n, pos)
    f = fb_ascii_flags[c]
    if f & FB_L:
        return block_run(w, s, n, p + 1, FB_C_LETTER, FB_L)
    if f & FB_N:
        return block_run(w, s, n, p + 1, FB_C_DIGIT, FB_N)
    if not (f & FB_S):
        return block_other_run(w, s, n, p + 1, LNS)
    e = block_space(w, s, n, pos, False, False)
    return e if e >= 0 else slow_r50k(s, n, pos)


cdef inline Py_ssize_t block_r50k(const fb_window* win, fb_view w, const uint8_t* s, Py_ssize_t n,
                                  Py_ssize_t pos) noexcept nogil:
    cdef unsigned long long x = fb_bits(w, FB_C_LETTER, pos)
    if x & 1:
        return block_letters(w, s, n, pos, x, FB_L)
    if s[pos] == CH_SPACE and x & 2:
        return block_letters(w, s, n, pos + 1, x >> 1, FB_L)
    return block_r50k_rest(win, s, n, pos)


include "_scan_o200k.pxi"


# ---------------------------------------------------------------------------------------
# The C API (see _pretokenize.pxd)
# ---------------------------------------------------------------------------------------

cdef Py_ssize_t piece_end(int kind, const unsigned char* s, Py_ssize_t n,
                          Py_ssize_t pos) noexcept nogil:
    if pos >= n:
        return n
    if kind >= PROGRAM_BASE:    # a compiled pattern (fastbpe.pattern_program)
        return program_piece_end(kind, s, n, pos)
    if kind == PAT_CL100K:
        return piece_cl100k(s, n, pos, True)
    if kind == PAT_O200K:
        return piece_o200k(s, n, pos)
    if kind == PAT_TEKKEN:
        return piece_tekken(s, n, pos)
    if kind == PAT_GPT4 or kind == PAT_LLAMA3:
        return piece_cl100k(s, n, pos, False)
    if kind == PAT_R50K or kind == PAT_GPT2 or kind == PAT_HF_GPT2:
        return piece_r50k(s, n, pos)
    if kind == PAT_QWEN2:
        return piece_qwen2(s, n, pos)
    if kind == PAT_QWEN35:
        return piece_qwen35(s, n, pos)
    if kind == PAT_DEEPSEEK_V3:
        return piece_deepseek_v3(s, n, pos)
    if kind == PAT_CLIP:
        return piece_clip(s, n, pos) & ~DROPPED
    return n


cdef int use_block_scanner = 1     # 0: the per-character matchers only (use_scanner("char"))
cdef int ascii_blocks_on = 1       # 0: the block scanner cuts one piece at a time (use_ascii_blocks(False))
cdef enum:
    CHAR_STRETCH = 4096                 # bytes cut per character after a mostly non-ASCII fill


cdef inline Py_ssize_t block_kept(Py_ssize_t* ends, Py_ssize_t k, Py_ssize_t cap,
                                  const Py_ssize_t* out, Py_ssize_t got) noexcept nogil:
    """How many of the `got` ends an ASCII block wrote to `out` are kept: all, or as many as
    ends[k:cap] holds (each is a piece's end), copied there from the loop's 64-slot spare (out
    when fewer slots are left: the end of each scan_pieces call, 1 piece in 8 of the encode kernel's)."""
    if out != ends + k:
        if got > cap - k:
            got = cap - k
        memcpy(ends + k, out, got * sizeof(Py_ssize_t))
    return got


cdef inline Py_ssize_t window_limit(fb_view w, Py_ssize_t n) noexcept nogil:
    """A piece may start at pos <= the limit without extending the window: 64 bytes from
    pos on are classified, or everything up to the end of the text."""
    return w.end - 64 if w.end < n else n


cdef Py_ssize_t scan_block(int kind, const uint8_t* s, Py_ssize_t n, Py_ssize_t pos,
                           Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil:
    """scan_pieces with the block scanner: one loop per matcher so that it inlines."""
    cdef fb_window w
    cdef fb_view v
    cdef Py_ssize_t k = 0, lim = -1      # -1: the first piece extends the window
    cdef Py_ssize_t spare[64]
    cdef Py_ssize_t* out
    cdef int got
    cdef bint dollar, single_digits, tekken
    cdef uint8_t letters
    fb_window_init(&w, pos)
    v = fb_view_of(&w)
    if kind == PAT_CL100K or kind == PAT_GPT4 or kind == PAT_LLAMA3 or kind == PAT_QWEN2 or kind == PAT_QWEN35:
        dollar = kind == PAT_CL100K
        single_digits = kind == PAT_QWEN2 or kind == PAT_QWEN35
        letters = LM_FLAGS if kind == PAT_QWEN35 else FB_L
        while pos < n and k < cap:
            if pos > lim:
                if fb_window_extend(&w, s, n, pos, False):
                    k += scan_chars(kind, s, n, pos, pos + CHAR_STRETCH, ends + k, cap - k)
                    pos = ends[k - 1]
                    continue                    # lim stays: the next piece refills
                v = fb_view_of(&w)
                lim = window_limit(v, n)
            if ascii_blocks_on and pos + 64 <= v.end:
                out = ends + k if cap - k >= 64 else spare
                # every piece that ends in the next 64 bytes at once (_ascii_pieces.h)
                got = fb_cl100k_ascii_block(
                    s, pos, fb_bits(v, FB_C_LETTER, pos), fb_bits(v, FB_C_DIGIT, pos),
                    fb_bits(v, FB_C_SPACE, pos), fb_bits(v, FB_C_NEWLINE, pos),
                    fb_bits(v, FB_C_OTHER, pos), fb_bits(v, FB_C_SP, pos), fb_bits(v, FB_C_QUOTE, pos),
                    single_digits, out)
                if got:
                    k += block_kept(ends, k, cap, out, got)
                    pos = ends[k - 1]
                    continue
            pos = block_cl100k(&w, v, s, n, pos, dollar, single_digits, letters)
            ends[k] = pos
            k += 1
    elif kind == PAT_O200K or kind == PAT_TEKKEN:
        tekken = kind == PAT_TEKKEN
        while pos < n and k < cap:
            if pos > lim:
                if fb_window_extend(&w, s, n, pos, True):
                    k += scan_chars(kind, s, n, pos, pos + CHAR_STRETCH, ends + k, cap - k)
                    pos = ends[k - 1]
                    continue                    # lim stays: the next piece refills
                v = fb_view_of(&w)
                lim = window_limit(v, n)
            if ascii_blocks_on and pos + 64 <= v.end:
                out = ends + k if cap - k >= 64 else spare
                got = fb_o200k_ascii_block(
                    s, pos, fb_bits(v, FB_C_LETTER, pos), fb_bits(v, FB_C_UPPER, pos),
                    fb_bits(v, FB_C_DIGIT, pos),
                    fb_bits(v, FB_C_SPACE, pos), fb_bits(v, FB_C_NEWLINE, pos),
                    fb_bits(v, FB_C_OTHER, pos), fb_bits(v, FB_C_SP, pos), fb_bits(v, FB_C_QUOTE, pos),
                    tekken, out)
                if got:
                    k += block_kept(ends, k, cap, out, got)
                    pos = ends[k - 1]
                    continue
            pos = block_o200k(&w, v, s, n, pos, tekken)
            ends[k] = pos
            k += 1
    elif kind == PAT_R50K or kind == PAT_GPT2 or kind == PAT_HF_GPT2:
        while pos < n and k < cap:
            if pos > lim:
                if fb_window_extend(&w, s, n, pos, False):
                    k += scan_chars(kind, s, n, pos, pos + CHAR_STRETCH, ends + k, cap - k)
                    pos = ends[k - 1]
                    continue                    # lim stays: the next piece refills
                v = fb_view_of(&w)
                lim = window_limit(v, n)
            if ascii_blocks_on and pos + 64 <= v.end:
                out = ends + k if cap - k >= 64 else spare
                got = fb_r50k_ascii_block(
                    s, pos, fb_bits(v, FB_C_LETTER, pos), fb_bits(v, FB_C_DIGIT, pos),
                    fb_bits(v, FB_C_SPACE, pos), fb_bits(v, FB_C_OTHER, pos), fb_bits(v, FB_C_SP, pos),
                    fb_bits(v, FB_C_QUOTE, pos), out)
                if got:
                    k += block_kept(ends, k, cap, out, got)
                    pos = ends[k - 1]
                    continue
            pos = block_r50k(&w, v, s, n, pos)
            ends[k] = pos
            k += 1
    elif pos < n and cap > 0:
        ends[0] = n
        k = 1
    return k


cdef Py_ssize_t scan_chars(int kind, const unsigned char* s, Py_ssize_t n, Py_ssize_t pos,
                           Py_ssize_t stop, Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil:
    """scan_pieces with the per-character matchers, for the pieces that start before stop."""
    # One loop per matcher so that the matcher inlines into it; the cl100k family's takes a
    # word (a letter run, with or without a space before it) without calling its matcher,
    # the o200k family's a word its first letter alternative ends without backtracking.
    cdef Py_ssize_t k = 0, e
    if stop > n:
        stop = n
    if kind == PAT_CL100K:
        while pos < stop and k < cap:
            e = fb_word_end(s, n, pos, FB_L)
            if e == 0:
                e = fb_punct_end(s, n, pos, FB_L, 3)
            pos = e if e else piece_cl100k(s, n, pos, True)
            ends[k] = pos
            k += 1
    elif kind == PAT_O200K:
        while pos < stop and k < cap:
            e = fb_o200k_word_end(s, n, pos)
            pos = e if e else piece_o200k(s, n, pos)
            ends[k] = pos
            k += 1
    elif kind == PAT_TEKKEN:
        while pos < stop and k < cap:
            e = fb_o200k_word_end(s, n, pos)
            pos = e if e else piece_tekken(s, n, pos)
            ends[k] = pos
            k += 1
    elif kind == PAT_GPT4 or kind == PAT_LLAMA3:
        while pos < stop and k < cap:
            e = fb_word_end(s, n, pos, FB_L)
            if e == 0:
                e = fb_punct_end(s, n, pos, FB_L, 3)
            pos = e if e else piece_cl100k(s, n, pos, False)
            ends[k] = pos
            k += 1
    elif kind == PAT_R50K or kind == PAT_GPT2 or kind == PAT_HF_GPT2:
        while pos < stop and k < cap:
            pos = piece_r50k(s, n, pos)
            ends[k] = pos
            k += 1
    elif kind == PAT_QWEN2:
        while pos < stop and k < cap:
            e = fb_word_end(s, n, pos, FB_L)
            if e == 0:
                e = fb_punct_end(s, n, pos, FB_L, 1)
            pos = e if e else piece_qwen2(s, n, pos)
            ends[k] = pos
            k += 1
    elif kind == PAT_QWEN35:
        while pos < stop and k < cap:
            e = fb_word_end(s, n, pos, LM_FLAGS)
            if e == 0:
                e = fb_punct_end(s, n, pos, LM_FLAGS, 1)
            pos = e if e else piece_qwen35(s, n, pos)
            ends[k] = pos
            k += 1
    elif kind == PAT_DEEPSEEK_V3:
        while pos < stop and k < cap:
            e = fb_ds_word_end(s, n, pos)
            if e == 0:
                e = fb_ds_other_end(s, n, pos)
            pos = e if e else piece_deepseek_v3(s, n, pos)
            ends[k] = pos
            k += 1
    elif kind == PAT_CLIP:
        return scan_clip(s, n, pos, ends, cap, False)
    elif pos < n and cap > 0:
        ends[0] = n
        k = 1
    return k


include "_scan_deepseek.pxi"
include "_scan_clip.pxi"


cdef Py_ssize_t scan_pieces(int kind, const unsigned char* s, Py_ssize_t n, Py_ssize_t pos,
                            Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil:
    if kind >= PROGRAM_BASE:    # a compiled pattern (fastbpe.pattern_program)
        return program_scan(kind, s, n, pos, ends, cap)
    if use_block_scanner and kind == PAT_DEEPSEEK_V3:
        return scan_block_deepseek_v3(s, n, pos, ends, cap)
    if kind == PAT_CLIP:
        return scan_clip(s, n, pos, ends, cap, use_block_scanner)
    if use_block_scanner:
        return scan_block(kind, s, n, pos, ends, cap)
    return scan_chars(kind, s, n, pos, n, ends, cap)


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
    "tekken": PAT_TEKKEN,
    "qwen35": PAT_QWEN35,
    "deepseek_v3": PAT_DEEPSEEK_V3,
    "clip": PAT_CLIP,
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
    _patterns.LLADA_PATTERN: PAT_QWEN2,   # another spelling of the same cut
    _patterns.HF_GPT2_PATTERN: PAT_HF_GPT2,
    _patterns.TEKKEN_PATTERN: PAT_TEKKEN,
    _patterns.QWEN35_PATTERN: PAT_QWEN35,
}

# Chains of Split(Isolated) patterns, each cutting the pieces of the one before, that one
# built-in kind cuts as a whole (HF's Sequence of Splits; llama.cpp's regex lists).
_CHAIN_KINDS = {
    _patterns.DEEPSEEK_V3_SPLITS: PAT_DEEPSEEK_V3,
}

# Kinds that remove pieces themselves (their ends carry DROPPED), by what they remove (plan.Level.drop).
KIND_DROPS = {PAT_CLIP: "gaps"}


def chain_pattern_kind(tuple pats):
    """The built-in kind that cuts as the chain of patterns `pats` (their exact texts), or -1."""
    return _CHAIN_KINDS.get(pats, PAT_NONE)


SCANNERS = ("auto", "avx2", "sse2", "swar", "char")
_CLASSIFIER_NAMES = {FB_CLS_AVX2: "avx2", FB_CLS_SSE2: "sse2", FB_CLS_SWAR: "swar"}
_CLASSIFIERS = {"auto": FB_CLS_AUTO, "avx2": FB_CLS_AVX2, "sse2": FB_CLS_SSE2, "swar": FB_CLS_SWAR}


def scanner_in_use():
    """Which scan path cuts text: "avx2", "sse2" or "swar" (the block scanner with that
    classifier) or "char" (the per-character matchers)."""
    if not use_block_scanner:
        return "char"
    return _CLASSIFIER_NAMES[fb_classifier()]


def use_ascii_blocks(bint on):
    """Whether the block scanner cuts the cl100k family's and o200k's pieces 64 ASCII bytes at a time
    (_ascii_pieces.h; the default) or one piece at a time.  Both cut identically; for tests
    and measurements.  Process-wide.  Returns the previous setting."""
    global ascii_blocks_on
    cdef bint was = ascii_blocks_on
    ascii_blocks_on = on
    return was


def use_scanner(str name):
    """Force a scan path, for tests and measurements (all cut identically): "auto" (the
    block scanner with the fastest classifier this CPU has), "avx2", "sse2", "swar" (the
    portable classifier) or "char".  A classifier this build or CPU lacks falls back to the
    best it has.  Returns scanner_in_use().  Process-wide: set it before encoding starts.
    The environment variable FASTBPE_SCANNER sets it at import."""
    global use_block_scanner
    if name not in SCANNERS:
        raise ValueError("unknown scanner %r (one of %s)" % (name, ", ".join(SCANNERS)))
    use_block_scanner = 0 if name == "char" else 1
    if name != "char":
        fb_classifier_set(_CLASSIFIERS[name])
    return scanner_in_use()


use_scanner(_os.environ.get("FASTBPE_SCANNER") or "auto")
set_builtin_piece_end(piece_end, scan_pieces)     # chains of programs may have built-in levels


def pattern_kind(str pat_str):
    """The scanner for split pattern `pat_str` (its exact text), or -1 (PAT_NONE) when the
    pattern is not one of fastbpe.patterns and must go through the regex package (or is a
    registered scanner program, kind >= 64: fastbpe.pretokenize.program_kind)."""
    return _PATTERN_KINDS.get(pat_str, _scan_program.kind_of(pat_str))


cdef int check_kind(int kind) except -1:
    if (kind < PAT_R50K or kind > PAT_CLIP) and not program_known(kind):
        raise ValueError("unknown pattern kind %d (see pattern_kind)" % kind)
    return 0


def piece_boundaries(const unsigned char[::1] data not None, int kind):
    """End offsets (numpy int64) of the pieces of UTF-8 `data` under pattern `kind`.

    The last entry is len(data) (none for empty data).  Scans with the GIL released.
    """
    check_kind(kind)
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
        pos = chunk[k - 1] & ~DROPPED    # (an end with DROPPED: a removed piece, see split)
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
    check_kind(kind)
    data = text.encode("utf-8", "surrogatepass")
    ends = piece_boundaries(data, kind)
    out = []
    cdef Py_ssize_t start = 0, end
    for end in ends:
        if end & DROPPED:   # a piece a Split Removed level removes
            start = end & ~DROPPED
            continue
        out.append(data[start:end].decode("utf-8", "surrogatepass"))
        start = end
    return out


# ---------------------------------------------------------------------------------------
# Introspection, for tests
# ---------------------------------------------------------------------------------------

FLAG_BITS = {"L": FB_L, "N": FB_N, "S": FB_S, "U": FB_U, "W": FB_W, "M": FB_M,
             "LT": FB_LT, "LM": FB_LM}
