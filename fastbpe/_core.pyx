# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The encode kernel: byte-level BPE over integer tables, with the GIL released.

A `BPETable` is built once per vocabulary and is only read afterwards, so any number of
threads may encode with one table at once (each call owns its own scratch space).  Its
parts live beside it, one concern each:

* `_vocab`: the token table (id -> bytes, bytes -> id) and the pair table ((left id,
  right id) -> (rank, merged id)), and how both merge semantics of DESIGN.md §2 fill them;
* `_piece_cache`: each thread's cache of piece -> ids, living across calls;
* `_merge`: the merge loops (a linear scan for short pieces, a heap for long ones);
* `_pretokenize`: the C scanner that cuts text into pieces.

This module is the loop that ties them together (`encode_utf8`: scan a batch of pieces,
probe the cache, look up whole tokens, merge the rest) and its Python entry points.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.ref cimport Py_INCREF, PyObject
from cpython.pythread cimport PyThread_get_thread_ident
from cpython.unicode cimport PyUnicode_Check, PyUnicode_GET_LENGTH

from fastbpe._id_output cimport id_ints, idbuf_to_array, idbuf_to_list, idbuf_to_numpy, ids_to_list, batch_lists
from fastbpe._hash cimport PACKED_MAX, hash_in_text, load_word, packed_hash, packed_key, piece_hash
from fastbpe._merge cimport merge_heap, merge_known_bytes, merge_piece, merge_scan
from fastbpe._piece_cache cimport (CACHE_MAX_IDS, CACHE_MAX_PIECE, CACHE_SIZE, PACKED_MAX_IDS,
                                   cache_find, cache_store, packed_store, spill_find, spill_store)
from fastbpe._pretokenize cimport scan_pieces
from fastbpe._scan_program cimport DROPPED
from fastbpe._vocab cimport (TokenSlot, tok_t, build_byte_pairs, build_char_tokens, build_split_table, bytes_have_tokens,
                              check_bytes_present, load_head, pair_put, pair_table_free, pair_table_init, token_lookup,
                              token_lookup_hashed, decode_tokens, token_list, token_table_free, token_table_load)
from fastbpe._word_marks cimport marked_byte_ids, merge_marked
from fastbpe._workspace cimport (CacheEntry, PackedEntry, idbuf_append_ends, idbuf_free, idbuf_reserve,
                                 idbufs_free, work_free, work_reserve)
from fastbpe._utf8 cimport (Utf8Text, utf8_piece_spans, utf8_text_check, utf8_text_close,
                            utf8_text_convert, utf8_text_open, utf8_texts_free, utf8_texts_open)
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t, uint64_t, UINT32_MAX
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memset

import array
import threading


cdef object _np():
    """numpy, imported on first use: encoding to lists never needs it (nor `import fastbpe`)."""
    import numpy
    return numpy

cdef extern from "_portable.h":   # __builtin_prefetch, or MSVC's, or nothing; relaxed atomic bytes
    void prefetch "fb_prefetch"(const void* p) noexcept nogil
    uint8_t fb_load_u8(const uint8_t* p) noexcept nogil
    void fb_store_u8(uint8_t* p, uint8_t v) noexcept nogil

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL
    bint PyUnicode_IS_ASCII(object s)

cdef enum:
    SELF_MERGING = 1         # self_merging: merging the token's bytes gives the token
    NOT_SELF_MERGING = 2     # ... gives several tokens (0: not known yet)
    SCAN_BATCH = 512         # pieces the scanner cuts per call of encode_utf8's loop
    CACHE_TABLES_PER_THREAD = 4   # a thread keeps caches for its 4 most recently used tables
    SCRATCH_KEPT = 4096      # merge scratch for pieces up to this size stays with the thread's cache
    KEEP_GIL_BELOW = 1024    # encode_text keeps the GIL for texts of fewer characters: releasing
                             # and taking it back costs more than such a call's work in parallel
    KEPT_IDS = 262144        # encode_text's output buffer stays with the thread's cache up to this size (1 MiB)


# ----------------------------------------------------------------------------------------
# the piece cache: piece bytes -> ids, per thread and per table, living across calls

_thread_state = threading.local()


cdef PieceCache thread_cache(BPETable table):
    """This thread's piece cache for table, made on first use.

    A thread keeps the caches of its CACHE_TABLES_PER_THREAD most recently used tables
    (dropping the least recently used) and they go when the thread ends: memory stays
    bounded, no two threads share a cache, tables never see each other's ids.  Keyed by
    the table's serial (ids of objects are reused).  The table also keeps the cache of the
    thread that used it last: a thread's repeated calls skip the thread-local lookup."""
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


cdef int encode_uncached(BPETable table, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t k0,
                         uint64_t k1, IdBuf* out, Work* w) except -1 nogil:
    """Append the ids of a piece of 2..CACHE_MAX_PIECE bytes its packed entry lacks (h:
    piece_hash; k0, k1: its packed key, or k0 = its first 8 bytes), and remember them."""
    cdef Py_ssize_t before = out.len, count
    if table.encode_piece_hashed(p, n, h, k0, out, w) == 1:
        return 0   # from the long entries
    count = out.len - before
    if n <= PACKED_MAX and count <= PACKED_MAX_IDS:
        packed_store(w.packed, w.packed_mask, h, k0, k1, out.data + before, count)
    elif count <= CACHE_MAX_IDS:
        cache_store(w.cache, p, n, h, out.data + before, count)
        if n <= PACKED_MAX:   # marked: its packed entry says where its ids are
            packed_store(w.packed, w.packed_mask, h, k0, k1, NULL, 0)
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
        token_table_free(&self.tok)
        pair_table_free(&self.pairs)
        free(self.byte_pairs)
        free(self.char_tokens)
        free(self.self_merging)

    # -- construction --------------------------------------------------------------------

    cdef int _load_tokens(self, list token_bytes, dict special_bytes, bint unique) except -1:
        """Fill the token table (see _vocab.token_table_load)."""
        token_table_load(&self.tok, token_bytes, special_bytes, unique)
        self.n_bpe_tokens = len(token_bytes)
        self.id_objects = id_ints(self.tok.n_ids, self.n_bpe_tokens + len(special_bytes))   # idbuf_to_list's ints
        return 0

    cdef int _finish(self) except -1:
        """The single-byte pair table and the merge loops' view, once both tables are full."""
        self.byte_pairs = build_byte_pairs(&self.tok, &self.pairs)
        if not self.word_marks:   # (its proof knows no marks: a marked merge starts from bytes)
            self.char_tokens = build_char_tokens(&self.tok, &self.pairs, self.byte_pairs)
        self.merge.pairs = &self.pairs
        self.merge.byte_pairs = self.byte_pairs
        self.merge.byte_id = self.tok.byte_id
        self.merge.char_tokens = self.char_tokens
        marked_byte_ids(&self.merge, self.word_marks, self.partial_bytes, self.piece_byte_id)
        return 0

    @staticmethod
    def from_ranks(token_bytes, dict special_bytes=None):
        """tiktoken semantics. token_bytes[rank] is the bytes of the token with that rank (None
        for a rank that is not used); special_bytes maps special-token ids to their bytes."""
        cdef BPETable self = BPETable.__new__(BPETable)
        self.whole_piece = True
        self._load_tokens(token_list(token_bytes), special_bytes or {}, True)
        check_bytes_present(&self.tok)
        build_split_table(&self.tok, self.n_bpe_tokens, &self.pairs)
        self._finish()
        return self

    @staticmethod
    def from_merges(merges, token_bytes, dict special_bytes=None, bint whole_piece=False,
                    bint require_all_bytes=True, ranks=None, bint skip_missing_bytes=False, int word_marks=0):
        """Merge-list semantics. merges is an (m, 3) int array of (left, right, new id) in merge
        order (row i has rank i); token_bytes[id] is the bytes of each token (None if unused).
        whole_piece=True also emits a piece that is itself a token directly (HF ignore_merges).
        require_all_bytes=False allows a vocabulary without all 256 single bytes (a char-level
        model that only merges from given ids, see `merge_ids`); encoding bytes needs them, or
        skip_missing_bytes (a byte without one is skipped, as HF: GPT-NeoX's and Falcon's).
        ranks (optional, m ints): row i's rank instead of i; equal ranks merge leftmost first
        (SentencePiece BPE by scores: the rank is the merged token's score order).  word_marks:
        _word_marks.MARK_* bits, every piece merged between those marks' tokens (no whole_piece)."""
        cdef BPETable self = BPETable.__new__(BPETable)
        # an array.array('q') of 3m ids (_formats.hf_merge_rows: no numpy), or what numpy reads as (m, 3)
        cdef const int64_t[::1] flat = merges if isinstance(merges, array.array) and merges.typecode == "q" \
            else _np().ascontiguousarray(merges, dtype="int64").reshape(-1, 3).reshape(-1)
        if flat.shape[0] % 3:
            raise ValueError("merges must be rows of (left, right, new id)")
        cdef Py_ssize_t i, n = flat.shape[0] // 3, n_bpe = len(token_bytes)
        cdef int64_t[::1] r = None
        if ranks is not None:
            r = ranks if isinstance(ranks, array.array) and ranks.typecode == "q" \
                else _np().ascontiguousarray(ranks, dtype="int64").reshape(-1)   # array('q'): no numpy import
            if r.shape[0] != n:
                raise ValueError(f"{r.shape[0]} ranks for {n} merges")
            for i in range(n):
                if not 0 <= r[i] < 0xFFFFFFFF:
                    raise ValueError(f"rank {r[i]} of merge {i} is out of range")
        self.whole_piece = whole_piece and not word_marks
        self.word_marks = word_marks
        self._load_tokens(token_list(token_bytes), special_bytes or {}, False)
        if not whole_piece and not word_marks:   # (a marked piece is never looked up whole)
            self.self_merging = <uint8_t*>calloc(self.tok.n_ids + 1, 1)
            if self.self_merging == NULL:
                raise MemoryError()
        if require_all_bytes and not skip_missing_bytes:
            check_bytes_present(&self.tok)
        pair_table_init(&self.pairs, n)
        for i in range(n):
            if not (0 <= flat[3 * i] < n_bpe and 0 <= flat[3 * i + 1] < n_bpe and 0 <= flat[3 * i + 2] < n_bpe):
                raise ValueError(f"merge {i} refers to a token id outside the vocabulary")
            if self.tok.start[flat[3 * i]] < 0 or self.tok.start[flat[3 * i + 1]] < 0 or self.tok.start[flat[3 * i + 2]] < 0:
                raise ValueError(f"merge {i} refers to an unused token id")
            pair_put(&self.pairs, <tok_t>flat[3 * i], <tok_t>flat[3 * i + 1], <uint32_t>(i if r is None else r[i]),
                     <tok_t>flat[3 * i + 2])
        self.partial_bytes = any(self.tok.byte_id[i] < 0 for i in range(256))
        if skip_missing_bytes or not self.partial_bytes:   # else only merge_ids can use it
            self._finish()
        return self

    cdef int require_byte_pairs(self) except -1:
        """Byte encoding needs every single byte as a token (see from_merges' require_all_bytes)."""
        if self.byte_pairs == NULL:
            raise ValueError("this table lacks single-byte tokens (built with require_all_bytes=False): "
                             "it can only merge given ids (merge_ids), not encode bytes")
        return 0

    # -- lookups -------------------------------------------------------------------------

    cdef int32_t lookup(self, const uint8_t* p, Py_ssize_t n) noexcept nogil:
        """The id of the BPE token whose bytes are p[:n], or -1."""
        return token_lookup(&self.tok, p, n)

    def learn_whole_tokens(self, Py_ssize_t max_len=64):
        """Find out now, for every token of up to max_len bytes, whether merging its bytes
        gives the token itself (self_merging), instead of at each token's first meeting in a
        text.  Returns how many tokens it settled (0 for tiktoken semantics: nothing to do)."""
        cdef IdBuf out
        cdef Work w
        cdef Py_ssize_t t, ln, settled = 0
        if self.self_merging == NULL or self.byte_pairs == NULL:
            return 0
        memset(&out, 0, sizeof(IdBuf))
        memset(&w, 0, sizeof(Work))
        try:
            with nogil:
                for t in range(self.n_bpe_tokens):
                    ln = self.tok.length[t]
                    if self.tok.start[t] < 0 or ln < 2 or ln > max_len or self.self_merging[t] != 0:
                        continue
                    work_reserve(&w, ln)
                    out.len = 0
                    idbuf_reserve(&out, ln)
                    merge_known_bytes(&self.merge, self.tok.data + self.tok.start[t], ln, &out, &w)
                    fb_store_u8(&self.self_merging[t],
                                SELF_MERGING if out.len == 1 and out.data[0] == <tok_t>t else NOT_SELF_MERGING)
                    settled += 1
        finally:
            idbuf_free(&out)
            work_free(&w)
        return settled

    # -- the merge kernel ----------------------------------------------------------------

    cdef int encode_piece(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil:
        """Append the ids of one piece (n >= 1 bytes) to out."""
        if n == 1:   # its id; none for a byte without a token (as HF skips it)
            idbuf_reserve(out, 1)
            out.data[out.len] = <tok_t>self.piece_byte_id[p[0]]
            out.len += self.piece_byte_id[p[0]] >= 0
            return 0
        return self.encode_piece_hashed(p, n, piece_hash(p, n), load_head(p, n), out, w)

    cdef int encode_piece_hashed(self, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t head,
                                 IdBuf* out, Work* w) except -1 nogil:
        """`encode_piece` for n >= 2 with the piece's hash and head already computed.
        Returns 1 when the ids came from w.cache's long entries or w.spill (nothing new to
        remember), else 0.

        A piece that is a token costs one lookup: with tiktoken semantics (and HF's
        ignore_merges) it is that token; with merge lists it is when merging its bytes gives
        the token itself, which the table learns the first time it meets each token
        (self_merging, one byte per token) and then knows for good."""
        cdef int32_t whole = -1
        cdef uint8_t state = 0
        cdef Py_ssize_t before, count
        cdef bint spillable
        cdef CacheEntry* e
        if self.whole_piece or self.self_merging != NULL:
            whole = token_lookup_hashed(&self.tok, p, n, h, head)
            if whole >= 0:
                if not self.whole_piece:
                    state = fb_load_u8(&self.self_merging[whole])
                if self.whole_piece or state == SELF_MERGING:
                    idbuf_reserve(out, 1)
                    out.data[out.len] = <tok_t>whole
                    out.len += 1
                    return 0
        # with packed entries, a short piece's long entry is found through its packed one
        if w.cache != NULL and n <= CACHE_MAX_PIECE and (n > PACKED_MAX or w.packed == NULL):
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
        # the spill cache keeps pieces too long for the entries above, and short ones of too
        # many ids; those are nearly all non-ASCII (runs of CJK characters), so an ASCII
        # piece of up to CACHE_MAX_PIECE bytes is never looked for there (nor kept): English
        # merges would pay a probe each for nothing
        spillable = w.spill != NULL and (n > CACHE_MAX_PIECE or (n > CACHE_MAX_IDS and (p[0] | p[1]) >= 0x80))
        count = spill_find(w.spill, p, n, h, out.data + before) if spillable else -1
        if count >= 0:
            out.len += count
            return 1
        if self.word_marks:
            merge_marked(&self.merge, self.word_marks, self.partial_bytes, p, n, out, w)
        elif self.partial_bytes:   # some bytes have no token: skipped, as HF
            merge_known_bytes(&self.merge, p, n, out, w)
        else:
            merge_piece(&self.merge, p, n, out, w)
        if spillable and (n > CACHE_MAX_PIECE or out.len - before > CACHE_MAX_IDS):
            spill_store(w.spill, p, n, h, out.data + before, out.len - before)
        if whole >= 0 and state == 0:
            fb_store_u8(&self.self_merging[whole],
                        SELF_MERGING if out.len - before == 1 and out.data[before] == <tok_t>whole
                        else NOT_SELF_MERGING)
        return 0

    # -- Python entry points -------------------------------------------------------------

    def encode_pieces(self, list pieces, bint as_numpy=False, str text=None):
        """Encode a list of str pieces (e.g. from `regex.findall`) in one call.

        When `text` is given and the pieces tile it (their lengths add up to its length, as
        for every standard split pattern), the pieces are located in the UTF-8 of `text`
        itself: no per-piece conversion.  Otherwise the UTF-8 of each piece is gathered (for
        ASCII, CPython's own buffer).  The merging runs with the GIL released.  Raises
        UnicodeEncodeError for lone surrogates."""
        self.require_byte_pairs()
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
                    utf8_piece_spans(<const uint8_t*>whole, ascii, n, ptrs, lens)
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
        w.packed and w.cache are this thread's PieceCache for the table (every caller sets
        them: thread_cache); pieces are looked up there first.

        The scanner cuts a batch of pieces; a first pass makes each one's key and hash and
        prefetches its cache entry and token slot, so the probes of the second pass find
        them in cache instead of each waiting on memory in turn."""
        cdef Py_ssize_t ends[SCAN_BATCH]
        cdef uint64_t hs[SCAN_BATCH]
        cdef uint64_t k0s[SCAN_BATCH]
        cdef uint64_t k1s[SCAN_BATCH]
        cdef PackedEntry* pes[SCAN_BATCH]   # a short piece's entry in the cache
        cdef Py_ssize_t pos = 0, k, i, ln, start
        cdef uint64_t h
        cdef PackedEntry* packed = w.packed
        cdef uint64_t packed_mask = w.packed_mask
        cdef PackedEntry* pe
        cdef CacheEntry* e
        cdef const uint8_t* end = s + n
        cdef const TokenSlot* slots = self.tok.slots
        cdef uint64_t slot_mask = self.tok.mask
        cdef tok_t* od
        cdef Py_ssize_t ol
        cdef uint64_t k0 = 0, k1 = 0
        while pos < n:
            k = scan_pieces(kind, s, n, pos, ends, SCAN_BATCH)
            if k <= 0:
                break
            if w.ends != NULL:
                idbuf_append_ends(w.ends, ends, k)
            # every id covers at least one byte; the slack takes the fixed-size copies below
            idbuf_reserve(out, (ends[k - 1] & ~DROPPED) - pos + CACHE_MAX_IDS + 2)
            start = pos
            for i in range(k):
                ln = ends[i] - start
                if ln <= PACKED_MAX:
                    # one-byte pieces too: a byte's id is remembered as any short piece's
                    packed_key(s + start, ln, end, &k0s[i], &k1s[i])
                    h = hs[i] = packed_hash(k0s[i], k1s[i])
                    pe = pes[i] = &packed[h & packed_mask]
                    prefetch(pe)
                    prefetch(&slots[h & slot_mask])
                elif ln <= CACHE_MAX_PIECE:
                    h = hs[i] = hash_in_text(s + start, ln, end)
                    prefetch(&w.cache[h & (CACHE_SIZE - 1)])
                    prefetch(&slots[h & slot_mask])
                start = ends[i] & ~DROPPED   # (a removed piece's ln is never hashed)
            od = out.data
            ol = out.len
            for i in range(k):
                ln = ends[i] - pos
                if ln <= PACKED_MAX:
                    pe = pes[i]
                    if pe.k0 == k0s[i] and pe.k1 == k1s[i]:
                        # one 16-byte copy (ids and n_ids); only n_ids of them count
                        memcpy(od + ol, pe.ids, 16)
                        if pe.n_ids:
                            ol += pe.n_ids
                            pos = ends[i]
                            continue
                        # n_ids 0 marks 4-6 ids, in the long entries
                        e = cache_find(w.cache, s + pos, ln, hs[i], k0s[i])
                        if e != NULL:
                            memcpy(od + ol, e.ids, CACHE_MAX_IDS * sizeof(tok_t))
                            ol += e.n_ids
                            pos = ends[i]
                            continue
                    k0, k1 = k0s[i], k1s[i]
                elif ln >= DROPPED:   # a piece an HF Split Removed level removes: no ids
                    pos = ends[i] ^ DROPPED
                    continue
                elif ln <= CACHE_MAX_PIECE:
                    k0 = load_word(s + pos, ln, end)
                    k1 = 0
                out.len = ol
                if 1 < ln <= CACHE_MAX_PIECE:
                    encode_uncached(self, s + pos, ln, hs[i], k0, k1, out, w)
                else:   # a long piece, or one byte (without a token: nothing, as HF)
                    self.encode_piece(s + pos, ln, out, w)
                    if ln == 1 and out.len > ol:
                        packed_store(packed, packed_mask, hs[i], k0, k1, out.data + ol, 1)
                od = out.data
                ol = out.len
                pos = ends[i]
            out.len = ol
        return 0

    cpdef object encode_text(self, str text, int kind, int as_numpy=0):
        """Encode text whose split pattern the C scanner knows (`kind`, see _pretokenize).
        UTF-8 conversion, scanning and merging run in one call with the GIL released.
        as_numpy: 0 a list, 1 a numpy uint32 array, 2 bytes of uint32s (what hf.Encoding holds).
        Raises UnicodeEncodeError for lone surrogates."""
        self.require_byte_pairs()
        cdef IdBuf out
        cdef Work* w
        cdef Utf8Text u
        cdef bint short = PyUnicode_GET_LENGTH(text) < KEEP_GIL_BELOW
        if kind < 0:
            raise ValueError("encode_text needs a pattern the C scanner knows")
        cdef PieceCache cache = thread_cache(self)
        # the thread's own scratch and output buffer, kept across calls: a short call
        # allocates none, a long one does not grow its ids by copies again (2% of a 0.5 MB
        # call's instructions).  The buffer is taken out of the cache for the call, so a call
        # made meanwhile in this thread (a finalizer run by the collector when the list is
        # made) finds none and makes its own
        w = &cache.scratch
        cache.lend(w, PyUnicode_GET_LENGTH(text))
        w.ends = NULL
        memset(&out, 0, sizeof(IdBuf))
        out, cache.kept_out = cache.kept_out, out
        utf8_text_open(text, &u)
        try:
            if short:
                if utf8_text_convert(&u) == 0:
                    self.encode_utf8(u.s, u.n, kind, &out, w)
            else:
                with nogil:
                    if utf8_text_convert(&u) == 0:
                        self.encode_utf8(u.s, u.n, kind, &out, w)
            utf8_text_check(text, &u)
            return idbuf_to_list(&out, self.id_objects) if not as_numpy else \
                idbuf_to_numpy(&out) if as_numpy == 1 else PyBytes_FromStringAndSize(<char*>out.data, out.len * sizeof(tok_t))
        finally:
            utf8_text_close(&u)
            if out.cap <= KEPT_IDS and cache.kept_out.data == NULL:
                out.len = 0
                cache.kept_out = out   # back for the next call
            else:
                idbuf_free(&out)
            if w.cap > SCRATCH_KEPT:
                work_free(w)   # a long piece's scratch (40 bytes a byte) is not kept

    def encode_texts(self, list texts, int kind, bint with_pieces=False, bint as_bytes=False):
        """Encode many texts (exact str; see encode_text) with the C scanner in one GIL-free
        pass; returns a list of lists of ids.  Batch encoding calls this once per thread's
        share, so the threads rarely meet at the GIL.  With `with_pieces`, each text gives
        (ids, piece ends) instead: the list of ids and an array.array('I') of the ends, in
        bytes of its UTF-8, that the same scan cut: what fastbpe.hf builds Encodings from
        (offsets and word ids, made only when read).  Raises UnicodeEncodeError if
        any text has a lone surrogate; with pieces, ValueError for a text of 4 GiB or more.
        as_bytes: each text's ids as bytes of uint32s (what hf.Encoding holds), not a list.

        The texts' ids go one after another into the thread's kept output buffer (as
        encode_text's), each text's start noted: no buffer of its own to grow and free."""
        self.require_byte_pairs()
        cdef Py_ssize_t n = PyList_GET_SIZE(texts), i
        cdef Utf8Text* us = <Utf8Text*>calloc(n + 1, sizeof(Utf8Text))
        cdef Py_ssize_t* starts = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        cdef IdBuf* piece_ends = <IdBuf*>calloc(n + 1, sizeof(IdBuf)) if with_pieces else NULL
        cdef IdBuf out
        cdef Work w
        cdef PieceCache cache
        cdef Py_ssize_t too_long = -1, total = 0
        if kind < 0:
            raise ValueError("encode_texts needs a pattern the C scanner knows")
        cache = thread_cache(self)
        memset(&w, 0, sizeof(Work))
        memset(&out, 0, sizeof(IdBuf))
        out, cache.kept_out = cache.kept_out, out   # (a nested call on this thread makes its own)
        try:
            if us == NULL or starts == NULL or (with_pieces and piece_ends == NULL):
                raise MemoryError()
            total = utf8_texts_open(texts, us)
            cache.lend(&w, total)
            with nogil:
                for i in range(n):
                    starts[i] = out.len
                    if utf8_text_convert(&us[i]) != 0:
                        break
                    if with_pieces:
                        if us[i].n > <Py_ssize_t>UINT32_MAX:
                            too_long = i
                            break
                        w.ends = &piece_ends[i]   # the piece ends of the same scan
                    self.encode_utf8(us[i].s, us[i].n, kind, &out, &w)
                    utf8_text_close(&us[i])   # the cache keeps no pointer into a text
                starts[n] = out.len
            for i in range(n):
                utf8_text_check(<object>PyList_GET_ITEM(texts, i), &us[i])
            if too_long >= 0:
                raise ValueError(f"text {too_long} is 4 GiB or more of UTF-8")
            if with_pieces:
                return [(ids_to_list(out.data + starts[i], starts[i + 1] - starts[i], self.id_objects),
                         idbuf_to_array(&piece_ends[i])) for i in range(n)]
            if as_bytes:
                return [PyBytes_FromStringAndSize(<char*>(out.data + starts[i]), (starts[i + 1] - starts[i]) * sizeof(tok_t))
                        for i in range(n)]
            return batch_lists(out.data, starts, n, self.id_objects)
        finally:
            if out.cap <= KEPT_IDS and cache.kept_out.data == NULL:
                out.len = 0
                cache.kept_out = out   # back for the next call
            else:
                idbuf_free(&out)
            free(starts)
            idbufs_free(piece_ends, n)
            utf8_texts_free(us, n)
            work_free(&w)

    def encode_bytes(self, const uint8_t[::1] data, bint as_numpy=False, str path="auto"):
        """Encode bytes as one piece (no splitting).  path="scan" or "heap" forces one merge
        algorithm (for tests: both must give the same ids)."""
        self.require_byte_pairs()
        cdef IdBuf out
        cdef Work w
        cdef Py_ssize_t n = data.shape[0]
        cdef int which = {"auto": 0, "scan": 1, "heap": 2}[path]
        if n and which and not bytes_have_tokens(&self.tok, &data[0], n):   # skipped, as HF (and auto)
            return self.encode_bytes(bytes([b for b in data if self.tok.byte_id[b] >= 0]), as_numpy, path)
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
                            merge_scan(&self.merge, &data[0], n, &out, &w)
                        else:
                            merge_heap(&self.merge, &data[0], n, &out, &w)
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
        return decode_tokens(&self.tok, tokens)
