# A character class as bits (the layout pattern_program.py and normalize.py build): the code
# points below 128 in two 64-bit words, then one 32-byte block of bits per 256 code points
# (blocks shared between ranges through `index`).  One membership test for every reader.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t


cdef inline bint class_has(const uint64_t* ascii, const uint16_t* index, const uint8_t* blocks,
                           uint32_t cp) noexcept nogil:
    if cp < 128:
        return (ascii[cp >> 6] >> (cp & 63)) & 1
    if cp >= 0x110000:
        return False
    return (blocks[(<Py_ssize_t>index[cp >> 8] << 5) | ((cp & 255) >> 3)] >> (cp & 7)) & 1
