/* Piece boundaries of CLIP's split (fastbpe/_scan_clip.pxi) for up to 64 bytes of ASCII at
 * once, with the bit operations of _ascii_pieces.h.
 *
 * In ASCII every letter run, every digit, every run of the rest (O: punctuation and controls)
 * and every whitespace run starts a piece; an apostrophe that starts an O run and is followed
 * by s, t, m, d, re, ve or ll (case-sensitive) is a piece with those letters, and the letters
 * after it start anew.  A whitespace run is a removed piece: the end of the piece before a
 * start gets `dropped` when the byte before that start is whitespace.  A '<' that starts an O
 * run may begin a special string (three pieces): the block stops before it. */
#ifndef FASTBPE_ASCII_CLIP_H
#define FASTBPE_ASCII_CLIP_H

#include "_ascii_pieces.h"

/* The length of 's 't 'm 'd 're 've 'll at p[0] == '\'' (case-sensitive), or 0. p[1], p[2] readable. */
static inline int fb_clip_contraction_len(const uint8_t *p)
{
    int c1 = p[1], c2 = p[2];
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd')
        return 2;
    if ((c2 == 'e' && (c1 == 'r' || c1 == 'v')) || (c1 == 'l' && c2 == 'l'))
        return 3;
    return 0;
}

/* fb_cl100k_ascii_block's contract, for CLIP; ends of removed pieces carry `dropped`. */
static inline int fb_clip_ascii_block(const uint8_t *s, ptrdiff_t pos, uint64_t L, uint64_t D,
                                      uint64_t S, uint64_t NL, uint64_t O, uint64_t SP,
                                      uint64_t Q, ptrdiff_t dropped, ptrdiff_t *ends)
{
    fb_ascii_bits b;
    uint64_t lt, cut, starts, q;
    int i, m, n_out = 0;
    lt = fb_byte_bits(s + pos, '<') & O & ~(O << 1);
    if (lt) {
        i = (int)fb_ctz64(lt);
        if (i < 8)
            return 0;
        cut = (1ULL << i) - 1;
        L &= cut; D &= cut; S &= cut; NL &= cut; O &= cut;
    }
    if (!fb_ascii_bits_of(&b, L, D, S, NL, O, SP, Q))
        return 0;
    starts = (b.L & ~(b.L << 1)) | b.D | (b.O & ~(b.O << 1)) | (b.S & ~(b.S << 1));
    q = b.Q & ~(b.O << 1) & (b.L >> 1);     /* an apostrophe starting a piece, a letter next */
    while (q) {
        i = (int)fb_ctz64(q);
        q &= q - 1;
        if (i >= b.W - 3) {                 /* its letters may lie past what is known */
            starts &= (2ULL << i) - 1;
            break;
        }
        m = fb_clip_contraction_len(s + pos + i);
        if (m)
            starts = (starts & ~(1ULL << (i + 1))) | ((1ULL << (i + m)) & b.L);
    }
    starts &= b.V & ~1ULL;
    while (starts) {
        i = (int)fb_ctz64(starts);
        starts &= starts - 1;
        ends[n_out++] = (pos + i) | (((b.S >> (i - 1)) & 1) ? dropped : 0);
    }
    return n_out;
}

#endif /* FASTBPE_ASCII_CLIP_H */
