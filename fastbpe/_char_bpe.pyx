# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Char-level BPE (SentencePiece-style: Llama-2, Mistral, Phi-3, Gemma, ChatGLM tokenizer.json
files and SentencePiece `.model` files): a text to ids with the GIL released.

HF's BPE model on one word (`BPE::merge_word`): each character becomes its token when the
vocabulary has it, else the `<0xNN>` tokens of its UTF-8 bytes (`byte_fallback`), else the unk
token (consecutive ones fused into one with `fuse_unk`; dropped without an unk token); then
the merges run, lowest rank first, leftmost on ties.  The merging is the byte-level kernel's
loops on given first parts (`_merge.merge_parts`: a linear scan for short words, sorted runs
and a heap for long ones, O(n log n)), called per piece; this module adds what is around it:
the characters' initial ids from a code point table, the SentencePiece normalizer of these
files (a meta character "▁" prepended, spaces replaced by it: one pass over the UTF-8, made
from the str's code units when CPython has no UTF-8 for it yet), the cut into pieces and the thread's piece cache (`_piece_cache`,
as the byte-level kernel uses it), and HF's character offsets of every token.

Pieces.  Without a pre-tokenizer HF merges a whole text as one word.  Where no merge can
join across a point of the text (`_char_cuts.merge_cuts`, decided per file at load: before a
meta character that follows another character, `cut_before_meta`; between two characters no
merge joins), the text is cut and each piece is merged (or found in the cache) on its own,
with the same result.  One byte loop makes every cut (`encode_cut`: two ASCII bytes by a pair
table, a character that is not ASCII decoded at its first byte only).  A Metaspace
pre-tokenizer with `split` cuts before every meta character (HF's words); `ignore_merges`
then looks each word up whole.  A file whose merges join everywhere is merged whole (the
heap loop: O(n log n)).

`kind` (the argument of encode_text / encode_texts) is a set of flags: how to normalize and
cut (PREPEND, PREPEND_UNLESS_META, REPLACE_SPACE, SPLIT below).
"""
from cpython.unicode cimport PyUnicode_GET_LENGTH
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t, uint64_t, UINT32_MAX
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcmp, memcpy, memset

from fastbpe._char_cuts cimport CUT_AFTER, CUT_BEFORE, CUT_META, CUT_TOKEN
from fastbpe._core cimport BPETable, thread_cache
from fastbpe._hash cimport PACKED_MAX, hash_in_text, load_word, packed_hash, packed_key
from fastbpe._id_output cimport idbuf_to_list, idbuf_to_numpy
from fastbpe._merge cimport merge_parts
from fastbpe._meta_text cimport (F_PREPEND, F_PREPEND_UNLESS_META, F_REPLACE_SPACE, F_SPLIT, KIND_MAX, meta_cut,
                                 meta_normalize, meta_normalize_units, utf8_char)
from fastbpe._piece_cache cimport (CACHE_MAX_IDS, CACHE_MAX_PIECE, CACHE_SIZE, PACKED_MAX_IDS, PieceCache,
                                   cache_find, cache_store, packed_store, spill_find, spill_store)
from fastbpe._utf8 cimport (Utf8Text, utf8_text_check, utf8_text_close, utf8_text_convert, utf8_text_open,
                            utf8_texts_free, utf8_texts_open)
from fastbpe._vocab cimport tok_t, token_lookup
from fastbpe._workspace cimport (CacheEntry, IdBuf, PackedEntry, Work, idbuf_free, idbuf_reserve, idbufs_free,
                                 work_free, work_reserve)

import array

from fastbpe._char_cuts import merge_cuts

# kind flags (_meta_text.pxd): how a text is normalized and cut
PREPEND, PREPEND_UNLESS_META, REPLACE_SPACE, SPLIT = F_PREPEND, F_PREPEND_UNLESS_META, F_REPLACE_SPACE, F_SPLIT
cdef enum:
    FALLBACK_ID = -2      # char_ids: no token for the character (byte fallback or unk)
    SPILL_KEEP = 1024     # _piece_cache's SPILL_MAX_PIECE: longer pieces are not kept
cdef uint64_t META_KEY = 1ULL << 63   # a packed key's flag: the piece starts with the meta character
cdef uint8_t CUT_PAIR[256]   # [flags of a << 4 | flags of b]: cut between a and b (_char_cuts.pxd's rule)
cdef int _fa, _fb
for _fa in range(16):
    for _fb in range(16):
        CUT_PAIR[(_fa << 4) | _fb] = ((_fa & _fb & CUT_TOKEN) and ((_fa & CUT_AFTER) or (_fb & CUT_BEFORE))) or (
            _fb & ~_fa & CUT_META) != 0


cdef class CharBPE:
    """One char-level BPE vocabulary: HF's BPE model with byte_fallback / unk_token /
    fuse_unk / ignore_merges over characters, and the SentencePiece normalizer of its files.
    Read-only after construction: any number of threads may encode with it at once.

    Build with `CharBPE.build`.  `encode_text(text, kind, as_numpy)` and
    `encode_texts(texts, kind, with_pieces)` are `_core.BPETable`'s entry points (the kind is
    this module's flags); `with_pieces` gives each token's character offsets in the text."""
    cdef readonly BPETable table          # the merges (pair table) and token lookup by bytes
    cdef int32_t* bmp_ids                 # [0x10000] a BMP character's token, else FALLBACK_ID
    cdef uint32_t* astral_cps             # characters above the BMP with a token, ascending
    cdef int32_t* astral_ids
    cdef Py_ssize_t n_astral
    cdef int32_t byte_ids[256]            # <0xNN> tokens (-1: none)
    cdef int32_t* token_nbytes            # UTF-8 bytes each token stands for (-1: unknown)
    cdef readonly bint byte_fallback, fuse_unk, ignore_merges, cut_before_meta
    cdef uint64_t ascii_cut[256]          # bit (a, b) at [2a + b / 64]: a piece is cut between a and b
    cdef uint8_t* cut_flags               # [0x10000] a BMP character's CUT_* flags (pairs not both ASCII)
    cdef readonly int32_t unk_id
    cdef uint8_t meta[4]
    cdef int meta_len
    cdef readonly str meta_char

    def __cinit__(self):
        self.bmp_ids = NULL
        self.astral_cps = NULL
        self.astral_ids = NULL
        self.token_nbytes = NULL
        self.cut_flags = NULL

    def __dealloc__(self):
        free(self.bmp_ids)
        free(self.astral_cps)
        free(self.astral_ids)
        free(self.token_nbytes)
        free(self.cut_flags)

    @staticmethod
    def build(dict vocab, merges, unk_token=None, bint byte_fallback=False, bint fuse_unk=False,
              bint ignore_merges=False, str meta="\u2581", ranks=None, BPETable table=None):
        """vocab: {token string: id}; merges: (left id, right id, new id) rows in rank order
        (an array.array('q') of 3m ids, as `_formats.hf_merge_rows` makes, or an (m, 3)
        array); ranks (optional): row i's rank instead of i (SentencePiece scores); table: a
        BPETable already built from the same vocabulary and merges (token bytes = the token
        strings' UTF-8, require_all_bytes=False), shared instead of built again.  Raises
        ValueError for what HF's model would not load or this kernel cannot run exactly: an
        unk token outside the vocabulary, byte_fallback with some `<0xNN>` tokens missing and
        an unk token (HF then puts a pending unk after the fallback bytes), a merge
        involving the unk token."""
        cdef CharBPE self = CharBPE.__new__(CharBPE)
        cdef Py_ssize_t n_ids = max(vocab.values(), default=-1) + 1, i, k, m
        cdef int64_t a, b, c, cp
        cdef bytes meta_utf8 = meta.encode("utf-8")
        if len(meta) != 1:
            raise ValueError(f"the meta character must be one character, got {meta!r}")
        if unk_token is not None and unk_token not in vocab:
            raise ValueError(f"unk_token {unk_token!r} is not in the vocabulary")
        self.meta_char = meta
        self.meta_len = len(meta_utf8)
        memcpy(self.meta, <const char*>meta_utf8, self.meta_len)
        self.byte_fallback, self.fuse_unk, self.ignore_merges = byte_fallback, fuse_unk, ignore_merges
        self.unk_id = vocab[unk_token] if unk_token is not None else -1
        if table is None:   # (hf.model passes its own: then no token is encoded here)
            tokens = [None] * n_ids
            for t, i in vocab.items():
                tokens[i] = t.encode("utf-8", "surrogatepass")
            table = BPETable.from_merges(merges, tokens, None, whole_piece=False, require_all_bytes=False, ranks=ranks)
        self.table = table
        if isinstance(merges, array.array) and merges.typecode == "q":
            rows = merges
        else:
            import numpy
            rows = array.array("q", numpy.ascontiguousarray(merges, dtype="int64").reshape(-1).tobytes())
        m = len(rows) // 3
        # the characters' tokens
        self.bmp_ids = <int32_t*>malloc(0x10000 * sizeof(int32_t))
        self.token_nbytes = <int32_t*>malloc((n_ids + 1) * sizeof(int32_t))
        if self.bmp_ids == NULL or self.token_nbytes == NULL:
            raise MemoryError()
        for i in range(0x10000):
            self.bmp_ids[i] = FALLBACK_ID
        for i in range(n_ids + 1):
            self.token_nbytes[i] = -1
        astral = []
        for t, i in vocab.items():
            if len(t) == 1:
                cp = ord(t)
                if cp < 0x10000:
                    self.bmp_ids[cp] = i
                else:
                    astral.append((cp, i))
                self.token_nbytes[i] = 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4   # its UTF-8
        astral.sort()
        self.n_astral = len(astral)
        self.astral_cps = <uint32_t*>malloc((self.n_astral + 1) * sizeof(uint32_t))
        self.astral_ids = <int32_t*>malloc((self.n_astral + 1) * sizeof(int32_t))
        if self.astral_cps == NULL or self.astral_ids == NULL:
            raise MemoryError()
        for i in range(self.n_astral):
            self.astral_cps[i], self.astral_ids[i] = astral[i]
        all_bytes = True
        for i in range(256):
            b_id = vocab.get(f"<0x{i:02X}>")
            self.byte_ids[i] = -1 if b_id is None else b_id
            if b_id is None:
                all_bytes = False
            elif byte_fallback:
                self.token_nbytes[b_id] = 1
        if byte_fallback and not all_bytes and self.unk_id >= 0:
            raise ValueError("byte_fallback with some <0xNN> tokens missing and an unk token: HF puts a pending "
                             "unk token after the fallback bytes; not compiled")
        # what each merged token stands for, in merge order (unk and what contains it: -1)
        cdef const int64_t[::1] r = rows   # typed: a Python loop over 60k+ merges cost ~30 ms a load
        for i in range(m):
            a, b, c = r[3 * i], r[3 * i + 1], r[3 * i + 2]
            if a == self.unk_id or b == self.unk_id:
                raise ValueError("a merge involves the unk token: not compiled")
            if self.token_nbytes[c] < 0 and self.token_nbytes[a] > 0 and self.token_nbytes[b] > 0:
                self.token_nbytes[c] = self.token_nbytes[a] + self.token_nbytes[b]
        # where merges never reach across (_char_cuts): a piece is cut there
        cut, ascii_cut, cut_flags = merge_cuts(vocab, r, meta, n_ids)
        self.cut_before_meta = cut
        memcpy(self.ascii_cut, <const char*>ascii_cut, sizeof(self.ascii_cut))
        self.cut_flags = <uint8_t*>malloc(0x10000)
        if self.cut_flags == NULL:
            raise MemoryError()
        memcpy(self.cut_flags, <const char*>cut_flags, 0x10000)
        return self

    # -- the initial symbols ---------------------------------------------------------------

    cdef inline int32_t char_id(self, uint32_t cp) noexcept nogil:
        """The token of a character, or FALLBACK_ID."""
        cdef Py_ssize_t lo = 0, hi = self.n_astral, mid
        if cp < 0x10000:
            return self.bmp_ids[cp]
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.astral_cps[mid] < cp:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.n_astral and self.astral_cps[lo] == cp:
            return self.astral_ids[lo]
        return FALLBACK_ID

    cdef inline bint falls_back(self, const uint8_t* p, Py_ssize_t ln) noexcept nogil:
        """Whether byte fallback gives a character's bytes (every <0xNN> token exists)."""
        cdef Py_ssize_t k
        if not self.byte_fallback:
            return False
        for k in range(ln):
            if self.byte_ids[p[k]] < 0:
                return False
        return True

    cdef Py_ssize_t initial_symbols(self, const uint8_t* p, Py_ssize_t n, tok_t* ids) noexcept nogil:
        """HF's merge_word before merging: the initial ids of the word p[:n] (at most n)."""
        cdef Py_ssize_t i = 0, m = 0, ln, k
        cdef uint32_t cp
        cdef int32_t t
        cdef bint pending = False   # an unk symbol not written yet (fuse_unk grows it)
        while i < n:
            if p[i] < 0x80:
                cp = p[i]
                ln = 1
            else:
                ln = utf8_char(p + i, n - i, &cp)
            t = self.char_id(cp)
            if t >= 0:
                if pending:
                    ids[m] = <tok_t>self.unk_id
                    m += 1
                    pending = False
                ids[m] = <tok_t>t
                m += 1
            elif self.falls_back(p + i, ln):
                for k in range(ln):   # (HF writes a pending unk after these: see build)
                    ids[m] = <tok_t>self.byte_ids[p[i + k]]
                    m += 1
            elif self.unk_id >= 0:
                if pending and not self.fuse_unk:
                    ids[m] = <tok_t>self.unk_id
                    m += 1
                pending = True
            i += ln
        if pending:
            ids[m] = <tok_t>self.unk_id
            m += 1
        return m

    cdef int merge_word(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil:
        """Append the ids of the word p[:n]: its initial symbols merged by the byte-level
        kernel's loops (`_merge.merge_parts`: a scan for short words, sorted runs and a heap
        for long ones, never quadratic)."""
        cdef tok_t* ids
        cdef Py_ssize_t m, k
        work_reserve(w, n + 1)
        ids = <tok_t*>(w.heap + 3 * w.cap)   # merge_parts' sorting scratch: free until the parts are made
        m = self.initial_symbols(p, n, ids)
        if m == 0:
            return 0
        for k in range(m):
            w.parts[k].id = ids[k]
        idbuf_reserve(out, m)
        merge_parts(&self.table.pairs, w.parts, m, out, w)
        return 0

    cdef int encode_piece(self, const uint8_t* p, Py_ssize_t n, const uint8_t* end, IdBuf* out,
                          Work* w) except -1 nogil:
        """Append the ids of one piece p[:n] (n >= 1): from the thread's piece cache, else
        merged and remembered."""
        cdef uint64_t h = 0, k0 = 0, k1 = 0
        cdef PackedEntry* pe
        cdef CacheEntry* e
        cdef Py_ssize_t before = out.len, count
        cdef Py_ssize_t ml = self.meta_len
        cdef bint packed = False
        idbuf_reserve(out, n + 8)   # every id covers a byte at least; slack for 16-byte copies
        # a piece that starts with the meta character is keyed by the rest and a flag bit
        # (the length takes the key's top byte's low 4 bits): pieces of up to 18 bytes
        # ("▁" is 3) get a packed entry
        if n > ml and n - ml <= PACKED_MAX and memcmp(p, self.meta, ml) == 0:
            packed = True
            packed_key(p + ml, n - ml, end, &k0, &k1)
            k1 |= META_KEY
        elif n <= PACKED_MAX:
            packed = True
            packed_key(p, n, end, &k0, &k1)
        if packed:
            # packed_hash's low bits (the slot) depend only on the key's first 6 bytes:
            # "▁▁▁III." and "▁▁▁VII." would share a slot; fold its high half in.  (Entries
            # that PieceCache.lend moves when it grows the table then land elsewhere, and
            # are lost once: misses, never wrong ids, since a hit compares the whole key.)
            h = packed_hash(k0, k1)
            h ^= h >> 16
            pe = &w.packed[h & w.packed_mask]
            if pe.k0 == k0 and pe.k1 == k1:
                if pe.n_ids:
                    memcpy(out.data + out.len, pe.ids, 16)
                    out.len += pe.n_ids
                    return 0
                e = cache_find(w.cache, p, n, h, load_word(p, n, end))
                if e != NULL:
                    memcpy(out.data + out.len, e.ids, CACHE_MAX_IDS * sizeof(tok_t))
                    out.len += e.n_ids
                    return 0
        else:
            h = hash_in_text(p, n, end)
            if n <= CACHE_MAX_PIECE:
                k0 = load_word(p, n, end)
                e = cache_find(w.cache, p, n, h, k0)
                if e != NULL:
                    memcpy(out.data + out.len, e.ids, CACHE_MAX_IDS * sizeof(tok_t))
                    out.len += e.n_ids
                    return 0
        # pieces of many ids, and long ones, are kept in the spill tier
        if n <= SPILL_KEEP and w.spill != NULL:
            count = spill_find(w.spill, p, n, h, out.data + out.len)
            if count >= 0:
                out.len += count
                return 0
        self.merge_word(p, n, out, w)
        count = out.len - before
        if packed and count <= PACKED_MAX_IDS:
            packed_store(w.packed, w.packed_mask, h, k0, k1, out.data + before, count)
        elif n <= CACHE_MAX_PIECE and count <= CACHE_MAX_IDS:
            cache_store(w.cache, p, n, h, out.data + before, count)
            if packed:
                packed_store(w.packed, w.packed_mask, h, k0, k1, NULL, 0)
        elif n <= SPILL_KEEP and w.spill != NULL:
            spill_store(w.spill, p, n, h, out.data + before, count)
        return 0

    # -- a whole text ----------------------------------------------------------------------

    cdef inline int word_end(self, IdBuf* words, Py_ssize_t end_byte, Py_ssize_t end_token) except -1 nogil:
        """Record an HF word: its end byte and the end of its tokens in the output."""
        idbuf_reserve(words, 2)
        words.data[words.len] = <tok_t>end_byte
        words.data[words.len + 1] = <tok_t>end_token
        words.len += 2
        return 0

    cdef int encode_normalized(self, const uint8_t* q, Py_ssize_t n, int kind, IdBuf* out, Work* w,
                               IdBuf* words) except -1 nogil:
        """Append the ids of a normalized text q[:n]; with words, each HF word's (end byte,
        end of its ids in out) (word_end)."""
        cdef Py_ssize_t start = 0, stop
        cdef bint split = (kind & F_SPLIT) != 0
        cdef int32_t whole
        if n == 0:
            return 0
        if not split:
            if self.ignore_merges:
                whole = token_lookup(&self.table.tok, q, n)
                if whole >= 0:
                    idbuf_reserve(out, 1)
                    out.data[out.len] = <tok_t>whole
                    out.len += 1
                    if words != NULL:
                        self.word_end(words, n, out.len)
                    return 0
            if not self.cut_before_meta or self.meta_len <= 3:
                self.encode_cut(q, 0, n, q + n, out, w)   # (the cut before a meta character too)
                if words != NULL:
                    self.word_end(words, n, out.len)
                return 0
        while start < n:
            stop = meta_cut(self.meta, self.meta_len, q, n, start, split)
            whole = token_lookup(&self.table.tok, q + start, stop - start) if split and self.ignore_merges else -1
            if whole >= 0:   # ignore_merges: a word that is a token
                idbuf_reserve(out, 1)
                out.data[out.len] = <tok_t>whole
                out.len += 1
            else:
                self.encode_cut(q, start, stop, q + n, out, w)
            if words != NULL and (split or stop == n):
                self.word_end(words, stop, out.len)
            start = stop
        return 0

    cdef int encode_cut(self, const uint8_t* q, Py_ssize_t start, Py_ssize_t stop, const uint8_t* end,
                        IdBuf* out, Work* w) except -1 nogil:
        """Append the ids of q[start:stop] (valid UTF-8), cut between characters no merge joins
        (two ASCII ones: ascii_cut, per pair; else their cut_flags, CUT_PAIR), each part from the
        cache or merged.  A byte loop: a character not ASCII is decoded at its first byte only."""
        cdef Py_ssize_t i = start + 1, s = start, ln, at = start   # at: where the character before i starts
        cdef uint8_t a = q[start], b
        cdef uint32_t cp, last = a      # last: the character before i
        cdef uint8_t fa = 0, fb         # fa: its flags (set when it is not ASCII)
        if a >= 0x80:
            i = start + utf8_char(q + start, stop - start, &last)
            fa = self.cut_flags[last] if last < 0x10000 else 0
        while i < stop:
            b = q[i]
            if (a | b) < 0x80:
                if (self.ascii_cut[2 * a + (b >> 6)] >> (b & 63)) & 1:
                    if i - s == 1:
                        idbuf_reserve(out, 1)
                        out.data[out.len] = <tok_t>self.bmp_ids[a]
                        out.len += 1
                    else:
                        self.encode_piece(q + s, i - s, end, out, w)
                    s = i
                a = b
                i += 1
                continue
            if b < 0x80:
                cp, ln = b, 1
            elif b < 0xE0:   # (a character never runs past stop: no length checks)
                cp, ln = ((b & 0x1F) << 6) | (q[i + 1] & 0x3F), 2
            elif b < 0xF0:
                cp, ln = ((b & 0x0F) << 12) | ((q[i + 1] & 0x3F) << 6) | (q[i + 2] & 0x3F), 3
            else:
                ln = utf8_char(q + i, stop - i, &cp)
            fb = self.cut_flags[cp] if cp < 0x10000 else 0
            if a < 0x80:
                fa = self.cut_flags[a]
                last = a
                at = i - 1
            if CUT_PAIR[(fa << 4) | fb]:
                self.emit_part(q, s, i, at, last, end, out, w)
                s = i
            fa = fb
            last = cp
            at = i
            a = b
            i += ln
        if s == start:
            return self.encode_piece(q + s, stop - s, end, out, w)
        if a < 0x80:
            at = stop - 1
            last = a
        return self.emit_part(q, s, stop, at, last, end, out, w)

    cdef inline int emit_part(self, const uint8_t* q, Py_ssize_t s, Py_ssize_t i, Py_ssize_t at, uint32_t last,
                              const uint8_t* end, IdBuf* out, Work* w) except -1 nogil:
        """Append the ids of the part q[s:i] of a cut piece, whose last character (last) starts
        at q[at]: a part of that one character is its token, when it has one."""
        cdef int32_t t = self.bmp_ids[last] if at == s and last < 0x10000 else FALLBACK_ID
        if t >= 0:
            idbuf_reserve(out, 1)
            out.data[out.len] = <tok_t>t
            out.len += 1
            return 0
        return self.encode_piece(q + s, i - s, end, out, w)

    cdef int token_offsets(self, const uint8_t* q, Py_ssize_t n, bint prepended, const tok_t* ids,
                           const tok_t* words, Py_ssize_t n_words, IdBuf* spans) except -1 nogil:
        """HF's offsets of each token in the original text: (start, end, word) character
        triples appended to spans (ids: the text's tokens; words: word_end's pairs, token
        ends relative to ids).  As HF's Word: within a word a token starts where the one
        before it ends and spans the bytes it stands for (token_nbytes; an unk token: the
        run of unknown characters it replaced; a word found whole with ignore_merges: the
        word), so a character dropped without an unk token shifts the rest of its word, as
        in HF.  A token inside a character (a fallback byte) covers that character, and the
        prepended meta character is aligned with the first character of the text (HF's
        prepend)."""
        cdef Py_ssize_t b, word, k, ln, e, first = 0, last, start_b = 0, cb = 0, chars = 0, s_char, e_char, run
        cdef uint32_t cp
        cdef int32_t t
        idbuf_reserve(spans, 3 * (words[2 * n_words - 1] if n_words else 0))
        for word in range(n_words):
            e = words[2 * word]
            last = words[2 * word + 1]
            b = start_b
            for k in range(first, last):
                t = <int32_t>ids[k]
                if last - first == 1 and self.ignore_merges and token_lookup(&self.table.tok, q + b, e - b) == t:
                    ln = e - b
                elif t == self.unk_id:
                    ln = 0
                    while b + ln < e:
                        run = utf8_char(q + b + ln, e - b - ln, &cp)
                        if self.char_id(cp) >= 0 or self.falls_back(q + b + ln, run):
                            break
                        ln += run
                        if not self.fuse_unk:
                            break
                else:
                    ln = self.token_nbytes[t]
                if ln <= 0 or b + ln > n:   # (never for a file build accepts)
                    ln = e - b if e > b else 0
                # the character holding byte b, and the one holding byte b + ln - 1, plus one
                while cb <= b and cb < n:
                    chars += (q[cb] & 0xC0) != 0x80
                    cb += 1
                s_char = chars - 1
                while cb < b + ln:
                    chars += (q[cb] & 0xC0) != 0x80
                    cb += 1
                e_char = chars
                if prepended:
                    s_char = s_char - 1 if s_char > 0 else 0
                    e_char = e_char - 1 if e_char > 1 else 1
                spans.data[spans.len] = <tok_t>s_char
                spans.data[spans.len + 1] = <tok_t>e_char
                spans.data[spans.len + 2] = <tok_t>word
                spans.len += 3
                b += ln
            first = last
            start_b = e
        return 0

    # -- Python entry points ---------------------------------------------------------------

    cdef int encode_one(self, Utf8Text* u, int kind, IdBuf* out, Work* w, uint8_t** qbuf, Py_ssize_t* qcap,
                        IdBuf* spans) except -1 nogil:
        """Normalize the text u (into *qbuf, grown as needed), encode it; with spans, the
        offsets.  A str whose UTF-8 is not made yet is converted and normalized in one pass;
        a lone surrogate sets u.bad and encodes nothing."""
        cdef const uint8_t* q
        cdef Py_ssize_t qn, need
        cdef IdBuf ends
        cdef Py_ssize_t before = out.len, k
        cdef bint prepended = False
        cdef bint units = u.s == NULL and u.owned != NULL   # (utf8_text_convert's case)
        if kind & (F_PREPEND | F_PREPEND_UNLESS_META | F_REPLACE_SPACE):
            need = (u.length if units else u.n) * (4 if self.meta_len < 4 else self.meta_len) + self.meta_len + 16
            if need > qcap[0]:
                free(qbuf[0])
                qbuf[0] = <uint8_t*>malloc(need)
                if qbuf[0] == NULL:
                    qcap[0] = 0
                    with gil:
                        raise MemoryError()
                qcap[0] = need
            if units:
                qn = meta_normalize_units(self.meta, self.meta_len, u.kind, u.data, u.length, kind, qbuf[0],
                                          &prepended, &u.bad)
                if qn < 0:
                    return 0
            else:
                qn = meta_normalize(self.meta, self.meta_len, u.s, u.n, kind, qbuf[0], &prepended)
            q = qbuf[0]
        else:
            if utf8_text_convert(u) != 0:
                return 0
            q, qn = u.s, u.n
        idbuf_reserve(out, qn // 3 + 16)   # about the ids of English text: fewer reallocations
        if spans == NULL:
            return self.encode_normalized(q, qn, kind, out, w, NULL)
        memset(&ends, 0, sizeof(IdBuf))
        try:
            self.encode_normalized(q, qn, kind, out, w, &ends)
            for k in range(1, ends.len, 2):
                ends.data[k] -= <tok_t>before   # token ends relative to this text's ids
            self.token_offsets(q, qn, prepended, out.data + before, ends.data, ends.len // 2,
                               spans)
            idbuf_reserve(spans, 1)   # then the number of words
            spans.data[spans.len] = <tok_t>(ends.len // 2)
            spans.len += 1
        finally:
            idbuf_free(&ends)
        return 0

    cpdef object encode_text(self, str text, int kind, bint as_numpy=False):
        """The ids of text (normalized and cut as `kind` says), in one GIL-free call.
        Raises UnicodeEncodeError for lone surrogates."""
        cdef IdBuf out
        cdef Work* w
        cdef Utf8Text u
        cdef uint8_t* q = NULL
        cdef Py_ssize_t qcap = 0
        if not 0 <= kind <= KIND_MAX:
            raise ValueError(f"unknown kind {kind} for a char-level BPE model")
        cdef PieceCache cache = thread_cache(self.table)
        w = &cache.scratch
        cache.lend(w, PyUnicode_GET_LENGTH(text))
        w.ends = NULL
        memset(&out, 0, sizeof(IdBuf))
        utf8_text_open(text, &u)
        try:
            with nogil:
                self.encode_one(&u, kind, &out, w, &q, &qcap, NULL)
            utf8_text_check(text, &u)
            return idbuf_to_numpy(&out) if as_numpy else idbuf_to_list(&out, self.table.id_objects)
        finally:
            utf8_text_close(&u)
            idbuf_free(&out)
            free(q)
            if w.cap > 4096:
                work_free(w)   # a long word's scratch is not kept

    def encode_texts(self, list texts, int kind, bint with_pieces=False):
        """encode_text of many texts in one GIL-free pass: a list of lists of ids.  With
        `with_pieces`, each text gives (ids, offsets) instead: offsets a numpy uint32 array
        of (start, end, word) per token, HF's character offsets in the text and the index of
        its word (HF's pre-tokenized piece: the whole text, or from each meta character with
        SPLIT), then the number of words."""
        cdef Py_ssize_t n = PyList_GET_SIZE(texts), i
        cdef Utf8Text* us
        cdef IdBuf* outs
        cdef IdBuf* spans = NULL
        cdef Work w
        cdef uint8_t* q = NULL
        cdef Py_ssize_t qcap = 0, total = 0
        cdef PieceCache cache
        if not 0 <= kind <= KIND_MAX:
            raise ValueError(f"unknown kind {kind} for a char-level BPE model")
        us = <Utf8Text*>calloc(n + 1, sizeof(Utf8Text))
        outs = <IdBuf*>calloc(n + 1, sizeof(IdBuf))
        if with_pieces:
            spans = <IdBuf*>calloc(n + 1, sizeof(IdBuf))
        cache = thread_cache(self.table)
        memset(&w, 0, sizeof(Work))
        try:
            if us == NULL or outs == NULL or (with_pieces and spans == NULL):
                raise MemoryError()
            total = utf8_texts_open(texts, us)
            cache.lend(&w, total)
            with nogil:
                for i in range(n):
                    self.encode_one(&us[i], kind, &outs[i], &w, &q, &qcap, &spans[i] if with_pieces else NULL)
                    utf8_text_close(&us[i])
                    if us[i].bad >= 0:
                        break
            for i in range(n):
                utf8_text_check(<object>PyList_GET_ITEM(texts, i), &us[i])
            if with_pieces:
                return [(idbuf_to_list(&outs[i], self.table.id_objects), idbuf_to_numpy(&spans[i]))
                        for i in range(n)]
            return [idbuf_to_list(&outs[i], self.table.id_objects) for i in range(n)]
        finally:
            idbufs_free(outs, n)
            idbufs_free(spans, n)
            utf8_texts_free(us, n)
            free(q)
            work_free(&w)

    def initial_ids(self, str word):
        """HF's initial symbols of a word (no merging): for tests and the Python pipeline."""
        cdef bytes raw = word.encode("utf-8", "surrogatepass")
        cdef Py_ssize_t n = len(raw), m, k
        cdef tok_t* ids = <tok_t*>malloc((n + 1) * sizeof(tok_t))
        if ids == NULL:
            raise MemoryError()
        try:
            m = self.initial_symbols(<const uint8_t*>(<const char*>raw), n, ids)
            return [ids[k] for k in range(m)]
        finally:
            free(ids)
