# The text a normalizer op reads (View) and the output it writes (Buf), for _normalize.pyx's
# ops: characters, the input index each takes its span from, and the spans when the program
# keeps alignments; and the read-only scans ops make before they write (one loop per str kind).
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from fastbpe._class_bits cimport class_has
from fastbpe._memory cimport xrealloc


# The text an op reads: a str's code units in place (kind 1, 2, 4) or a buffer (4).
cdef struct View:
    int kind
    const void* data
    Py_ssize_t n


# An op's output: characters, the input index each takes its span from, and (when the
# program keeps alignments) the original span of each character.
cdef struct Buf:
    uint32_t* ch
    Py_ssize_t* src
    int64_t* start
    int64_t* end
    Py_ssize_t n, cap
    bint aligned


cdef inline int reserve(Buf* b, Py_ssize_t need) except -1 nogil:
    cdef Py_ssize_t cap
    if need <= b.cap:
        return 0
    cap = 2 * b.cap if 2 * b.cap > need else need
    if cap < 64:
        cap = 64
    b.ch = <uint32_t*>xrealloc(b.ch, cap * sizeof(uint32_t))
    if b.aligned:   # sources and spans only when the caller wants the alignment
        b.src = <Py_ssize_t*>xrealloc(b.src, cap * sizeof(Py_ssize_t))
        b.start = <int64_t*>xrealloc(b.start, cap * sizeof(int64_t))
        b.end = <int64_t*>xrealloc(b.end, cap * sizeof(int64_t))
    b.cap = cap
    return 0


cdef inline int put(Buf* b, uint32_t c, Py_ssize_t src) except -1 nogil:
    if b.n == b.cap:
        reserve(b, b.n + 1)
    b.ch[b.n] = c
    if b.aligned:
        b.src[b.n] = src
    b.n += 1
    return 0


cdef inline int copy_same(Buf* b, View v, Py_ssize_t start, Py_ssize_t end) except -1 nogil:
    """v[start:end] unchanged: each character takes its own span."""
    cdef Py_ssize_t i, k = b.n
    cdef const uint8_t* d1
    cdef const uint16_t* d2
    reserve(b, b.n + end - start)
    if v.kind == 1:
        d1 = <const uint8_t*>v.data
        for i in range(start, end):
            b.ch[k + i - start] = d1[i]
    elif v.kind == 2:
        d2 = <const uint16_t*>v.data
        for i in range(start, end):
            b.ch[k + i - start] = d2[i]
    else:
        memcpy(b.ch + k, <const uint32_t*>v.data + start, (end - start) * sizeof(uint32_t))
    if b.aligned:
        for i in range(start, end):
            b.src[k + i - start] = i
    b.n = k + end - start
    return 0


cdef inline void buf_free(Buf* b) noexcept nogil:
    free(b.ch)
    free(b.src)
    free(b.start)
    free(b.end)


ctypedef fused unit_t:   # a str's code unit, by its kind
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t units_non_ascii(const unit_t* d, Py_ssize_t n) noexcept nogil:
    """The index of the first unit >= 0x80, or n (1-byte units: eight at a time)."""
    cdef Py_ssize_t i = 0
    cdef uint64_t w
    if unit_t is uint8_t:
        while i + 8 <= n:
            memcpy(&w, d + i, 8)
            if w & 0x8080808080808080ULL:
                break
            i += 8
    while i < n and d[i] < 0x80:
        i += 1
    return i


cdef inline Py_ssize_t units_class_skip(const unit_t* d, Py_ssize_t i, Py_ssize_t n, const uint64_t* ascii,
                                        const uint16_t* index, const uint8_t* blocks, bint member) noexcept nogil:
    """The first index >= i whose unit is (member) or is not (not member) in the class, or n."""
    cdef uint32_t c
    while i < n:
        c = d[i]
        if c < 128:
            if ((ascii[c >> 6] >> (c & 63)) & 1) == member:
                return i
        elif class_has(ascii, index, blocks, c) == member:
            return i
        i += 1
    return n


cdef inline bint view_ascii(View v) noexcept nogil:
    if v.kind == 1:
        return units_non_ascii(<const uint8_t*>v.data, v.n) == v.n
    if v.kind == 2:
        return units_non_ascii(<const uint16_t*>v.data, v.n) == v.n
    return units_non_ascii(<const uint32_t*>v.data, v.n) == v.n


cdef inline Py_ssize_t view_class_skip(View v, Py_ssize_t i, Py_ssize_t n, const uint64_t* ascii,
                                       const uint16_t* index, const uint8_t* blocks, bint member) noexcept nogil:
    """units_class_skip over v[i:n]."""
    if v.kind == 1:
        return units_class_skip(<const uint8_t*>v.data, i, n, ascii, index, blocks, member)
    if v.kind == 2:
        return units_class_skip(<const uint16_t*>v.data, i, n, ascii, index, blocks, member)
    return units_class_skip(<const uint32_t*>v.data, i, n, ascii, index, blocks, member)
