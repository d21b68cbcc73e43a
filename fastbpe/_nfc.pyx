# cython: language_level=3
"""Where a str may change under NFC: one GIL-free pass over its code units.

Text to tokenize is almost always NFC already.  CPython's unicodedata.normalize returns such
text at once, unless it holds one character that only *may* compose with the one before it
(a Devanagari nukta, a Bengali vowel sign, Hangul jamo, a combining acute): then the whole
string goes through full normalization, ~40x slower.  Here a table (built by
fastbpe/hf/normalizers.py from this Python's unicodedata) marks every code point that is
not stable under NFC (combining class != 0, may compose with the one before, changes on its
own, or unassigned); a text without one is NFC as it is, and otherwise only the spans around
those code points need normalizing."""
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.stdlib cimport malloc, realloc, free

cdef extern from "Python.h":
    int PyUnicode_KIND(object u)
    void* PyUnicode_DATA(object u)
    Py_ssize_t PyUnicode_GET_LENGTH(object u)
    bint PyUnicode_IS_ASCII(object u)


cdef inline uint32_t code_point(int kind, const void* data, Py_ssize_t i) noexcept nogil:
    if kind == 1:
        return (<const uint8_t*>data)[i]
    if kind == 2:
        return (<const uint16_t*>data)[i]
    return (<const uint32_t*>data)[i]


cdef enum:
    UNSTABLE = 255   # table value of a code point NFC may change or compose backwards


cdef Py_ssize_t find_spans(int kind, const void* data, Py_ssize_t n, const uint8_t* table,
                           Py_ssize_t table_size, Py_ssize_t gap, Py_ssize_t** spans) noexcept nogil:
    """Spans [start, end) (pairs in *spans, malloc'ed; the count returned, -1 when out of
    memory) that NFC may change.  table[cp]: 0 for a stable starter (a boundary: NFC never
    looks across the place before it), UNSTABLE, or the combining class of a mark that is
    otherwise stable.  Between two boundaries, text whose marks come in non-decreasing
    combining class and with no UNSTABLE code point passes the quick check: NFC keeps it.
    Every other stretch between boundaries is a span; spans less than `gap` apart are
    joined (fewer calls to normalize)."""
    cdef Py_ssize_t i = 0, boundary = 0, count = 0, cap = 0
    cdef Py_ssize_t* out = NULL
    cdef Py_ssize_t* grown
    cdef uint32_t c
    cdef uint8_t v, prev = 0
    while i < n:
        c = code_point(kind, data, i)
        v = table[c] if c < table_size else UNSTABLE
        if v == 0:
            boundary = i
            prev = 0
            i += 1
            continue
        if v != UNSTABLE and v >= prev:
            prev = v
            i += 1
            continue
        # a span from the last boundary to the next one
        i += 1
        while i < n:
            c = code_point(kind, data, i)
            if c < table_size and table[c] == 0:
                break
            i += 1
        prev = 0
        if count > 0 and boundary - out[2 * count - 1] < gap:
            out[2 * count - 1] = i
            continue
        if count == cap:
            cap = 2 * cap + 8
            grown = <Py_ssize_t*>realloc(out, 2 * cap * sizeof(Py_ssize_t))
            if grown == NULL:
                free(out)
                spans[0] = NULL
                return -1
            out = grown
        out[2 * count] = boundary
        out[2 * count + 1] = i
        count += 1
    spans[0] = out
    return count


def nfc_spans(str text, const uint8_t[::1] unstable, Py_ssize_t gap=8):
    """The spans of text that NFC may change, as a list of (start, end); [] when the text is
    NFC as it is.  `unstable` is the table find_spans reads (code points past its end count
    as UNSTABLE)."""
    if unstable.shape[0] == 0:
        raise ValueError("nfc_spans needs a table of the unstable code points")
    if PyUnicode_IS_ASCII(text):
        return []
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), count, k
    cdef Py_ssize_t* spans = NULL
    with nogil:
        count = find_spans(kind, data, n, &unstable[0], unstable.shape[0], gap, &spans)
    if count < 0:
        raise MemoryError()
    try:
        return [(spans[2 * k], spans[2 * k + 1]) for k in range(count)]
    finally:
        free(spans)

