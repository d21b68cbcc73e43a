/* Copy the leading ASCII code units of a Latin-1, UCS-2 or UCS-4 string into UTF-8
 * output, 16 code units a step where SSE2 is there (every x86-64), 8, 4 or 2 otherwise.
 *
 * Real text stored as UCS-2 (English with a curly quote, code with an accent in a comment)
 * is mostly ASCII runs; narrowing them a register at a time instead of a code unit at a
 * time took the str -> UTF-8 step from ~8 instructions a byte to ~1 (see _utf8.pxd).
 * Each function returns how many code units it copied (a whole number of blocks, so the
 * caller finishes the tail and the next non-ASCII unit itself); out gets the same number
 * of bytes.  Nothing is read past in[n - 1]. */
#ifndef FASTBPE_ASCII_RUNS_H
#define FASTBPE_ASCII_RUNS_H

#include <stdint.h>
#include <string.h>
#include <stddef.h>

#if defined(__SSE2__) || defined(_M_X64)   /* every x86-64 (MSVC says so with _M_X64) */
#include <emmintrin.h>
#define FB_RUNS_SSE2 1
#else
#define FB_RUNS_SSE2 0
#endif

static inline ptrdiff_t fb_ucs2_ascii_prefix(const uint16_t *in, ptrdiff_t n, uint8_t *out)
{
    ptrdiff_t i = 0;
#if FB_RUNS_SSE2
    const __m128i high = _mm_set1_epi16((short)0xFF80);
    const __m128i zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        __m128i a = _mm_loadu_si128((const __m128i *)(in + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(in + i + 8));
        __m128i bits = _mm_and_si128(_mm_or_si128(a, b), high);
        if (_mm_movemask_epi8(_mm_cmpeq_epi16(bits, zero)) != 0xFFFF)
            break;  /* a non-ASCII unit among these 16: the caller goes unit by unit */
        _mm_storeu_si128((__m128i *)(out + i), _mm_packus_epi16(a, b));
        i += 16;
    }
#endif
    while (i + 4 <= n) {
        uint64_t block;
        memcpy(&block, in + i, 8);
        if (block & 0xFF80FF80FF80FF80ULL)
            break;
        out[i] = (uint8_t)block;
        out[i + 1] = (uint8_t)(block >> 16);
        out[i + 2] = (uint8_t)(block >> 32);
        out[i + 3] = (uint8_t)(block >> 48);
        i += 4;
    }
    return i;
}

/* UCS-4: a str with one character above U+FFFF (an emoji in a code comment) is stored so,
 * and was converted a unit at a time: 16 instructions a byte on the code corpus. */
static inline ptrdiff_t fb_ucs4_ascii_prefix(const uint32_t *in, ptrdiff_t n, uint8_t *out)
{
    ptrdiff_t i = 0;
#if FB_RUNS_SSE2
    const __m128i high = _mm_set1_epi32((int)0xFFFFFF80);
    const __m128i zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        __m128i a = _mm_loadu_si128((const __m128i *)(in + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(in + i + 4));
        __m128i c = _mm_loadu_si128((const __m128i *)(in + i + 8));
        __m128i d = _mm_loadu_si128((const __m128i *)(in + i + 12));
        __m128i bits = _mm_and_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)), high);
        if (_mm_movemask_epi8(_mm_cmpeq_epi32(bits, zero)) != 0xFFFF)
            break;  /* a non-ASCII unit among these 16 */
        /* every unit is < 0x80, so the signed 32 -> 16 and 16 -> 8 bit packs are exact */
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
        i += 16;
    }
#endif
    while (i + 2 <= n) {
        uint64_t block;
        memcpy(&block, in + i, 8);
        if (block & 0xFFFFFF80FFFFFF80ULL)
            break;
        out[i] = (uint8_t)block;
        out[i + 1] = (uint8_t)(block >> 32);
        i += 2;
    }
    return i;
}

static inline ptrdiff_t fb_latin1_ascii_prefix(const uint8_t *in, ptrdiff_t n, uint8_t *out)
{
    ptrdiff_t i = 0;
#if FB_RUNS_SSE2
    while (i + 16 <= n) {
        __m128i a = _mm_loadu_si128((const __m128i *)(in + i));
        if (_mm_movemask_epi8(a) != 0)
            break;
        _mm_storeu_si128((__m128i *)(out + i), a);
        i += 16;
    }
#endif
    while (i + 8 <= n) {
        uint64_t block;
        memcpy(&block, in + i, 8);
        if (block & 0x8080808080808080ULL)
            break;
        memcpy(out + i, &block, 8);
        i += 8;
    }
    return i;
}

#endif
