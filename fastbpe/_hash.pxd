# Hash functions shared by the kernels (inline, so every module that cimports them compiles
# its own copy: no cross-module call in the hot loops).
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy


cdef inline uint64_t mix64(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    return h


cdef inline uint64_t hash_bytes(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """A fast non-cryptographic hash of a short byte string, 8 bytes at a time."""
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ (<uint64_t>n * 0x2545F4914F6CDD1DULL)
    cdef uint64_t w
    while n >= 8:
        memcpy(&w, p, 8)
        h = (h ^ w) * 0x100000001B3ULL
        h ^= h >> 29
        p += 8
        n -= 8
    if n > 0:
        w = 0
        memcpy(&w, p, <size_t>n)
        h = (h ^ w) * 0x100000001B3ULL
    return mix64(h)
