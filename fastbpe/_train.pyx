# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""BPE training kernels.

``PieceTrainer`` -- the merge loop over *unique* pieces with their counts (section 4 of
DESIGN.md): int64 pair counts in an open-addressing table, for each pair the list of
pieces where it occurs, a max-heap with lazy refresh, and per merge work only on the
pieces that contain the merged pair.

``SequenceTrainer`` -- minbpe's ``BasicTokenizer`` trains on one long sequence.  Like
Re-Pair, it keeps the sequence as a doubly linked list and, for each pair, a linked list
of its positions, so a merge touches only the positions of the merged pair.

Both are a ``MergeLoop``: one pair table (``Pairs``: the pairs by number, their counts, the
pairs a merge made), one heap of candidates, one step after each merge (queue the new pairs,
poll).  Counting pieces is in ``_count.pyx``.

Tie rules (which pair wins among equal counts):

* ``TIE_PAIR``  -- the smallest (left, right).  HF tokenizers, rustbpe and bpeasy do this.
* ``TIE_FIRST`` -- the pair whose first occurrence in the current text comes first,
  which is what minbpe's ``max(stats, key=stats.get)`` gives.  Over unique pieces
  numbered in order of first appearance, the first occurrence of a pair is the smallest
  (piece number, byte offset in that piece) among the pieces that still contain it.
  Counts only fall and first positions only move right as merges proceed (merging never
  makes two *old* tokens adjacent), so a heap entry's key is never worse than the truth
  and lazy refresh on pop stays exact for both rules.

All memory is owned by the trainer objects and freed in ``__dealloc__``.  The merge
loops run without the GIL; every ``CHECK_EVERY`` merges they take it briefly to poll for
signals (Ctrl-C) and report progress.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset
from cpython.exc cimport PyErr_CheckSignals
from fastbpe._hash cimport mix64, probe
from fastbpe._memory cimport xrealloc
from fastbpe._train_pairs cimport *

import numpy as np

TIE_PAIR = 0
TIE_FIRST = 1
cdef enum:
    _TIE_PAIR = 0
    _TIE_FIRST = 1
    CHECK_EVERY = 128


cdef object merge_output(Py_ssize_t num_merges):
    """The (pairs, counts) arrays a trainer's ``train`` fills."""
    if num_merges < 0 or num_merges >= 2**31 - 256:
        raise ValueError("num_merges out of range")
    return np.zeros((num_merges, 2), dtype=np.int32), np.zeros(num_merges, dtype=np.int64)


cdef tuple merged(pairs, counts, int64_t done, progress):
    """The first `done` merges of a trainer's output, after the last progress report."""
    if progress is not None:
        progress(done)
    return pairs[:done].copy(), counts[:done].copy()


cdef int poll(object progress, int64_t done) except -1:
    """With the GIL: raise KeyboardInterrupt (or whatever a signal handler raised), report."""
    if PyErr_CheckSignals() < 0:
        return -1
    if progress is not None:
        progress(done)
    return 0


cdef struct Output:
    int32_t* pairs      # merge i's (left, right) at 2i, 2i + 1
    int64_t* counts     # merge i's count at i


cdef Output output_of(pairs, counts):
    """Pointers into merge_output's arrays (the caller keeps them alive); NULL when empty."""
    cdef int32_t[:, ::1] pv = pairs
    cdef int64_t[::1] cv = counts
    cdef Output out
    out.pairs = &pv[0, 0] if pv.shape[0] else NULL
    out.counts = &cv[0] if cv.shape[0] else NULL
    return out


cdef class MergeLoop:
    """What both trainers share: the pair table, the heap of candidate merges, and the step
    after each merge.  A trainer says which of two equal counts wins (``tie_key``)."""
    cdef Pairs pairs
    cdef Heap heap
    cdef bint used

    def __dealloc__(self):
        pairs_free(&self.pairs)
        free(self.heap.items)

    cdef uint64_t tie_key(self, int32_t idx) noexcept nogil:
        return 0

    cdef int after_merge(self, int64_t min_count, int64_t done, object progress) except -1 nogil:
        """Queue the pairs the merge made that occur at least min_count times; every
        CHECK_EVERY merges (`done` so far) poll for signals and report progress."""
        cdef Py_ssize_t j
        cdef int32_t idx
        for j in range(self.pairs.new_list.size):
            idx = self.pairs.new_list.data[j]
            self.pairs.is_new[idx] = 0
            if self.pairs.count[idx] >= min_count:
                heap_push(&self.heap, self.pairs.count[idx], self.tie_key(idx), idx)
        self.pairs.new_list.size = 0
        if done % CHECK_EVERY == 0:
            with gil:
                poll(progress, done)
        return 0


# ---------------------------------------------------------------------------------------
# PieceTrainer: merges over unique pieces with counts
# ---------------------------------------------------------------------------------------

cdef class PieceTrainer(MergeLoop):
    """Train BPE merges over unique pieces.

    ``tokens`` holds the symbols of all pieces back to back, ``offsets`` (length
    n_pieces + 1) where each piece starts, ``counts`` how often each piece occurs.  Symbols
    are ``0..n_symbols - 1`` (the bytes 0..255 by default; HF's trainer rules number the
    characters of its alphabet instead, fastbpe/trainers.py), each of length 1, and merge i
    makes id ``n_symbols + i``.  For ``tie=TIE_FIRST`` the pieces must be in order of first
    appearance.  One use only: ``train`` consumes the state.
    """
    cdef int32_t* toks
    cdef int64_t* start
    cdef int32_t* plen
    cdef int64_t* pcount
    cdef int32_t n_pieces
    cdef int32_t n_base         # symbols 0..n_base - 1; merge i makes n_base + i
    # beside the pair table, by pair number (grown with it):
    cdef IntVec* plist          # pieces where the pair occurs (ascending; may hold stale ones)
    cdef int32_t* phead         # TIE_FIRST: entries before this in plist no longer hold the pair
    cdef int32_t plist_cap
    # tokens
    cdef int32_t* tlen          # byte length of every id
    cdef int tie


    def __init__(self, const int32_t[::1] tokens, const int64_t[::1] offsets,
                 const int64_t[::1] counts, int tie=TIE_PAIR, Py_ssize_t n_symbols=256):
        cdef Py_ssize_t n = counts.shape[0], i
        if offsets.shape[0] != n + 1:
            raise ValueError("offsets must have one more entry than counts")
        if n >= 2**31 - 1:
            raise ValueError("too many unique pieces")
        if offsets[0] != 0 or offsets[n] != tokens.shape[0]:
            raise ValueError("offsets do not match tokens")
        if tie != _TIE_PAIR and tie != _TIE_FIRST:
            raise ValueError("unknown tie rule")
        if not 1 <= n_symbols < 2**31 - 1:
            raise ValueError("n_symbols out of range")
        for i in range(n):
            if offsets[i + 1] < offsets[i] or offsets[i + 1] - offsets[i] >= 2**31:
                raise ValueError("offsets must be non-decreasing")
            if counts[i] < 0:
                raise ValueError("counts must be non-negative")
        for i in range(tokens.shape[0]):
            if tokens[i] < 0 or tokens[i] >= n_symbols:
                raise ValueError(f"tokens must be symbols 0..{n_symbols - 1}")
        self.tie = tie
        self.n_base = <int32_t>n_symbols
        self.n_pieces = <int32_t>n
        self.toks = <int32_t*>xrealloc(NULL, tokens.shape[0] * sizeof(int32_t))
        self.start = <int64_t*>xrealloc(NULL, (n + 1) * sizeof(int64_t))
        self.plen = <int32_t*>xrealloc(NULL, n * sizeof(int32_t))
        self.pcount = <int64_t*>xrealloc(NULL, n * sizeof(int64_t))
        if tokens.shape[0]:
            memcpy(self.toks, &tokens[0], tokens.shape[0] * sizeof(int32_t))
        memcpy(self.start, &offsets[0], (n + 1) * sizeof(int64_t))
        if n:
            memcpy(self.pcount, &counts[0], n * sizeof(int64_t))
        for i in range(n):
            self.plen[i] = <int32_t>(offsets[i + 1] - offsets[i])

    def __dealloc__(self):
        cdef int32_t i
        free(self.toks)
        free(self.start)
        free(self.plen)
        free(self.pcount)
        if self.plist != NULL:
            for i in range(self.pairs.n):
                intvec_free(&self.plist[i])
        free(self.plist)
        free(self.phead)
        free(self.tlen)

    # -- pair table -----------------------------------------------------------------------

    cdef int32_t new_pair(self, int32_t a, int32_t b) except -1 nogil:
        cdef int32_t idx = pairs_add(&self.pairs, a, b)
        if self.pairs.cap != self.plist_cap:
            self.phead = <int32_t*>xrealloc(self.phead, self.pairs.cap * sizeof(int32_t))
            self.plist = <IntVec*>xrealloc(self.plist, self.pairs.cap * sizeof(IntVec))
            self.plist_cap = self.pairs.cap
        self.phead[idx] = 0
        self.plist[idx].data = NULL
        self.plist[idx].size = 0
        self.plist[idx].cap = 0
        return idx

    cdef inline int add_pair(self, int32_t a, int32_t b, int64_t delta, int32_t piece,
                             bint track) except -1 nogil:
        """Add ``delta`` to the count of (a, b); on a gain, note that ``piece`` holds it."""
        cdef int32_t idx = pairmap_get(&self.pairs.map, pair_key(a, b))
        cdef IntVec* v
        if idx < 0:
            idx = self.new_pair(a, b)
        self.pairs.count[idx] += delta
        if delta > 0:
            v = &self.plist[idx]
            if v.size == 0 or v.data[v.size - 1] != piece:
                intvec_push(v, piece)
            if track and not self.pairs.is_new[idx]:   # (inline: keeps add_pair small enough to inline)
                self.pairs.is_new[idx] = 1
                intvec_push(&self.pairs.new_list, idx)
        return 0

    cdef uint64_t first_position(self, int32_t idx) noexcept nogil:
        """TIE_FIRST key of a pair: (piece << 32 | byte offset) of its first occurrence."""
        cdef IntVec* v = &self.plist[idx]
        cdef int32_t a = self.pairs.left[idx], b = self.pairs.right[idx]
        cdef int32_t h = self.phead[idx], p, i, n
        cdef int32_t* t
        cdef uint64_t off
        while h < v.size:
            p = v.data[h]
            t = self.toks + self.start[p]
            n = self.plen[p]
            off = 0
            for i in range(n - 1):
                if t[i] == a and t[i + 1] == b:
                    self.phead[idx] = h
                    return (<uint64_t>p << 32) | off
                off += <uint64_t>self.tlen[t[i]]
            h += 1
        self.phead[idx] = h
        return EMPTY_KEY

    cdef uint64_t tie_key(self, int32_t idx) noexcept nogil:
        if self.tie == _TIE_PAIR:
            return pair_key(self.pairs.left[idx], self.pairs.right[idx])
        return self.first_position(idx)

    # -- the merge loop -------------------------------------------------------------------

    cdef int count_initial_pairs(self) except -1 nogil:
        cdef int32_t p, i, n
        cdef int32_t* t
        cdef int64_t w
        for p in range(self.n_pieces):
            w = self.pcount[p]
            n = self.plen[p]
            if w <= 0 or n < 2:
                continue
            t = self.toks + self.start[p]
            for i in range(n - 1):
                self.add_pair(t[i], t[i + 1], w, p, False)
        return 0

    cdef int merge_pair(self, int32_t idx, int32_t z) except -1 nogil:
        """Replace (a, b) by z in every piece that holds it, updating pair counts."""
        cdef int32_t a = self.pairs.left[idx], b = self.pairs.right[idx]
        cdef IntVec pieces = self.plist[idx]   # not appended to below: z is new
        cdef int32_t k, p, i, o, n, x, y
        cdef int32_t* t
        cdef int64_t w
        for k in range(pieces.size):
            p = pieces.data[k]
            w = self.pcount[p]
            t = self.toks + self.start[p]
            n = self.plen[p]
            i = 0
            o = 0
            while i < n:
                if i + 1 < n and t[i] == a and t[i + 1] == b:
                    if o > 0:
                        x = t[o - 1]
                        self.add_pair(x, a, -w, p, True)
                        self.add_pair(x, z, w, p, True)
                    self.pairs.count[idx] -= w
                    if i + 2 < n:
                        y = t[i + 2]
                        self.add_pair(b, y, -w, p, True)
                        self.add_pair(z, y, w, p, True)
                    t[o] = z
                    o += 1
                    i += 2
                else:
                    t[o] = t[i]
                    o += 1
                    i += 1
            self.plen[p] = o
        # (a, b) is gone for good: merging never makes two old tokens adjacent again
        intvec_free(&self.plist[idx])
        self.pairs.count[idx] = 0
        return 0

    cdef int64_t run(self, int32_t num_merges, int64_t min_count, int32_t max_len,
                     int32_t* out_pairs, int64_t* out_counts, object progress) except -1 nogil:
        cdef int32_t done = 0, idx, z, j, a, b
        cdef int64_t cur
        cdef uint64_t key
        cdef HeapItem top
        self.tlen = <int32_t*>xrealloc(NULL, (<size_t>self.n_base + <size_t>num_merges) * sizeof(int32_t))
        for j in range(self.n_base):
            self.tlen[j] = 1
        pairmap_init(&self.pairs.map, 1024)
        self.count_initial_pairs()
        for j in range(self.pairs.n):
            if self.pairs.count[j] >= min_count:
                heap_push(&self.heap, self.pairs.count[j], self.tie_key(j), j)
        with gil:
            poll(progress, 0)
        while done < num_merges and self.heap.size > 0:
            top = heap_pop(&self.heap)
            idx = top.pair
            cur = self.pairs.count[idx]
            if cur != top.count:            # stale: counts only fall, so re-queue
                if cur >= min_count:
                    heap_push(&self.heap, cur, top.tie, idx)
                continue
            if cur < min_count:
                break                       # the best pair is too rare: done
            a = self.pairs.left[idx]
            b = self.pairs.right[idx]
            if max_len > 0 and self.tlen[a] + self.tlen[b] > max_len:
                continue                    # never mergeable; drop it
            if self.tie == _TIE_FIRST:
                key = self.first_position(idx)
                if key != top.tie:          # its first occurrence moved right
                    heap_push(&self.heap, cur, key, idx)
                    continue
            z = self.n_base + done
            out_pairs[2 * done] = a
            out_pairs[2 * done + 1] = b
            out_counts[done] = cur
            self.tlen[z] = self.tlen[a] + self.tlen[b]
            self.merge_pair(idx, z)
            done += 1
            self.after_merge(min_count, done, progress)
        return done

    def train(self, Py_ssize_t num_merges, int64_t min_frequency=0,
              Py_ssize_t max_token_length=0, progress=None):
        """Run up to ``num_merges`` merges.  Returns ``(pairs, counts)``: an int32 array of
        shape (k, 2) with the merged (left, right) ids in order (merge i makes id n_symbols + i)
        and an int64 array with the count of each pair when it was merged.  Stops early
        when no pair occurs at least ``max(min_frequency, 1)`` times.  ``max_token_length``
        > 0 forbids merges whose token would be longer (in bytes).  ``progress(done)`` is
        called now and then, with the GIL."""
        if self.used:
            raise RuntimeError("a PieceTrainer trains once")
        if num_merges >= 2**31 - self.n_base:
            raise ValueError("num_merges out of range: ids are 32-bit")
        pairs, counts = merge_output(num_merges)
        self.used = True
        cdef Output out = output_of(pairs, counts)
        cdef int64_t min_count = min_frequency if min_frequency > 1 else 1
        cdef int64_t done
        with nogil:
            done = self.run(<int32_t>num_merges, min_count, <int32_t>max_token_length,
                            out.pairs, out.counts, progress)
        return merged(pairs, counts, done, progress)


# ---------------------------------------------------------------------------------------
# SequenceTrainer: minbpe's BasicTokenizer on one long sequence (Re-Pair style)
# ---------------------------------------------------------------------------------------

cdef class SequenceTrainer(MergeLoop):
    """Train on one sequence of bytes with minbpe's rules: all adjacent pairs count
    (overlaps too), merges replace greedily left to right, ties go to the pair that
    occurs first.  Positions are byte offsets; ``nxt``/``prv`` link the live tokens and
    ``onxt``/``oprv`` link the positions of each pair in increasing order."""
    cdef Py_ssize_t n
    cdef int32_t* tok
    cdef int32_t* prv
    cdef int32_t* nxt
    cdef int32_t* oprv
    cdef int32_t* onxt
    cdef int32_t* opair
    # beside the pair table, by pair number (grown with it): the pair's first and last position
    cdef int32_t* head
    cdef int32_t* tail
    cdef int32_t ends_cap


    def __init__(self, const unsigned char[::1] data):
        cdef Py_ssize_t n = data.shape[0], i
        if n >= 2**31 - 1:
            raise ValueError("text too long for SequenceTrainer (2 GiB max)")
        self.n = n
        cdef size_t sz = (n if n else 1) * sizeof(int32_t)
        self.tok = <int32_t*>xrealloc(NULL, sz)
        self.prv = <int32_t*>xrealloc(NULL, sz)
        self.nxt = <int32_t*>xrealloc(NULL, sz)
        self.oprv = <int32_t*>xrealloc(NULL, sz)
        self.onxt = <int32_t*>xrealloc(NULL, sz)
        self.opair = <int32_t*>xrealloc(NULL, sz)
        for i in range(n):
            self.tok[i] = data[i]
            self.prv[i] = <int32_t>(i - 1)
            self.nxt[i] = <int32_t>(i + 1) if i + 1 < n else -1
            self.opair[i] = -1

    def __dealloc__(self):
        free(self.tok)
        free(self.prv)
        free(self.nxt)
        free(self.oprv)
        free(self.onxt)
        free(self.opair)
        free(self.head)
        free(self.tail)

    cdef uint64_t tie_key(self, int32_t idx) noexcept nogil:
        return <uint64_t>self.head[idx]     # the first occurrence wins

    cdef int32_t new_pair(self, int32_t a, int32_t b) except -1 nogil:
        cdef int32_t idx = pairs_add(&self.pairs, a, b)
        if self.pairs.cap != self.ends_cap:
            self.head = <int32_t*>xrealloc(self.head, self.pairs.cap * sizeof(int32_t))
            self.tail = <int32_t*>xrealloc(self.tail, self.pairs.cap * sizeof(int32_t))
            self.ends_cap = self.pairs.cap
        self.head[idx] = -1
        self.tail[idx] = -1
        return idx

    cdef int add_occ(self, int32_t i, bint track) except -1 nogil:
        """Position i now starts the pair (tok[i], tok[nxt[i]]): append it to that pair's
        list.  Positions are added in increasing order per pair, so lists stay sorted."""
        cdef int32_t j = self.nxt[i]
        cdef int32_t idx = pairmap_get(&self.pairs.map, pair_key(self.tok[i], self.tok[j]))
        if idx < 0:
            idx = self.new_pair(self.tok[i], self.tok[j])
        self.pairs.count[idx] += 1
        self.opair[i] = idx
        self.onxt[i] = -1
        self.oprv[i] = self.tail[idx]
        if self.tail[idx] >= 0:
            self.onxt[self.tail[idx]] = i
        else:
            self.head[idx] = i
        self.tail[idx] = i
        if track and not self.pairs.is_new[idx]:
            self.pairs.is_new[idx] = 1
            intvec_push(&self.pairs.new_list, idx)
        return 0

    cdef void remove_occ(self, int32_t i) noexcept nogil:
        cdef int32_t idx = self.opair[i]
        cdef int32_t p, q
        if idx < 0:
            return
        self.pairs.count[idx] -= 1
        p = self.oprv[i]
        q = self.onxt[i]
        if p >= 0:
            self.onxt[p] = q
        else:
            self.head[idx] = q
        if q >= 0:
            self.oprv[q] = p
        else:
            self.tail[idx] = p
        self.opair[i] = -1

    cdef int merge_pair(self, int32_t idx, int32_t z) except -1 nogil:
        cdef int32_t i, j, l, r
        while self.head[idx] >= 0:          # leftmost remaining occurrence first
            i = self.head[idx]
            j = self.nxt[i]
            l = self.prv[i]
            r = self.nxt[j]
            self.remove_occ(i)
            if l >= 0:
                self.remove_occ(l)
            self.remove_occ(j)              # (b, tok[r]); may be an overlapping (a, b)
            self.tok[i] = z
            self.nxt[i] = r
            if r >= 0:
                self.prv[r] = i
            if l >= 0:
                self.add_occ(l, True)
            if r >= 0:
                self.add_occ(i, True)
        return 0

    cdef int64_t run(self, int32_t num_merges, int32_t* out_pairs, int64_t* out_counts,
                     object progress) except -1 nogil:
        cdef int32_t done = 0, idx, j
        cdef int64_t cur
        cdef HeapItem top
        cdef Py_ssize_t i
        pairmap_init(&self.pairs.map, 1024)
        for i in range(self.n - 1):
            self.add_occ(<int32_t>i, False)
        for j in range(self.pairs.n):
            heap_push(&self.heap, self.pairs.count[j], <uint64_t>self.head[j], j)
        with gil:
            poll(progress, 0)
        while done < num_merges and self.heap.size > 0:
            top = heap_pop(&self.heap)
            idx = top.pair
            cur = self.pairs.count[idx]
            if cur <= 0:
                continue
            if cur != top.count or <uint64_t>self.head[idx] != top.tie:
                heap_push(&self.heap, cur, <uint64_t>self.head[idx], idx)
                continue
            out_pairs[2 * done] = self.pairs.left[idx]
            out_pairs[2 * done + 1] = self.pairs.right[idx]
            out_counts[done] = cur
            self.merge_pair(idx, 256 + done)
            done += 1
            self.after_merge(1, done, progress)
        return done

    def train(self, Py_ssize_t num_merges, progress=None):
        """Like ``PieceTrainer.train`` (no frequency or length limits)."""
        if self.used:
            raise RuntimeError("a SequenceTrainer trains once")
        pairs, counts = merge_output(num_merges)
        self.used = True
        cdef Output out = output_of(pairs, counts)
        cdef int64_t done
        with nogil:
            done = self.run(<int32_t>num_merges, out.pairs, out.counts, progress)
        return merged(pairs, counts, done, progress)
