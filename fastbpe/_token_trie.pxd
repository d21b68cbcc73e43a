# The added-token automaton (fastbpe/_token_trie.pyx), for kernels that search text with it
# (_added_split: cutting texts at their added tokens inside the encode call).
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int32_t, int64_t


cdef struct SwarSet:      # skip_words' tests for one str kind, made at build (not per search)
    int count                 # the first characters a unit of that kind can be (0: none)
    uint64_t first[4]         # each repeated in every unit of 8 bytes (the four k: the first one repeated)
    uint64_t second[4]        # its one second character, so repeated, where paired
    uint64_t paired[4]        # all ones when the second unit is compared too
    uint64_t vals[4]          # first and second as plain unit values (for fb_tt_skip16)
    uint64_t vals2[4]


cdef class TokenTrie:
    cdef uint32_t* chars      # the character on the edge into each node
    cdef int32_t* first       # first[i] .. first[i + 1]: node i's children (nodes + 1 entries)
    cdef int32_t* fail        # the longest proper suffix of a node's string that is a node
    cdef int32_t* out         # the deepest node on the failure chain (self included) ending a token
    cdef int32_t* depth
    cdef int32_t* token_of    # the token ending at a node (index into values), else NONE
    cdef int64_t* values
    cdef int32_t* root_table
    cdef Py_ssize_t n_firsts  # how many characters start a token ...
    cdef uint32_t only_first  # ... and when one, which (searches jump between its occurrences)
    cdef uint8_t* start_class # per character < 256: ONE_CHAR_TOKEN | PAIRS_BELOW_256 | PAIRS_ABOVE
    cdef uint64_t* pair_bits  # 256 bits per first character < 256: the second characters < 256
    cdef int swar_n           # how many characters start a token, up to 4 (else -1): text is read 8 bytes a step
    cdef uint32_t swar_first[4]    # each one ...
    cdef uint32_t swar_second[4]   # ... and its one second character when it has one (swar_paired)
    cdef bint swar_paired[4]
    cdef SwarSet swar_sets[3]      # skip_words' tests per str kind (1, 2, 4 bytes a unit)
    cdef uint8_t run_slot[256]     # per character < 256 whose tokens are all runs of it: 1 + its run_nodes slot
    cdef int32_t* run_nodes[4]     # [k] for k <= run_max: the node of the longest token of <= k characters, else NONE
    cdef int32_t run_max[4]        # the longest run token's length
    cdef readonly Py_ssize_t nodes
    cdef readonly Py_ssize_t build_steps   # work done building (token characters read + failure steps)

    cdef inline int32_t child(self, int32_t node, uint32_t c) noexcept nogil
    cdef void _start_classes(self) noexcept nogil
    cdef void _run_tables(self) noexcept nogil
    cdef void _swar_sets(self) noexcept nogil
    cdef inline bint may_start(self, int kind, const void* data, Py_ssize_t n, Py_ssize_t j) noexcept nogil
    cdef Py_ssize_t next_start(self, int kind, const void* data, Py_ssize_t n, Py_ssize_t j) noexcept nogil
    cdef Py_ssize_t search_at(self, int kind, const void* data, Py_ssize_t n, Py_ssize_t pos,
                            Py_ssize_t* found_start, Py_ssize_t* found_end, int64_t* found_value,
                            Py_ssize_t* steps) noexcept nogil
    cdef list _find(self, str text, Py_ssize_t* steps)
    cdef void _build(self, Py_ssize_t n_tokens, const int* kinds, const void** datas, const Py_ssize_t* lens,
                     int32_t* lo, int32_t* hi) noexcept nogil
