/* Piece boundaries of DeepSeek-V3's split (fastbpe/_scan_deepseek.pxi) for up to 64 bytes of
 * ASCII at once, with the bit operations of _ascii_pieces.h.
 *
 * On ASCII without control characters the three levels cut as Llama-3's pattern does, with two
 * differences: no contractions ('s is alternative a, [punctuation][A-Za-z]+, as any lone
 * punctuation byte before letters is in Llama-3's), and a whitespace run followed by a digit
 * ends its segment (level 1 cuts the digits out first), so `\s+(?!\S)` keeps its last byte.
 * A control character is not [\p{P}\p{S}] (Llama-3's O class holds it): the block stops before
 * the first one and the per-character code cuts it.  tests/test_builtin_chains.py compares
 * every boundary with HF tokenizers. */
#ifndef FASTBPE_ASCII_DEEPSEEK_H
#define FASTBPE_ASCII_DEEPSEEK_H

#include "_ascii_pieces.h"

/* Bitmap of the bytes < 0x20 or == 0x7F in p[0:64) (bytes >= 0x80 may be set too). */
static inline uint64_t fb_low_or_del_bits(const uint8_t *p)
{
    uint64_t a = 0;
    int i;
#if FB_AP_SSE2
    const __m128i lim = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7F);
    for (i = 0; i < 4; i++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * i));
        a |= (uint64_t)(uint16_t)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmplt_epi8(x, lim), _mm_cmpeq_epi8(x, del))) << (16 * i);
    }
#else
    for (i = 0; i < 64; i++)
        a |= (uint64_t)(p[i] < 0x20 || p[i] == 0x7F) << i;
#endif
    return a;
}

/* fb_cl100k_ascii_block's contract, for DeepSeek-V3's split. */
static inline int fb_deepseek_v3_ascii_block(const uint8_t *s, ptrdiff_t pos, uint64_t L,
                                             uint64_t D, uint64_t S, uint64_t NL, uint64_t O,
                                             uint64_t SP, uint64_t Q, ptrdiff_t *ends)
{
    fb_ascii_bits b;
    uint64_t T, starts, lone_o, taken, WS, G, fin_end, fin_start;
    O &= ~fb_low_or_del_bits(s + pos);      /* a control byte: unknown, the block stops there */
    if (!fb_ascii_bits_of(&b, L, D, S, NL, O, SP, Q))
        return 0;
    T = b.NL & ~(b.NL + (b.NL & (b.O << 1)));   /* \r\n right after a punctuation run */
    starts = fb_common_starts(&b, T, 0, &lone_o, &taken);
    starts = (starts | (b.L & ~(b.L << 1))) & ~taken;
    /* the last byte of a whitespace run starts a piece of its own (\s+(?!\S) gave it back)
     * only if no digit follows: before a digit the run is at its segment's end */
    WS = b.S & ~T;
    G = WS & ~b.NL;
    fin_end = G & ~(G >> 1) & ~(WS >> 1);
    fin_start = G & ~(G << 1);
    if (G & ~(G >> 1) & (WS >> 1))     /* as in fb_common_starts */
        fin_start &= fb_smear_down(fin_end, G);
    starts &= ~(fin_end & (b.D >> 1) & ~fin_start & ~(WS & ~(WS << 1)));
    return fb_emit_starts(&b, starts, T, pos, ends);
}

#endif /* FASTBPE_ASCII_DEEPSEEK_H */
