# UTF-8 of a str's own code units (latin-1, UCS-2 or UCS-4), without the GIL.
#
# CPython's encoder (str.encode / PyUnicode_AsUTF8String) walks a non-ASCII str one code
# unit at a time with the GIL held: on mostly-English text with a few curly quotes it was a
# fifth of the whole encode.  These loops copy ASCII runs several code units per step and
# run inside the kernels' GIL-free section, so batch threads convert in parallel.
from cpython.unicode cimport PyUnicode_GET_LENGTH
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

cdef extern from "Python.h":
    int PyUnicode_KIND(object s)
    void* PyUnicode_DATA(object s)
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL
    bint PyUnicode_IS_ASCII(object s)


cdef inline Py_ssize_t utf8_capacity(int kind, Py_ssize_t n) noexcept nogil:
    """Bytes enough for the UTF-8 of n code units of this kind (1, 2 or 4 bytes each)."""
    return n * (2 if kind == 1 else (3 if kind == 2 else 4))


cdef inline Py_ssize_t utf8_put(uint32_t c, uint8_t* o) noexcept nogil:
    """Write the UTF-8 of one non-ASCII code point; return its length, 0 for a surrogate."""
    if c < 0x800:
        o[0] = <uint8_t>(0xC0 | (c >> 6))
        o[1] = <uint8_t>(0x80 | (c & 0x3F))
        return 2
    if c < 0x10000:
        if 0xD800 <= c <= 0xDFFF:
            return 0
        o[0] = <uint8_t>(0xE0 | (c >> 12))
        o[1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
        o[2] = <uint8_t>(0x80 | (c & 0x3F))
        return 3
    o[0] = <uint8_t>(0xF0 | (c >> 18))
    o[1] = <uint8_t>(0x80 | ((c >> 12) & 0x3F))
    o[2] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
    o[3] = <uint8_t>(0x80 | (c & 0x3F))
    return 4


cdef extern from "_ascii_runs.h" nogil:
    Py_ssize_t fb_ucs2_ascii_prefix(const uint16_t* src, Py_ssize_t n, uint8_t* out)
    Py_ssize_t fb_latin1_ascii_prefix(const uint8_t* src, Py_ssize_t n, uint8_t* out)
    Py_ssize_t fb_ucs4_ascii_prefix(const uint32_t* src, Py_ssize_t n, uint8_t* out)


ctypedef fused code_unit:    # a str's code unit: latin-1, UCS-2 or UCS-4
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t ascii_prefix(const code_unit* u, Py_ssize_t n, uint8_t* out) noexcept nogil:
    """The ASCII units at the start of u[:n], copied to out a block at a time; their count."""
    if code_unit is uint8_t:
        return fb_latin1_ascii_prefix(u, n, out)
    elif code_unit is uint16_t:
        return fb_ucs2_ascii_prefix(u, n, out)
    else:
        return fb_ucs4_ascii_prefix(u, n, out)


cdef inline Py_ssize_t utf8_encode(int kind, const void* data, Py_ssize_t n, uint8_t* out,
                                   Py_ssize_t* bad) noexcept nogil:
    """Write the UTF-8 of n code units to out (utf8_capacity bytes); return its length.
    A lone surrogate stops it: returns -1 with its index in bad[0].

    One loop per kind (the kind is the str's, fixed for the whole text: units_utf8 made for
    each code unit's width).  ASCII runs are copied a block at a time (_ascii_runs.h); the
    units between them one at a time, staying in that loop while they are non-ASCII (CJK
    text has no runs to look for) and past a lone ASCII unit (the space between two words of
    Cyrillic or Greek) without a block call."""
    if kind == 1:
        return units_utf8(<const uint8_t*>data, n, out, bad)
    if kind == 2:
        return units_utf8(<const uint16_t*>data, n, out, bad)
    return units_utf8(<const uint32_t*>data, n, out, bad)


cdef inline Py_ssize_t units_utf8(const code_unit* u, Py_ssize_t n, uint8_t* out,
                                  Py_ssize_t* bad) noexcept nogil:
    """utf8_encode's loop for one width.  The compiler drops what a width cannot hold (a
    latin-1 unit is below 0x800, a UCS-2 unit below 0x10000)."""
    cdef Py_ssize_t i = 0, o = 0, k
    cdef uint32_t c
    while i < n:
        k = ascii_prefix(u + i, n - i, out + o)
        i += k
        o += k
        while i < n:
            c = u[i]
            i += 1
            if c < 0x80:
                out[o] = <uint8_t>c
                o += 1
                if i < n and u[i] < 0x80:
                    break     # a run of ASCII: the block copy
                continue
            if code_unit is uint8_t or c < 0x800:
                out[o] = <uint8_t>(0xC0 | (c >> 6))
                out[o + 1] = <uint8_t>(0x80 | (c & 0x3F))
                o += 2
            elif code_unit is uint16_t or c < 0x10000:
                if (c & 0xF800) == 0xD800:   # a lone surrogate
                    bad[0] = i - 1
                    return -1
                out[o] = <uint8_t>(0xE0 | (c >> 12))
                out[o + 1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
                out[o + 2] = <uint8_t>(0x80 | (c & 0x3F))
                o += 3
            else:
                out[o] = <uint8_t>(0xF0 | (c >> 18))
                out[o + 1] = <uint8_t>(0x80 | ((c >> 12) & 0x3F))
                out[o + 2] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
                out[o + 3] = <uint8_t>(0x80 | (c & 0x3F))
                o += 4
    return o


# ----------------------------------------------------------------------------------------
# the UTF-8 of a str, made without the GIL: open (GIL) -> convert (no GIL) -> check (GIL) -> close

cdef struct Utf8Text:
    const uint8_t* s         # the UTF-8 bytes: CPython's own buffer (ASCII) or owned
    Py_ssize_t n
    uint8_t* owned           # our copy for a non-ASCII str, freed by utf8_text_close
    const void* data         # the str's code units, of `kind` bytes each
    Py_ssize_t length        # code units
    int kind
    Py_ssize_t bad           # index of a lone surrogate, or -1


cdef extern from "Python.h":   # (C for CPython's headers: not with the portable C blocks)
    """
    /* The UTF-8 that CPython already keeps inside a non-ASCII str (PyUnicode_AsUTF8AndSize
       makes and keeps it when any binding asks), or NULL: read in place, never made here
       (that would hold a second copy of every str encoded).  A field of the str's struct in
       the Python headers the module is built with; not in the limited API, PyPy, or a
       free-threaded build (there another thread may be setting it). */
    #if defined(PYPY_VERSION) || defined(Py_LIMITED_API) || defined(Py_GIL_DISABLED)
    static inline const char* fb_cached_utf8(PyObject* s, Py_ssize_t* n) {
        (void)s; (void)n;
        return NULL;
    }
    #else
    static inline const char* fb_cached_utf8(PyObject* s, Py_ssize_t* n) {
        PyCompactUnicodeObject* c = (PyCompactUnicodeObject*)s;
        if (PyUnicode_IS_ASCII(s) || c->utf8 == NULL)   /* an ASCII str has no such field */
            return NULL;
        *n = c->utf8_length;
        return c->utf8;
    }
    #endif
    """
    const char* fb_cached_utf8(object s, Py_ssize_t* n) noexcept


cdef inline int utf8_text_open(str text, Utf8Text* u) except -1:
    """With the GIL: point u at an ASCII str's own bytes, or at the UTF-8 CPython keeps in a
    non-ASCII str when some binding made it (no copy, no conversion), or make room for it."""
    memset(u, 0, sizeof(Utf8Text))
    u.bad = -1
    u.length = PyUnicode_GET_LENGTH(text)
    if PyUnicode_IS_ASCII(text):
        u.s = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &u.n)   # no copy
        return 0
    u.kind = PyUnicode_KIND(text)
    u.data = PyUnicode_DATA(text)
    u.s = <const uint8_t*>fb_cached_utf8(text, &u.n)   # (never there with a lone surrogate)
    if u.s != NULL:
        return 0
    u.owned = <uint8_t*>malloc(utf8_capacity(u.kind, u.length) + 1)
    if u.owned == NULL:
        raise MemoryError()
    return 0


cdef inline int utf8_text_convert(Utf8Text* u) noexcept nogil:
    """Without the GIL: fill u.owned (the str must stay alive); -1 on a lone surrogate."""
    if u.owned == NULL or u.s != NULL:
        return 0
    u.n = utf8_encode(u.kind, u.data, u.length, u.owned, &u.bad)
    if u.n < 0:
        u.n = 0
        return -1
    u.s = u.owned
    return 0


cdef inline int utf8_text_check(str text, Utf8Text* u) except -1:
    """With the GIL: the UnicodeEncodeError str.encode would raise, if there was one."""
    if u.bad >= 0:
        raise UnicodeEncodeError("utf-8", text, u.bad, u.bad + 1, "surrogates not allowed")
    return 0


cdef inline void utf8_text_close(Utf8Text* u) noexcept nogil:
    free(u.owned)
    u.owned = NULL
    u.s = NULL


cdef inline Py_ssize_t utf8_texts_open(list texts, Utf8Text* us) except -1:
    """With the GIL: utf8_text_open for each text of a batch (exact str, else TypeError), into
    us (room for len(texts)); returns their total length in characters."""
    cdef Py_ssize_t i, total = 0
    cdef object t
    for i in range(len(texts)):
        t = texts[i]
        if type(t) is not str:
            raise TypeError(f"expected str, not {type(t).__name__}")
        utf8_text_open(t, &us[i])
        total += us[i].length
    return total


cdef inline void utf8_texts_free(Utf8Text* us, Py_ssize_t n) noexcept nogil:
    """Close an array of n Utf8Texts (a batch's texts) and free it; NULL is nothing."""
    cdef Py_ssize_t i
    if us != NULL:
        for i in range(n):
            utf8_text_close(&us[i])
        free(us)


# ----------------------------------------------------------------------------------------
# validating UTF-8 bytes (documents read from a corpus file)

cdef inline bint utf8_valid(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Whether s[:n] is valid UTF-8 by Python's rules (no overlongs, no surrogates, nothing
    above U+10FFFF); ASCII runs are checked 8 bytes at a time."""
    cdef Py_ssize_t i = 0, k, length
    cdef uint8_t c, c1
    cdef uint64_t word
    while i < n:
        if i + 8 <= n:
            memcpy(&word, s + i, 8)
            if (word & 0x8080808080808080ULL) == 0:
                i += 8
                continue
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        if c < 0xC2 or c > 0xF4:    # a continuation byte, an overlong 2-byte lead, > U+10FFFF
            return False
        length = 2 if c < 0xE0 else (3 if c < 0xF0 else 4)
        if i + length > n:
            return False
        for k in range(1, length):
            if (s[i + k] & 0xC0) != 0x80:
                return False
        c1 = s[i + 1]
        # second-byte limits: overlongs (E0, F0), surrogates (ED), above U+10FFFF (F4)
        if ((c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0)
                or (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90)):
            return False
        i += length
    return True


cdef inline void utf8_piece_spans(const uint8_t* s, bint ascii, Py_ssize_t n, const char** ptrs,
                                  Py_ssize_t* lens) noexcept nogil:
    """Turn consecutive character counts lens[i] into (pointer, byte length) spans of s."""
    cdef Py_ssize_t i, k, b = 0, start
    cdef uint8_t c
    for i in range(n):
        start = b
        if ascii:
            b += lens[i]
        else:
            for k in range(lens[i]):
                c = s[b]
                b += 1 if c < 0x80 else (2 if c < 0xE0 else (3 if c < 0xF0 else 4))
        ptrs[i] = <const char*>(s + start)
        lens[i] = b - start
