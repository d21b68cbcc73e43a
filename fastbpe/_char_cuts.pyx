# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Where a char-level BPE's merges never reach across, decided once at load from its merges
(for `_char_bpe.CharBPE`).  A merge joins a symbol ending with some character to one starting
with another; when no merge can join across a point of the text, the merges on either side
never depend on each other, so the kernel cuts the piece there: each part merges on its own
(or comes from the piece cache) with the same ids as the whole.  Three rules:

* before a meta character that follows another character, when every merge whose right token
  starts with the meta character has a left token made of meta characters alone (a
  character's token, a <0xNN> token or the unk token never is): true for every SentencePiece
  BPE file seen but Gemma 4's; except after the ASCII characters that end the left token of
  such a merge otherwise (CUT_JOINS_META: Gemma 4's merge ">" + "▁</" keeps "▁" after ">"
  only), when every such left token is text ending with one (not a <0xNN> token) and the meta
  character is in the BMP;
* between two ASCII characters, each its own token, exactly per pair: no merge's left token
  ends with the first while its right one starts with the second (code cuts at most
  punctuation);
* between two characters, one not ASCII, each its own token, per character: no merge's left
  token ends with the first, or none's right token starts with the second (unspaced CJK and
  Thai text then falls into its characters, mostly single tokens, instead of one long
  first-seen piece a sentence).
  A character without a token that falls back to <0xNN> tokens no merge takes (byte_fallback:
  Llama-2 / Phi-3 files' "\n") counts as one with a token that no merge joins on either side:
  its byte tokens never merge, so the merges on each side of them never meet ("word.\nThe"
  was one first-seen piece of every line break: 45% of English's first-seen characters).

And one rule for a run of meta characters before a word (indentation), `runs_apart`: when
every merge of two all-meta tokens ranks after every other merge (and makes an all-meta
token), and no other merge has an all-meta left token but a single meta character before a
token that starts with another character (Llama-2 / Phi-3 files: their whitespace merges come
last), a piece of k >= 2 meta characters and a word merges as "▁" + word on its own, first,
and the run of k - 1 after it; the last meta character joins the run instead only when "▁" +
word keeps it as its own token.
"""
from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_READ_CHAR
from libc.stdint cimport INT64_MAX, INT64_MIN, int32_t, int64_t, uint8_t, uint32_t, uint64_t

from fastbpe._char_cuts cimport CUT_AFTER, CUT_BEFORE, CUT_JOINS_META, CUT_META, CUT_TOKEN

import array


def merge_cuts(dict vocab, const int64_t[::1] rows, str meta, Py_ssize_t n_ids, const int64_t[::1] ranks=None,
               bint byte_fallback=False):
    """vocab {token text: id} (ids < n_ids), rows the merges' (left, right, new) ids flat, ranks
    row i's rank (None: i), byte_fallback the model's (a character without a token is then its
    bytes' <0xNN> tokens when all exist): (cut_before_meta, ascii_cut, cut_flags, runs_apart): ascii_cut 256
    uint64 words as bytes (bit (a, b) at word 2a + b // 64: cut between ASCII characters a and
    b), cut_flags the CUT_* flags of each BMP character (0x10000 bytes; a merge whose token has
    no text here: no flags), runs_apart the rule for meta runs above."""
    cdef Py_ssize_t m = rows.shape[0] // 3, i, k
    cdef int64_t a, b, c, rank, meta_min = INT64_MAX, other_max = INT64_MIN
    cdef unsigned char[::1] all_meta = bytearray(n_ids)
    cdef unsigned char[::1] starts_meta = bytearray(n_ids)
    # the first and last character of each token (0x10000: above the BMP; -1: no text), and
    # the ASCII ones (0x80: another character)
    cdef int32_t[::1] first_cp = array.array("i", [-1]) * n_ids
    cdef int32_t[::1] last_cp = array.array("i", [-1]) * n_ids
    cdef unsigned char[::1] first_ascii = bytearray(b"\x80" * n_ids)
    cdef unsigned char[::1] last_ascii = bytearray(b"\x80" * n_ids)
    cdef unsigned char[::1] joined = bytearray(0x81 * 0x81)
    cdef unsigned char[::1] ends_left = bytearray(0x10001)
    cdef unsigned char[::1] starts_right = bytearray(0x10001)
    cdef unsigned char[::1] has_token = bytearray(0x10000)
    cdef unsigned char[::1] byte_token = bytearray(n_ids)   # a <0xNN> token: stands for any character's byte
    cdef unsigned char[::1] joins_meta = bytearray(0x80)   # ASCII characters a merge joins to a meta character after
    cdef unsigned char[::1] in_merge = bytearray(n_ids)   # the token is a merge's left or right one
    cdef unsigned char[::1] inert_byte = bytearray(256)   # byte_fallback: the byte's <0xNN> token exists, in no merge
    cdef bint texts_known = True, cut, inert
    ascii_cut = array.array("Q", bytes(256 * 8))
    cdef uint64_t[::1] ac = ascii_cut
    flags = bytearray(0x10000)
    cdef uint8_t[::1] fl = flags
    if len(meta) != 1:
        raise ValueError(f"the meta character must be one character, got {meta!r}")
    cdef uint32_t meta_cp = ord(meta), c_first, c_last
    cdef Py_ssize_t n
    cdef str text
    for t, i in vocab.items():   # read as code points (str methods a token cost ~2,400 instructions)
        text = t
        n = PyUnicode_GET_LENGTH(text)
        if n == 0:
            continue
        c_first, c_last = PyUnicode_READ_CHAR(text, 0), PyUnicode_READ_CHAR(text, n - 1)
        if n == 6 and text.startswith("<0x") and c_last == 62:
            byte_token[i] = 1
        if n == 1 and c_first < 0x10000:
            has_token[c_first] = 1
        if c_first == meta_cp:
            starts_meta[i] = 1
            k = 1
            while k < n and PyUnicode_READ_CHAR(text, k) == meta_cp:
                k += 1
            if k == n:
                all_meta[i] = min(n, 2)   # (2: two or more)
        if c_first < 0x80:
            first_ascii[i] = c_first
        if c_last < 0x80:
            last_ascii[i] = c_last
        first_cp[i] = min(c_first, 0x10000)
        last_cp[i] = min(c_last, 0x10000)
    cut = meta in vocab
    runs_apart = True
    for i in range(m):
        a, b, c = rows[3 * i], rows[3 * i + 1], rows[3 * i + 2]
        if starts_meta[b] and not all_meta[a]:
            if last_cp[a] == <int32_t>meta_cp:
                pass   # a left token ending with the meta character: joins two meta characters
            elif 0 <= last_cp[a] < 0x80 and not byte_token[a] and meta_cp < 0x10000:
                joins_meta[last_cp[a]] = 1
            else:
                cut = False
        rank = i if ranks is None else ranks[i]
        if all_meta[a] and all_meta[b]:
            meta_min = min(meta_min, rank)
            runs_apart = runs_apart and all_meta[c] != 0
        else:
            other_max = max(other_max, rank)
            if all_meta[c] or (all_meta[a] and (all_meta[a] > 1 or starts_meta[b])):
                runs_apart = False
        joined[last_ascii[a] * 0x81 + first_ascii[b]] = 1
        in_merge[a] = 1
        in_merge[b] = 1
        if last_cp[a] < 0 or first_cp[b] < 0:
            texts_known = False
        else:
            ends_left[last_cp[a]] = 1
            starts_right[first_cp[b]] = 1
    for i in range(256 if byte_fallback else 0):
        k = vocab.get(f"<0x{i:02X}>", -1)
        inert_byte[i] = 0 <= k < n_ids and not in_merge[k]
    for i in range(0x10000 if byte_fallback else 0):   # a character without a token: its UTF-8 bytes' tokens
        if has_token[i] or 0xD800 <= i < 0xE000:
            continue
        if i < 0x80:
            inert = inert_byte[i]
        elif i < 0x800:
            inert = inert_byte[0xC0 | (i >> 6)] and inert_byte[0x80 | (i & 0x3F)]
        else:
            inert = inert_byte[0xE0 | (i >> 12)] and inert_byte[0x80 | ((i >> 6) & 0x3F)] and inert_byte[0x80 | (i & 0x3F)]
        if inert:
            has_token[i] = 2   # (2: its byte tokens, which no merge joins to anything)
    for i in range(0x80):
        for k in range(0x80):
            if has_token[i] and has_token[k] and (has_token[i] == 2 or has_token[k] == 2 or not joined[i * 0x81 + k]):
                ac[2 * i + (k >> 6)] |= 1ULL << (k & 63)
    for i in range(0x10000 if texts_known else 0):
        if has_token[i] == 2:
            fl[i] = CUT_TOKEN | CUT_AFTER | CUT_BEFORE
        elif has_token[i]:
            fl[i] = CUT_TOKEN | (0 if ends_left[i] else CUT_AFTER) | (0 if starts_right[i] else CUT_BEFORE)
    if cut and ord(meta) < 0x10000:   # (a meta character above the BMP: _meta_text.meta_cut's loop)
        fl[ord(meta)] |= CUT_META
        for i in range(0x80):
            if joins_meta[i]:
                fl[i] |= CUT_JOINS_META
                runs_apart = False   # (not proved with meta characters inside a word)
        if ord(meta) < 0x80:
            for i in range(0x80):
                if i != ord(meta) and not joins_meta[i]:
                    ac[2 * i + (ord(meta) >> 6)] |= 1ULL << (ord(meta) & 63)
    return cut, ascii_cut.tobytes(), bytes(flags), cut and runs_apart and other_max < meta_min
