# The scanner programs' automata (built by fastbpe/pattern_dfa.py), and the character reading
# (UTF-8, class bitmaps) the program matcher shares with them; inline, for _scan_program.pyx.
from libc.stdint cimport int16_t, int32_t, uint8_t, uint16_t, uint32_t, uint64_t

from fastbpe._class_bits cimport class_has


ctypedef struct Cls:
    uint64_t ascii[2]
    const uint16_t* index        # block of each 256 code points
    const uint8_t* blocks        # 32 bytes a block: bit cp & 255

ctypedef struct Dfa:
    const int32_t* trans         # [state * width + class]: next state * 2 + (a match ends here)
    const int16_t* bytes         # [state << 8 | byte] for ASCII (every byte when byte-level): trans
                                 # at the byte's class, without looking the class up
    const uint8_t* low           # class of each code point < 256 (of each byte when byte-level)
    const uint16_t* index        # class of cp: rows[index[cp >> 8] * 256 + (cp & 255)]
    const uint8_t* rows
    int width, eot, invalid      # classes + 1; the text end's column; a non-UTF-8 byte's class
    int n_states


cdef inline uint32_t decode(const uint8_t* s, Py_ssize_t n, Py_ssize_t p, int* ln) noexcept nogil:
    """The code point at s[p] (p < n) and its length; an invalid byte is one unit, 0x110000,
    in no class."""
    cdef uint8_t b = s[p]
    if b < 0x80:
        ln[0] = 1
        return b
    if b >= 0xC2 and b < 0xE0 and p + 1 < n and (s[p + 1] & 0xC0) == 0x80:
        ln[0] = 2
        return ((b & 0x1F) << 6) | (s[p + 1] & 0x3F)
    if b >= 0xE0 and b < 0xF0 and p + 2 < n and (s[p + 1] & 0xC0) == 0x80 and (s[p + 2] & 0xC0) == 0x80:
        ln[0] = 3
        return ((b & 0x0F) << 12) | ((s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F)
    if (b >= 0xF0 and b < 0xF5 and p + 3 < n and (s[p + 1] & 0xC0) == 0x80
            and (s[p + 2] & 0xC0) == 0x80 and (s[p + 3] & 0xC0) == 0x80):
        ln[0] = 4
        return (((b & 0x07) << 18) | ((s[p + 1] & 0x3F) << 12) | ((s[p + 2] & 0x3F) << 6)
                | (s[p + 3] & 0x3F))
    ln[0] = 1
    return 0x110000


cdef inline bint has(const Cls* c, uint32_t cp) noexcept nogil:
    return class_has(c.ascii, c.index, c.blocks, cp)


cdef inline Py_ssize_t back_one(const uint8_t* s, Py_ssize_t p, Py_ssize_t floor) noexcept nogil:
    """The start of the character before p (not below floor)."""
    p -= 1
    while p > floor and (s[p] & 0xC0) == 0x80:
        p -= 1
    return p


cdef inline Py_ssize_t dfa_match(const Dfa* D, bint byte_level, const uint8_t* s, Py_ssize_t n,
                                 Py_ssize_t pos, Py_ssize_t* stop) noexcept nogil:
    """The end of the match at pos (the backtracking matcher's match), or -1: one class lookup
    and one transition per character, until no thread of the pattern is alive (`stop`: where
    that was)."""
    cdef const int32_t* trans = D.trans
    cdef const int16_t* by = D.bytes
    cdef Py_ssize_t p = pos, last = -1
    cdef int32_t t, st = 1, w = D.width
    cdef int ln
    cdef uint32_t cp, b
    cdef int c
    while p < n:
        b = s[p]
        if b < 0x80 or byte_level:
            t = by[(st << 8) | b]
            ln = 1
        else:
            cp = decode(s, n, p, &ln)
            if cp < 0x110000:
                c = D.rows[(<Py_ssize_t>D.index[cp >> 8] << 8) | (cp & 255)]
            else:
                c = D.invalid
            t = trans[st * w + c]
        if t & 1:
            last = p
        st = t >> 1
        if st == 0:
            break
        p += ln
    if p >= n and trans[st * w + D.eot] & 1:
        last = p
    stop[0] = p
    return last

