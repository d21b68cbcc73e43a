# cython: boundscheck=False, wraparound=False, cdivision=True
"""UBPE's text to ids: str parts through an alphabet table, and the word regex without `re`."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

import numpy as np

# ---------------------------------------------------------------- str parts -> ids

from cpython.unicode cimport PyUnicode_READ, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH


cdef int map_chars(str text, const int32_t* table, Py_ssize_t size, int32_t* out) except -1:
    """Each character of text through `table` (code point -> id, -1 for none) into out;
    ValueError names the first character not in the table."""
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 ch
    cdef int32_t v
    for i in range(n):
        ch = PyUnicode_READ(kind, data, i)
        v = table[ch] if ch < <Py_UCS4>size else -1
        if v < 0:
            raise ValueError(f"symbol {chr(ch)!r} is not in the alphabet")
        out[i] = v
    return 0


cdef Py_ssize_t total_length(list texts, str refusal) except -1:
    """The summed length of texts; TypeError(refusal) unless every one is a str."""
    cdef Py_ssize_t total = 0
    cdef object text
    for text in texts:
        if type(text) is not str:
            raise TypeError(refusal)
        total += PyUnicode_GET_LENGTH(text)
    return total


def map_str_parts(list parts, int32_t[::1] table):
    """Parts (str) -> (int32 ids end to end, int64 offsets), each character through `table`
    (code point -> id, -1 for none).  ValueError names the first character not in the table."""
    cdef Py_ssize_t n_parts = len(parts), p, k = 0
    cdef Py_ssize_t size = table.shape[0]
    cdef Py_ssize_t total = total_length(parts, "map_str_parts takes str parts")
    cdef object part
    ids = np.empty(total, dtype=np.int32)
    offsets = np.empty(n_parts + 1, dtype=np.int64)
    cdef int32_t[::1] out = ids
    cdef int64_t[::1] off = offsets
    off[0] = 0
    for p in range(n_parts):
        part = parts[p]
        map_chars(part, &table[0] if size else NULL, size, &out[0] + k if total else NULL)
        k += PyUnicode_GET_LENGTH(part)
        off[p + 1] = k
    return ids, offsets


# ---------------------------------------------------------------- the word regex, without `re`

from cpython.unicode cimport Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE

# the one split regex done here: fastbpe.ubpe.split uses it only when the model's regex_str is
# exactly this string; any other goes through `re`
WORD_REGEX = r" ?\w+| ?[^\w\s]+|\s+"

cdef enum:
    PUNCT = 0
    WORD = 1
    SPACE = 2

cdef uint8_t ASCII_CLASS[128]


cdef inline uint8_t char_class(Py_UCS4 ch) noexcept:
    """`re`'s classes for a str pattern: \\w is str.isalnum() or '_', \\s is str.isspace()."""
    if ch < 128:
        return ASCII_CLASS[ch]
    if Py_UNICODE_ISALNUM(ch):
        return WORD
    if Py_UNICODE_ISSPACE(ch):
        return SPACE
    return PUNCT


cdef void init_ascii_class() noexcept:
    cdef Py_UCS4 ch
    for ch in range(128):
        ASCII_CLASS[ch] = WORD if (Py_UNICODE_ISALNUM(ch) or ch == 95) else (
            SPACE if Py_UNICODE_ISSPACE(ch) else PUNCT)

init_ascii_class()


cdef Py_ssize_t split_words_into(str doc, const int32_t* table, Py_ssize_t size, int32_t* ids,
                                 int64_t* ends, int64_t base) except -1:
    """`re.findall(WORD_REGEX, doc)` as part ends (base + offset, written to `ends`) with every
    character mapped through `table` into `ids`; returns the number of parts.  The matches
    cover the whole str, so ids gets len(doc) entries.  At each position the regex takes, in
    order: ' ' + a \\w run, a \\w run, ' ' + a run of neither, such a run, a \\s run."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(doc), i = 0, j, n_parts = 0
    cdef int kind = PyUnicode_KIND(doc)
    cdef void* data = PyUnicode_DATA(doc)
    cdef Py_UCS4 ch
    cdef uint8_t cls, run
    while i < n:
        ch = PyUnicode_READ(kind, data, i)
        cls = char_class(ch)
        j = i
        run = cls
        if ch == 32 and i + 1 < n:
            cls = char_class(PyUnicode_READ(kind, data, i + 1))
            if cls != SPACE:          # ' ' joins the following \w or [^\w\s] run
                run = cls
                j = i + 1
        j += 1
        while j < n and char_class(PyUnicode_READ(kind, data, j)) == run:
            j += 1
        ends[n_parts] = base + j
        n_parts += 1
        i = j
    map_chars(doc, table, size, ids + base if ids != NULL else NULL)
    return n_parts


def split_words_map(str doc, int32_t[::1] table):
    """(ids int32, offsets int64) of one str split by WORD_REGEX: what map_str_parts gives for
    `re.findall(WORD_REGEX, doc)`."""
    ids, ends, _ = split_words_map_docs([doc], table)
    return ids, ends


def split_words_map_docs(list docs, int32_t[::1] table):
    """Many str documents split by WORD_REGEX end to end: (ids, part offsets, parts per document)."""
    cdef Py_ssize_t n_docs = len(docs), d, n_parts = 0, k
    cdef Py_ssize_t total = total_length(docs, "split_words_map_docs takes str documents")
    cdef object doc
    ids = np.empty(total, dtype=np.int32)
    ends = np.empty(total + 1, dtype=np.int64)
    counts = np.empty(n_docs, dtype=np.int64)
    cdef int32_t[::1] out = ids
    cdef int64_t[::1] off = ends
    cdef int64_t[::1] per_doc = counts
    cdef int64_t base = 0
    off[0] = 0
    for d in range(n_docs):
        doc = docs[d]
        k = split_words_into(doc, &table[0] if table.shape[0] else NULL, table.shape[0],
                             &out[0] if total else NULL, &off[1 + n_parts], base)
        per_doc[d] = k
        n_parts += k
        base += PyUnicode_GET_LENGTH(doc)
    return ids, ends[:n_parts + 1], counts
