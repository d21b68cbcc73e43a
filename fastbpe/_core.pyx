# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The encode kernel: byte-level BPE over integer pair tables, with the GIL released.

A `BPETable` is built once per vocabulary and is only read afterwards, so any number of
threads may encode with one table at once (each call owns its own scratch space).

It holds two tables:

* the token table: id -> bytes (one flat buffer), and bytes -> id (open addressing);
* the pair table: (left id, right id) -> (rank, merged id).

Both merge semantics of DESIGN.md §2 run on the same kernel; only the pair table differs:

* tiktoken ranks (`from_ranks`): the *complete split table*: for every token T and every cut
  k where T[:k] and T[k:] are both tokens, (id(T[:k]), id(T[k:])) -> rank(T).  Every part is
  always a token, so looking pairs up by id is the same as tiktoken's lookup of the
  concatenated bytes; and a piece that is itself a token is emitted directly.
* merge lists (`from_merges`, minbpe / HF): only the listed merges, rank = position in the list.

Per piece: short pieces use a linear scan over an array (cheap for a handful of parts); long
pieces use a doubly linked list of parts and a binary min-heap of candidate merges keyed
(rank, position), skipping stale entries on pop: O(m log m), never quadratic.  Both paths
merge the lowest rank first and the leftmost on ties, so they give identical ids.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_New, PyList_SET_ITEM, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_FromUnsignedLong
from cpython.number cimport PyNumber_Index
from cpython.ref cimport Py_INCREF, PyObject
from cpython.pythread cimport PyThread_get_thread_ident
from cpython.unicode cimport PyUnicode_Check, PyUnicode_GET_LENGTH

from fastbpe._hash cimport (PACKED_MAX, hash_bytes, hash_in_text, load_word, mix64, packed_hash,
                            packed_key, piece_hash, pow2_at_least)
from fastbpe._pretokenize cimport scan_pieces
from fastbpe._heap cimport heap_pop, heap_push
from fastbpe._utf8 cimport (PyUnicode_DATA, PyUnicode_KIND, Utf8Text, utf8_capacity, utf8_encode,
                            utf8_text_check, utf8_text_close, utf8_text_convert, utf8_text_open,
                            utf8_valid)
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int32_t, int64_t, uint64_t, UINT32_MAX
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memchr, memcpy, memcmp, memmove, memset

import sys
import threading


cdef object _np():
    """numpy, imported on first use: encoding to lists never needs it, and importing it
    would double the time `import fastbpe` takes."""
    import numpy
    return numpy

cdef extern from *:
    void prefetch "__builtin_prefetch"(const void* p) noexcept nogil

cdef extern from *:
    """
    /* BPETable.self_merging is written by whichever thread first meets a token (always the
       same value): relaxed atomic bytes, so concurrent readers see 0 or that value. */
    #if defined(__GNUC__) || defined(__clang__)
    #define fb_load_u8(p) __atomic_load_n((p), __ATOMIC_RELAXED)
    #define fb_store_u8(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
    #else
    #define fb_load_u8(p) (*(volatile unsigned char*)(p))
    #define fb_store_u8(p, v) (*(volatile unsigned char*)(p) = (v))
    #endif
    """
    uint8_t fb_load_u8(const uint8_t* p) noexcept nogil
    void fb_store_u8(uint8_t* p, uint8_t v) noexcept nogil


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL
    bint PyUnicode_IS_ASCII(object s)

cdef enum:
    SMALL_PIECE = 48         # pieces up to this many bytes use the linear scan
    PACKED_SIZE = 65536      # packed entries of a piece cache (a power of two): 2 MiB
    PACKED_MAX_IDS = 3       # PackedEntry.ids
    CACHE_SIZE = 32768       # entries for longer pieces (a power of two): 2 MiB
    CACHE_MAX_PIECE = 24     # longer pieces are not cached (CacheEntry.bytes)
    CACHE_MAX_IDS = 6        # nor pieces of more ids (CacheEntry.ids)
    SELF_MERGING = 1         # self_merging: merging the token's bytes gives the token
    NOT_SELF_MERGING = 2     # ... gives several tokens (0: not known yet)
    SCAN_BATCH = 512         # pieces the scanner cuts per call of encode_utf8's loop
    CACHE_TABLES_PER_THREAD = 4   # a thread keeps caches for its 4 most recently used tables
    MAX_RUNS = 32            # sorted runs of candidate merges at once (see _merge_heap)
    PILE_TO_HEAP = 64        # a smaller pile of candidates goes into the heap, not a run

cdef uint64_t EMPTY_KEY = 0xFFFFFFFFFFFFFFFFULL
cdef uint64_t NO_PAIR = 0xFFFFFFFF00000000ULL    # (NO_RANK << 32): a pair that does not merge
cdef uint64_t UINT64_MAX_KEY = 0xFFFFFFFFFFFFFFFFULL   # above every candidate merge


cdef inline uint32_t slot_tag(uint64_t h, Py_ssize_t n) noexcept nogil:
    """What a token slot stores to reject most non-matches without touching the token bytes:
    24 hash bits that the slot index does not use, and the length (capped at 255)."""
    return (<uint32_t>(h >> 40) << 8) | <uint32_t>(n if n < 255 else 255)


cdef inline uint64_t load_head(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """The first 8 bytes of p[:n], zero padded."""
    cdef uint64_t w = 0
    memcpy(&w, p, <size_t>(n if n < 8 else 8))
    return w



# ----------------------------------------------------------------------------------------
# pair table

cdef int pair_table_init(PairTable* t, Py_ssize_t expected) except -1 nogil:
    cdef uint64_t cap = pow2_at_least(<uint64_t>(expected * 2 + 1))
    cdef uint64_t i
    t.slots = <PairSlot*>malloc(cap * sizeof(PairSlot))
    if t.slots == NULL:
        with gil:
            raise MemoryError()
    for i in range(cap):
        t.slots[i].key = EMPTY_KEY
    t.mask = cap - 1
    t.count = 0
    return 0


cdef bint pair_put(PairTable* t, tok_t left, tok_t right, uint32_t rank, tok_t new_id) noexcept nogil:
    """Insert a pair; an existing pair keeps its first (lowest) rank. Returns True if new."""
    cdef uint64_t key = (<uint64_t>left << 32) | right
    cdef uint64_t i = mix64(key) & t.mask
    while True:
        if t.slots[i].key == key:
            return False
        if t.slots[i].key == EMPTY_KEY:
            t.slots[i].key = key
            t.slots[i].rank = rank
            t.slots[i].new_id = new_id
            t.count += 1
            return True
        i = (i + 1) & t.mask


# ----------------------------------------------------------------------------------------
# growable buffers

cdef int idbuf_reserve(IdBuf* b, Py_ssize_t extra) except -1 nogil:
    cdef Py_ssize_t need = b.len + extra
    cdef Py_ssize_t cap
    cdef tok_t* data
    if need <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 256
    while cap < need:
        cap *= 2
    data = <tok_t*>realloc(b.data, cap * sizeof(tok_t))
    if data == NULL:
        with gil:
            raise MemoryError()
    b.data = data
    b.cap = cap
    return 0


cdef void idbuf_free(IdBuf* b) noexcept nogil:
    free(b.data)
    b.data = NULL
    b.len = b.cap = 0


cdef int work_reserve(Work* w, Py_ssize_t n) except -1 nogil:
    """Make room to merge a piece of n bytes."""
    if n <= w.cap:
        return 0
    cdef Py_ssize_t cap = w.cap * 2 if w.cap else 256
    while cap < n:
        cap *= 2
    work_free(w)
    w.parts = <SmallPart*>malloc(cap * sizeof(SmallPart))
    w.nxt = <int32_t*>malloc(cap * sizeof(int32_t))
    w.prv = <int32_t*>malloc(cap * sizeof(int32_t))
    w.heap = <uint64_t*>malloc(5 * cap * sizeof(uint64_t))   # see _merge_heap
    if (w.parts == NULL or w.nxt == NULL
            or w.prv == NULL or w.heap == NULL):
        work_free(w)
        with gil:
            raise MemoryError()
    w.cap = cap
    return 0


cdef void work_free(Work* w) noexcept nogil:
    free(w.parts)
    free(w.nxt)
    free(w.prv)
    free(w.heap)
    w.parts = NULL
    w.nxt = NULL
    w.prv = NULL
    w.heap = NULL
    w.cap = 0


cdef object idbuf_to_list(IdBuf* b, list id_objects):
    """A list of Python ints; id_objects[i] is the int i (ids are always in range)."""
    cdef Py_ssize_t i
    cdef list out = PyList_New(b.len)
    cdef PyObject* v
    for i in range(b.len):
        v = PyList_GET_ITEM(id_objects, b.data[i])
        Py_INCREF(<object>v)
        PyList_SET_ITEM(out, i, <object>v)
    return out


cdef object idbuf_to_numpy(IdBuf* b):
    np = _np()
    arr = np.empty(b.len, dtype=np.uint32)
    cdef uint32_t[::1] view = arr
    if b.len:
        memcpy(&view[0], b.data, b.len * sizeof(tok_t))
    return arr


# ----------------------------------------------------------------------------------------
# the piece cache: piece bytes -> ids, per thread and per table, living across calls

cdef class PieceCache:
    """Two direct-mapped caches of piece -> ids for one table, used by one thread only.

    Text repeats its pieces (" the", " of", "()"), so most pieces are found here, in 4 MiB
    that stay warm across calls, instead of in the token table (several MiB) or merged
    again.  Pieces of up to 15 bytes and 3 ids (0.85-0.91 of English and code pieces,
    nearly all the rest being single bytes, which need no cache) live in packed entries:
    the key is the piece's bytes as two words (_hash.pxd), so a probe is two compares and a
    hit copies its ids as one 16-byte block.  Longer pieces (up to 24 bytes) and pieces of
    4-6 ids (a third of multilingual pieces) live in 64-byte entries holding the bytes.
    Either way an entry is compared in full before it is used: a hash collision only
    evicts (never a wrong id).  Entries never point into a text."""

    def __cinit__(self):
        self.packed = <PackedEntry*>calloc(PACKED_SIZE, sizeof(PackedEntry))
        self.entries = <CacheEntry*>calloc(CACHE_SIZE, sizeof(CacheEntry))
        if self.packed == NULL or self.entries == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.packed)
        free(self.entries)

    def ids_of(self, bytes piece):
        """The cached ids of piece, or None (for tests)."""
        cdef Py_ssize_t n = PyBytes_GET_SIZE(piece)
        cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(piece)
        cdef uint64_t k0, k1, h
        cdef PackedEntry* pe
        cdef CacheEntry* e = NULL
        if n < 2 or n > CACHE_MAX_PIECE:
            return None
        h = piece_hash(p, n)
        if n <= PACKED_MAX:
            packed_key(p, n, p + n, &k0, &k1)
            pe = &self.packed[h & (PACKED_SIZE - 1)]
            if pe.k0 == k0 and pe.k1 == k1:
                return [pe.ids[i] for i in range(pe.n_ids)]
        e = cache_find(self.entries, p, n, h, load_head(p, n))
        return None if e == NULL else [e.ids[i] for i in range(e.n_ids)]

    @staticmethod
    def slot_of(bytes piece, Py_ssize_t n_ids):
        """(which entries, index) a piece of n_ids ids is kept in (for tests that make
        pieces collide)."""
        cdef Py_ssize_t n = PyBytes_GET_SIZE(piece)
        cdef uint64_t h = piece_hash(<const uint8_t*>PyBytes_AS_STRING(piece), n)
        if n <= PACKED_MAX and n_ids <= PACKED_MAX_IDS:
            return "packed", h & (PACKED_SIZE - 1)
        return "long", h & (CACHE_SIZE - 1)


cdef inline CacheEntry* cache_find(CacheEntry* entries, const uint8_t* p, Py_ssize_t n,
                                   uint64_t h, uint64_t head) noexcept nogil:
    """The entry holding piece p[:n] (2 <= n <= CACHE_MAX_PIECE; head = its first 8 bytes,
    zero padded), or NULL."""
    cdef CacheEntry* e = &entries[h & (CACHE_SIZE - 1)]
    cdef uint64_t first
    if e.hash != h or e.length != n:
        return NULL
    memcpy(&first, e.bytes, 8)
    if first != head or (n > 8 and memcmp(e.bytes + 8, p + 8, <size_t>(n - 8)) != 0):
        return NULL
    return e


cdef inline void cache_store(CacheEntry* entries, const uint8_t* p, Py_ssize_t n, uint64_t h,
                             const tok_t* ids, Py_ssize_t n_ids) noexcept nogil:
    """Remember piece p[:n] -> ids, evicting whatever held its entry."""
    cdef CacheEntry* e = &entries[h & (CACHE_SIZE - 1)]
    e.hash = h
    memset(e.bytes, 0, sizeof(e.bytes))
    memcpy(e.bytes, p, <size_t>n)
    memcpy(e.ids, ids, <size_t>n_ids * sizeof(tok_t))
    e.length = <uint16_t>n
    e.n_ids = <uint16_t>n_ids


_thread_state = threading.local()


cdef PieceCache thread_cache(BPETable table):
    """This thread's piece cache for table, made on first use.

    A thread keeps the caches of its CACHE_TABLES_PER_THREAD most recently used tables
    (dropping the least recently used) and they go when the thread ends: memory stays
    bounded, no two threads ever share a cache, and tables never see each other's ids.
    Keyed by the table's serial, so a dead table's cache cannot be mistaken for a new
    table's (ids of objects are reused).  The table
    also keeps the cache of the thread that used it last, so a thread's repeated calls skip
    the thread-local lookup (that one cache lives until the table goes or another thread
    takes the table's slot)."""
    cdef dict caches
    cdef unsigned long me = PyThread_get_thread_ident()
    if table.last_cache is not None and table.last_thread == me:
        return <PieceCache>table.last_cache   # the same thread again: no thread-local lookup
    try:
        caches = _thread_state.caches
    except AttributeError:
        caches = _thread_state.caches = {}
    cache = caches.pop(table.serial, None)
    if cache is None:
        cache = PieceCache()
        if len(caches) >= CACHE_TABLES_PER_THREAD:
            del caches[next(iter(caches))]
    caches[table.serial] = cache   # last in the dict's order = most recently used
    # Remembered for this thread's next call.  Idents are unique among live threads, so no
    # other live thread is handed this cache; a new thread that reuses a dead one's ident
    # may take over the dead thread's cache, which no one else uses.
    table.last_cache = cache
    table.last_thread = me
    return <PieceCache>cache


cdef uint64_t _next_serial = 0


cdef inline void pile_pair(const PairTable* pairs, SmallPart* parts, Py_ssize_t left,
                           Py_ssize_t right, uint64_t* space, Py_ssize_t* pile_lo,
                           uint64_t* pile_min) noexcept nogil:
    """Set the pair the part at `left` now starts with the part at `right` and, if it merges,
    pile it as a candidate (see _merge_heap)."""
    cdef uint32_t r
    cdef tok_t nid
    cdef uint64_t key
    if not pair_get(pairs, parts[left].id, parts[right].id, &r, &nid):
        parts[left].pair = NO_PAIR
        return
    parts[left].pair = (<uint64_t>r << 32) | nid
    key = (<uint64_t>r << 32) | <uint64_t>left
    pile_lo[0] -= 1
    space[pile_lo[0]] = key
    if key < pile_min[0]:
        pile_min[0] = key


cdef void sort_keys(uint64_t* keys, uint64_t* tmp, Py_ssize_t n, int first_byte) noexcept nogil:
    """Sort 64-bit keys by their bytes first_byte..7 (a stable LSD radix sort over the bytes
    that differ between keys; the others cost nothing); tmp has room for n keys.  With
    first_byte = 4 it sorts (rank << 32 | position) keys by rank alone, keeping the order of
    positions."""
    cdef Py_ssize_t count[8][256]
    cdef Py_ssize_t i, total, c
    cdef int byte, b, n_vary = 0
    cdef int vary[8]
    cdef uint64_t* src = keys
    cdef uint64_t* dst = tmp
    cdef uint64_t* swap
    cdef uint64_t k, all_or = 0, all_and = UINT64_MAX_KEY
    if n < 2:
        return
    for i in range(n):
        all_or |= keys[i]
        all_and &= keys[i]
    for byte in range(first_byte, 8):
        if ((all_or ^ all_and) >> (8 * byte)) & 0xFF:
            vary[n_vary] = byte
            n_vary += 1
    if n_vary == 0:
        return
    memset(count, 0, n_vary * sizeof(count[0]))   # only the rows used: short piles are common
    for i in range(n):
        k = keys[i]
        for b in range(n_vary):
            count[b][(k >> (8 * vary[b])) & 0xFF] += 1
    for b in range(n_vary):
        byte = vary[b]
        total = 0
        for c in range(256):
            i = count[b][c]
            count[b][c] = total
            total += i
        for i in range(n):
            c = <Py_ssize_t>((src[i] >> (8 * byte)) & 0xFF)
            dst[count[b][c]] = src[i]
            count[b][c] += 1
        swap = src
        src = dst
        dst = swap
    if src != keys:
        memcpy(keys, src, n * sizeof(uint64_t))


cdef void sort_pile(uint64_t* keys, uint64_t* tmp, Py_ssize_t n) noexcept nogil:
    """Sort the candidates that merges made (stored last-made first).  Merges of one rank
    run left to right, so in the order they were made the positions of one rank nearly
    always ascend: reverse, sort by rank alone, and sort by position too only if that left
    the keys out of order."""
    cdef Py_ssize_t i
    cdef uint64_t t
    for i in range(n // 2):
        t = keys[i]
        keys[i] = keys[n - 1 - i]
        keys[n - 1 - i] = t
    sort_keys(keys, tmp, n, 4)
    for i in range(n - 1):
        if keys[i] > keys[i + 1]:
            sort_keys(keys, tmp, n, 0)
            return

cdef int encode_uncached(BPETable table, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t k0,
                         uint64_t k1, IdBuf* out, Work* w) except -1 nogil:
    """Append the ids of a piece of 2..CACHE_MAX_PIECE bytes that its packed entry does not
    hold (h: piece_hash; k0, k1: its packed key when n <= PACKED_MAX, else k0 = its first 8
    bytes), and remember them in the entry that fits."""
    cdef PackedEntry* pe
    cdef Py_ssize_t before = out.len, count
    if table.encode_piece_hashed(p, n, h, k0, out, w) == 1:
        return 0   # from the long entries
    count = out.len - before
    if n <= PACKED_MAX and count <= PACKED_MAX_IDS:
        pe = &w.packed[h & (PACKED_SIZE - 1)]
        pe.k0 = k0
        pe.k1 = k1
        memcpy(pe.ids, out.data + before, <size_t>count * sizeof(tok_t))
        pe.n_ids = <uint32_t>count
    elif count <= CACHE_MAX_IDS:
        cache_store(w.cache, p, n, h, out.data + before, count)
    return 0


# ----------------------------------------------------------------------------------------

cdef class BPETable:
    """Token and pair tables of one vocabulary, and the encode/decode kernels over them.

    Build with `BPETable.from_ranks` (tiktoken semantics) or `BPETable.from_merges`
    (merge-list semantics).  Read-only after construction, so it is safe to share between
    threads.
    """

    def __cinit__(self):
        global _next_serial
        memset(&self.tok, 0, sizeof(TokenTable))
        memset(&self.pairs, 0, sizeof(PairTable))
        _next_serial += 1
        self.serial = _next_serial

    def __dealloc__(self):
        free(self.tok.data)
        free(self.tok.start)
        free(self.tok.length)
        free(self.tok.slots)
        free(self.pairs.slots)
        free(self.byte_pairs)
        free(self.self_merging)

    # -- construction --------------------------------------------------------------------

    cdef int _load_tokens(self, list token_bytes, dict special_bytes, bint unique) except -1:
        """Fill the token table. token_bytes[i] is the bytes of BPE token i (None: unused id);
        special_bytes maps extra ids (special tokens) to their bytes, for decoding only."""
        cdef Py_ssize_t n_bpe = len(token_bytes)
        cdef Py_ssize_t n_ids = n_bpe
        cdef Py_ssize_t total = 0, i, ln, off = 0
        cdef int64_t sid
        cdef object b
        for sid, b in special_bytes.items():
            if sid < 0 or sid >= 0x7FFFFFFF:
                raise ValueError(f"special token id out of range: {sid}")
            if sid + 1 > n_ids:
                n_ids = sid + 1
            total += len(b)
        for b in token_bytes:
            if b is not None:
                total += len(<bytes>b)
        if n_ids >= 0x7FFFFFFF:
            raise ValueError("too many token ids")
        self.tok.n_ids = n_ids
        self.tok.data = <uint8_t*>malloc(total + 1)
        self.tok.start = <int64_t*>malloc((n_ids + 1) * sizeof(int64_t))
        self.tok.length = <int32_t*>malloc((n_ids + 1) * sizeof(int32_t))
        if self.tok.data == NULL or self.tok.start == NULL or self.tok.length == NULL:
            raise MemoryError()
        for i in range(n_ids):
            self.tok.start[i] = -1
            self.tok.length[i] = 0
        for i in range(n_bpe):
            b = token_bytes[i]
            if b is None:
                continue
            ln = PyBytes_GET_SIZE(b)
            if ln == 0:
                raise ValueError(f"token {i} is empty")
            memcpy(self.tok.data + off, PyBytes_AS_STRING(b), ln)
            self.tok.start[i] = off
            self.tok.length[i] = <int32_t>ln
            off += ln
        for sid, b in special_bytes.items():
            if sid < n_bpe and self.tok.start[sid] >= 0:
                continue  # a BPE token already decodes to these id's bytes
            ln = len(b)
            memcpy(self.tok.data + off, PyBytes_AS_STRING(b), ln)
            self.tok.start[sid] = off
            self.tok.length[sid] = <int32_t>ln
            off += ln
        self.n_bpe_tokens = n_bpe
        self.id_objects = list(range(n_ids))
        self._build_lookup(n_bpe, unique)
        return 0

    cdef int _build_lookup(self, Py_ssize_t n_bpe, bint unique) except -1:
        cdef uint64_t cap = pow2_at_least(<uint64_t>(n_bpe * 2 + 1))
        cdef uint64_t i, h, mask = cap - 1
        cdef Py_ssize_t t, ln
        cdef const uint8_t* p
        cdef int32_t other
        self.tok.slots = <TokenSlot*>malloc(cap * sizeof(TokenSlot))
        if self.tok.slots == NULL:
            raise MemoryError()
        for i in range(cap):
            self.tok.slots[i].id = -1
        self.tok.mask = mask
        for t in range(n_bpe):
            if self.tok.start[t] < 0:
                continue
            p = self.tok.data + self.tok.start[t]
            ln = self.tok.length[t]
            other = self.lookup(p, ln)
            if other >= 0:
                if unique:
                    raise ValueError(
                        f"tokens {other} and {t} have the same bytes {bytes(p[:ln])!r}")
                continue  # keep the first id for these bytes
            h = piece_hash(p, ln)
            i = h & mask
            while self.tok.slots[i].id >= 0:
                i = (i + 1) & mask
            self.tok.slots[i].id = <int32_t>t
            self.tok.slots[i].tag = slot_tag(h, ln)
            self.tok.slots[i].head = load_head(p, ln)
        cdef uint8_t one_byte
        for i in range(256):
            one_byte = <uint8_t>i
            self.tok.byte_id[i] = self.lookup(&one_byte, 1)
        return 0

    @staticmethod
    def from_ranks(token_bytes, dict special_bytes=None):
        """tiktoken semantics. token_bytes[rank] is the bytes of the token with that rank (None
        for a rank that is not used); special_bytes maps special-token ids to their bytes."""
        cdef BPETable self = BPETable.__new__(BPETable)
        self.whole_piece = True
        self._load_tokens(_as_list(token_bytes), special_bytes or {}, True)
        self._check_bytes_present()
        self._build_split_table()
        self._build_byte_pairs()
        return self

    @staticmethod
    def from_merges(merges, token_bytes, dict special_bytes=None, bint whole_piece=False,
                    bint require_all_bytes=True, ranks=None):
        """Merge-list semantics. merges is an (m, 3) int array of (left, right, new id) in merge
        order (row i has rank i); token_bytes[id] is the bytes of each token (None if unused).
        whole_piece=True also emits a piece that is itself a token directly (HF ignore_merges).
        require_all_bytes=False allows a vocabulary without all 256 single bytes (a char-level
        model that only merges from given ids, see `merge_ids`); encoding bytes needs them.
        ranks (optional, m ints): row i's rank instead of i; equal ranks merge leftmost first
        (SentencePiece BPE by scores: the rank is the merged token's score order)."""
        cdef BPETable self = BPETable.__new__(BPETable)
        cdef int64_t[:, ::1] m = _np().ascontiguousarray(merges, dtype="int64").reshape(-1, 3)
        cdef Py_ssize_t i, n = m.shape[0], n_bpe = len(token_bytes)
        cdef int64_t[::1] r = None
        if ranks is not None:
            r = _np().ascontiguousarray(ranks, dtype="int64").reshape(-1)
            if r.shape[0] != n:
                raise ValueError(f"{r.shape[0]} ranks for {n} merges")
            for i in range(n):
                if not 0 <= r[i] < 0xFFFFFFFF:
                    raise ValueError(f"rank {r[i]} of merge {i} is out of range")
        self.whole_piece = whole_piece
        self._load_tokens(_as_list(token_bytes), special_bytes or {}, False)
        if not whole_piece:
            self.self_merging = <uint8_t*>calloc(self.tok.n_ids + 1, 1)
            if self.self_merging == NULL:
                raise MemoryError()
        if require_all_bytes:
            self._check_bytes_present()
        pair_table_init(&self.pairs, n)
        for i in range(n):
            if not (0 <= m[i, 0] < n_bpe and 0 <= m[i, 1] < n_bpe and 0 <= m[i, 2] < n_bpe):
                raise ValueError(f"merge {i} refers to a token id outside the vocabulary")
            if self.tok.start[m[i, 0]] < 0 or self.tok.start[m[i, 1]] < 0 or self.tok.start[m[i, 2]] < 0:
                raise ValueError(f"merge {i} refers to an unused token id")
            pair_put(&self.pairs, <tok_t>m[i, 0], <tok_t>m[i, 1], <uint32_t>(i if r is None else r[i]), <tok_t>m[i, 2])
        if all(self.tok.byte_id[i] >= 0 for i in range(256)):
            self._build_byte_pairs()
        # else byte_pairs stays NULL: only merge_ids can use the table (_require_byte_pairs)
        return self

    cdef int _build_byte_pairs(self) except -1:
        cdef int a, b
        cdef uint32_t r
        cdef tok_t nid
        self.byte_pairs = <uint64_t*>malloc(65536 * sizeof(uint64_t))
        if self.byte_pairs == NULL:
            raise MemoryError()
        for a in range(256):
            for b in range(256):
                if pair_get(&self.pairs, <tok_t>self.tok.byte_id[a], <tok_t>self.tok.byte_id[b], &r, &nid):
                    self.byte_pairs[a * 256 + b] = (<uint64_t>r << 32) | nid
                else:
                    self.byte_pairs[a * 256 + b] = NO_PAIR
        return 0

    cdef int _check_bytes_present(self) except -1:
        cdef int i
        missing = [i for i in range(256) if self.tok.byte_id[i] < 0]
        if missing:
            raise ValueError(
                f"the vocabulary lacks {len(missing)} of the 256 single-byte tokens "
                f"(first missing byte: {missing[0]:#04x}); a byte-level BPE needs all of them")
        return 0

    cdef int _build_split_table(self) except -1:
        """The complete split table (see the module docstring)."""
        cdef Py_ssize_t t, k, ln, n_pairs = 0, cap = 0
        cdef const uint8_t* p
        cdef int32_t left, right
        cdef uint64_t* found = NULL
        cdef uint64_t* grown
        try:
            with nogil:
                for t in range(self.n_bpe_tokens):
                    ln = self.tok.length[t]
                    if self.tok.start[t] < 0 or ln < 2:
                        continue
                    p = self.tok.data + self.tok.start[t]
                    for k in range(1, ln):
                        left = self.lookup(p, k)
                        if left < 0:
                            continue
                        right = self.lookup(p + k, ln - k)
                        if right < 0:
                            continue
                        if n_pairs + 2 > cap:
                            cap = cap * 2 if cap else 1 << 16
                            grown = <uint64_t*>realloc(found, cap * 2 * sizeof(uint64_t))
                            if grown == NULL:
                                with gil:
                                    raise MemoryError()
                            found = grown
                        found[2 * n_pairs] = (<uint64_t>left << 32) | <uint32_t>right
                        found[2 * n_pairs + 1] = <uint64_t>t
                        n_pairs += 1
                pair_table_init(&self.pairs, n_pairs)
                for k in range(n_pairs):
                    pair_put(&self.pairs, <tok_t>(found[2 * k] >> 32), <tok_t>(found[2 * k] & 0xFFFFFFFFU),
                             <uint32_t>found[2 * k + 1], <tok_t>found[2 * k + 1])
        finally:
            free(found)
        return 0

    # -- lookups -------------------------------------------------------------------------

    cdef int32_t lookup(self, const uint8_t* p, Py_ssize_t n) noexcept nogil:
        """The id of the BPE token whose bytes are p[:n], or -1."""
        return self.lookup_hashed(p, n, piece_hash(p, n), load_head(p, n))

    cdef int32_t lookup_hashed(self, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t head) noexcept nogil:
        """`lookup` with the piece's hash and head already computed."""
        cdef uint64_t i = h & self.tok.mask
        cdef uint32_t tag = slot_tag(h, n)
        cdef const TokenSlot* slot
        while True:
            slot = &self.tok.slots[i]
            if slot.id < 0:
                return -1
            if slot.tag == tag and slot.head == head:
                if n <= 8:
                    return slot.id  # the tag holds the exact length
                if (self.tok.length[slot.id] == n and
                        memcmp(self.tok.data + self.tok.start[slot.id] + 8, p + 8, <size_t>(n - 8)) == 0):
                    return slot.id
            i = (i + 1) & self.tok.mask

    # -- the merge kernel ----------------------------------------------------------------

    cdef int encode_piece(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil:
        """Append the ids of one piece (n >= 1 bytes) to out."""
        if n == 1:
            idbuf_reserve(out, 1)
            out.data[out.len] = <tok_t>self.tok.byte_id[p[0]]
            out.len += 1
            return 0
        return self.encode_piece_hashed(p, n, piece_hash(p, n), load_head(p, n), out, w)

    cdef int encode_piece_hashed(self, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t head,
                                 IdBuf* out, Work* w) except -1 nogil:
        """`encode_piece` for n >= 2 with the piece's hash and head already computed.
        Returns 1 when the ids came from w.cache's long entries (nothing new to remember),
        else 0.

        A piece that is a token costs one lookup: with tiktoken semantics (and HF's
        ignore_merges) it is that token; with merge lists it is when merging its bytes gives
        the token itself, which the table learns the first time it meets each token
        (self_merging, one byte per token) and then knows for good."""
        cdef int32_t whole = -1
        cdef uint8_t state = 0
        cdef Py_ssize_t before
        cdef CacheEntry* e
        if self.whole_piece or self.self_merging != NULL:
            whole = self.lookup_hashed(p, n, h, head)
            if whole >= 0:
                if not self.whole_piece:
                    state = fb_load_u8(&self.self_merging[whole])
                if self.whole_piece or state == SELF_MERGING:
                    idbuf_reserve(out, 1)
                    out.data[out.len] = <tok_t>whole
                    out.len += 1
                    return 0
        if w.cache != NULL and n <= CACHE_MAX_PIECE:
            e = cache_find(w.cache, p, n, h, head)
            if e != NULL:
                idbuf_reserve(out, CACHE_MAX_IDS)
                memcpy(out.data + out.len, e.ids, CACHE_MAX_IDS * sizeof(tok_t))
                out.len += e.n_ids
                return 1
        if n >= 0x7FFFFFFF:
            with gil:
                raise ValueError("a single piece of 2 GiB or more cannot be encoded")
        work_reserve(w, n)
        idbuf_reserve(out, n)
        before = out.len
        if n <= SMALL_PIECE:
            self._merge_small(p, n, out, w)
        else:
            self._merge_heap(p, n, out, w)
        if whole >= 0 and state == 0:
            fb_store_u8(&self.self_merging[whole],
                        SELF_MERGING if out.len - before == 1 and out.data[before] == <tok_t>whole
                        else NOT_SELF_MERGING)
        return 0

    cdef void _merge_small(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) noexcept nogil:
        """Linear scan: merge the lowest rank, leftmost on ties, until nothing merges.

        The parts' ids and the pairs they start are two dense arrays (w.nxt and w.heap as
        scratch): pairs[i] is (rank << 32 | new id) of parts i and i+1, so the smallest word
        is the lowest rank (a rank names one merged token) and a strict < keeps the
        leftmost; the scan is a compare and two conditional moves per pair, and a merge
        shifts the tail by a plain loop (the tails are short)."""
        cdef tok_t* ids = <tok_t*>w.nxt
        cdef uint64_t* pairs = w.heap
        cdef const int32_t* byte_id = self.tok.byte_id
        cdef Py_ssize_t m = n, i, best_i
        cdef uint64_t best, v
        cdef uint32_t r
        cdef tok_t nid
        for i in range(n - 1):
            ids[i] = <tok_t>byte_id[p[i]]
            pairs[i] = self.byte_pairs[(<Py_ssize_t>p[i] << 8) | p[i + 1]]
        ids[n - 1] = <tok_t>byte_id[p[n - 1]]
        while m > 1:
            best = pairs[0]
            best_i = 0
            for i in range(1, m - 1):
                v = pairs[i]
                if v < best:
                    best = v
                    best_i = i
            if best >= NO_PAIR:
                break
            # parts best_i and best_i+1 become one: the tail moves down by one
            ids[best_i] = <tok_t>(best & 0xFFFFFFFFU)
            m -= 1
            for i in range(best_i + 1, m):
                ids[i] = ids[i + 1]
                pairs[i] = pairs[i + 1]
            pairs[best_i] = NO_PAIR
            if best_i < m - 1 and pair_get(&self.pairs, ids[best_i], ids[best_i + 1], &r, &nid):
                pairs[best_i] = (<uint64_t>r << 32) | nid
            if best_i > 0:
                pairs[best_i - 1] = NO_PAIR
                if pair_get(&self.pairs, ids[best_i - 1], ids[best_i], &r, &nid):
                    pairs[best_i - 1] = (<uint64_t>r << 32) | nid
        memcpy(out.data + out.len, ids, <size_t>m * sizeof(tok_t))
        out.len += m

    cdef void _merge_heap(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) noexcept nogil:
        """Linked list of parts indexed by start byte; candidate merges (rank << 32 | start)
        taken smallest first: lowest rank, leftmost on ties.  O(n log n).

        parts[i].pair is the pair the live part at byte i starts now (NO_PAIR when none or
        the part is dead), so a candidate is stale exactly when its rank differs from it: no
        pair lookup to skip one.  (A candidate whose pair was replaced by another pair of the
        same rank merges that pair, which is then the right merge: lowest rank, leftmost.)

        Candidates wait in sorted runs, a 4-ary heap, or a pending pile: the first pairs
        are one run, sorted once; the pairs that merges make pile up unsorted and are
        ordered only when the pile holds the smallest candidate (as a new run when large,
        else into the heap).  On long pieces most candidates then leave a run at O(1)
        instead of a heap at O(log n): a 1 MiB piece is several times faster.

        w.heap has 5 * cap keys: [0, 2 cap) the heap growing up and the pile and its runs
        growing down (both together never exceed the 2n - 2 pairs merges make);
        [2 cap, 3 cap) the first run; [3 cap, 5 cap) scratch for sorting."""
        cdef SmallPart* parts = w.parts
        cdef int32_t* nxt = w.nxt
        cdef int32_t* prv = w.prv
        cdef uint64_t* space = w.heap
        cdef uint64_t* heap = space
        cdef uint64_t* tmp = space + 3 * w.cap
        cdef Py_ssize_t run_at[MAX_RUNS]
        cdef Py_ssize_t run_end[MAX_RUNS]
        cdef Py_ssize_t n_runs = 0, pile_lo = 2 * w.cap, pile_hi = 2 * w.cap
        cdef uint64_t pile_min = UINT64_MAX_KEY
        cdef Py_ssize_t size = 0, i, j, src, pos, right, after, before
        cdef uint64_t top, bp
        for i in range(n):
            parts[i].id = <tok_t>self.tok.byte_id[p[i]]
            nxt[i] = <int32_t>(i + 1)
            prv[i] = <int32_t>(i - 1)
        parts[n - 1].pair = NO_PAIR
        run_at[0] = run_end[0] = 2 * w.cap
        for i in range(n - 1):
            bp = self.byte_pairs[(<Py_ssize_t>p[i] << 8) | p[i + 1]]
            parts[i].pair = bp
            if bp < NO_PAIR:
                space[run_end[0]] = (bp & 0xFFFFFFFF00000000ULL) | <uint64_t>i
                run_end[0] += 1
        sort_keys(space + run_at[0], tmp, run_end[0] - run_at[0], 4)   # positions ascend
        n_runs = 1
        while True:
            # the smallest candidate: heap top or a run's head ...
            top = UINT64_MAX_KEY
            src = -2
            if size > 0:
                top = heap[0]
                src = -1
            j = 0
            while j < n_runs:
                if run_at[j] == run_end[j]:      # used up: drop it
                    n_runs -= 1
                    run_at[j] = run_at[n_runs]
                    run_end[j] = run_end[n_runs]
                    continue
                if space[run_at[j]] < top:
                    top = space[run_at[j]]
                    src = j
                j += 1
            # ... unless the pile holds a smaller one: order the pile first
            if pile_lo < pile_hi and pile_min < top:
                if pile_hi - pile_lo < PILE_TO_HEAP or n_runs == MAX_RUNS:
                    for i in range(pile_lo, pile_hi):
                        heap_push(heap, &size, space[i])
                    pile_lo = pile_hi            # its space is free again
                else:
                    sort_pile(space + pile_lo, tmp, pile_hi - pile_lo)
                    run_at[n_runs] = pile_lo
                    run_end[n_runs] = pile_hi
                    n_runs += 1
                    pile_hi = pile_lo            # the next pile grows below this run
                pile_min = UINT64_MAX_KEY
                continue
            if src == -2:
                break
            if src == -1:
                heap_pop(heap, &size)
            else:
                run_at[src] += 1
            pos = <Py_ssize_t>(top & 0xFFFFFFFFU)
            bp = parts[pos].pair
            if (bp >> 32) != (top >> 32):
                continue  # stale: the pair at pos changed, or the part died
            right = nxt[pos]
            parts[pos].id = <tok_t>(bp & 0xFFFFFFFFU)
            parts[pos].pair = NO_PAIR
            parts[right].pair = NO_PAIR   # right is merged into pos
            after = nxt[right]
            nxt[pos] = <int32_t>after
            if after < n:
                prv[after] = <int32_t>pos
                pile_pair(&self.pairs, parts, pos, after, space, &pile_lo, &pile_min)
            before = prv[pos]
            if before >= 0:
                pile_pair(&self.pairs, parts, before, pos, space, &pile_lo, &pile_min)
        i = 0
        while i < n:
            out.data[out.len] = parts[i].id
            out.len += 1
            i = nxt[i]

    # -- Python entry points -------------------------------------------------------------

    def encode_pieces(self, list pieces, bint as_numpy=False, str text=None):
        """Encode a list of str pieces (e.g. from `regex.findall`) in one call.

        When `text` is given and the pieces tile it (their lengths add up to its length, as
        for every standard split pattern), the pieces are located in the UTF-8 of `text`
        itself: no per-piece conversion.  Otherwise the UTF-8 of each piece is gathered (for
        ASCII, CPython's own buffer).  The merging runs with the GIL released.  Raises
        UnicodeEncodeError for lone surrogates."""
        _require_byte_pairs(self)
        cdef Py_ssize_t n = PyList_GET_SIZE(pieces), i, total = 0, nbytes = 0
        cdef const char** ptrs = <const char**>malloc((n + 1) * sizeof(char*))
        cdef Py_ssize_t* lens = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        cdef const char* whole = NULL
        cdef bint ascii = False
        cdef IdBuf out
        cdef Work w
        cdef object piece
        memset(&out, 0, sizeof(IdBuf))
        memset(&w, 0, sizeof(Work))
        try:
            if ptrs == NULL or lens == NULL:
                raise MemoryError()
            for i in range(n):
                piece = <object>PyList_GET_ITEM(pieces, i)
                if not PyUnicode_Check(piece):
                    raise TypeError(f"pieces must be str, not {type(piece).__name__}")
                lens[i] = PyUnicode_GET_LENGTH(piece)
                total += lens[i]
            if text is not None and total == PyUnicode_GET_LENGTH(text):
                whole = PyUnicode_AsUTF8AndSize(text, &nbytes)
                ascii = PyUnicode_IS_ASCII(text)
            else:
                for i in range(n):
                    ptrs[i] = PyUnicode_AsUTF8AndSize(<object>PyList_GET_ITEM(pieces, i), &lens[i])
            with nogil:
                idbuf_reserve(&out, n)
                if whole != NULL:
                    _locate_pieces(<const uint8_t*>whole, ascii, n, ptrs, lens)
                for i in range(n):
                    if lens[i] > 0:
                        self.encode_piece(<const uint8_t*>ptrs[i], lens[i], &out, &w)
            return idbuf_to_numpy(&out) if as_numpy else idbuf_to_list(&out, self.id_objects)
        finally:
            free(ptrs)
            free(lens)
            idbuf_free(&out)
            work_free(&w)

    cdef int encode_utf8(self, const uint8_t* s, Py_ssize_t n, int kind, IdBuf* out, Work* w) except -1 nogil:
        """Split UTF-8 text with the C scanner and encode every piece: one GIL-free pass.
        With w.packed (this thread's PieceCache), pieces are looked up there first.

        The scanner cuts a batch of pieces; a first pass makes each one's key and hash and
        prefetches its cache entry and token slot, so the probes of the second pass find
        them in cache instead of each waiting on memory in turn."""
        cdef Py_ssize_t ends[SCAN_BATCH]
        cdef uint64_t hs[SCAN_BATCH]
        cdef uint64_t k0s[SCAN_BATCH]
        cdef uint64_t k1s[SCAN_BATCH]
        cdef Py_ssize_t pos = 0, k, i, ln, start
        cdef uint64_t h
        cdef PackedEntry* packed = w.packed
        cdef PackedEntry* pe
        cdef const uint8_t* end = s + n
        cdef const int32_t* byte_id = self.tok.byte_id
        if packed == NULL:
            while pos < n:
                k = scan_pieces(kind, s, n, pos, ends, SCAN_BATCH)
                if k <= 0:
                    break
                if w.ends != NULL:
                    append_ends(w.ends, ends, k)
                for i in range(k):
                    self.encode_piece(s + pos, ends[i] - pos, out, w)
                    pos = ends[i]
            return 0
        while pos < n:
            k = scan_pieces(kind, s, n, pos, ends, SCAN_BATCH)
            if k <= 0:
                break
            if w.ends != NULL:
                append_ends(w.ends, ends, k)
            # every id covers at least one byte; the slack takes the fixed-size copies below
            idbuf_reserve(out, ends[k - 1] - pos + CACHE_MAX_IDS + 2)
            start = pos
            for i in range(k):
                ln = ends[i] - start
                if ln <= PACKED_MAX:
                    if ln > 1:
                        packed_key(s + start, ln, end, &k0s[i], &k1s[i])
                        h = packed_hash(k0s[i], k1s[i])
                        hs[i] = h
                        prefetch(&packed[h & (PACKED_SIZE - 1)])
                        prefetch(&self.tok.slots[h & self.tok.mask])
                elif ln <= CACHE_MAX_PIECE:
                    h = hash_in_text(s + start, ln, end)
                    hs[i] = h
                    prefetch(&w.cache[h & (CACHE_SIZE - 1)])
                    prefetch(&self.tok.slots[h & self.tok.mask])
                start = ends[i]
            for i in range(k):
                ln = ends[i] - pos
                if ln == 1:   # one byte: its id (spaces, punctuation)
                    out.data[out.len] = <tok_t>byte_id[s[pos]]
                    out.len += 1
                elif ln <= PACKED_MAX:
                    pe = &packed[hs[i] & (PACKED_SIZE - 1)]
                    if pe.k0 == k0s[i] and pe.k1 == k1s[i]:
                        # one 16-byte copy (ids and n_ids); only n_ids of them count
                        memcpy(out.data + out.len, pe.ids, 16)
                        out.len += pe.n_ids
                    else:
                        encode_uncached(self, s + pos, ln, hs[i], k0s[i], k1s[i], out, w)
                elif ln <= CACHE_MAX_PIECE:
                    encode_uncached(self, s + pos, ln, hs[i], load_word(s + pos, ln, end), 0, out, w)
                else:
                    self.encode_piece(s + pos, ln, out, w)
                pos = ends[i]
        return 0

    def encode_text(self, str text, int kind, bint as_numpy=False):
        """Encode text whose split pattern the C scanner knows (`kind`, see _pretokenize).
        UTF-8 conversion, scanning and merging run in one call with the GIL released.
        Raises UnicodeEncodeError for lone surrogates."""
        _require_byte_pairs(self)
        cdef IdBuf out
        cdef Work w
        cdef Utf8Text u
        if kind < 0:
            raise ValueError("encode_text needs a pattern the C scanner knows")
        cdef PieceCache cache = thread_cache(self)
        memset(&out, 0, sizeof(IdBuf))
        memset(&w, 0, sizeof(Work))
        w.packed = cache.packed
        w.cache = cache.entries
        utf8_text_open(text, &u)
        try:
            with nogil:
                if utf8_text_convert(&u) == 0:
                    self.encode_utf8(u.s, u.n, kind, &out, &w)
            utf8_text_check(text, &u)
            return idbuf_to_numpy(&out) if as_numpy else idbuf_to_list(&out, self.id_objects)
        finally:
            utf8_text_close(&u)
            idbuf_free(&out)
            work_free(&w)

    def encode_texts(self, list texts, int kind, bint with_pieces=False):
        """Encode many texts (exact str; see encode_text) with the C scanner in one GIL-free
        pass; returns a list of lists of ids.  Batch encoding calls this once per thread's
        share, so the threads rarely meet at the GIL.  With `with_pieces`, each text gives
        (ids, piece ends) instead: the list of ids and a numpy uint32 array of the ends, in
        bytes of its UTF-8, that the same scan cut: what fastbpe.hf builds Encodings from
        (offsets and word ids, made only when read).  Raises UnicodeEncodeError if
        any text has a lone surrogate; with pieces, ValueError for a text of 4 GiB or more."""
        _require_byte_pairs(self)
        cdef Py_ssize_t n = PyList_GET_SIZE(texts), i
        cdef Utf8Text* us = <Utf8Text*>calloc(n + 1, sizeof(Utf8Text))
        cdef IdBuf* outs = <IdBuf*>calloc(n + 1, sizeof(IdBuf))
        cdef IdBuf* piece_ends = <IdBuf*>calloc(n + 1, sizeof(IdBuf)) if with_pieces else NULL
        cdef Work w
        cdef object t
        cdef PieceCache cache
        cdef Py_ssize_t too_long = -1
        if kind < 0:
            raise ValueError("encode_texts needs a pattern the C scanner knows")
        cache = thread_cache(self)
        memset(&w, 0, sizeof(Work))
        w.packed = cache.packed
        w.cache = cache.entries
        try:
            if us == NULL or outs == NULL or (with_pieces and piece_ends == NULL):
                raise MemoryError()
            for i in range(n):
                t = <object>PyList_GET_ITEM(texts, i)
                if type(t) is not str:
                    raise TypeError(f"expected str, not {type(t).__name__}")
                utf8_text_open(t, &us[i])
            with nogil:
                for i in range(n):
                    if utf8_text_convert(&us[i]) != 0:
                        break
                    if with_pieces:
                        if us[i].n > <Py_ssize_t>UINT32_MAX:
                            too_long = i
                            break
                        w.ends = &piece_ends[i]   # the piece ends of the same scan
                    self.encode_utf8(us[i].s, us[i].n, kind, &outs[i], &w)
                    utf8_text_close(&us[i])   # the cache keeps no pointer into a text
            for i in range(n):
                utf8_text_check(<object>PyList_GET_ITEM(texts, i), &us[i])
            if too_long >= 0:
                raise ValueError(f"text {too_long} is 4 GiB or more of UTF-8")
            if with_pieces:
                return [(idbuf_to_list(&outs[i], self.id_objects), idbuf_to_numpy(&piece_ends[i]))
                        for i in range(n)]
            return [idbuf_to_list(&outs[i], self.id_objects) for i in range(n)]
        finally:
            for i in range(n):
                if outs != NULL:
                    idbuf_free(&outs[i])
                if piece_ends != NULL:
                    idbuf_free(&piece_ends[i])
                if us != NULL:
                    utf8_text_close(&us[i])
            free(outs)
            free(piece_ends)
            free(us)
            work_free(&w)

    def encode_documents(self, const uint8_t[::1] data, const int64_t[::1] starts,
                         const int64_t[::1] ends, int kind, int64_t separator):
        """Encode the documents data[starts[i]:ends[i]] (valid UTF-8) in one GIL-free pass,
        with `separator` appended after each when it is >= 0.  Returns (uint32 ids, int64
        stops): the ids of document i, its separator included, stop at stops[i].  The corpus
        path (fastbpe/corpus.py) calls this once per block of a file, its documents located
        in place, so many small documents cost one call, one array and no copies."""
        _require_byte_pairs(self)
        cdef Py_ssize_t n_docs = starts.shape[0], i
        cdef IdBuf out
        cdef Work w
        cdef PieceCache cache
        if kind < 0:
            raise ValueError("encode_documents needs a pattern the C scanner knows")
        if ends.shape[0] != n_docs:
            raise ValueError("starts and ends differ in length")
        if separator >= self.tok.n_ids or separator > UINT32_MAX:
            raise ValueError(f"separator {separator} is not a token of this vocabulary")
        for i in range(n_docs):
            if starts[i] < 0 or starts[i] > ends[i] or ends[i] > data.shape[0]:
                raise ValueError(f"document {i} ({starts[i]}:{ends[i]}) is not inside data")
        np = _np()
        stops = np.empty(n_docs, dtype=np.int64)
        cdef int64_t[::1] stops_view = stops
        cdef bint valid = True
        with nogil:
            for i in range(n_docs):
                if not utf8_valid(&data[0] + starts[i], ends[i] - starts[i]):
                    valid = False
                    break
        if not valid:
            return None
        cache = thread_cache(self)
        memset(&out, 0, sizeof(IdBuf))
        memset(&w, 0, sizeof(Work))
        w.packed = cache.packed
        w.cache = cache.entries
        try:
            with nogil:
                idbuf_reserve(&out, data.shape[0] // 4 + n_docs + 16)
                for i in range(n_docs):
                    if ends[i] > starts[i]:
                        self.encode_utf8(&data[0] + starts[i], ends[i] - starts[i], kind, &out, &w)
                    if separator >= 0:
                        idbuf_reserve(&out, 1)
                        out.data[out.len] = <tok_t>separator
                        out.len += 1
                    stops_view[i] = out.len
            return idbuf_to_numpy(&out), stops
        finally:
            idbuf_free(&out)
            work_free(&w)

    def encode_bytes(self, const uint8_t[::1] data, bint as_numpy=False, str path="auto"):
        """Encode bytes as one piece (no splitting).  path="scan" or "heap" forces one merge
        algorithm (for tests: both must give the same ids)."""
        _require_byte_pairs(self)
        cdef IdBuf out
        cdef Work w
        cdef Py_ssize_t n = data.shape[0]
        cdef int which = {"auto": 0, "scan": 1, "heap": 2}[path]
        memset(&out, 0, sizeof(IdBuf))
        memset(&w, 0, sizeof(Work))
        try:
            if n:
                with nogil:
                    if which == 0 or n < 2:
                        self.encode_piece(&data[0], n, &out, &w)
                    else:
                        work_reserve(&w, n)
                        idbuf_reserve(&out, n)
                        if which == 1:
                            self._merge_small(&data[0], n, &out, &w)
                        else:
                            self._merge_heap(&data[0], n, &out, &w)
            return idbuf_to_numpy(&out) if as_numpy else idbuf_to_list(&out, self.id_objects)
        finally:
            idbuf_free(&out)
            work_free(&w)

    def lookup_bytes(self, const uint8_t[::1] data):
        """The BPE token id whose bytes are exactly data, or -1."""
        if data.shape[0] == 0:
            return -1
        return self.lookup(&data[0], data.shape[0])

    def token_bytes(self, Py_ssize_t token):
        """The bytes of one token (BPE or special); KeyError for an unknown id."""
        if token < 0 or token >= self.tok.n_ids or self.tok.start[token] < 0:
            raise KeyError(token)
        return PyBytes_FromStringAndSize(<char*>self.tok.data + self.tok.start[token],
                                         self.tok.length[token])

    @property
    def n_pairs(self):
        return self.pairs.count

    def decode_bytes(self, tokens):
        """The concatenated bytes of a sequence of token ids. KeyError for an unknown id,
        OverflowError for a negative or huge one, TypeError for a non-integer."""
        cdef Py_ssize_t n, i, total = 0
        cdef const uint32_t[::1] ids32
        cdef bytes res
        cdef char* dst
        np = sys.modules.get("numpy")  # without numpy loaded, tokens cannot be an array
        if np is not None and isinstance(tokens, np.ndarray):
            if tokens.ndim != 1 or tokens.dtype.kind not in "iu":
                raise TypeError("tokens must be a 1-d integer array")
            if tokens.size and (tokens.min() < 0 or tokens.max() > UINT32_MAX):
                raise OverflowError("out of range integral type conversion attempted")
            ids32 = np.ascontiguousarray(tokens, dtype=np.uint32)
        else:
            if (isinstance(tokens, (str, bytes, set, frozenset, dict))
                    or not hasattr(tokens, "__len__")):  # unordered: no defined token order
                raise TypeError(f"'{type(tokens).__name__}' object is not a sequence of token ids")
            ids32 = _ids_from_sequence(tokens)
        n = ids32.shape[0]
        for i in range(n):
            if ids32[i] >= <uint32_t>self.tok.n_ids or self.tok.start[ids32[i]] < 0:
                raise KeyError(f"Invalid token for decoding: {ids32[i]}")
            total += self.tok.length[ids32[i]]
        res = PyBytes_FromStringAndSize(NULL, total)
        dst = PyBytes_AS_STRING(res)
        with nogil:
            for i in range(n):
                memcpy(dst, self.tok.data + self.tok.start[ids32[i]], self.tok.length[ids32[i]])
                dst += self.tok.length[ids32[i]]
        return res


cdef int append_ends(IdBuf* out, const Py_ssize_t* ends, Py_ssize_t k) except -1 nogil:
    """Append k piece ends (byte offsets in a text of < 4 GiB) to out."""
    cdef Py_ssize_t i
    idbuf_reserve(out, k)
    for i in range(k):
        out.data[out.len + i] = <tok_t>ends[i]
    out.len += k
    return 0


cdef void _locate_pieces(const uint8_t* s, bint ascii, Py_ssize_t n, const char** ptrs,
                         Py_ssize_t* lens) noexcept nogil:
    """Turn consecutive character counts lens[i] into (pointer, byte length) spans of s."""
    cdef Py_ssize_t i, k, b = 0, start
    cdef uint8_t c
    for i in range(n):
        start = b
        if ascii:
            b += lens[i]
        else:
            for k in range(lens[i]):
                c = s[b]
                b += 1 if c < 0x80 else (2 if c < 0xE0 else (3 if c < 0xF0 else 4))
        ptrs[i] = <const char*>(s + start)
        lens[i] = b - start


cdef list _as_list(token_bytes):
    cdef list tokens = token_bytes if type(token_bytes) is list else list(token_bytes)
    for t in tokens:
        if t is not None and type(t) is not bytes:
            raise TypeError(f"tokens must be bytes, not {type(t).__name__}")
    return tokens


cdef object _ids_from_sequence(tokens):
    """A uint32 array from a Python sequence of ints, with tiktoken's errors."""
    if type(tokens) is not list and type(tokens) is not tuple:
        tokens = list(tokens)  # every item even when the object's __len__ is wrong
    cdef Py_ssize_t n = len(tokens), i
    arr = memoryview(bytearray(4 * n)).cast("I")
    cdef uint32_t[::1] v = arr
    cdef object t
    cdef unsigned long long x
    i = 0
    for t in tokens:
        if i >= n:
            break
        if t.__class__ is not int:
            t = PyNumber_Index(t)  # TypeError for str/float, like tiktoken
        if t < 0 or t > UINT32_MAX:
            raise OverflowError("out of range integral type conversion attempted")
        v[i] = <uint32_t>t
        i += 1
    return arr[:i]


cdef int _require_byte_pairs(BPETable table) except -1:
    """Byte encoding needs every single byte as a token (see from_merges' require_all_bytes)."""
    if table.byte_pairs == NULL:
        raise ValueError("this table lacks single-byte tokens (built with require_all_bytes=False): "
                         "it can only merge given ids (merge_ids), not encode bytes")
    return 0
