# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Counting pieces for training: ``PieceCounter`` counts unique pieces (UTF-8 byte strings)
in a hash table over one arena of bytes (counters merge by addition); ``Scanner`` +
``count_utf8`` feed it from the C pre-tokenizer; ``last_piece_end`` finds where a block of
text can be cut without changing its pieces."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset
from cpython.pythread cimport (NOWAIT_LOCK, WAIT_LOCK, PyThread_acquire_lock,
                               PyThread_allocate_lock, PyThread_free_lock,
                               PyThread_release_lock, PyThread_type_lock)
from fastbpe._hash cimport hash_bytes
from fastbpe._pretokenize cimport scan_pieces
from fastbpe._memory cimport xrealloc

import numpy as np


# One unique piece in a PieceCounter: its bytes live in the counter's arena.
cdef struct PieceEntry:
    uint64_t hash
    int64_t count
    int64_t offset
    int64_t length


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
