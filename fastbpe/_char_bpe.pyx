# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Char-level BPE (SentencePiece-style: Llama-2, Mistral, Phi-3, Gemma, ChatGLM tokenizer.json
files and SentencePiece `.model` files): a text to ids with the GIL released.

HF's BPE model on one word (`BPE::merge_word`): each character's initial ids
(`_char_symbols`: its token, else its bytes' `<0xNN>` tokens, else the unk token), then the
merges, lowest rank first, leftmost on ties (`merge_word`: `_merge`'s scan for short
words, `_merge.merge_parts`' heap for long ones, O(n log n)).  This module adds what is around it: the
SentencePiece normalizer of these files (`_meta_text`: "▁" prepended, spaces replaced by it,
one pass over the UTF-8 or the str's code units), the cut into pieces, the thread's piece
cache (`_char_cache`), and HF's character offsets of every token (`_char_offsets`).

Pieces.  Without a pre-tokenizer HF merges a whole text as one word.  Where no merge can
join across a point of the text (`_char_cuts.merge_cuts`, decided per file at load: before a
meta character that follows another character, `cut_before_meta`, except after a character a merge
joins to it, `joins_meta` (Gemma 4's ">" + "▁</"); between two characters no
merge joins), the text is cut and each piece is merged (or found in the cache) on its own,
with the same result.  With `cut_before_meta` each word (from such a meta character to the
next) is first looked up whole in the cache (`encode_words`); a word seen before costs one
probe.  One byte loop makes the other cuts (`encode_cut`: two ASCII bytes by a pair table, a
character that is not ASCII decoded at its first byte only).  A Metaspace pre-tokenizer with
`split` cuts before every meta character (HF's words); `ignore_merges` then looks each word
up whole.  A file whose merges join everywhere is merged whole (the heap loop: O(n log n)).

`kind` (the argument of encode_text / encode_texts) is a set of flags: how to normalize and
cut (PREPEND, PREPEND_UNLESS_META, REPLACE_SPACE, SPLIT below).
"""
from cpython.unicode cimport PyUnicode_GET_LENGTH
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t, uint64_t, UINT32_MAX
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcmp, memcpy, memmove, memset

from fastbpe._char_cuts cimport CUT_AFTER, CUT_BEFORE, CUT_JOINS_META, CUT_META, CUT_TOKEN
from fastbpe._char_cache cimport META_KEY, PieceKey, cache_keep, cache_probe, char_hash, reverse_ids
from fastbpe._pair_memo cimport MEMO_LARGE, MEMO_LARGE_CALL, MEMO_SMALL, memo_open, memo_pair
from fastbpe._char_offsets cimport token_offsets
from fastbpe._char_symbols cimport FALLBACK_ID, CharSymbols, char_id, initial_symbols
from fastbpe._core cimport BPETable, thread_cache
from fastbpe._hash cimport FB_LITTLE_ENDIAN, PACKED_MAX, load_word, packed_key
from fastbpe._id_output cimport idbuf_to_array, idbuf_to_list, idbuf_to_numpy, idbufs_lists
from fastbpe._merge cimport SCAN_PIECE, merge_paired_parts, merge_parts
from fastbpe._meta_text cimport (F_PREPEND, F_PREPEND_UNLESS_META, F_REPLACE_SPACE, F_SPLIT, KIND_MAX, fb_ctz64,
                                 few_non_ascii, has_meta, is_meta, meta_cut, meta_normalize, meta_normalize_units,
                                 meta_word_end, space_word_end, utf8_char)
from fastbpe._piece_cache cimport PACKED_MAX_IDS, PieceCache, packed_store
from fastbpe._utf8 cimport (Utf8Text, utf8_text_check, utf8_text_close, utf8_text_convert, utf8_text_open,
                            utf8_texts_free, utf8_texts_open)
from fastbpe._vocab cimport NO_PAIR, pair_word, tok_t, token_lookup
from fastbpe._workspace cimport (IdBuf, PackedEntry, SmallPart, Work, idbuf_free, idbuf_reserve, idbufs_free,
                                 work_free, work_reserve)

import array

from fastbpe._char_cuts import merge_cuts

# kind flags (_meta_text.pxd): how a text is normalized and cut
PREPEND, PREPEND_UNLESS_META, REPLACE_SPACE, SPLIT = F_PREPEND, F_PREPEND_UNLESS_META, F_REPLACE_SPACE, F_SPLIT
cdef enum:   # encode_words: a text whose probed words mostly miss (half of 16 or more) is cut in one run
    MISS_MIN = 16
    SPACED_WORD = 48   # encode_spaced's buffer of one word
    RUN_MAX = 48       # ... and the longest run of meta characters whose ids it keeps (run_ids)
cdef uint8_t CUT_PAIR[1024]   # [flags of a << 5 | flags of b]: cut between a and b (_char_cuts.pxd's rule)
cdef int _fa, _fb
for _fa in range(32):
    for _fb in range(32):
        CUT_PAIR[(_fa << 5) | _fb] = ((_fa & _fb & CUT_TOKEN) and ((_fa & CUT_AFTER) or (_fb & CUT_BEFORE))) or (
            _fb & ~_fa & CUT_META and not _fa & CUT_JOINS_META) != 0


cdef class CharBPE:
    """One char-level BPE vocabulary: HF's BPE model with byte_fallback / unk_token /
    fuse_unk / ignore_merges over characters, and the SentencePiece normalizer of its files.
    Read-only after construction: any number of threads may encode with it at once.

    Build with `CharBPE.build`.  `encode_text(text, kind, as_numpy)` and
    `encode_texts(texts, kind, with_pieces)` are `_core.BPETable`'s entry points (the kind is
    this module's flags); `with_pieces` gives each token's character offsets in the text."""
    cdef readonly BPETable table          # the merges (pair table) and token lookup by bytes
    cdef CharSymbols sym                  # a word's first ids (_char_symbols)
    cdef int32_t* token_nbytes            # UTF-8 bytes each token stands for (-1: unknown)
    cdef readonly bint ignore_merges, cut_before_meta
    cdef readonly bint joins_meta        # ... but not after an ASCII character flagged CUT_JOINS_META (Gemma 4's ">")
    cdef readonly bint runs_apart        # a run of meta characters before a word merges apart (_char_cuts)
    cdef int32_t meta_id                  # the meta character's token
    cdef bint spaced                      # encode_spaced may run (cut_before_meta, meta of 2-3 bytes, no ignore_merges)
    cdef uint64_t ascii_cut[256]          # bit (a, b) at [2a + b / 64]: a piece is cut between a and b
    cdef uint8_t* cut_flags               # [0x10000] a BMP character's CUT_* flags (pairs not both ASCII)
    cdef uint8_t meta[4]
    cdef int meta_len
    cdef readonly str meta_char
    cdef int32_t small_ids[129]           # the tokens of the ASCII characters and (128) the meta character
    cdef uint64_t* small_pairs            # [129 * 129] their pairs' (rank << 32 | new id) (-1 ids: NO_PAIR)
    cdef readonly bint meta_runs          # encode_spaced cuts a run of spaces before a word (runs_apart)
    cdef tok_t run_ids[RUN_MAX + 1][PACKED_MAX_IDS]   # the ids of k meta characters merged alone
    cdef Py_ssize_t run_n[RUN_MAX + 1]    # ... how many (0: more than PACKED_MAX_IDS, or k = 0)

    def __dealloc__(self):   # (Cython sets every C attribute to 0 / NULL before __cinit__)
        free(self.small_pairs)
        free(self.sym.bmp_ids)
        free(self.sym.astral_cps)
        free(self.sym.astral_ids)
        free(self.token_nbytes)
        free(self.cut_flags)

    @property
    def unk_id(self):
        return self.sym.unk_id

    @property
    def byte_fallback(self):
        return self.sym.byte_fallback

    @property
    def fuse_unk(self):
        return self.sym.fuse_unk

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
        return build_char_bpe(vocab, merges, unk_token, byte_fallback, fuse_unk, ignore_merges, meta, ranks, table)

    cdef int merge_word(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil:
        """Append the ids of the word p[:n]: its initial symbols merged (`_merge.merge_paired_parts`'
        scan up to SCAN_PIECE parts, its pairs through the call's memo; else `_merge.merge_parts`'
        sorted runs and heap, never quadratic).  A word of ASCII characters with tokens and meta
        characters (most of English and code) takes its first ids and pairs from small_ids and
        small_pairs; such a word after a run of meta characters: encode_run_word."""
        cdef tok_t* ids
        cdef Py_ssize_t m = 0, k, i = 0, ml = self.meta_len
        cdef int prev = 0, c
        cdef SmallPart* parts
        if self.runs_apart and n > 2 * ml and p[ml] == self.meta[0] and is_meta(self.meta, ml, p, 0, n) and (
                self.encode_run_word(p, n, out, w)):
            return 0
        work_reserve(w, n + 3)   # the scan reads three parts past the last
        parts = w.parts
        while i < n:
            c = p[i]
            if c >= 0x80:
                if i + ml <= n and c == self.meta[0] and p[i + 1] == self.meta[1] and (ml < 3 or p[i + 2] == self.meta[2]):
                    c = 128
                else:
                    break
            if self.small_ids[c] < 0:
                break
            i += 1 if c < 128 else ml
            parts[m].id = <tok_t>self.small_ids[c]
            if m:
                parts[m - 1].pair = self.small_pairs[129 * prev + c]
            prev = c
            m += 1
        if i < n:   # a character outside the table: the first ids of every character
            ids = <tok_t*>(w.heap + 3 * w.cap)   # merge_parts' sorting scratch: free until the parts are made
            m = initial_symbols(&self.sym, p, n, ids)
            if m == 0:
                return 0
            for k in range(m):
                parts[k].id = ids[k]
        idbuf_reserve(out, m)
        if m > SCAN_PIECE:
            merge_parts(&self.table.pairs, parts, m, out, w)
            return 0
        memo_open(w, MEMO_SMALL)
        for k in range(m - 1 if i < n else 0):
            parts[k].pair = memo_pair(w.pair_memo, w.pair_memo_mask, &self.table.pairs,
                                      (<uint64_t>parts[k].id << 32) | parts[k + 1].id)
        merge_paired_parts(&self.table.pairs, parts, m, out, w)
        return 0

    cdef int encode_piece(self, const uint8_t* p, Py_ssize_t n, const uint8_t* end, IdBuf* out,
                          Work* w) except -1 nogil:
        """Append the ids of one piece p[:n] (n >= 1): from the thread's piece cache, else
        merged and remembered."""
        cdef PieceKey key
        cdef Py_ssize_t before = out.len
        idbuf_reserve(out, n + 8)   # every id covers a byte at least; slack for 16-byte copies
        if cache_probe(self.meta, self.meta_len, p, n, end, out, w, &key):
            return 0
        self.merge_word(p, n, out, w)
        cache_keep(p, n, &key, out.data + before, out.len - before, w)
        return 0

    cdef int encode_run_word(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil:
        """When p[:n] is k >= 2 meta characters and a word (runs_apart), append the ids of the
        run of k - 1 and of "▁" + word, each from the cache or merged, or of the run of k and
        the word when "▁" + word keeps "▁" as its own token, and return 1; else 0.  (Code's
        indentation: else one first-seen piece per depth and word, merged from ~20 parts.)
        (No end of the text is passed for the cache keys: merge_word with one more argument
        cost English ~0.5%.)"""
        cdef Py_ssize_t ml = self.meta_len, before = out.len, n_word, n_run, k = 1, j = ml
        cdef const uint8_t* end = p + n
        cdef uint8_t m0 = self.meta[0], m1 = self.meta[1], m2 = self.meta[2]
        while j + ml <= n and p[j] == m0 and (ml < 2 or p[j + 1] == m1) and (ml < 3 or p[j + 2] == m2) and (
                ml < 4 or p[j + 3] == self.meta[3]):   # (is_meta's byte loop: ~16 instructions a character)
            j += ml
        k = j // ml
        if k < 2 or k * ml == n:
            return 0
        self.encode_piece(p + (k - 1) * ml, n - (k - 1) * ml, end, out, w)
        n_word = out.len - before
        if out.data[before] == <tok_t>self.meta_id:   # the last meta character goes to the run
            k += 1
            n_word -= 1
            memmove(out.data + before, out.data + before + 1, n_word * sizeof(tok_t))
            out.len -= 1
        self.encode_piece(p, (k - 1) * ml, end, out, w)
        n_run = out.len - before - n_word   # the word's and the run's ids swap places: three reversals
        reverse_ids(out.data + before, n_word)
        reverse_ids(out.data + before + n_word, n_run)
        reverse_ids(out.data + before, n_word + n_run)
        return 1

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
                if self.cut_before_meta:
                    encode_words(self, q, n, out, w)
                else:
                    self.encode_cut(q, 0, n, q + n, out, w)
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

    cdef int encode_spaced(self, const uint8_t* s, Py_ssize_t n, int kind, IdBuf* out, Work* w,
                           uint8_t* q) except -1 nogil:
        """encode_words of the normalized form of an ASCII text s[:n] (kind: REPLACE_SPACE, maybe a
        PREPEND or SPLIT flag; no SPLIT with ignore_merges) without making it: a word is a run of spaces and what follows
        up to the next space after another character; one with a packed key (spaced_key) is
        probed with its normalized form's key and normalized (into a small buffer) only when
        it misses; an indented word (meta_runs) as " word", its run's ids from run_ids.  The
        first word, words too long for a key and the words up to the next one with a key are
        normalized into q (room for max(ml, 4) bytes a byte and 16) and go to encode_words.  (A
        text's words probed in place saved the normalizer's copy: ~50 instructions a word of
        English.)"""
        cdef Py_ssize_t start = 0, stop, run, ln, before, probes = 0, misses = 0, runs = 0, ml = self.meta_len, extra = 0
        cdef bint meta_runs = self.meta_runs and not kind & F_SPLIT   # (Metaspace split: every "▁" its own word)
        cdef const uint8_t* end = s + n
        cdef uint64_t k0, k1, h
        cdef const PackedEntry* pe
        cdef uint8_t word[SPACED_WORD]   # a word's normalized form (up to 18 bytes, slack for 16-byte reads)
        cdef bint prepended
        run = space_word_end(s, n, 0)   # (the first word is normalized with kind's prepend flags)
        while self.joins_meta and run < n and s[run - 1] < 0x80 and self.cut_flags[s[run - 1]] & CUT_JOINS_META:
            run = space_word_end(s, n, run)   # (its space joins the character before it: the next word too)
        while True:
            if start < run:   # s[start:run]: words without a key, normalized and cut by encode_words
                ln = meta_normalize(self.meta, ml, s + start, run - start, kind if start == 0 else F_REPLACE_SPACE,
                                    q, &prepended)
                encode_words(self, q, ln, out, w) if not kind & F_SPLIT else self.encode_normalized(q, ln, F_SPLIT, out, w, NULL)
                start = run
            if start >= n:
                return 0
            stop = space_word_end(s, n, start)
            ln = spaced_key(self, s, start, stop, end, &k0, &k1)
            if ln == 0 and meta_runs and stop - start > 2 and s[start + 1] == 32:   # an indented word: " word" probed
                extra = indented_key(self, s, start, stop, end, &k0, &k1)
                start += extra
                ln = ml + stop - start - 1 if extra else 0
            if ln == 0:
                runs += 1
                if runs >= 16 and 2 * runs > probes:   # mostly words without a key: the rest through encode_words
                    run = n
                    continue
                run = stop
                while run < n:
                    stop = space_word_end(s, n, run)
                    if spaced_key(self, s, run, stop, end, &k0, &k1) or (meta_runs and stop - run > 2 and s[run + 1] == 32 and (
                            indented_key(self, s, run, stop, end, &k0, &k1))):
                        break
                    run = stop
                continue
            probes += 1
            h = char_hash(k0, k1)
            pe = &w.packed[h & w.packed_mask]
            idbuf_reserve(out, ln + 8)
            if pe.k0 == k0 and pe.k1 == k1 and pe.n_ids:
                memcpy(out.data + out.len, pe.ids, 16)
                out.len += pe.n_ids
                if extra:
                    run_before(self, extra + 1, out, pe.n_ids)
                    extra = 0
            else:
                misses += 1
                if misses >= MISS_MIN and 2 * misses > probes:   # mostly first-seen words: the rest as one run
                    ln = meta_normalize(self.meta, ml, s + start - extra, n - start + extra, F_REPLACE_SPACE, q, &prepended)
                    self.encode_cut(q, 0, ln, q + ln, out, w) if not kind & F_SPLIT else self.encode_normalized(
                        q, ln, F_SPLIT, out, w, NULL)
                    return 0
                memcpy(word, self.meta, 4)
                if s + start + 17 <= end:
                    memcpy(word + ml, s + start + 1, 16)
                else:
                    memcpy(word + ml, s + start + 1, ln - ml)
                before = out.len
                if self.encode_cut(word, 0, ln, word + SPACED_WORD, out, w) > 1 and out.len - before <= PACKED_MAX_IDS:
                    packed_store(w.packed, w.packed_mask, h, k0, k1, out.data + before, out.len - before)
                if extra:
                    run_before(self, extra + 1, out, out.len - before)
                    extra = 0
            start = run = stop

    cdef int encode_cut(self, const uint8_t* q, Py_ssize_t start, Py_ssize_t stop, const uint8_t* end,
                        IdBuf* out, Work* w) except -1 nogil:
        """Append the ids of q[start:stop] (valid UTF-8), cut between characters no merge joins
        (two ASCII ones: ascii_cut, per pair; else their cut_flags, CUT_PAIR), each part from the
        cache or merged; returns the number of parts.  A byte loop: a character not ASCII is
        decoded at its first byte only."""
        cdef Py_ssize_t i = start + 1, s = start, ln, at = start   # at: where the character before i starts
        cdef Py_ssize_t parts = 1
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
                    if i - s == 1 and self.small_ids[a] >= 0:   # (its token, or its <0xNN> token)
                        idbuf_reserve(out, 1)
                        out.data[out.len] = <tok_t>self.small_ids[a]
                        out.len += 1
                    else:
                        self.encode_piece(q + s, i - s, end, out, w)
                    s = i
                    parts += 1
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
            if CUT_PAIR[(fa << 5) | fb]:
                self.emit_part(q, s, i, at, last, end, out, w)
                s = i
                parts += 1
            fa = fb
            last = cp
            at = i
            a = b
            i += ln
        if s == start:
            self.encode_piece(q + s, stop - s, end, out, w)
            return 1
        if a < 0x80:
            at = stop - 1
            last = a
        self.emit_part(q, s, stop, at, last, end, out, w)
        return parts

    cdef inline int emit_part(self, const uint8_t* q, Py_ssize_t s, Py_ssize_t i, Py_ssize_t at, uint32_t last,
                              const uint8_t* end, IdBuf* out, Work* w) except -1 nogil:
        """Append the ids of the part q[s:i] of a cut piece, whose last character (last) starts
        at q[at]: a part of that one character is its token, when it has one."""
        cdef int32_t t = self.sym.bmp_ids[last] if at == s and last < 0x10000 else FALLBACK_ID
        if t >= 0:
            idbuf_reserve(out, 1)
            out.data[out.len] = <tok_t>t
            out.len += 1
            return 0
        return self.encode_piece(q + s, i - s, end, out, w)

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
            if spans == NULL and self.spaced and u.length > 0 and kind & F_REPLACE_SPACE and not (
                    kind & F_SPLIT and self.ignore_merges):
                if units and few_non_ascii(u.kind, u.data, u.length):   # (English with curly quotes)
                    if utf8_text_convert(u) != 0:
                        return 0
                    units = False
                if not units and (u.kind == 0 or not has_meta(self.meta, self.meta_len, u.s, u.n)):
                    idbuf_reserve(out, u.n // 3 + 16)   # its words probed in place (encode_spaced)
                    return self.encode_spaced(u.s, u.n, kind, out, w, qbuf[0])
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
            token_offsets(&self.sym, &self.table.tok, self.token_nbytes, self.ignore_merges, q, qn, prepended,
                          out.data + before, ends.data, ends.len // 2, spans)
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
        memo_open(w, MEMO_LARGE if PyUnicode_GET_LENGTH(text) >= MEMO_LARGE_CALL else 0)
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

    def encode_texts(self, list texts, int kind, bint with_pieces=False, bint as_bytes=False):
        """encode_text of many texts in one GIL-free pass: a list of lists of ids (as_bytes: each
        text's ids as bytes of uint32s, what hf.Encoding holds).  With
        `with_pieces`, each text gives (ids, offsets) instead: offsets an array.array('I')
        (not numpy: its import is ~100M instructions of a fresh process's first Encoding) of
        (start, end, word) per token, HF's character offsets in the text and the index of
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
            memo_open(&w, MEMO_LARGE if total >= MEMO_LARGE_CALL else 0)
            with nogil:
                for i in range(n):
                    self.encode_one(&us[i], kind, &outs[i], &w, &q, &qcap, &spans[i] if with_pieces else NULL)
                    utf8_text_close(&us[i])
                    if us[i].bad >= 0:
                        break
            for i in range(n):
                utf8_text_check(<object>PyList_GET_ITEM(texts, i), &us[i])
            if with_pieces:
                return [(idbuf_to_list(&outs[i], self.table.id_objects), idbuf_to_array(&spans[i]))
                        for i in range(n)]
            if as_bytes:
                return [PyBytes_FromStringAndSize(<char*>outs[i].data, outs[i].len * sizeof(tok_t)) for i in range(n)]
            return idbufs_lists(outs, n, self.table.id_objects)   # (all made before any is filled)
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
            m = initial_symbols(&self.sym, <const uint8_t*>(<const char*>raw), n, ids)
            return [ids[k] for k in range(m)]
        finally:
            free(ids)


include "_char_words.pxi"
include "_char_tables.pxi"
