# cython: boundscheck=False, wraparound=False, cdivision=True
"""UBPE encoding: token sequences in a prefix tree, each word's top-n segmentations by
tf-idf (`UBPELookup`), as the reference computes them (see _ubpe_train.pyx)."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memset

from fastbpe._hash cimport pow2_at_least, probe
from fastbpe._ubpe_dag cimport *
from fastbpe._ubpe_pairs cimport EMPTY, LOW32, pair_hash
cimport cython

import numpy as np


cdef struct Step:               # where one symbol leads in the prefix tree
    int32_t node             # -1: nowhere
    int32_t token            # the token ending there, -1 if none


@cython.final
cdef class UBPELookup:
    """Token sequences (over alphabet ids) in a prefix tree, with each id's idf weight.

    `encode_best` / `encode_top` walk the DAG of all segmentations of a word from its end,
    keeping the best `top_n` per position (TopElements's heap, exactly as the reference)."""
    cdef Edge* edges
    cdef uint64_t mask
    cdef int32_t* value      # [n_nodes] token id ending at the node, -1 if none
    cdef int32_t n_nodes
    cdef double* weights     # [n_ids]
    cdef int64_t n_ids
    cdef DagWork spare       # the scratch of a finished call, for the next one
    cdef bint has_spare
    cdef WordCache cache
    # the same tree laid out for walking: each node's children side by side (few cache lines),
    # and the root's as a direct array by symbol
    cdef int32_t* first_child    # [n_nodes + 1]
    cdef int32_t* child_sym
    cdef Step* child             # [n_nodes - 1] node and token, by first_child
    cdef Step* root_child        # [root_size]
    cdef int32_t root_size

    def __cinit__(self, list sequences, list ids, double[::1] weights):
        cdef Py_ssize_t total = 1, k, i, n
        cdef uint64_t cap
        cdef int32_t node, child
        cdef object seq
        for seq in sequences:
            total += len(seq)
        cap = pow2_at_least(<uint64_t>(total * 2 + 2))
        self.mask = cap - 1
        self.edges = <Edge*>malloc(cap * sizeof(Edge))
        self.value = <int32_t*>malloc((total + 1) * sizeof(int32_t))
        self.n_ids = weights.shape[0]
        self.weights = <double*>malloc(max(self.n_ids, 1) * sizeof(double))
        if self.edges == NULL or self.value == NULL or self.weights == NULL:
            raise MemoryError()
        memset(self.edges, 0xFF, cap * sizeof(Edge))
        for i in range(self.n_ids):
            self.weights[i] = weights[i]
        self.value[0] = -1
        self.n_nodes = 1
        for k in range(len(sequences)):
            seq = sequences[k]
            n = len(seq)
            if n == 0:
                raise ValueError("a token must stand for at least one symbol")
            node = 0
            for i in range(n):
                child = self._child(node, <int32_t>seq[i])
                if child < 0:
                    child = self._add_child(node, <int32_t>seq[i])
                node = child
            if not 0 <= ids[k] < self.n_ids:
                raise ValueError(f"token id {ids[k]} has no weight slot")
            if self.value[node] < 0:      # the first sequence inserted keeps its id
                self.value[node] = <int32_t>ids[k]
        self._lay_out_children()
        self.cache.entries = <CacheEntry*>calloc(CACHE_SLOTS, sizeof(CacheEntry))
        if self.cache.entries == NULL:
            raise MemoryError()
        self.cache.mask = CACHE_SLOTS - 1

    cdef int _lay_out_children(self) except -1:
        cdef uint64_t i
        cdef int32_t parent, sym, k, child
        cdef int32_t* fill
        self.first_child = <int32_t*>calloc(self.n_nodes + 1, sizeof(int32_t))
        self.child_sym = <int32_t*>malloc(self.n_nodes * sizeof(int32_t))
        self.child = <Step*>malloc(self.n_nodes * sizeof(Step))
        if self.first_child == NULL or self.child_sym == NULL or self.child == NULL:
            raise MemoryError()
        self.root_size = 0
        for i in range(self.mask + 1):
            if self.edges[i].key != EMPTY:
                parent = <int32_t>(self.edges[i].key >> 32)
                sym = <int32_t>(self.edges[i].key & LOW32)
                self.first_child[parent + 1] += 1
                if parent == 0 and sym >= self.root_size:
                    self.root_size = sym + 1
        for k in range(self.n_nodes):
            self.first_child[k + 1] += self.first_child[k]
        fill = <int32_t*>malloc((self.n_nodes + 1) * sizeof(int32_t))
        self.root_child = <Step*>malloc(max(self.root_size, 1) * sizeof(Step))
        if fill == NULL or self.root_child == NULL:
            free(fill)
            raise MemoryError()
        for k in range(self.n_nodes):
            fill[k] = self.first_child[k]
        for k in range(self.root_size):
            self.root_child[k].node = -1
            self.root_child[k].token = -1
        for i in range(self.mask + 1):
            if self.edges[i].key != EMPTY:
                parent = <int32_t>(self.edges[i].key >> 32)
                sym = <int32_t>(self.edges[i].key & LOW32)
                child = self.edges[i].child
                self.child_sym[fill[parent]] = sym
                self.child[fill[parent]].node = child
                self.child[fill[parent]].token = self.value[child]
                fill[parent] += 1
                if parent == 0 and sym >= 0:
                    self.root_child[sym].node = child
                    self.root_child[sym].token = self.value[child]
        free(fill)
        return 0

    cdef inline Step _next(self, int32_t node, int32_t sym) noexcept nogil:
        """Where `sym` leads from `node` (the walking layout)."""
        cdef int32_t k
        cdef Step nowhere
        if node == 0 and 0 <= sym < self.root_size:
            return self.root_child[sym]
        for k in range(self.first_child[node], self.first_child[node + 1]):
            if self.child_sym[k] == sym:
                return self.child[k]
        nowhere.node = -1
        nowhere.token = -1
        return nowhere

    def __dealloc__(self):
        free(self.edges)
        free(self.value)
        free(self.weights)
        free(self.first_child)
        free(self.child_sym)
        free(self.child)
        free(self.root_child)
        free(self.cache.entries)
        free(self.cache.words)
        free(self.cache.toks)
        free(self.cache.cands)
        if self.has_spare:
            dag_free(&self.spare)

    cdef inline int32_t _child(self, int32_t node, int32_t sym) noexcept nogil:
        cdef uint64_t key = (<uint64_t>node << 32) | <uint32_t>sym
        cdef uint64_t i = probe(&self.edges[0].key, EDGE_STRIDE, self.mask, pair_hash(key) & self.mask, key, EMPTY)
        return self.edges[i].child if self.edges[i].key == key else -1

    cdef int32_t _add_child(self, int32_t node, int32_t sym) noexcept:
        cdef uint64_t key = (<uint64_t>node << 32) | <uint32_t>sym
        cdef uint64_t i = probe(&self.edges[0].key, EDGE_STRIDE, self.mask, pair_hash(key) & self.mask,
                                EMPTY, EMPTY)   # absent: its free slot
        self.edges[i].key = key
        self.edges[i].child = self.n_nodes
        self.value[self.n_nodes] = -1
        self.n_nodes += 1
        return self.n_nodes - 1

    cdef inline double _weight(self, int64_t token) noexcept nogil:
        return self.weights[token] if 0 <= token < self.n_ids else 0.0

    cdef double _seq_weight(self, DagWork* w, int32_t token, int32_t tail, FSum* state) noexcept nogil:
        """tf-idf of `token` + the sequence at `tail`, summed in Counter order (distinct tokens by
        first appearance from the right end, as the reference builds its Counter).  `state` gets
        the running sum before its final correction, so a new token extends it in O(1): its term
        is the last one added, and its count is 1 (term = idf)."""
        cdef Py_ssize_t n = 0, i, n_order = 0
        cdef int32_t c = tail
        cdef int32_t t
        cdef bint seen = False
        while c >= 0 and w.pool[c].token >= 0:
            seen = seen or w.pool[c].token == token
            c = w.pool[c].tail
        if not seen:
            state.f = w.pool[tail].f if tail >= 0 else 0.0
            state.c = w.pool[tail].c if tail >= 0 else 0.0
            fsum_add(state, self._weight(token))
            return fsum_value(state)
        w.scratch[n] = token
        n += 1
        c = tail
        while c >= 0 and w.pool[c].token >= 0:
            w.scratch[n] = w.pool[c].token
            n += 1
            c = w.pool[c].tail
        i = n - 1
        while i >= 0:
            t = w.scratch[i]
            if w.freq[t] == 0:
                w.order[n_order] = t
                n_order += 1
            w.freq[t] += 1
            i -= 1
        state.f = 0.0
        state.c = 0.0
        for i in range(n_order):
            t = w.order[i]
            fsum_add(state, tf_idf_term(w.freq[t], self._weight(t)))
            w.freq[t] = 0
        return fsum_value(state)

    cdef int _word_dag(self, const int32_t* word, Py_ssize_t n, Py_ssize_t top_n, DagWork* w) except -1 nogil:
        """Fill w.heads for positions n..0; position 0 holds the word's best candidates (heap order)."""
        cdef Py_ssize_t p, q, k, pos, child_pos, right
        cdef FSum state
        cdef Step step
        cdef int32_t node, tok, cand, size, length
        cdef int32_t* heap
        cdef double wt
        cdef Cand* pool
        dag_reserve(w, n + 1, top_n)
        w.pool_len = 0
        state.f = 0.0
        state.c = 0.0
        pool_push(w, -1, -1, 0, 0.0, &state)
        w.heads[n * top_n] = 0
        w.n_heads[n] = 1
        p = n - 1
        while p >= 0:
            heap = &w.heads[p * top_n]
            size = 0
            node = 0
            q = p
            while q < n:                        # tokens starting at p, shortest first
                step = self._next(node, word[q])
                node = step.node
                if node < 0:
                    break
                q += 1
                tok = step.token
                if tok < 0:
                    continue
                for k in range(w.n_heads[q]):
                    cand = w.heads[q * top_n + k]
                    length = w.pool[cand].length + 1
                    wt = self._seq_weight(w, tok, cand, &state)
                    if size < top_n:             # heapq.heappush: sift the new item up
                        size += 1
                        pool_push(w, tok, cand, length, wt, &state)
                        heap[sift_up(heap, w.pool, size - 1, wt, length)] = <int32_t>(w.pool_len - 1)
                    else:
                        pool = w.pool
                        if not cand_less(pool[heap[0]].weight, pool[heap[0]].length, wt, length):
                            continue             # not greater than the smallest kept
                        pool_push(w, tok, cand, length, wt, &state)   # heapq.heapreplace: sift down from the root
                        pool = w.pool
                        pos = 0
                        child_pos = 1
                        while child_pos < size:
                            right = child_pos + 1
                            if right < size and not cand_less(pool[heap[child_pos]].weight, pool[heap[child_pos]].length,
                                                              pool[heap[right]].weight, pool[heap[right]].length):
                                child_pos = right
                            heap[pos] = heap[child_pos]
                            pos = child_pos
                            child_pos = 2 * pos + 1
                        heap[sift_up(heap, pool, pos, wt, length)] = <int32_t>(w.pool_len - 1)
            if size == 0:
                with gil:
                    raise ValueError(f"symbol id {word[p]} is not in the model's alphabet")
            w.n_heads[p] = size
            p -= 1
        return 0

    cdef DagWork _new_work(self) except *:
        """Scratch for one call: the spare one if free (taken with the GIL held, so two threads
        never share it), else new.  Its `freq` is all zeros between uses."""
        cdef DagWork w
        if self.has_spare:
            self.has_spare = False
            return self.spare
        memset(&w, 0, sizeof(DagWork))
        w.freq = <int64_t*>calloc(max(self.n_ids, 1), sizeof(int64_t))
        if w.freq == NULL:
            raise MemoryError()
        return w

    cdef void _done_with(self, DagWork* w) noexcept:
        if self.has_spare:
            dag_free(w)
        else:
            self.spare = w[0]
            self.has_spare = True

    cdef list _cand_ids(self, DagWork* w, int32_t c):
        cdef list out = []
        while c >= 0 and w.pool[c].token >= 0:
            out.append(w.pool[c].token)
            c = w.pool[c].tail
        return out

    cdef const CacheEntry* _word_cands(self, DagWork* w, const int32_t* word, Py_ssize_t n,
                                       Py_ssize_t top_n) except NULL:
        """The word's best `top_n` candidates, best first with heap order kept among equal keys
        (the DAG on a miss, then kept).  The pointer lives until the next call."""
        cdef WordCache* cc = &self.cache
        cdef uint64_t h = word_hash(word, n, top_n)
        cdef uint64_t i
        cdef CacheEntry* e = cache_find(cc, h, word, n, top_n, &i)
        cdef Py_ssize_t k, j, nc
        cdef int32_t c, x
        cdef int32_t* order
        if e != NULL:
            return e
        if n > 256:                    # long words: the DAG without the GIL
            with nogil:
                self._word_dag(word, n, top_n, w)
        else:
            self._word_dag(word, n, top_n, w)
        nc = w.n_heads[0]
        if (<Py_ssize_t>(cc.n_entries + 1) * 2 > <Py_ssize_t>(cc.mask + 1)
                or cc.words_len + n > CACHE_MAX_SYMBOLS):
            memset(cc.entries, 0, (cc.mask + 1) * sizeof(CacheEntry))     # full: start again
            cc.n_entries = cc.words_len = cc.toks_len = cc.cands_len = 0
        e = cache_find(cc, h, word, n, top_n, &i)    # again: another thread may have added it
        if e != NULL:
            return e
        grow_array(<void**>&cc.words, &cc.words_cap, cc.words_len + n, sizeof(int32_t))
        grow_array(<void**>&cc.cands, &cc.cands_cap, cc.cands_len + nc, sizeof(CachedCand))
        k = 0
        for j in range(nc):
            k += w.pool[w.heads[j]].length
        grow_array(<void**>&cc.toks, &cc.toks_cap, cc.toks_len + k, sizeof(int32_t))
        # the candidates best first (insertion sort keeps heap order among equal keys)
        order = <int32_t*>malloc(max(nc, 1) * sizeof(int32_t))
        if order == NULL:
            raise MemoryError()
        for k in range(nc):
            c = w.heads[k]
            j = k
            while j > 0 and cand_less(w.pool[order[j - 1]].weight, w.pool[order[j - 1]].length,
                                      w.pool[c].weight, w.pool[c].length):
                order[j] = order[j - 1]
                j -= 1
            order[j] = c
        e = &cc.entries[i]
        e.hash = h
        e.word_off = cc.words_len
        e.word_len = <int32_t>n
        e.top_n = <int32_t>top_n
        e.cand_off = cc.cands_len
        e.n_cand = <int32_t>nc
        if n:
            memcpy(&cc.words[cc.words_len], word, n * sizeof(int32_t))
        cc.words_len += n
        for k in range(nc):
            c = order[k]
            cc.cands[cc.cands_len + k].weight = w.pool[c].weight
            cc.cands[cc.cands_len + k].length = w.pool[c].length
            cc.cands[cc.cands_len + k].tok_off = cc.toks_len
            x = c
            while x >= 0 and w.pool[x].token >= 0:
                cc.toks[cc.toks_len] = w.pool[x].token
                cc.toks_len += 1
                x = w.pool[x].tail
        cc.cands_len += nc
        cc.n_entries += 1
        free(order)
        return e

    def encode_best(self, int32_t[::1] seq, int64_t[::1] offsets):
        """(ids, weight) of the best encoding of parts seq[offsets[i]:offsets[i+1]] concatenated.

        One-symbol parts pass through with no weight (the reference's shortcut); a document that
        is a single part is weighted as its word.  Words come from the cache (_word_cands)."""
        cdef DagWork w = self._new_work()
        cdef Py_ssize_t n_parts = offsets.shape[0] - 1, p, s, n, n_out = 0, i
        cdef int32_t* out = <int32_t*>malloc(max(seq.shape[0], 1) * sizeof(int32_t))
        cdef double total = 0.0
        cdef const CacheEntry* e
        cdef const CachedCand* cand
        try:
            if out == NULL:
                raise MemoryError()
            for p in range(n_parts):
                if not 0 <= offsets[p] <= offsets[p + 1] <= seq.shape[0]:
                    raise ValueError("offsets must be non-decreasing offsets into seq")
            for p in range(n_parts):
                s = offsets[p]
                n = offsets[p + 1] - s
                if n == 1 and n_parts > 1:
                    out[n_out] = seq[s]
                    n_out += 1
                    continue
                e = self._word_cands(&w, &seq[s] if n > 0 else NULL, n, 1)
                cand = &self.cache.cands[e.cand_off]
                total += cand.weight
                memcpy(&out[n_out], &self.cache.toks[cand.tok_off], cand.length * sizeof(int32_t))
                n_out += cand.length
            ids = [out[i] for i in range(n_out)]
        finally:
            self._done_with(&w)
            free(out)
        return ids, total

    def encode_top(self, int32_t[::1] seq, Py_ssize_t top_n):
        """The word's best `top_n` encodings as [(ids, weight)], best first (stable on ties,
        like the reference's sorted(reverse=True) over its heap)."""
        cdef DagWork w = self._new_work()
        cdef Py_ssize_t n = seq.shape[0], k
        cdef list found = []
        cdef int32_t c
        try:
            with nogil:
                self._word_dag(&seq[0] if n > 0 else NULL, n, top_n, &w)
            for k in range(w.n_heads[0]):
                c = w.heads[k]
                found.append((w.pool[c].weight, -w.pool[c].length, k, self._cand_ids(&w, c)))
        finally:
            self._done_with(&w)
        found.sort(key=lambda item: (-item[0], -item[1], item[2]))
        return [(item[3], item[0]) for item in found]


    def encode_top_doc(self, int32_t[::1] seq, int64_t[::1] offsets, Py_ssize_t top_n):
        """The best `top_n` encodings of a document of several parts, as the reference combines
        them: from the last part back, each part's sorted candidates are merged with the sorted
        tails (two-list merge; on equal keys the next tail goes first).  One-symbol parts are
        prepended as they are.  Tails share their ends (a cons pool), so nothing is copied twice."""
        cdef DagWork w = self._new_work()
        cdef Py_ssize_t n_parts = offsets.shape[0] - 1, p, s, n, k, j, nc, nt, n_new, ci, ti
        cdef Py_ssize_t pool_len = 0, pool_cap = 1024
        cdef int32_t* node_tok = <int32_t*>malloc(pool_cap * sizeof(int32_t))   # tail chains
        cdef int32_t* node_next = <int32_t*>malloc(pool_cap * sizeof(int32_t))
        cdef int32_t* tail_head = <int32_t*>malloc(2 * top_n * sizeof(int32_t))  # current, next
        cdef double* tail_w = <double*>malloc(2 * top_n * sizeof(double))
        cdef int64_t* tail_len = <int64_t*>malloc(2 * top_n * sizeof(int64_t))
        cdef int32_t node
        cdef const CacheEntry* e
        cdef const CachedCand* cand
        cdef double wa, wb
        cdef int64_t la, lb
        cdef list found = []
        cdef list ids
        try:
            if (node_tok == NULL or node_next == NULL or tail_head == NULL or tail_w == NULL
                    or tail_len == NULL):
                raise MemoryError()
            for p in range(n_parts):
                if not 0 <= offsets[p] <= offsets[p + 1] <= seq.shape[0]:
                    raise ValueError("offsets must be non-decreasing offsets into seq")
            nt = 1
            tail_head[0] = -1
            tail_w[0] = 0.0
            tail_len[0] = 0
            p = n_parts - 1
            while p >= 0:
                s = offsets[p]
                n = offsets[p + 1] - s
                if n == 1:
                    for k in range(nt):
                        node = self._cons(&node_tok, &node_next, &pool_len, &pool_cap, seq[s], tail_head[k])
                        tail_head[k] = node
                        tail_len[k] += 1
                    p -= 1
                    continue
                e = self._word_cands(&w, &seq[s] if n > 0 else NULL, n, top_n)
                cand = &self.cache.cands[e.cand_off]      # best first
                nc = e.n_cand
                n_new = 0
                ci = 0
                ti = 0
                while ci < nc and ti < nt and n_new < top_n:
                    node = self._cons_tokens(&self.cache.toks[cand[ci].tok_off], cand[ci].length, &node_tok, &node_next, &pool_len, &pool_cap, tail_head[ti])
                    tail_head[top_n + n_new] = node
                    tail_w[top_n + n_new] = cand[ci].weight + tail_w[ti]
                    tail_len[top_n + n_new] = cand[ci].length + tail_len[ti]
                    n_new += 1
                    if n_new == top_n or (ci == nc - 1 and ti == nt - 1):
                        break
                    if ci == nc - 1:
                        ti += 1
                    elif ti == nt - 1:
                        ci += 1
                    else:
                        wa = tail_w[ti + 1] + cand[ci].weight
                        la = -tail_len[ti + 1] - cand[ci].length
                        wb = tail_w[ti] + cand[ci + 1].weight
                        lb = -tail_len[ti] - cand[ci + 1].length
                        if wa > wb or (wa == wb and la > lb):
                            ti += 1
                        else:
                            ci += 1
                for k in range(n_new):
                    tail_head[k] = tail_head[top_n + k]
                    tail_w[k] = tail_w[top_n + k]
                    tail_len[k] = tail_len[top_n + k]
                nt = n_new
                p -= 1
            for k in range(nt):
                ids = []
                node = tail_head[k]
                while node >= 0:
                    ids.append(node_tok[node])
                    node = node_next[node]
                found.append((ids, tail_w[k]))
        finally:
            self._done_with(&w)
            free(node_tok)
            free(node_next)
            free(tail_head)
            free(tail_w)
            free(tail_len)
        return found

    cdef int32_t _cons(self, int32_t** tok, int32_t** nxt, Py_ssize_t* length, Py_ssize_t* cap,
                       int32_t token, int32_t rest) except -2:
        """A new chain node `token` -> `rest` in the growable pool; returns its index (-1 is the
        empty chain, so -2 signals an error)."""
        cdef int32_t* grown
        if length[0] == cap[0]:
            cap[0] *= 2
            grown = <int32_t*>realloc(tok[0], cap[0] * sizeof(int32_t))
            if grown == NULL:
                raise MemoryError()
            tok[0] = grown
            grown = <int32_t*>realloc(nxt[0], cap[0] * sizeof(int32_t))
            if grown == NULL:
                raise MemoryError()
            nxt[0] = grown
        tok[0][length[0]] = token
        nxt[0][length[0]] = rest
        length[0] += 1
        return <int32_t>(length[0] - 1)

    cdef int32_t _cons_tokens(self, const int32_t* tokens, Py_ssize_t n, int32_t** tok, int32_t** nxt,
                              Py_ssize_t* length, Py_ssize_t* cap, int32_t rest) except -2:
        """The chain of tokens[0:n] followed by `rest` (-1: empty)."""
        cdef Py_ssize_t i = n - 1
        cdef int32_t node = rest
        while i >= 0:
            node = self._cons(tok, nxt, length, cap, tokens[i], node)
            i -= 1
        return node
