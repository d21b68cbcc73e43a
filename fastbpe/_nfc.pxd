# C API of fastbpe/_nfc.pyx (HF's Unicode normalization forms, Lowercase and combining marks
# on fastbpe's own tables), for the normalizer programs of fastbpe/_normalize.pyx.
from libc.stdint cimport uint8_t, uint32_t, int32_t

cdef enum:
    UNSTABLE = 255   # stability-table value of a code point the form may change or compose backwards
    TABLE_SIZE = 0x110000

# One output character of decompose/recompose: HF's change (0 replaces an input character,
# 1 is inserted, -k also removes k) and its combining class.
cdef struct Item:
    uint32_t ch
    int32_t change
    uint8_t ccc

cdef struct Items:
    Item* items
    Py_ssize_t n, cap

cdef int items_push(Items* v, uint32_t ch, int32_t change, uint8_t ccc) except -1 nogil

# Spans [start, end) a form may change, from its stability table (see stability_table).
cdef Py_ssize_t find_spans(int kind, const void* data, Py_ssize_t n, const uint8_t* table,
                           Py_ssize_t table_size, Py_ssize_t gap, Py_ssize_t** spans) noexcept nogil

# The crate's Decompositions (canonical, or compatibility with compat) and Recompositions.
cdef int decompose(int kind, const void* data, Py_ssize_t n, bint compat, Items* out) except -1 nogil
cdef int recompose(Items* dec, Items* out) except -1 nogil

# Rust's char::to_lowercase of c: its length (0 when c is its own lowercase), *seq its characters.
cdef Py_ssize_t lower_of(uint32_t c, const uint32_t** seq) noexcept nogil

# General_Category M on Unicode 9.0 (what HF's StripAccents removes).
cdef bint is_combining_mark(uint32_t c) noexcept nogil
