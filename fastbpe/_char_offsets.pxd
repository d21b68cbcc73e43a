# HF's character offsets of a char-level model's tokens (_char_bpe.CharBPE.encode_texts with_pieces),
# from the normalized text, its ids and its words, without the GIL.
from libc.stdint cimport int32_t, uint8_t, uint32_t

from fastbpe._char_symbols cimport CharSymbols, char_id, falls_back
from fastbpe._meta_text cimport utf8_char
from fastbpe._vocab cimport TokenTable, tok_t, token_lookup
from fastbpe._workspace cimport IdBuf, idbuf_reserve


cdef inline int token_offsets(const CharSymbols* sym, const TokenTable* tok, const int32_t* token_nbytes,
                              bint ignore_merges, const uint8_t* q, Py_ssize_t n, bint prepended, const tok_t* ids,
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
            if last - first == 1 and ignore_merges and token_lookup(tok, q + b, e - b) == t:
                ln = e - b
            elif t == sym.unk_id:
                ln = 0
                while b + ln < e:
                    run = utf8_char(q + b + ln, e - b - ln, &cp)
                    if char_id(sym, cp) >= 0 or falls_back(sym, q + b + ln, run):
                        break
                    ln += run
                    if not sym.fuse_unk:
                        break
            else:
                ln = token_nbytes[t]
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
