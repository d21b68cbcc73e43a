# SentencePiece's text form over UTF-8, without the GIL (_char_bpe): the meta character ("▁")
# prepended and put for spaces (HF's Prepend + Replace normalizers, Metaspace), the cuts
# before meta characters, and reading one character.  `kind` is _char_bpe's flags.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy

from fastbpe._hash cimport FB_LITTLE_ENDIAN
from fastbpe._utf8 cimport utf8_put

cdef extern from "_portable.h" nogil:
    ptrdiff_t fb_ctz64(uint64_t x)

cdef enum:
    F_PREPEND = 1                # the meta character before a non-empty text (HF's Prepend)
    F_PREPEND_UNLESS_META = 2    # ... unless the text then starts with it (Metaspace's prepend_scheme)
    F_REPLACE_SPACE = 4          # every " " becomes the meta character
    F_SPLIT = 8                  # every meta character starts a word (Metaspace's split)
    KIND_MAX = 15


cdef inline Py_ssize_t utf8_char(const uint8_t* p, Py_ssize_t n, uint32_t* cp) noexcept nogil:
    """The code point of the (valid) UTF-8 character at p (n bytes left) and its length."""
    cdef uint8_t b = p[0]
    if b < 0x80:
        cp[0] = b
        return 1
    if b < 0xE0 and n >= 2:
        cp[0] = ((b & 0x1F) << 6) | (p[1] & 0x3F)
        return 2
    if b < 0xF0 and n >= 3:
        cp[0] = ((b & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)
        return 3
    if n >= 4:
        cp[0] = ((b & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F)
        return 4
    cp[0] = 0xFFFD
    return n


cdef inline Py_ssize_t meta_normalize(const uint8_t* meta, Py_ssize_t ml, const uint8_t* s, Py_ssize_t n,
                                      int kind, uint8_t* q, bint* prepended) noexcept nogil:
    """The UTF-8 of s[:n] normalized as kind says into q (room for ml * (n + 1) bytes; meta:
    the meta character's ml bytes); its length, and whether the meta character was prepended."""
    cdef Py_ssize_t o = 0, i, k
    cdef bint starts_meta
    cdef uint64_t w, x, hit
    cdef uint8_t c, m0 = meta[0], m1 = meta[1] if ml > 1 else 0, m2 = meta[2] if ml > 2 else 0
    cdef uint8_t m3 = meta[3] if ml > 3 else 0
    if n > 0 and kind & (F_PREPEND | F_PREPEND_UNLESS_META):
        starts_meta = ((kind & F_REPLACE_SPACE) and s[0] == 32) or (n >= ml and memcmp(s, meta, ml) == 0)
        if kind & F_PREPEND or not starts_meta:
            memcpy(q, meta, ml)
            o = ml
            prepended[0] = True
    if not kind & F_REPLACE_SPACE:
        memcpy(q + o, s, n)
        return o + n
    # eight bytes copied at a time, up to the first space among them (a memcpy call per word
    # or per space cost more on words of 5 bytes); the meta character's bytes written as four
    # (the caller leaves room)
    i = 0
    if FB_LITTLE_ENDIAN:
        while i + 8 <= n:
            memcpy(&w, s + i, 8)
            memcpy(q + o, &w, 8)
            x = w ^ 0x2020202020202020ULL              # a space is a zero byte of x
            hit = (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL   # the lowest: the first
            if hit == 0:
                i += 8
                o += 8
                continue
            k = fb_ctz64(hit) >> 3
            o += k
            q[o] = m0
            q[o + 1] = m1
            q[o + 2] = m2
            q[o + 3] = m3
            o += ml
            i += k + 1
    for i in range(i, n):
        c = s[i]
        if c != 32:
            q[o] = c
            o += 1
            continue
        q[o] = m0
        if ml > 1:
            q[o + 1] = m1
            if ml > 2:
                q[o + 2] = m2
                if ml > 3:
                    q[o + 3] = m3
        o += ml
    return o


ctypedef fused code_unit:   # a str's code units: latin-1, UCS-2, UCS-4
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t units_normalize(const code_unit* u, Py_ssize_t n, const uint8_t* meta, Py_ssize_t ml,
                                       bint spaces, uint8_t* q, Py_ssize_t o, Py_ssize_t* bad) noexcept nogil:
    """meta_normalize_units' loop over one kind of code unit, writing from q[o]."""
    cdef Py_ssize_t i, k
    cdef uint32_t c
    cdef uint8_t m0 = meta[0], m1 = meta[1] if ml > 1 else 0, m2 = meta[2] if ml > 2 else 0
    cdef uint8_t m3 = meta[3] if ml > 3 else 0
    for i in range(n):
        c = u[i]
        if c < 0x80:
            if c != 32 or not spaces:
                q[o] = <uint8_t>c
                o += 1
                continue
            q[o] = m0           # the meta character's bytes (room for four: see the caller)
            q[o + 1] = m1
            q[o + 2] = m2
            q[o + 3] = m3
            o += ml
            continue
        if c < 0x800:   # (utf8_put, with the two commonest lengths first)
            q[o] = <uint8_t>(0xC0 | (c >> 6))
            q[o + 1] = <uint8_t>(0x80 | (c & 0x3F))
            o += 2
            continue
        if c < 0x10000 and (c < 0xD800 or c > 0xDFFF):
            q[o] = <uint8_t>(0xE0 | (c >> 12))
            q[o + 1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
            q[o + 2] = <uint8_t>(0x80 | (c & 0x3F))
            o += 3
            continue
        k = utf8_put(c, q + o)
        if k == 0:
            bad[0] = i
            return -1
        o += k
    return o


cdef inline Py_ssize_t meta_normalize_units(const uint8_t* meta, Py_ssize_t ml, int ukind, const void* data,
                                            Py_ssize_t n, int kind, uint8_t* q, bint* prepended,
                                            Py_ssize_t* bad) noexcept nogil:
    """meta_normalize of a str's n code units (ukind bytes each: a str whose UTF-8 is not made
    yet), its UTF-8 written as it is normalized: one pass instead of two (room in q for
    max(ml, 4) * (n + 1) bytes).  -1 on a lone surrogate, its index in bad[0]."""
    cdef Py_ssize_t o = 0
    cdef uint32_t c, meta_cp
    cdef bint spaces = (kind & F_REPLACE_SPACE) != 0
    if n > 0 and kind & (F_PREPEND | F_PREPEND_UNLESS_META):
        utf8_char(meta, ml, &meta_cp)
        c = (<const uint8_t*>data)[0] if ukind == 1 else (
            (<const uint16_t*>data)[0] if ukind == 2 else (<const uint32_t*>data)[0])
        if kind & F_PREPEND or not ((spaces and c == 32) or c == meta_cp):
            memcpy(q, meta, ml)
            o = ml
            prepended[0] = True
    if ukind == 1:
        return units_normalize(<const uint8_t*>data, n, meta, ml, spaces, q, o, bad)
    if ukind == 2:
        return units_normalize(<const uint16_t*>data, n, meta, ml, spaces, q, o, bad)
    return units_normalize(<const uint32_t*>data, n, meta, ml, spaces, q, o, bad)


cdef inline bint is_meta(const uint8_t* meta, Py_ssize_t ml, const uint8_t* q, Py_ssize_t j,
                         Py_ssize_t n) noexcept nogil:
    """Whether the meta character's ml bytes are at q[j:] (q has n bytes)."""
    cdef Py_ssize_t k
    if j + ml > n:
        return False
    for k in range(ml):
        if q[j + k] != meta[k]:
            return False
    return True


cdef inline Py_ssize_t meta_cut(const uint8_t* meta, Py_ssize_t ml, const uint8_t* q, Py_ssize_t n,
                                Py_ssize_t start, bint every_meta) noexcept nogil:
    """The end of the piece of q[:n] that starts at start: before the next meta character
    (every one, or only one that follows another character), else n.  (A run of meta
    characters is stepped over in place: a memchr and a memcmp call for each of them made
    1 MiB of spaces cost more than merging it.)"""
    cdef Py_ssize_t j = start + 1
    cdef const uint8_t* hit
    while j < n:
        hit = <const uint8_t*>memchr(q + j, meta[0], n - j)
        if hit == NULL:
            return n
        j = hit - q
        if not is_meta(meta, ml, q, j, n):
            j += 1
            continue
        if every_meta or not (j - ml >= start and is_meta(meta, ml, q, j - ml, n)):
            return j
        while is_meta(meta, ml, q, j + ml, n):   # the rest of this run of meta characters
            j += ml
        j += ml
    return n


cdef inline Py_ssize_t meta_word_end(const uint8_t* meta, Py_ssize_t ml, const uint8_t* q, Py_ssize_t n,
                                     Py_ssize_t start) noexcept nogil:
    """Where the word of q[:n] that starts at start ends: at the next meta character (of up to
    3 bytes) that follows another character, else n.  The meta character's first byte is
    searched for eight bytes at a time (a memchr call a word cost more on words of 6 bytes)."""
    cdef Py_ssize_t j = start + 1
    cdef uint8_t m0 = meta[0], m1 = meta[1], m2 = meta[2], last = meta[ml - 1]
    cdef uint64_t x, hit, ones = 0x0101010101010101ULL
    while True:
        if FB_LITTLE_ENDIAN:
            while j + 8 <= n:
                memcpy(&x, q + j, 8)
                x ^= ones * m0                 # the byte searched for is a zero byte of x
                hit = (x - ones) & ~x & (ones << 7)   # the lowest: the first
                if hit:
                    j += fb_ctz64(hit) >> 3
                    break
                j += 8
        while j < n and q[j] != m0:
            j += 1
        if j + ml > n:
            return n
        if (ml < 2 or q[j + 1] == m1) and (ml < 3 or q[j + 2] == m2):
            if q[j - 1] != last or not (j - ml >= start and is_meta(meta, ml, q, j - ml, n)):
                return j
            while is_meta(meta, ml, q, j + ml, n):   # the rest of this run (indentation) in place
                j += ml
            j += ml
        else:
            j += 1


cdef inline Py_ssize_t space_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t start) noexcept nogil:
    """Where the word of s[:n] (UTF-8 without the meta character, spaces standing for it) that starts at
    start ends: at the next space that follows another character, else n; searched for eight
    bytes at a time."""
    cdef Py_ssize_t j = start + 1
    cdef uint64_t x, hit, ones = 0x0101010101010101ULL
    if s[start] == 32:
        while j < n and s[j] == 32:   # a run of spaces belongs to the word after it
            j += 1
    if FB_LITTLE_ENDIAN:
        while j + 8 <= n:
            memcpy(&x, s + j, 8)
            x ^= ones * 32
            hit = (x - ones) & ~x & (ones << 7)
            if hit:
                return j + (fb_ctz64(hit) >> 3)
            j += 8
    while j < n and s[j] != 32:
        j += 1
    return j


cdef inline bint few_non_ascii(int ukind, const void* data, Py_ssize_t n) noexcept nogil:
    """Whether at most 1 in 32 of a str's first 256 code units (ukind bytes each) is not
    ASCII: English with a few curly quotes, whose UTF-8 is made and probed in place
    (CharBPE.encode_spaced), not other scripts (normalized while their UTF-8 is made)."""
    cdef Py_ssize_t i, m = n if n < 256 else 256, count = 0
    for i in range(m):
        count += ((<const uint8_t*>data)[i] if ukind == 1 else (<const uint16_t*>data)[i] if ukind == 2
                  else (<const uint32_t*>data)[i]) >= 0x80
    return count * 32 <= m


cdef inline bint has_meta(const uint8_t* meta, Py_ssize_t ml, const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Whether the UTF-8 s[:n] holds the meta character (ml bytes)."""
    cdef const uint8_t* p = s
    cdef const uint8_t* hit
    while True:
        hit = <const uint8_t*>memchr(p, meta[0], n - (p - s))
        if hit == NULL:
            return False
        if is_meta(meta, ml, s, hit - s, n):
            return True
        p = hit + 1
