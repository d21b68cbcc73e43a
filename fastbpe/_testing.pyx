# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Test-only hooks into the kernels' C helpers: the tests compare them with Python's own
(bytes.decode, str.encode), inspect the per-thread piece caches and the scanner's tables,
bitmaps and single pieces; bench/encode_profile.py times the merge loop alone.  No product
code imports this module."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from fastbpe._core cimport BPETable, thread_cache
from fastbpe._hash cimport piece_hash
from fastbpe._merge cimport merge_scan, sort_pile
from fastbpe._piece_cache cimport CACHE_MAX_PIECE, CACHE_SIZE, cache_find, cache_store, spill_find, spill_store
from fastbpe._vocab cimport load_head, pair_get, tok_t
from fastbpe._workspace cimport (CacheEntry, IdBuf, SpillCache, Work, idbuf_free, idbuf_reserve, work_free,
                                 work_reserve)
from fastbpe._pretokenize cimport check_kind, scan_pieces
from fastbpe._scan_chars cimport fb_cp_flags
from fastbpe._utf8 cimport (Utf8Text, utf8_text_check, utf8_text_close, utf8_text_convert,
                            utf8_text_open, utf8_valid)


def thread_piece_cache(BPETable table):
    """This thread's PieceCache for table (for tests and diagnostics)."""
    return thread_cache(table)


def piece_cache_hits_on_one_hash(bytes stored, bytes probe):
    """Force a 64-bit hash collision in the piece cache: keep `stored` (-> ids [1, 2]) under its
    hash in a long entry (if it fits one) and in a spill cache, then look `probe` (as long as
    stored) up under that same hash.  (long entry found, spill found): both False when the
    bytes differ, since an entry's bytes are compared after its hash (for tests)."""
    cdef Py_ssize_t n = len(stored)
    cdef const uint8_t* a = <const uint8_t*>PyBytes_AS_STRING(stored)
    cdef const uint8_t* b = <const uint8_t*>PyBytes_AS_STRING(probe)
    cdef uint64_t h = piece_hash(a, n)
    cdef tok_t ids[2]
    cdef tok_t out[1024]
    cdef SpillCache spill
    cdef CacheEntry* entries
    cdef object long_hit = None
    if len(probe) != n or not 2 <= n <= 1024:
        raise ValueError("two pieces of one length, 2 to 1024 bytes")
    ids[0], ids[1] = 1, 2
    if n <= CACHE_MAX_PIECE:
        entries = <CacheEntry*>calloc(CACHE_SIZE, sizeof(CacheEntry))
        if entries == NULL:
            raise MemoryError()
        cache_store(entries, a, n, h, ids, 2)
        long_hit = cache_find(entries, b, n, h, load_head(b, n)) != NULL
        free(entries)
    memset(&spill, 0, sizeof(SpillCache))
    spill_store(&spill, a, n, h, ids, 2)
    spill_hit = spill_find(&spill, b, n, h, out) >= 0
    free(spill.slots)
    free(spill.pool)
    return long_hit, spill_hit


def sort_pile_keys(list keys):
    """merge_heap's sort_pile on (rank << 32 | position) keys given as a pile stores them (the
    last made first): the keys in order, whether or not the positions of one rank were made in
    ascending order, which takes its fallback full sort (for tests)."""
    cdef Py_ssize_t n = len(keys), i
    cdef uint64_t* buf = <uint64_t*>malloc((2 * n + 1) * sizeof(uint64_t))
    if buf == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            buf[i] = keys[i]
        sort_pile(buf, buf + n, n)
        return [buf[i] for i in range(n)]
    finally:
        free(buf)


def pair_of(BPETable table, tok_t left, tok_t right):
    """(rank, merged id) of the pair from the kernel's pair table (its filter first), or
    None when the pair does not merge (for tests)."""
    cdef uint32_t rank
    cdef tok_t new_id
    if pair_get(&table.pairs, left, right, &rank, &new_id):
        return rank, new_id
    return None


def merge_seconds(BPETable table, list pieces, Py_ssize_t rounds):
    """Seconds that `rounds` passes of merge_scan over `pieces` (bytes of 2..48 bytes, no
    cache, no Python between calls) take: the merge loop's cost for a working set of
    len(pieces) distinct pieces (bench/encode_profile.py)."""
    table.require_byte_pairs()
    cdef Py_ssize_t n = len(pieces), i, r
    cdef const uint8_t** ptrs = <const uint8_t**>malloc((n + 1) * sizeof(uint8_t*))
    cdef Py_ssize_t* lens = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
    cdef IdBuf out
    cdef Work w
    cdef timespec t0, t1
    memset(&out, 0, sizeof(IdBuf))
    memset(&w, 0, sizeof(Work))
    try:
        if ptrs == NULL or lens == NULL:
            raise MemoryError()
        for i, piece in enumerate(pieces):
            if not isinstance(piece, bytes) or not 2 <= PyBytes_GET_SIZE(piece) <= 48:
                raise ValueError("pieces must be bytes of 2 to 48 bytes")
            ptrs[i] = <const uint8_t*>PyBytes_AS_STRING(piece)
            lens[i] = PyBytes_GET_SIZE(piece)
        with nogil:
            work_reserve(&w, 48)
            idbuf_reserve(&out, 48)
            clock_gettime(CLOCK_MONOTONIC, &t0)
            for r in range(rounds):
                for i in range(n):
                    out.len = 0
                    merge_scan(&table.merge, ptrs[i], lens[i], &out, &w)
            clock_gettime(CLOCK_MONOTONIC, &t1)
        return (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9
    finally:
        free(ptrs)
        free(lens)
        idbuf_free(&out)
        work_free(&w)


def is_valid_utf8(const uint8_t[::1] data):
    """utf8_valid for Python callers (the tests compare it with bytes.decode)."""
    if data.shape[0] == 0:
        return True
    return utf8_valid(&data[0], data.shape[0])


def utf8_of(str text):
    """The UTF-8 the GIL-free converter makes of text (the tests compare it with
    str.encode, lone surrogates included)."""
    cdef Utf8Text u
    utf8_text_open(text, &u)
    try:
        with nogil:
            utf8_text_convert(&u)
        utf8_text_check(text, &u)
        return PyBytes_FromStringAndSize(<const char*>u.s, u.n) if u.n else b""
    finally:
        utf8_text_close(&u)


def code_point_flags():
    """The flag byte of every code point 0..0x10FFFF (numpy uint8), read from the tables."""
    import numpy as np
    out = np.empty(0x110000, dtype="uint8")
    cdef uint8_t[::1] view = out
    cdef uint8_t* p = &view[0]
    cdef uint32_t cp
    with nogil:
        for cp in range(0x110000):
            p[cp] = fb_cp_flags(cp)
    return out


def piece_end_at(const unsigned char[::1] data not None, int kind, Py_ssize_t pos):
    """The end of the piece that starts at byte offset `pos`, found by a scan that starts
    there (on the scan path in use: see use_scanner)."""
    check_kind(kind)
    cdef Py_ssize_t n = data.shape[0], end = n
    if pos < 0 or pos > n:
        raise IndexError("pos out of range")
    if pos < n:
        scan_pieces(kind, &data[0], n, pos, &end, 1)
    return end


cdef extern from "_block_classes.h" nogil:
    ctypedef struct fb_window:
        Py_ssize_t start
    enum:
        FB_C_LETTER, FB_C_UPPER, FB_C_LOWER, FB_C_DIGIT, FB_C_SPACE, FB_C_NEWLINE, FB_C_SP, FB_C_QUOTE, FB_C_OTHER
        FB_CLS_SWAR, FB_CLS_SSE2, FB_CLS_AVX2
    void fb_window_init(fb_window* w, Py_ssize_t pos)
    bint fb_window_extend(fb_window* w, const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, bint cases)
    unsigned long long fb_word(const fb_window* w, int k, int i)
    int fb_classifier_set(int which)


_BLOCK_CLASSES = {"letter": FB_C_LETTER, "upper": FB_C_UPPER, "lower": FB_C_LOWER,
                  "digit": FB_C_DIGIT, "space": FB_C_SPACE, "newline": FB_C_NEWLINE,
                  "blank": FB_C_SP, "quote": FB_C_QUOTE, "other": FB_C_OTHER}


def block_classes(const unsigned char[::1] data not None):
    """The block scanner's class bitmaps of data[:256] (one fill of a window, by the
    classifier _pretokenize uses: this module's copy of the classifier choice is set to
    it), as ints: bit i is byte i."""
    from fastbpe import _pretokenize
    fb_classifier_set({"avx2": FB_CLS_AVX2, "sse2": FB_CLS_SSE2}.get(_pretokenize.scanner_in_use(), FB_CLS_SWAR))
    cdef fb_window w
    cdef Py_ssize_t n = min(data.shape[0], 256)
    cdef int i, k
    if n == 0:
        return {name: 0 for name in _BLOCK_CLASSES}
    fb_window_init(&w, 0)
    fb_window_extend(&w, &data[0], n, 0, True)
    out = {}
    for name, k in _BLOCK_CLASSES.items():
        out[name] = sum(int(fb_word(&w, k, i)) << (64 * i) for i in range(4))
    return out


def utf8_kept_by_python(str text):
    """Whether the kernels read text's UTF-8 where CPython keeps it inside the str (made
    when some binding asked for it) instead of converting: for the tests."""
    cdef Utf8Text u
    utf8_text_open(text, &u)
    try:
        return u.owned == NULL and u.kind != 0   # (kind stays 0 for an ASCII str)
    finally:
        utf8_text_close(&u)
