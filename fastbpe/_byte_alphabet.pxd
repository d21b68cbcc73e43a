# cython: language_level=3
"""GPT-2's byte-level alphabet read back: the byte a character stands for (formats.bytelevel's
map, built the same way: printable latin-1 bytes stand for themselves, the other 68 bytes for
U+0100.. in order), by arithmetic (no table to fill at import)."""
from libc.stdint cimport uint32_t


cdef inline short alphabet_byte(uint32_t c) noexcept nogil:
    """The byte character c stands for, or -1 (outside the alphabet)."""
    if c < 0x100:
        return <short>c if (0x21 <= c <= 0x7E or 0xA1 <= c <= 0xAC or 0xAE <= c) else -1
    c -= 0x100   # the 68 others: 0x00-0x20, 0x7F-0xA0, 0xAD
    if c < 33:
        return <short>c
    if c < 67:
        return <short>(0x7F + c - 33)
    return 0xAD if c == 67 else -1
