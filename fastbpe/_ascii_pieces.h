/* Piece boundaries of the cl100k family (cl100k, GPT-4, Llama-3, Qwen2 split patterns) and
 * of o200k (and of GPT-2's pattern, at the end) for up to 64 bytes of ASCII at once, by bit operations on class bitmaps
 * (_block_classes.h).
 *
 * The per-piece block scanner spends ~70 instructions a piece of English finding where each
 * piece ends; here every piece start in a 64-byte block comes out of ~60 word operations,
 * and each piece then costs one count-trailing-zeros.  The rules, for ASCII text and a
 * block whose first byte starts a piece (L letters, D digits, S \s, NL \r\n, O the rest;
 * SP the space 0x20, Q the apostrophe):
 *
 *   - a run of D starts a piece every 3 digits from its start (every digit for Qwen2);
 *   - a run of O starts a piece, and takes the \r\n right after it ([\r\n]* of
 *     ` ?[^\s\p{L}\p{N}]++[\r\n]*`); one preceded by SP is taken by that space instead;
 *   - a run of L starts a piece unless the byte before it is taken in front of it
 *     (`[^\r\n\p{L}\p{N}]?+\p{L}++`): a lone O that starts a piece, or the last byte of a
 *     whitespace run when that byte is not a newline;
 *   - a whitespace run (less the \r\n an O run took) starts a piece; if it holds a newline,
 *     that piece ends after its last newline (`\s*[\r\n]`); the rest, a run G of non-newline
 *     whitespace, starts a piece, and so does its last byte (`\s+(?!\S)` backtracks one);
 *   - an apostrophe that starts a piece and is followed by s, d, m, t, ll, ve or re (any
 *     case) is a piece of 2 or 3 bytes (the contractions), checked byte by byte (rare).
 *
 * o200k differs in three places: a run of letters also starts a piece where an upper-case
 * letter follows a lower-case one; a contraction is not a piece of its own but ends the
 * word before it (`(?i:'s|...)?` after the letters); an O run takes '/' as well as \r\n
 * after it (`[\r\n/]*`).
 *
 * What lies after the block is not known, so a piece that reaches the block's end is not
 * given: the caller goes on from the last start given (or cuts one piece the slow way when
 * there is none).  tests/test_pretokenize.py compares every boundary with the per-character
 * scanner and the regex package. */
#ifndef FASTBPE_ASCII_PIECES_H
#define FASTBPE_ASCII_PIECES_H

#include <stdint.h>
#include <stddef.h>

#include "_block_classes.h"   /* and _portable.h: fb_ctz64, fb_clz64 */

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define FB_AP_SSE2 1
#else
#define FB_AP_SSE2 0
#endif

/* Bitmap of the bytes equal to c in p[0:64) (all 64 bytes readable). */
static inline uint64_t fb_byte_bits(const uint8_t *p, uint8_t c)
{
    uint64_t a = 0;
#if FB_AP_SSE2
    const __m128i vc = _mm_set1_epi8((char)c);
    int i;
    for (i = 0; i < 4; i++)
        a |= (uint64_t)(uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), vc)) << (16 * i);
#else
    int i;
    for (i = 0; i < 64; i++)
        a |= (uint64_t)(p[i] == c) << i;
#endif
    return a;
}

/* f's bits spread toward bit 0 through the runs of m that hold them. */
static inline uint64_t fb_smear_down(uint64_t f, uint64_t m)
{
    f |= (f >> 1) & m;  m &= m >> 1;
    f |= (f >> 2) & m;  m &= m >> 2;
    f |= (f >> 4) & m;  m &= m >> 4;
    f |= (f >> 8) & m;  m &= m >> 8;
    f |= (f >> 16) & m; m &= m >> 16;
    f |= (f >> 32) & m;
    return f;
}

/* The highest set bit of x != 0. */
static inline int fb_ap_top(uint64_t x)
{
    return 63 - (int)fb_clz64(x);
}

/* The length of the contraction at p[0] == '\'' (2 or 3), or 0. p[1] and p[2] readable. */
static inline int fb_contraction_len(const uint8_t *p)
{
    int c1 = p[1] | 0x20, c2 = p[2] | 0x20;
    if (c1 == 's' || c1 == 'd' || c1 == 'm' || c1 == 't')
        return 2;
    if ((c1 == 'l' && c2 == 'l') || (c1 == 'v' && c2 == 'e') || (c1 == 'r' && c2 == 'e'))
        return 3;
    return 0;
}

/* The class bits of a block, restricted to what is known (W bytes from pos). */
typedef struct {
    uint64_t L, D, S, NL, O, SP, Q, V;
    int W;
} fb_ascii_bits;

/* Fills b (SP and Q: the window's rows of ' ' and '\''); returns 0 when fewer than 8 bytes
 * from pos are ASCII and classified. */
static inline int fb_ascii_bits_of(fb_ascii_bits *b, uint64_t L, uint64_t D, uint64_t S,
                                   uint64_t NL, uint64_t O, uint64_t SP, uint64_t Q)
{
    uint64_t known = L | D | S | O, V = ~0ULL;
    int W = 64;
    if (~known != 0) {
        W = (int)fb_ctz64(~known);         /* the first byte whose class is unknown */
        if (W < 8)
            return 0;
        V = (1ULL << W) - 1;
    }
    b->L = L & V; b->D = D & V; b->S = S & V; b->NL = NL & V; b->O = O & V;
    b->SP = SP & V; b->Q = Q & V;
    b->V = V;
    b->W = W;
    return 1;
}

/* The starts that do not depend on the pattern's letter rules: whitespace (less the
 * `taken_nl` bytes an O run took), O runs, digits, and the lone O / last whitespace byte
 * taken in front of letters.  *lone_o gets the lone O's that start a piece and take the
 * letters after them; *taken the starts that are taken into the piece before. */
static inline uint64_t fb_common_starts(const fb_ascii_bits *b, uint64_t taken_nl,
                                        int single_digits, uint64_t *lone_o, uint64_t *taken)
{
    uint64_t WS = b->S & ~taken_nl, G = WS & ~b->NL, O = b->O & ~taken_nl, L = b->L, D = b->D;
    uint64_t fin_end, fin_start, starts, t;
    /* the last run of G in each whitespace run: its first and last bytes start pieces */
    fin_end = G & ~(G >> 1) & ~(WS >> 1);
    fin_start = G & ~(G << 1);
    if (G & ~(G >> 1) & (WS >> 1))     /* a G run before a newline (rare): not the last */
        fin_start &= fb_smear_down(fin_end, G);
    /* a lone O starting a piece takes the letters after it */
    *lone_o = O & ~(O << 1) & (L >> 1) & ~(b->SP << 1);
    *taken = ((fin_end << 1) & L) | (((fin_end & b->SP) << 1) & O) | ((*lone_o << 1) & L);
    starts = (WS & ~(WS << 1)) | fin_end | fin_start | (O & ~(O << 1));
    if (single_digits) {
        starts |= D;
    } else {
        uint64_t d3 = D & (D << 1) & (D << 2);
        t = D & ~(D << 1);
        starts |= t;
        while (t) {
            t = (t << 3) & d3;
            starts |= t;
        }
    }
    return starts;
}

/* The ends of the pieces that end inside the block (all starts but bit 0), after dropping
 * the starts inside a whitespace run that reaches the end of what is known (it may go on).
 * Returns how many. */
static inline int fb_emit_starts(const fb_ascii_bits *b, uint64_t starts, uint64_t taken_nl,
                                 ptrdiff_t pos, ptrdiff_t *ends)
{
    uint64_t WS = b->S & ~taken_nl, t;
    ptrdiff_t *e = ends;
    if ((WS >> (b->W - 1)) & 1) {
        t = WS & ~(WS << 1);
        starts &= (2ULL << fb_ap_top(t)) - 1;
    }
    starts &= b->V & ~1ULL;            /* bit 0 is pos itself */
    /* each start ends the piece before it; the piece from the last one is left */
    while (starts) {
        *e++ = pos + fb_ctz64(starts);
        starts &= starts - 1;
    }
    return (int)(e - ends);
}

/* The pieces of s[pos:pos+64) that end inside it, pos being a piece start: writes their
 * ends to ends[] and returns how many (0: none; the caller cuts one piece another way).
 * L, D, S, NL, O, SP, Q are the class bits of the 64 bytes from pos (a byte >= 0x80, or one
 * past what is classified, has none); s[pos:pos+64) must be readable. */
static inline int fb_cl100k_ascii_block(const uint8_t *s, ptrdiff_t pos, uint64_t L,
                                        uint64_t D, uint64_t S, uint64_t NL, uint64_t O,
                                        uint64_t SP, uint64_t Q, int single_digits, ptrdiff_t *ends)
{
    fb_ascii_bits b;
    uint64_t T, starts, lone_o, taken, q;
    int i, m;
    if (!fb_ascii_bits_of(&b, L, D, S, NL, O, SP, Q))
        return 0;
    /* \r\n right after an O run belong to its piece */
    T = b.NL & ~(b.NL + (b.NL & (b.O << 1)));
    starts = fb_common_starts(&b, T, single_digits, &lone_o, &taken);
    starts = (starts | (b.L & ~(b.L << 1))) & ~taken;
    /* the contractions: an apostrophe that starts a piece, then their letters */
    q = b.Q & lone_o;
    while (q) {
        i = (int)fb_ctz64(q);
        q &= q - 1;
        if (i >= b.W - 3) {             /* its letters may lie past what is known */
            starts &= (2ULL << i) - 1;
            break;
        }
        m = fb_contraction_len(s + pos + i);
        if (m)
            starts |= (1ULL << (i + m)) & b.L;   /* the letters after it start anew */
    }
    return fb_emit_starts(&b, starts, T, pos, ends);
}

/* fb_cl100k_ascii_block for o200k; UP are the upper-case letters (the lower-case ones are
 * L & ~UP).  tekken (Mistral's split): no contractions, single digits. */
static inline int fb_o200k_ascii_block(const uint8_t *s, ptrdiff_t pos, uint64_t L,
                                       uint64_t UP, uint64_t D, uint64_t S, uint64_t NL,
                                       uint64_t O, uint64_t SP, uint64_t Q, int tekken,
                                       ptrdiff_t *ends)
{
    fb_ascii_bits b;
    uint64_t seed, X, T = 0, starts, lone_o, taken, q;
    int i, m;
    if (!fb_ascii_bits_of(&b, L, D, S, NL, O, SP, Q))
        return 0;
    /* \r \n and / right after an O run belong to its piece; '/' is O itself, so such a
     * run starts at a newline right after the O run (a seed).  X + seed clears each run of X
     * from its first seed up; a later seed of the same run ("/\n//\n") is set again there,
     * hence the | seed.  '/' is looked for only when an O follows the newlines (rare). */
    seed = b.NL & (b.O << 1);
    if (seed) {
        T = b.NL & ~(b.NL + seed);
        if ((T << 1) & b.O) {
            X = b.NL | (fb_byte_bits(s + pos, '/') & b.V);
            T = (X & ~(X + seed)) | seed;
        }
    }
    starts = fb_common_starts(&b, T, tekken, &lone_o, &taken);
    /* letter runs, and an upper-case letter right after a lower-case one */
    starts = (starts | (b.L & ~(b.L << 1)) | (UP & b.V & ((b.L & ~UP) << 1))) & ~taken;
    /* a contraction right after a word ends that word's piece */
    q = tekken ? 0 : b.Q & (b.L << 1);
    while (q) {
        i = (int)fb_ctz64(q);
        q &= q - 1;
        if (i >= b.W - 3) {             /* its letters may lie past what is known */
            starts &= (1ULL << i) - 1;
            break;
        }
        m = fb_contraction_len(s + pos + i);
        if (m) {
            starts &= ~(((1ULL << m) - 1) << i);
            starts |= (1ULL << (i + m)) & b.L;   /* letters after it start anew */
            q &= ~((2ULL << (i + m)) - 1);       /* an apostrophe right after it ends no word */
        }
    }
    return fb_emit_starts(&b, starts, T, pos, ends);
}

/* The length of GPT-2's contraction at p[0] == '\'' (2 or 3), or 0: lower case only
 * ('s|'t|'re|'ve|'m|'ll|'d). p[1] and p[2] readable. */
static inline int fb_contraction_len_cs(const uint8_t *p)
{
    int c1 = p[1], c2 = p[2];
    if (c1 == 's' || c1 == 'd' || c1 == 'm' || c1 == 't')
        return 2;
    if ((c1 == 'l' && c2 == 'l') || (c1 == 'v' && c2 == 'e') || (c1 == 'r' && c2 == 'e'))
        return 3;
    return 0;
}

/* fb_cl100k_ascii_block for GPT-2's pattern (r50k, p50k, HF's ByteLevel regex):
 * `'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.  Runs of L,
 * D and O each start a piece, the digits whole; a newline is whitespace like any other;
 * a whitespace run starts a piece and so does its last byte, which, when it is a space,
 * is taken by the run after it; an apostrophe that starts a piece and is followed by
 * s, d, m, t, ll, ve or re (lower case) is a piece of 2 or 3 bytes. */
static inline int fb_r50k_ascii_block(const uint8_t *s, ptrdiff_t pos, uint64_t L,
                                      uint64_t D, uint64_t S, uint64_t O, uint64_t SP,
                                      uint64_t Q, ptrdiff_t *ends)
{
    fb_ascii_bits b;
    uint64_t last, starts, q;
    int i, m;
    if (!fb_ascii_bits_of(&b, L, D, S, 0, O, SP, Q))
        return 0;
    last = b.S & ~(b.S >> 1);
    starts = (b.S & ~(b.S << 1)) | last | (b.L & ~(b.L << 1)) | (b.D & ~(b.D << 1))
             | (b.O & ~(b.O << 1));
    starts &= ~((last & b.SP) << 1);   /* ` ?` takes a run's last space */
    q = b.Q & starts;
    while (q) {
        i = (int)fb_ctz64(q);
        q &= q - 1;
        if (i >= b.W - 3) {             /* its letters may lie past what is known */
            starts &= (2ULL << i) - 1;
            break;
        }
        m = fb_contraction_len_cs(s + pos + i);
        if (m) {
            starts &= ~(((1ULL << (m - 1)) - 1) << (i + 1));   /* its letters */
            starts |= (1ULL << (i + m)) & b.L;                  /* letters after it start anew */
        }
    }
    return fb_emit_starts(&b, starts, 0, pos, ends);
}

#endif
