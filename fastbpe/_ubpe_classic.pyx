# cython: boundscheck=False, wraparound=False, cdivision=True
"""UBPE's classic encoder: non-conflicting vocabulary pairs substituted per round
(`ClassicMerges`), as the reference does it (see _ubpe_train.pyx)."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

from fastbpe._hash cimport pow2_at_least
from fastbpe._ubpe_dag cimport FSum, fsum_add, fsum_value, tf_idf_term
from fastbpe._ubpe_pairs cimport *
cimport cython

import numpy as np


# ---------------------------------------------------------------- classic multi-pair substitution

@cython.final
cdef class ClassicMerges:
    """The classic encoder: pairs in vocabulary order; each round substitutes the first pair that
    occurs plus the following ones that occur, until a vocabulary pair shares a token with them."""
    cdef int64_t* left
    cdef int64_t* right
    cdef int64_t* new_id
    cdef Py_ssize_t n_pairs
    cdef PairStats rank_of      # (left, right) -> rank, stored in `count`
    cdef double* weights
    cdef int64_t n_ids

    def __cinit__(self, int64_t[:, ::1] pairs, double[::1] weights):
        cdef Py_ssize_t i
        self.n_pairs = pairs.shape[0]
        stats_init(&self.rank_of, pow2_at_least(<uint64_t>(self.n_pairs * 2 + 2)))
        self.left = <int64_t*>malloc(max(self.n_pairs, 1) * sizeof(int64_t))
        self.right = <int64_t*>malloc(max(self.n_pairs, 1) * sizeof(int64_t))
        self.new_id = <int64_t*>malloc(max(self.n_pairs, 1) * sizeof(int64_t))
        self.n_ids = weights.shape[0]
        self.weights = <double*>malloc(max(self.n_ids, 1) * sizeof(double))
        if self.left == NULL or self.right == NULL or self.new_id == NULL or self.weights == NULL:
            raise MemoryError()
        for i in range(self.n_ids):
            self.weights[i] = weights[i]
        for i in range(self.n_pairs):
            self.left[i] = pairs[i, 0]
            self.right[i] = pairs[i, 1]
            self.new_id[i] = pairs[i, 2]
            if not (0 <= pairs[i, 0] < 0x7FFFFFFF and 0 <= pairs[i, 1] < 0x7FFFFFFF and 0 <= pairs[i, 2] < 0x7FFFFFFF):
                raise ValueError(f"token ids must be in 0..2**31-2, got {tuple(pairs[i])}")
            if stats_find(&self.rank_of, (<uint64_t>pairs[i, 0] << 32) | <uint64_t>pairs[i, 1]) == NULL:
                stats_slot(&self.rank_of, (<uint64_t>pairs[i, 0] << 32) | <uint64_t>pairs[i, 1]).count = i

    def __dealloc__(self):
        stats_free(&self.rank_of)
        free(self.left)
        free(self.right)
        free(self.new_id)
        free(self.weights)

    cdef Py_ssize_t _merge_word(self, int32_t* a, Py_ssize_t n, uint8_t* present, uint8_t* taken,
                                int64_t* chosen) noexcept nogil:
        """Substitute in place until no vocabulary pair occurs; returns the new length."""
        cdef Py_ssize_t i, j, first, n_chosen, w
        cdef const PairStat* s
        cdef int64_t t
        while n > 1:
            first = self.n_pairs
            for i in range(n - 1):
                s = stats_find(&self.rank_of, (<uint64_t>a[i] << 32) | <uint64_t><uint32_t>a[i + 1])
                if s != NULL:
                    present[s.count] = 1
                    if s.count < first:
                        first = s.count
            if first == self.n_pairs:
                break
            chosen[0] = first
            n_chosen = 1
            taken[self.left[first]] = 1
            taken[self.right[first]] = 1
            for j in range(first + 1, self.n_pairs):
                if taken[self.left[j]] or taken[self.right[j]]:
                    break
                if present[j]:
                    chosen[n_chosen] = j
                    n_chosen += 1
                    taken[self.left[j]] = 1
                    taken[self.right[j]] = 1
            for i in range(n - 1):                # clear the marks
                s = stats_find(&self.rank_of, (<uint64_t>a[i] << 32) | <uint64_t><uint32_t>a[i + 1])
                if s != NULL:
                    present[s.count] = 0
            for j in range(n_chosen):
                taken[self.left[chosen[j]]] = 0
                taken[self.right[chosen[j]]] = 0
            # left to right, each chosen pair becomes its token (lefts are distinct across chosen)
            w = 0
            i = 0
            while i < n:
                t = a[i]
                j = self._chosen_index(t, chosen, n_chosen)
                if j >= 0 and i + 1 < n and a[i + 1] == self.right[chosen[j]]:
                    a[w] = <int32_t>self.new_id[chosen[j]]
                    i += 2
                else:
                    a[w] = <int32_t>t
                    i += 1
                w += 1
            n = w
        return n

    cdef inline Py_ssize_t _chosen_index(self, int64_t t, const int64_t* chosen, Py_ssize_t n_chosen) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(n_chosen):
            if self.left[chosen[j]] == t:
                return j
        return -1

    cdef double _word_weight(self, const int32_t* a, Py_ssize_t n, int64_t* freq, int32_t* order) noexcept nogil:
        """tf-idf summed in Counter(word) order: distinct tokens by first appearance."""
        cdef Py_ssize_t i, n_order = 0
        cdef int32_t t
        cdef FSum s
        for i in range(n):
            t = a[i]
            if freq[t] == 0:
                order[n_order] = t
                n_order += 1
            freq[t] += 1
        s.f = 0.0
        s.c = 0.0
        for i in range(n_order):
            t = order[i]
            fsum_add(&s, tf_idf_term(freq[t], self.weights[t] if t < self.n_ids else 0.0))
            freq[t] = 0
        return fsum_value(&s)

    def encode(self, int32_t[::1] seq, int64_t[::1] offsets, int64_t max_id):
        """(ids, weight) for parts seq[offsets[i]:offsets[i+1]] (modified in place), concatenated;
        one-symbol parts pass through with no weight when there are several parts."""
        cdef Py_ssize_t n_parts = offsets.shape[0] - 1, p, s, n, m, i, longest = 0
        cdef Py_ssize_t n_ids = max(max_id, self.n_ids) + 1
        cdef uint8_t* present = <uint8_t*>calloc(self.n_pairs + 1, 1)
        cdef uint8_t* taken = <uint8_t*>calloc(n_ids, 1)
        cdef int64_t* chosen = <int64_t*>malloc((self.n_pairs + 1) * sizeof(int64_t))
        cdef int64_t* freq = <int64_t*>calloc(n_ids, sizeof(int64_t))
        cdef int32_t* order = NULL
        cdef list ids = []
        cdef double total = 0.0, wt
        try:
            for p in range(n_parts):
                longest = max(longest, offsets[p + 1] - offsets[p])
            order = <int32_t*>malloc((longest + 1) * sizeof(int32_t))
            if present == NULL or taken == NULL or chosen == NULL or freq == NULL or order == NULL:
                raise MemoryError()
            for p in range(n_parts):
                s = offsets[p]
                n = offsets[p + 1] - s
                if n == 1 and n_parts > 1:
                    ids.append(seq[s])
                    continue
                with nogil:
                    m = self._merge_word(&seq[s], n, present, taken, chosen) if n > 0 else 0
                    wt = self._word_weight(&seq[s], m, freq, order) if m > 0 else 0.0
                for i in range(m):
                    ids.append(seq[s + i])
                total += wt
        finally:
            free(present)
            free(taken)
            free(chosen)
            free(freq)
            free(order)
        return ids, total
