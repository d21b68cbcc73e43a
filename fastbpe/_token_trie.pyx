# cython: language_level=3
"""Finding added tokens in text: an Aho-Corasick automaton over code points, leftmost-longest.

HF's AddedVocabulary finds its tokens with a leftmost-longest Aho-Corasick automaton; a
tokenizer.json may hold 100k+ of them.  Building is linear in the tokens' total length (one
node per distinct prefix, one hash-table entry per edge, failure links in breadth-first
order), and a search follows one edge or failure link per step, so text without tokens costs
one pass.  All memory is owned by the TokenTrie object; searches run without the GIL."""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int32_t, int64_t
from libc.stdlib cimport malloc, calloc, realloc, free

from fastbpe._hash cimport mix64

cdef extern from "Python.h":
    int PyUnicode_KIND(object u)
    void* PyUnicode_DATA(object u)
    Py_ssize_t PyUnicode_GET_LENGTH(object u)


cdef inline uint32_t code_point(int kind, const void* data, Py_ssize_t i) noexcept nogil:
    if kind == 1:
        return (<const uint8_t*>data)[i]
    if kind == 2:
        return (<const uint16_t*>data)[i]
    return (<const uint32_t*>data)[i]


cdef enum:
    ROOT = 0
    NONE = -1


cdef struct Edge:
    uint64_t key     # (parent << 21 | code point) + 1; 0 marks an empty slot
    int32_t child


cdef class TokenTrie:
    """TokenTrie(tokens, values): `find(text)` gives the leftmost-longest non-overlapping
    occurrences as (start, end, value), in characters.  Empty tokens are ignored; a token
    given twice keeps its first value."""
    cdef Edge* edges          # open-addressing table: (node, code point) -> child
    cdef Py_ssize_t mask      # table size - 1 (a power of two)
    cdef int32_t* fail        # the longest proper suffix of a node's string that is a node
    cdef int32_t* out         # the deepest node on the failure chain (self included) that ends a token
    cdef int32_t* depth
    cdef int64_t* value       # the token's value where one ends, else NONE
    cdef readonly Py_ssize_t nodes
    cdef readonly Py_ssize_t build_steps   # work done building (edges added + failure steps)

    def __cinit__(self):
        self.edges = NULL
        self.fail = self.out = self.depth = NULL
        self.value = NULL

    def __dealloc__(self):
        free(self.edges)
        free(self.fail)
        free(self.out)
        free(self.depth)
        free(self.value)

    def __init__(self, tokens, values):
        tokens = list(tokens)
        values = list(values)
        if len(tokens) != len(values):
            raise ValueError("TokenTrie needs one value per token")
        cdef Py_ssize_t total = 1, i, k, n, node, cap
        cdef int32_t* parent
        cdef uint32_t* char_of
        cdef str token
        for token in tokens:
            total += PyUnicode_GET_LENGTH(token)
        if total >= 2 ** 31 - 1:
            raise ValueError("added tokens too long in total for the matcher")
        cap = 16
        while cap < 2 * total:
            cap *= 2
        self.mask = cap - 1
        self.edges = <Edge*>calloc(cap, sizeof(Edge))
        self.depth = <int32_t*>malloc(total * sizeof(int32_t))
        self.value = <int64_t*>malloc(total * sizeof(int64_t))
        parent = <int32_t*>malloc(total * sizeof(int32_t))
        char_of = <uint32_t*>malloc(total * sizeof(uint32_t))
        if self.edges == NULL or self.depth == NULL or self.value == NULL or parent == NULL or char_of == NULL:
            free(parent)
            free(char_of)
            raise MemoryError()
        try:
            self.nodes = 1
            self.depth[ROOT] = 0
            self.value[ROOT] = NONE
            parent[ROOT] = NONE
            for i in range(len(tokens)):
                token = tokens[i]
                v = values[i]
                node = self._insert(token, parent, char_of)
                if node != ROOT and self.value[node] == NONE:
                    self.value[node] = v
            self._link(parent, char_of)
        finally:
            free(parent)
            free(char_of)

    cdef inline int32_t child(self, Py_ssize_t node, uint32_t c) noexcept nogil:
        cdef uint64_t key = ((<uint64_t>node << 21) | c) + 1
        cdef Py_ssize_t slot = <Py_ssize_t>(mix64(key) & <uint64_t>self.mask)
        while self.edges[slot].key != 0:
            if self.edges[slot].key == key:
                return self.edges[slot].child
            slot = (slot + 1) & self.mask
        return NONE

    cdef Py_ssize_t _insert(self, str token, int32_t* parent, uint32_t* char_of) except -1:
        cdef int kind = PyUnicode_KIND(token)
        cdef const void* data = PyUnicode_DATA(token)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(token), i, slot, node = ROOT
        cdef uint32_t c
        cdef uint64_t key
        for i in range(n):
            c = code_point(kind, data, i)
            key = ((<uint64_t>node << 21) | c) + 1
            slot = <Py_ssize_t>(mix64(key) & <uint64_t>self.mask)
            while self.edges[slot].key != 0 and self.edges[slot].key != key:
                slot = (slot + 1) & self.mask
            if self.edges[slot].key == key:
                node = self.edges[slot].child
                continue
            self.edges[slot].key = key
            self.edges[slot].child = <int32_t>self.nodes
            parent[self.nodes] = <int32_t>node
            char_of[self.nodes] = c
            self.depth[self.nodes] = self.depth[node] + 1
            self.value[self.nodes] = NONE
            node = self.nodes
            self.nodes += 1
            self.build_steps += 1
        return node

    cdef int _link(self, int32_t* parent, uint32_t* char_of) except -1:
        """Failure and output links, nodes taken by depth (a counting sort: linear)."""
        cdef Py_ssize_t n = self.nodes, i, d, max_depth = 0
        cdef int32_t node, f, nxt
        for i in range(n):
            if self.depth[i] > max_depth:
                max_depth = self.depth[i]
        cdef int32_t* start = <int32_t*>calloc(max_depth + 2, sizeof(int32_t))
        cdef int32_t* order = <int32_t*>malloc(n * sizeof(int32_t))
        self.fail = <int32_t*>malloc(n * sizeof(int32_t))
        self.out = <int32_t*>malloc(n * sizeof(int32_t))
        if start == NULL or order == NULL or self.fail == NULL or self.out == NULL:
            free(start)
            free(order)
            raise MemoryError()
        with nogil:
            for i in range(n):
                start[self.depth[i] + 1] += 1
            for d in range(1, max_depth + 2):
                start[d] += start[d - 1]
            for i in range(n):
                order[start[self.depth[i]]] = <int32_t>i
                start[self.depth[i]] += 1
            self.fail[ROOT] = ROOT
            self.out[ROOT] = NONE
            for i in range(1, n):
                node = order[i]
                f = parent[node]
                if f == ROOT:
                    self.fail[node] = ROOT
                else:
                    f = self.fail[f]
                    while True:
                        self.build_steps += 1
                        nxt = self.child(f, char_of[node])
                        if nxt != NONE or f == ROOT:
                            break
                        f = self.fail[f]
                    self.fail[node] = nxt if nxt != NONE else ROOT
                f = self.fail[node]
                self.out[node] = node if self.value[node] != NONE else self.out[f]
        free(start)
        free(order)
        return 0

    cdef Py_ssize_t _search(self, int kind, const void* data, Py_ssize_t n, Py_ssize_t pos,
                            Py_ssize_t* found_start, Py_ssize_t* found_end, int64_t* found_value,
                            Py_ssize_t* steps) noexcept nogil:
        """The leftmost-longest occurrence at or after pos (its start, or -1 for none).  The
        state's string starts where no earlier match can start; once it starts past the best
        candidate's start, nothing later can beat that candidate."""
        cdef int32_t state = ROOT, nxt, hit
        cdef Py_ssize_t j = pos, s, best_start = -1, best_end = -1
        cdef int64_t best_value = NONE
        cdef uint32_t c
        while j < n:
            c = code_point(kind, data, j)
            while True:
                steps[0] += 1
                nxt = self.child(state, c)
                if nxt != NONE or state == ROOT:
                    break
                state = self.fail[state]
            state = nxt if nxt != NONE else ROOT
            j += 1
            if best_start >= 0 and j - self.depth[state] > best_start:
                break
            hit = self.out[state]
            if hit != NONE:
                s = j - self.depth[hit]
                if best_start < 0 or s < best_start or (s == best_start and j > best_end):
                    best_start, best_end, best_value = s, j, self.value[hit]
        found_start[0], found_end[0], found_value[0] = best_start, best_end, best_value
        return best_start

    def find(self, str text):
        """[(start, end, value)] of the tokens in text, leftmost-longest, not overlapping."""
        cdef int kind = PyUnicode_KIND(text)
        cdef const void* data = PyUnicode_DATA(text)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), pos = 0, s, e, steps = 0
        cdef int64_t v
        out = []
        while pos < n:
            with nogil:
                self._search(kind, data, n, pos, &s, &e, &v, &steps)
            if s < 0:
                break
            out.append((s, e, v))
            pos = e
        return out

    def search_steps(self, str text):
        """The automaton steps `find(text)` takes (edges tried): a measure of its work."""
        cdef int kind = PyUnicode_KIND(text)
        cdef const void* data = PyUnicode_DATA(text)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), pos = 0, s, e, steps = 0
        cdef int64_t v
        while pos < n:
            self._search(kind, data, n, pos, &s, &e, &v, &steps)
            if s < 0:
                break
            pos = e
        return steps

    def contains_any(self, str text):
        """Whether any token occurs in text."""
        cdef int kind = PyUnicode_KIND(text)
        cdef const void* data = PyUnicode_DATA(text)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), s, e, steps = 0
        cdef int64_t v
        with nogil:
            self._search(kind, data, n, 0, &s, &e, &v, &steps)
        return s >= 0
