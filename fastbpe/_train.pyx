# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""BPE training kernels.

``PieceTrainer`` -- the merge loop over *unique* pieces with their counts (section 4 of
DESIGN.md): int64 pair counts in an open-addressing table, for each pair the list of
pieces where it occurs, a max-heap with lazy refresh, and per merge work only on the
pieces that contain the merged pair.

``SequenceTrainer`` -- minbpe's ``BasicTokenizer`` trains on one long sequence.  Like
Re-Pair, it keeps the sequence as a doubly linked list and, for each pair, a linked list
of its positions, so a merge touches only the positions of the merged pair.

``PieceCounter`` -- counts unique pieces (UTF-8 byte strings) in a hash table over one
arena of bytes; counters merge by addition.

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
from cpython.pythread cimport (NOWAIT_LOCK, WAIT_LOCK, PyThread_acquire_lock,
                               PyThread_allocate_lock, PyThread_free_lock,
                               PyThread_release_lock, PyThread_type_lock)
from fastbpe._hash cimport hash_bytes, mix64
from fastbpe._pretokenize cimport scan_pieces

import numpy as np

cdef extern from *:
    """
    #define FASTBPE_EMPTY_KEY 0xFFFFFFFFFFFFFFFFULL
    """
    uint64_t EMPTY_KEY "FASTBPE_EMPTY_KEY"

TIE_PAIR = 0
TIE_FIRST = 1
cdef enum:
    _TIE_PAIR = 0
    _TIE_FIRST = 1
    CHECK_EVERY = 128


# ---------------------------------------------------------------------------------------
# small C helpers: allocation, pair keys, hash map, heap, int vectors
# ---------------------------------------------------------------------------------------

cdef void* xrealloc(void* p, size_t nbytes) except NULL nogil:
    """realloc that raises MemoryError instead of returning NULL."""
    cdef void* q = realloc(p, nbytes if nbytes > 0 else 1)
    if q == NULL:
        with gil:
            raise MemoryError()
    return q


cdef inline uint64_t pair_key(int32_t a, int32_t b) noexcept nogil:
    return (<uint64_t><uint32_t>a << 32) | <uint32_t>b


cdef int pairmap_init(PairMap* m, size_t expected) except -1 nogil:
    cdef size_t cap = 16
    while cap < 2 * expected:
        cap <<= 1
    m.keys = <uint64_t*>xrealloc(NULL, cap * sizeof(uint64_t))
    m.vals = <int32_t*>xrealloc(NULL, cap * sizeof(int32_t))
    memset(m.keys, 0xFF, cap * sizeof(uint64_t))
    m.mask = cap - 1
    m.size = 0
    return 0


cdef void pairmap_free(PairMap* m) noexcept nogil:
    free(m.keys)
    free(m.vals)
    m.keys = NULL
    m.vals = NULL


cdef inline int32_t pairmap_get(const PairMap* m, uint64_t key) noexcept nogil:
    """The value for ``key``, or -1."""
    cdef size_t i = mix64(key) & m.mask
    cdef uint64_t k
    while True:
        k = m.keys[i]
        if k == key:
            return m.vals[i]
        if k == EMPTY_KEY:
            return -1
        i = (i + 1) & m.mask


cdef int pairmap_put_new(PairMap* m, uint64_t key, int32_t val) except -1 nogil:
    """Insert a key known to be absent; doubles the table at load 1/2."""
    cdef size_t i, j, cap
    cdef uint64_t* keys
    cdef int32_t* vals
    if 2 * (m.size + 1) > m.mask + 1:
        cap = 2 * (m.mask + 1)
        keys = <uint64_t*>malloc(cap * sizeof(uint64_t))
        vals = <int32_t*>malloc(cap * sizeof(int32_t))
        if keys == NULL or vals == NULL:
            free(keys)
            free(vals)
            with gil:
                raise MemoryError()
        memset(keys, 0xFF, cap * sizeof(uint64_t))
        for j in range(m.mask + 1):
            if m.keys[j] != EMPTY_KEY:
                i = mix64(m.keys[j]) & (cap - 1)
                while keys[i] != EMPTY_KEY:
                    i = (i + 1) & (cap - 1)
                keys[i] = m.keys[j]
                vals[i] = m.vals[j]
        free(m.keys)
        free(m.vals)
        m.keys = keys
        m.vals = vals
        m.mask = cap - 1
    i = mix64(key) & m.mask
    while m.keys[i] != EMPTY_KEY:
        i = (i + 1) & m.mask
    m.keys[i] = key
    m.vals[i] = val
    m.size += 1
    return 0


cdef inline bint heap_above(const HeapItem* x, const HeapItem* y) noexcept nogil:
    return x.count > y.count or (x.count == y.count and x.tie < y.tie)


cdef int heap_push(Heap* h, int64_t count, uint64_t tie, int32_t pair) except -1 nogil:
    cdef size_t i, parent
    cdef HeapItem item
    if h.size == h.cap:
        h.cap = 2 * h.cap if h.cap else 1024
        h.items = <HeapItem*>xrealloc(h.items, h.cap * sizeof(HeapItem))
    item.count = count
    item.tie = tie
    item.pair = pair
    i = h.size
    h.size += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not heap_above(&item, &h.items[parent]):
            break
        h.items[i] = h.items[parent]
        i = parent
    h.items[i] = item
    return 0


cdef HeapItem heap_pop(Heap* h) noexcept nogil:
    """Remove and return the top item; the heap must not be empty."""
    cdef HeapItem top = h.items[0]
    cdef HeapItem last
    cdef size_t i = 0, child, n
    h.size -= 1
    n = h.size
    if n > 0:
        last = h.items[n]
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and heap_above(&h.items[child + 1], &h.items[child]):
                child += 1
            if not heap_above(&h.items[child], &last):
                break
            h.items[i] = h.items[child]
            i = child
        h.items[i] = last
    return top


cdef inline int intvec_push(IntVec* v, int32_t x) except -1 nogil:
    if v.size == v.cap:
        v.cap = 2 * v.cap if v.cap else 4
        v.data = <int32_t*>xrealloc(v.data, v.cap * sizeof(int32_t))
    v.data[v.size] = x
    v.size += 1
    return 0


cdef void intvec_free(IntVec* v) noexcept nogil:
    free(v.data)
    v.data = NULL
    v.size = 0
    v.cap = 0


cdef int poll(object progress, int64_t done) except -1:
    """With the GIL: raise KeyboardInterrupt (or whatever a signal handler raised), report."""
    if PyErr_CheckSignals() < 0:
        return -1
    if progress is not None:
        progress(done)
    return 0


# ---------------------------------------------------------------------------------------
# PieceTrainer: merges over unique pieces with counts
# ---------------------------------------------------------------------------------------

cdef class PieceTrainer:
    """Train BPE merges over unique pieces.

    ``tokens`` holds the bytes (0..255) of all pieces back to back, ``offsets`` (length
    n_pieces + 1) where each piece starts, ``counts`` how often each piece occurs.  For
    ``tie=TIE_FIRST`` the pieces must be in order of first appearance.  One use only:
    ``train`` consumes the state.
    """
    cdef int32_t* toks
    cdef int64_t* start
    cdef int32_t* plen
    cdef int64_t* pcount
    cdef int32_t n_pieces
    # pairs, indexed by pair number
    cdef PairMap pmap
    cdef int32_t n_pairs
    cdef int32_t pairs_cap
    cdef int32_t* pa
    cdef int32_t* pb
    cdef int64_t* pcnt
    cdef IntVec* plist          # pieces where the pair occurs (ascending; may hold stale ones)
    cdef int32_t* phead         # TIE_FIRST: entries before this in plist no longer hold the pair
    cdef uint8_t* pnew          # marks pairs created by the current merge
    cdef IntVec new_pairs
    # tokens
    cdef int32_t* tlen          # byte length of every id
    cdef Heap heap
    cdef int tie
    cdef bint used

    def __cinit__(self):
        self.toks = NULL
        self.start = NULL
        self.plen = NULL
        self.pcount = NULL
        self.pmap.keys = NULL
        self.pmap.vals = NULL
        self.pa = NULL
        self.pb = NULL
        self.pcnt = NULL
        self.plist = NULL
        self.phead = NULL
        self.pnew = NULL
        self.new_pairs.data = NULL
        self.tlen = NULL
        self.heap.items = NULL

    def __init__(self, const int32_t[::1] tokens, const int64_t[::1] offsets,
                 const int64_t[::1] counts, int tie=TIE_PAIR):
        cdef Py_ssize_t n = counts.shape[0], i
        if offsets.shape[0] != n + 1:
            raise ValueError("offsets must have one more entry than counts")
        if n >= 2**31 - 1:
            raise ValueError("too many unique pieces")
        if offsets[0] != 0 or offsets[n] != tokens.shape[0]:
            raise ValueError("offsets do not match tokens")
        if tie != _TIE_PAIR and tie != _TIE_FIRST:
            raise ValueError("unknown tie rule")
        for i in range(n):
            if offsets[i + 1] < offsets[i] or offsets[i + 1] - offsets[i] >= 2**31:
                raise ValueError("offsets must be non-decreasing")
            if counts[i] < 0:
                raise ValueError("counts must be non-negative")
        for i in range(tokens.shape[0]):
            if tokens[i] < 0 or tokens[i] > 255:
                raise ValueError("tokens must be bytes (0..255)")
        self.tie = tie
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
        pairmap_free(&self.pmap)
        if self.plist != NULL:
            for i in range(self.n_pairs):
                intvec_free(&self.plist[i])
        free(self.plist)
        free(self.pa)
        free(self.pb)
        free(self.pcnt)
        free(self.phead)
        free(self.pnew)
        intvec_free(&self.new_pairs)
        free(self.tlen)
        free(self.heap.items)

    # -- pair table -----------------------------------------------------------------------

    cdef int32_t new_pair(self, int32_t a, int32_t b) except -1 nogil:
        cdef int32_t idx = self.n_pairs
        cdef int32_t cap
        if idx == self.pairs_cap:
            cap = 2 * self.pairs_cap if self.pairs_cap else 4096
            self.pa = <int32_t*>xrealloc(self.pa, cap * sizeof(int32_t))
            self.pb = <int32_t*>xrealloc(self.pb, cap * sizeof(int32_t))
            self.pcnt = <int64_t*>xrealloc(self.pcnt, cap * sizeof(int64_t))
            self.phead = <int32_t*>xrealloc(self.phead, cap * sizeof(int32_t))
            self.pnew = <uint8_t*>xrealloc(self.pnew, cap * sizeof(uint8_t))
            self.plist = <IntVec*>xrealloc(self.plist, cap * sizeof(IntVec))
            self.pairs_cap = cap
        pairmap_put_new(&self.pmap, pair_key(a, b), idx)
        self.pa[idx] = a
        self.pb[idx] = b
        self.pcnt[idx] = 0
        self.phead[idx] = 0
        self.pnew[idx] = 0
        self.plist[idx].data = NULL
        self.plist[idx].size = 0
        self.plist[idx].cap = 0
        self.n_pairs = idx + 1
        return idx

    cdef inline int add_pair(self, int32_t a, int32_t b, int64_t delta, int32_t piece,
                             bint track) except -1 nogil:
        """Add ``delta`` to the count of (a, b); on a gain, note that ``piece`` holds it."""
        cdef int32_t idx = pairmap_get(&self.pmap, pair_key(a, b))
        cdef IntVec* v
        if idx < 0:
            idx = self.new_pair(a, b)
        self.pcnt[idx] += delta
        if delta > 0:
            v = &self.plist[idx]
            if v.size == 0 or v.data[v.size - 1] != piece:
                intvec_push(v, piece)
            if track and not self.pnew[idx]:
                self.pnew[idx] = 1
                intvec_push(&self.new_pairs, idx)
        return 0

    cdef uint64_t first_position(self, int32_t idx) noexcept nogil:
        """TIE_FIRST key of a pair: (piece << 32 | byte offset) of its first occurrence."""
        cdef IntVec* v = &self.plist[idx]
        cdef int32_t a = self.pa[idx], b = self.pb[idx]
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

    cdef inline uint64_t tie_key(self, int32_t idx) noexcept nogil:
        if self.tie == _TIE_PAIR:
            return pair_key(self.pa[idx], self.pb[idx])
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
        cdef int32_t a = self.pa[idx], b = self.pb[idx]
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
                    self.pcnt[idx] -= w
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
        self.pcnt[idx] = 0
        return 0

    cdef int64_t run(self, int32_t num_merges, int64_t min_count, int32_t max_len,
                     int32_t* out_pairs, int64_t* out_counts, object progress) except -1 nogil:
        cdef int32_t done = 0, idx, z, j, a, b
        cdef int64_t cur
        cdef uint64_t key
        cdef HeapItem top
        self.tlen = <int32_t*>xrealloc(NULL, (256 + <size_t>num_merges) * sizeof(int32_t))
        for j in range(256):
            self.tlen[j] = 1
        pairmap_init(&self.pmap, 1024)
        self.count_initial_pairs()
        for j in range(self.n_pairs):
            if self.pcnt[j] >= min_count:
                heap_push(&self.heap, self.pcnt[j], self.tie_key(j), j)
        with gil:
            poll(progress, 0)
        while done < num_merges and self.heap.size > 0:
            top = heap_pop(&self.heap)
            idx = top.pair
            cur = self.pcnt[idx]
            if cur != top.count:            # stale: counts only fall, so re-queue
                if cur >= min_count:
                    heap_push(&self.heap, cur, top.tie, idx)
                continue
            if cur < min_count:
                break                       # the best pair is too rare: done
            a = self.pa[idx]
            b = self.pb[idx]
            if max_len > 0 and self.tlen[a] + self.tlen[b] > max_len:
                continue                    # never mergeable; drop it
            if self.tie == _TIE_FIRST:
                key = self.first_position(idx)
                if key != top.tie:          # its first occurrence moved right
                    heap_push(&self.heap, cur, key, idx)
                    continue
            z = 256 + done
            out_pairs[2 * done] = a
            out_pairs[2 * done + 1] = b
            out_counts[done] = cur
            self.tlen[z] = self.tlen[a] + self.tlen[b]
            self.merge_pair(idx, z)
            for j in range(self.new_pairs.size):
                idx = self.new_pairs.data[j]
                self.pnew[idx] = 0
                if self.pcnt[idx] >= min_count:
                    heap_push(&self.heap, self.pcnt[idx], self.tie_key(idx), idx)
            self.new_pairs.size = 0
            done += 1
            if done % CHECK_EVERY == 0:
                with gil:
                    poll(progress, done)
        return done

    def train(self, Py_ssize_t num_merges, int64_t min_frequency=0,
              Py_ssize_t max_token_length=0, progress=None):
        """Run up to ``num_merges`` merges.  Returns ``(pairs, counts)``: an int32 array of
        shape (k, 2) with the merged (left, right) ids in order (merge i makes id 256 + i)
        and an int64 array with the count of each pair when it was merged.  Stops early
        when no pair occurs at least ``max(min_frequency, 1)`` times.  ``max_token_length``
        > 0 forbids merges whose token would be longer (in bytes).  ``progress(done)`` is
        called now and then, with the GIL."""
        if self.used:
            raise RuntimeError("a PieceTrainer trains once")
        if num_merges < 0 or num_merges >= 2**31 - 256:
            raise ValueError("num_merges out of range")
        self.used = True
        pairs = np.zeros((num_merges, 2), dtype=np.int32)
        counts = np.zeros(num_merges, dtype=np.int64)
        cdef int32_t[:, ::1] pv = pairs
        cdef int64_t[::1] cv = counts
        cdef int32_t* pp = &pv[0, 0] if num_merges else NULL
        cdef int64_t* cp = &cv[0] if num_merges else NULL
        cdef int64_t min_count = min_frequency if min_frequency > 1 else 1
        cdef int64_t done
        with nogil:
            done = self.run(<int32_t>num_merges, min_count, <int32_t>max_token_length,
                            pp, cp, progress)
        if progress is not None:
            progress(done)
        return pairs[:done].copy(), counts[:done].copy()


# ---------------------------------------------------------------------------------------
# SequenceTrainer: minbpe's BasicTokenizer on one long sequence (Re-Pair style)
# ---------------------------------------------------------------------------------------

cdef class SequenceTrainer:
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
    cdef PairMap pmap
    cdef int32_t n_pairs
    cdef int32_t pairs_cap
    cdef int32_t* pa
    cdef int32_t* pb
    cdef int64_t* pcnt
    cdef int32_t* head
    cdef int32_t* tail
    cdef uint8_t* pnew
    cdef IntVec new_pairs
    cdef Heap heap
    cdef bint used

    def __cinit__(self):
        self.tok = NULL
        self.prv = NULL
        self.nxt = NULL
        self.oprv = NULL
        self.onxt = NULL
        self.opair = NULL
        self.pmap.keys = NULL
        self.pmap.vals = NULL
        self.pa = NULL
        self.pb = NULL
        self.pcnt = NULL
        self.head = NULL
        self.tail = NULL
        self.pnew = NULL
        self.new_pairs.data = NULL
        self.heap.items = NULL

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
        pairmap_free(&self.pmap)
        free(self.pa)
        free(self.pb)
        free(self.pcnt)
        free(self.head)
        free(self.tail)
        free(self.pnew)
        intvec_free(&self.new_pairs)
        free(self.heap.items)

    cdef int32_t new_pair(self, int32_t a, int32_t b) except -1 nogil:
        cdef int32_t idx = self.n_pairs
        cdef int32_t cap
        if idx == self.pairs_cap:
            cap = 2 * self.pairs_cap if self.pairs_cap else 4096
            self.pa = <int32_t*>xrealloc(self.pa, cap * sizeof(int32_t))
            self.pb = <int32_t*>xrealloc(self.pb, cap * sizeof(int32_t))
            self.pcnt = <int64_t*>xrealloc(self.pcnt, cap * sizeof(int64_t))
            self.head = <int32_t*>xrealloc(self.head, cap * sizeof(int32_t))
            self.tail = <int32_t*>xrealloc(self.tail, cap * sizeof(int32_t))
            self.pnew = <uint8_t*>xrealloc(self.pnew, cap * sizeof(uint8_t))
            self.pairs_cap = cap
        pairmap_put_new(&self.pmap, pair_key(a, b), idx)
        self.pa[idx] = a
        self.pb[idx] = b
        self.pcnt[idx] = 0
        self.head[idx] = -1
        self.tail[idx] = -1
        self.pnew[idx] = 0
        self.n_pairs = idx + 1
        return idx

    cdef int add_occ(self, int32_t i, bint track) except -1 nogil:
        """Position i now starts the pair (tok[i], tok[nxt[i]]): append it to that pair's
        list.  Positions are added in increasing order per pair, so lists stay sorted."""
        cdef int32_t j = self.nxt[i]
        cdef int32_t idx = pairmap_get(&self.pmap, pair_key(self.tok[i], self.tok[j]))
        if idx < 0:
            idx = self.new_pair(self.tok[i], self.tok[j])
        self.pcnt[idx] += 1
        self.opair[i] = idx
        self.onxt[i] = -1
        self.oprv[i] = self.tail[idx]
        if self.tail[idx] >= 0:
            self.onxt[self.tail[idx]] = i
        else:
            self.head[idx] = i
        self.tail[idx] = i
        if track and not self.pnew[idx]:
            self.pnew[idx] = 1
            intvec_push(&self.new_pairs, idx)
        return 0

    cdef void remove_occ(self, int32_t i) noexcept nogil:
        cdef int32_t idx = self.opair[i]
        cdef int32_t p, q
        if idx < 0:
            return
        self.pcnt[idx] -= 1
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
        pairmap_init(&self.pmap, 1024)
        for i in range(self.n - 1):
            self.add_occ(<int32_t>i, False)
        for j in range(self.n_pairs):
            heap_push(&self.heap, self.pcnt[j], <uint64_t>self.head[j], j)
        with gil:
            poll(progress, 0)
        while done < num_merges and self.heap.size > 0:
            top = heap_pop(&self.heap)
            idx = top.pair
            cur = self.pcnt[idx]
            if cur <= 0:
                continue
            if cur != top.count or <uint64_t>self.head[idx] != top.tie:
                heap_push(&self.heap, cur, <uint64_t>self.head[idx], idx)
                continue
            out_pairs[2 * done] = self.pa[idx]
            out_pairs[2 * done + 1] = self.pb[idx]
            out_counts[done] = cur
            self.merge_pair(idx, 256 + done)
            for j in range(self.new_pairs.size):
                idx = self.new_pairs.data[j]
                self.pnew[idx] = 0
                if self.pcnt[idx] > 0:
                    heap_push(&self.heap, self.pcnt[idx], <uint64_t>self.head[idx], idx)
            self.new_pairs.size = 0
            done += 1
            if done % CHECK_EVERY == 0:
                with gil:
                    poll(progress, done)
        return done

    def train(self, Py_ssize_t num_merges, progress=None):
        """Like ``PieceTrainer.train`` (no frequency or length limits)."""
        if self.used:
            raise RuntimeError("a SequenceTrainer trains once")
        if num_merges < 0 or num_merges >= 2**31 - 256:
            raise ValueError("num_merges out of range")
        self.used = True
        pairs = np.zeros((num_merges, 2), dtype=np.int32)
        counts = np.zeros(num_merges, dtype=np.int64)
        cdef int32_t[:, ::1] pv = pairs
        cdef int64_t[::1] cv = counts
        cdef int32_t* pp = &pv[0, 0] if num_merges else NULL
        cdef int64_t* cp = &cv[0] if num_merges else NULL
        cdef int64_t done
        with nogil:
            done = self.run(<int32_t>num_merges, pp, cp, progress)
        if progress is not None:
            progress(done)
        return pairs[:done].copy(), counts[:done].copy()


# ---------------------------------------------------------------------------------------
# PieceCounter: unique pieces (UTF-8 byte strings) with their counts
# ---------------------------------------------------------------------------------------

from cpython.unicode cimport PyUnicode_AsUTF8AndSize



cdef class PieceCounter:
    """Count pieces: a hash table over byte slices with the pieces' bytes in one arena.

    Memory grows with the number of *unique* pieces.  Entries keep the order in which
    pieces were first seen (minbpe's tie rule needs it).  Counters merge by addition, so
    counting can run on shards (threads, processes, other machines) and be combined.

    One counter may be shared by threads: a lock serialises the methods (counting
    releases the GIL, and a table growing under another thread's feet would crash).
    For parallel speed give each thread its own counter and ``update`` one with the rest.
    """
    cdef PieceEntry* entries
    cdef Py_ssize_t n_entries
    cdef Py_ssize_t entries_cap
    cdef int64_t* slots          # entry index + 1; 0 = free
    cdef size_t mask
    cdef unsigned char* arena
    cdef int64_t arena_size
    cdef int64_t arena_cap
    cdef int64_t total           # sum of counts
    cdef PyThread_type_lock mutex  # held by whatever reads or changes the tables

    def __cinit__(self):
        self.entries = NULL
        self.slots = NULL
        self.arena = NULL
        self.mutex = PyThread_allocate_lock()
        if self.mutex == NULL:
            raise MemoryError()

    def __init__(self):
        self.mask = 1023
        self.slots = <int64_t*>xrealloc(NULL, (self.mask + 1) * sizeof(int64_t))
        memset(self.slots, 0, (self.mask + 1) * sizeof(int64_t))

    def __dealloc__(self):
        free(self.entries)
        free(self.slots)
        free(self.arena)
        if self.mutex != NULL:
            PyThread_free_lock(self.mutex)

    cdef int lock(self) except -1:
        """Take the counter's lock; waits without the GIL, so the holder can finish."""
        if not PyThread_acquire_lock(self.mutex, NOWAIT_LOCK):
            with nogil:
                PyThread_acquire_lock(self.mutex, WAIT_LOCK)
        return 0

    cdef inline void unlock(self) noexcept nogil:
        PyThread_release_lock(self.mutex)

    def __len__(self):
        return self.n_entries

    @property
    def total(self):
        """Sum of all counts (the number of pieces seen)."""
        return self.total

    @property
    def nbytes(self):
        """Bytes held by the pieces' text (the arena)."""
        return self.arena_size

    cdef int grow_slots(self) except -1 nogil:
        cdef size_t cap = 2 * (self.mask + 1), i
        cdef Py_ssize_t e
        cdef int64_t* slots = <int64_t*>malloc(cap * sizeof(int64_t))
        if slots == NULL:
            with gil:
                raise MemoryError()
        memset(slots, 0, cap * sizeof(int64_t))
        for e in range(self.n_entries):
            i = <size_t>self.entries[e].hash & (cap - 1)
            while slots[i] != 0:
                i = (i + 1) & (cap - 1)
            slots[i] = e + 1
        free(self.slots)
        self.slots = slots
        self.mask = cap - 1
        return 0

    cdef int add(self, const unsigned char* s, Py_ssize_t n, int64_t count) except -1 nogil:
        """Add ``count`` occurrences of the piece s[0:n]."""
        cdef uint64_t h = hash_bytes(s, n)
        cdef size_t i = <size_t>h & self.mask
        cdef int64_t e
        cdef PieceEntry* ent
        while True:
            e = self.slots[i]
            if e == 0:
                break
            ent = &self.entries[e - 1]
            if ent.hash == h and ent.length == n and (
                    n == 0 or memcmp(self.arena + ent.offset, s, n) == 0):
                ent.count += count
                self.total += count
                return 0
            i = (i + 1) & self.mask
        # a new piece
        if self.n_entries == self.entries_cap:
            self.entries_cap = 2 * self.entries_cap if self.entries_cap else 1024
            self.entries = <PieceEntry*>xrealloc(self.entries,
                                                 self.entries_cap * sizeof(PieceEntry))
        while self.arena_size + n > self.arena_cap:
            self.arena_cap = 2 * self.arena_cap if self.arena_cap else 65536
            self.arena = <unsigned char*>xrealloc(self.arena, <size_t>self.arena_cap)
        if n:
            memcpy(self.arena + self.arena_size, s, n)
        ent = &self.entries[self.n_entries]
        ent.hash = h
        ent.count = count
        ent.offset = self.arena_size
        ent.length = n
        self.arena_size += n
        self.n_entries += 1
        self.total += count
        self.slots[i] = self.n_entries
        if 2 * self.n_entries > <Py_ssize_t>self.mask:
            self.grow_slots()
        return 0

    def add_pieces(self, list pieces):
        """Count every str in ``pieces`` (e.g. the output of ``regex.findall``) by its
        UTF-8 bytes.  Stops at a piece that cannot be encoded (a lone surrogate) and
        returns its index; returns len(pieces) when all were counted."""
        cdef object p
        cdef const char* s
        cdef Py_ssize_t n, i = 0
        self.lock()
        try:
            for p in pieces:
                try:
                    s = PyUnicode_AsUTF8AndSize(p, &n)
                except UnicodeEncodeError:
                    return i
                self.add(<const unsigned char*>s, n, 1)
                i += 1
            return i
        finally:
            self.unlock()

    def add_bytes(self, const unsigned char[::1] piece, int64_t count=1):
        """Add ``count`` occurrences of one piece given as bytes."""
        if count < 0:
            raise ValueError("counts must be non-negative")
        self.lock()
        try:
            self.add(&piece[0] if piece.shape[0] else <const unsigned char*>"", piece.shape[0], count)
        finally:
            self.unlock()

    def update(self, PieceCounter other):
        """Add another counter's counts to this one (counts merge by addition)."""
        cdef Py_ssize_t e, n
        cdef PieceEntry* ent
        if other is self:  # doubling: add a snapshot, the table grows while adding
            other = PieceCounter()
            other.update(self)
        # two locks in a fixed order, so a.update(b) and b.update(a) cannot deadlock
        first, second = (self, other) if id(self) < id(other) else (other, self)
        (<PieceCounter>first).lock()
        try:
            (<PieceCounter>second).lock()
            try:
                for e in range(other.n_entries):
                    ent = &other.entries[e]
                    self.add(other.arena + ent.offset, ent.length, ent.count)
            finally:
                (<PieceCounter>second).unlock()
        finally:
            (<PieceCounter>first).unlock()

    def items(self):
        """An iterator of (piece bytes, count) in order of first appearance (a snapshot)."""
        cdef Py_ssize_t e
        self.lock()
        try:
            return iter([(self.arena[self.entries[e].offset:
                                     self.entries[e].offset + self.entries[e].length],
                          self.entries[e].count) for e in range(self.n_entries)])
        finally:
            self.unlock()

    def to_dict(self):
        return dict(self.items())

    def __reduce__(self):
        # pickles and deep-copies by value: its export(), read back by add_exported
        return (_counter_from_export, self.export())

    def export(self):
        """(arena bytes, lengths int64 array, counts int64 array), in order of first
        appearance: a compact picklable form for ``add_exported`` (e.g. across processes)."""
        self.lock()
        try:
            return self._export()
        finally:
            self.unlock()

    cdef _export(self):
        lengths = np.empty(self.n_entries, dtype=np.int64)
        counts = np.empty(self.n_entries, dtype=np.int64)
        cdef int64_t[::1] lv = lengths
        cdef int64_t[::1] cv = counts
        cdef Py_ssize_t e
        for e in range(self.n_entries):
            lv[e] = self.entries[e].length
            cv[e] = self.entries[e].count
        return (self.arena[:self.arena_size] if self.arena_size else b""), lengths, counts

    def add_exported(self, const unsigned char[::1] arena, const int64_t[::1] lengths,
                     const int64_t[::1] counts):
        """Add counts in the form ``export`` returns."""
        self.lock()
        try:
            self._add_exported(arena, lengths, counts)
        finally:
            self.unlock()

    cdef int _add_exported(self, const unsigned char[::1] arena, const int64_t[::1] lengths,
                           const int64_t[::1] counts) except -1:
        cdef Py_ssize_t e, n = lengths.shape[0]
        cdef int64_t off = 0
        if counts.shape[0] != n:
            raise ValueError("lengths and counts differ in length")
        for e in range(n):
            if lengths[e] < 0 or counts[e] < 0 or off + lengths[e] > arena.shape[0]:
                raise ValueError("bad exported counts")
            off += lengths[e]
        if off != arena.shape[0]:
            raise ValueError("bad exported counts")
        off = 0
        with nogil:
            for e in range(n):
                self.add(&arena[off] if lengths[e] else <const unsigned char*>"", lengths[e], counts[e])
                off += lengths[e]
        return 0

    def to_arrays(self, int64_t min_count=1):
        """The PieceTrainer inputs for pieces of >= 2 bytes seen >= ``min_count`` times
        (shorter or rarer pieces hold no pair worth counting): int32 tokens, int64
        offsets, int64 counts, in order of first appearance."""
        self.lock()
        try:
            return self._to_arrays(min_count)
        finally:
            self.unlock()

    cdef _to_arrays(self, int64_t min_count):
        cdef Py_ssize_t e, k = 0, m = 0
        cdef int64_t j, pos = 0
        cdef PieceEntry* ent
        for e in range(self.n_entries):
            ent = &self.entries[e]
            if ent.length >= 2 and ent.count >= min_count:
                k += 1
                m += ent.length
        tokens = np.empty(m, dtype=np.int32)
        offsets = np.empty(k + 1, dtype=np.int64)
        counts = np.empty(k, dtype=np.int64)
        cdef int32_t[::1] tv = tokens
        cdef int64_t[::1] ov = offsets
        cdef int64_t[::1] cv = counts
        k = 0
        ov[0] = 0
        for e in range(self.n_entries):
            ent = &self.entries[e]
            if ent.length >= 2 and ent.count >= min_count:
                for j in range(ent.length):
                    tv[pos + j] = self.arena[ent.offset + j]
                pos += ent.length
                cv[k] = ent.count
                k += 1
                ov[k] = pos
        return tokens, offsets, counts


# ---------------------------------------------------------------------------------------
# Scanner: counting with the C pre-tokenizer
# ---------------------------------------------------------------------------------------

cdef enum:
    SCAN_CAP = 4096


cdef class Scanner:
    """Piece boundaries from the C pre-tokenizer for one of its known patterns (`kind`, from
    `fastbpe.pretokenize.scanner_kind`)."""
    cdef int kind

    def __init__(self, int kind):
        if kind < 0:
            raise ValueError("Scanner needs a pattern the C pre-tokenizer knows")
        self.kind = kind


cdef int count_scanned(PieceCounter counter, Scanner sc, const unsigned char* s,
                       Py_ssize_t n) except -1 nogil:
    cdef Py_ssize_t ends[SCAN_CAP]
    cdef Py_ssize_t pos = 0, prev = 0, k, j
    while pos < n:
        k = scan_pieces(sc.kind, s, n, pos, ends, SCAN_CAP)
        if k <= 0:
            break
        for j in range(k):
            counter.add(s + prev, ends[j] - prev, 1)
            prev = ends[j]
        pos = ends[k - 1]
    return 0


def count_utf8(PieceCounter counter, Scanner scanner, list texts):
    """Count the pieces of every text in ``texts`` (UTF-8 bytes, each split on its own)
    into ``counter``, without the GIL: threads with their own counters run in parallel."""
    cdef bytes t
    cdef const unsigned char* s
    cdef Py_ssize_t n
    counter.lock()
    try:
        for t in texts:
            s = <const unsigned char*>(<char*>t)
            n = len(t)
            with nogil:
                count_scanned(counter, scanner, s, n)
    finally:
        counter.unlock()


cdef bint ends_in_space(const unsigned char* s, Py_ssize_t end) noexcept nogil:
    """Whether the UTF-8 character that ends at s[end] (exclusive) is white space (\\s)."""
    cdef Py_ssize_t i = end - 1
    cdef uint32_t c
    if s[i] < 0x80:
        return s[i] == 32 or 9 <= s[i] <= 13 or 28 <= s[i] <= 31
    while i > 0 and (s[i] & 0xC0) == 0x80:
        i -= 1
    c = s[i] & (0x1F if s[i] < 0xE0 else (0x0F if s[i] < 0xF0 else 0x07))
    for i in range(i + 1, end):
        c = (c << 6) | (s[i] & 0x3F)
    return (c == 0x85 or c == 0xA0 or c == 0x1680 or 0x2000 <= c <= 0x200A or c == 0x2028
            or c == 0x2029 or c == 0x202F or c == 0x205F or c == 0x3000)


def last_piece_end(Scanner scanner, const unsigned char[::1] data, Py_ssize_t limit):
    """The end of the last piece of ``data`` (split from its start) that ends at or before
    ``limit`` on a character that is not white space; 0 when none does.  The file reader
    cuts blocks there: the known patterns look past a piece's end only through white space
    (``\\s+(?!\\S)``, ``\\s++$``) or to complete it, so the text before such a point splits
    alone exactly as it does within the whole."""
    cdef Py_ssize_t ends[SCAN_CAP]
    cdef Py_ssize_t n = data.shape[0], pos = 0, best = 0, k, j
    if n == 0:
        return 0
    with nogil:
        while pos < n and pos < limit:
            k = scan_pieces(scanner.kind, &data[0], n, pos, ends, SCAN_CAP)
            if k <= 0:
                break
            for j in range(k):
                if ends[j] > limit:
                    break
                if not ends_in_space(&data[0], ends[j]):
                    best = ends[j]
            pos = ends[k - 1]
    return best


def _counter_from_export(arena, lengths, counts):
    """A PieceCounter holding an export() (how a pickled counter is rebuilt)."""
    counter = PieceCounter()
    counter.add_exported(arena, lengths, counts)
    return counter
