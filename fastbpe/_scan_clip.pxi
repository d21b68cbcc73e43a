# CLIP's pre-tokenizer as one built-in kind: HF Split(CLIP_PATTERN, Removed, invert) and then
# ByteLevel's GPT-2 regex inside each piece it keeps (patterns.CLIP_PATTERN).  Included by
# _pretokenize.pyx.
#
# The Split keeps the matches of <|startoftext|>|<|endoftext|>|'s|'t|'re|'ve|'m|'ll|'d|
# [\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+ and removes the text between them, which is whitespace (no
# other character escapes the alternatives): those pieces end with DROPPED.  Inside a kept piece
# GPT-2's regex finds the piece itself (a letter run, one digit, a contraction, a run of the
# rest: nothing in them starts another GPT-2 match), except in the two special strings, which it
# cuts as "<|", the word, "|>".  Those three come out together from the scan loops (never one
# scan call starts inside them); piece_end, which has no state, gives "<|" there.

cdef extern from "string.h" nogil:
    int memcmp(const void* a, const void* b, size_t n)

cdef extern from "_ascii_clip.h" nogil:
    int fb_clip_ascii_block(const uint8_t* s, Py_ssize_t pos, unsigned long long L, unsigned long long D,
                            unsigned long long S, unsigned long long NL, unsigned long long O,
                            unsigned long long SP, unsigned long long Q, Py_ssize_t dropped, Py_ssize_t* ends)


cdef inline Py_ssize_t clip_special(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    """The length of <|startoftext|> or <|endoftext|> at pos (s[pos] == '<'), else 0."""
    if n - pos >= 13 and memcmp(s + pos, b"<|endoftext|>", 13) == 0:
        return 13
    if n - pos >= 15 and memcmp(s + pos, b"<|startoftext|>", 15) == 0:
        return 15
    return 0


cdef inline Py_ssize_t clip_contraction(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    """The end of 's|'t|'re|'ve|'m|'ll|'d at pos (s[pos] == '\\''; case-sensitive), else 0."""
    cdef uint8_t b1, b2
    if pos + 1 >= n:
        return 0
    b1 = s[pos + 1]
    if b1 == b's' or b1 == b't' or b1 == b'm' or b1 == b'd':
        return pos + 2
    if pos + 2 >= n:
        return 0
    b2 = s[pos + 2]
    if (b2 == b'e' and (b1 == b'r' or b1 == b'v')) or (b1 == b'l' and b2 == b'l'):
        return pos + 3
    return 0


cdef inline Py_ssize_t piece_clip(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    """The end of the piece at pos, with DROPPED when it is whitespace the Split removes (at a
    special string: its first piece, "<|")."""
    cdef uint8_t b0 = s[pos], f
    cdef Py_ssize_t l0, e
    if b0 == CH_QUOTE:
        e = clip_contraction(s, n, pos)
        if e:
            return e
    elif b0 == b'<' and clip_special(s, n, pos):
        return pos + 2
    l0 = char_at(s, n, pos, &f)
    if f & FB_L:
        return run_any(s, n, pos + l0, FB_L)
    if f & FB_N:
        return pos + l0
    if f & FB_S:
        return run_any(s, n, pos + l0, FB_S) | DROPPED
    return run_none(s, n, pos + l0, LNS)


cdef Py_ssize_t clip_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    return piece_clip(s, n, pos)
cdef piece_fn slow_clip
slow_clip = clip_at


cdef inline Py_ssize_t block_clip(fb_view w, const uint8_t* s, Py_ssize_t n, Py_ssize_t pos) noexcept nogil:
    """piece_clip from the window's ASCII bitmaps (the per-character code where a byte >= 0x80
    decides)."""
    cdef unsigned long long x = fb_bits(w, FB_C_LETTER, pos)
    cdef uint8_t b0
    cdef Py_ssize_t e
    if x & 1:
        return block_letters(w, s, n, pos, x, FB_L)
    b0 = s[pos]
    if fb_has(w, FB_C_SPACE, pos):
        return block_run(w, s, n, pos + 1, FB_C_SPACE, FB_S) | DROPPED
    if fb_has(w, FB_C_DIGIT, pos):
        return pos + 1
    if fb_has(w, FB_C_OTHER, pos) and b0 != CH_QUOTE and b0 != b'<':
        return block_other_run(w, s, n, pos + 1, LNS)
    return slow_clip(s, n, pos)


cdef inline Py_ssize_t clip_special_pieces(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos,
                                           Py_ssize_t* ends, Py_ssize_t room) noexcept nogil:
    """At a special string (s[pos] == '<'): writes its three piece ends (as many as `room`
    allows when it is under 3, for one-piece queries) and returns how many; 0 when none is
    there."""
    cdef Py_ssize_t m = clip_special(s, n, pos)
    if m == 0:
        return 0
    ends[0] = pos + 2
    if room >= 3:
        ends[1] = pos + m - 2
        ends[2] = pos + m
        return 3
    return 1


cdef Py_ssize_t scan_clip(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t* ends,
                          Py_ssize_t cap, bint blocks) noexcept nogil:
    """scan_pieces for CLIP: the block scanner (blocks) or the per-character code."""
    cdef fb_window w
    cdef fb_view v
    cdef Py_ssize_t k = 0, lim = -1, got, chars_until = -1
    fb_window_init(&w, pos)
    v = fb_view_of(&w)
    while pos < n and k < cap:
        if s[pos] == b'<':
            if cap - k < 3 and k > 0:
                break                       # the three pieces of a special string go together
            got = clip_special_pieces(s, n, pos, ends + k, cap - k)
            if got:
                k += got
                pos = ends[k - 1]
                continue
        if not blocks or pos < chars_until:
            pos = piece_clip(s, n, pos)
        else:
            if pos > lim:
                if fb_window_extend(&w, s, n, pos, False):
                    chars_until = pos + CHAR_STRETCH   # mostly non-ASCII: by character for a while
                    continue
                v = fb_view_of(&w)
                lim = window_limit(v, n)
            if ascii_blocks_on and pos + 64 <= v.end and cap - k >= 64:
                # every piece that ends in the next 64 ASCII bytes at once (_ascii_clip.h)
                got = fb_clip_ascii_block(
                    s, pos, fb_bits(v, FB_C_LETTER, pos), fb_bits(v, FB_C_DIGIT, pos),
                    fb_bits(v, FB_C_SPACE, pos), fb_bits(v, FB_C_NEWLINE, pos),
                    fb_bits(v, FB_C_OTHER, pos), fb_bits(v, FB_C_SP, pos), fb_bits(v, FB_C_QUOTE, pos),
                    DROPPED, ends + k)
                if got:
                    k += got
                    pos = ends[k - 1] & ~DROPPED
                    continue
            pos = block_clip(v, s, n, pos)
        ends[k] = pos
        k += 1
        pos &= ~DROPPED
    return k
