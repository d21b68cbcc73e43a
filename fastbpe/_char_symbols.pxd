# A char-level vocabulary's first ids of a word (_char_bpe), HF's BPE::merge_word before it
# merges: each character's token, else the <0xNN> tokens of its UTF-8 bytes (byte_fallback),
# else the unk token (a run of them fused into one with fuse_unk; dropped without an unk token).
# Filled by CharBPE.build, freed by CharBPE; read-only after (threads share it).
from libc.stdint cimport int32_t, uint8_t, uint32_t

from fastbpe._meta_text cimport utf8_char
from fastbpe._vocab cimport tok_t

cdef enum:
    FALLBACK_ID = -2      # bmp_ids: no token for the character (byte fallback or unk)


cdef struct CharSymbols:
    int32_t* bmp_ids                 # [0x10000] a BMP character's token, else FALLBACK_ID
    uint32_t* astral_cps             # characters above the BMP with a token, ascending
    int32_t* astral_ids
    Py_ssize_t n_astral
    int32_t byte_ids[256]            # <0xNN> tokens (-1: none)
    int32_t unk_id                   # -1: none
    bint byte_fallback, fuse_unk


cdef inline int32_t char_id(const CharSymbols* s, uint32_t cp) noexcept nogil:
    """The token of a character, or FALLBACK_ID."""
    cdef Py_ssize_t lo = 0, hi = s.n_astral, mid
    if cp < 0x10000:
        return s.bmp_ids[cp]
    while lo < hi:
        mid = (lo + hi) >> 1
        if s.astral_cps[mid] < cp:
            lo = mid + 1
        else:
            hi = mid
    if lo < s.n_astral and s.astral_cps[lo] == cp:
        return s.astral_ids[lo]
    return FALLBACK_ID


cdef inline bint falls_back(const CharSymbols* s, const uint8_t* p, Py_ssize_t ln) noexcept nogil:
    """Whether byte fallback gives a character's bytes p[:ln] (every <0xNN> token exists)."""
    cdef Py_ssize_t k
    if not s.byte_fallback:
        return False
    for k in range(ln):
        if s.byte_ids[p[k]] < 0:
            return False
    return True


cdef inline Py_ssize_t initial_symbols(const CharSymbols* s, const uint8_t* p, Py_ssize_t n,
                                       tok_t* ids) noexcept nogil:
    """The initial ids of the word p[:n] (valid UTF-8) into ids (at most n); how many."""
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
        t = char_id(s, cp)
        if t >= 0:
            if pending:
                ids[m] = <tok_t>s.unk_id
                m += 1
                pending = False
            ids[m] = <tok_t>t
            m += 1
        elif falls_back(s, p + i, ln):
            for k in range(ln):   # (HF writes a pending unk after these: CharBPE.build refuses that case)
                ids[m] = <tok_t>s.byte_ids[p[i + k]]
                m += 1
        elif s.unk_id >= 0:
            if pending and not s.fuse_unk:
                ids[m] = <tok_t>s.unk_id
                m += 1
            pending = True
        i += ln
    if pending:
        ids[m] = <tok_t>s.unk_id
        m += 1
    return m
