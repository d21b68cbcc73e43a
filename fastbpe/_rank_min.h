/* The leftmost smallest of n uint32 ranks: the step of the scan merge (_merge.pyx).
 *
 * n is a multiple of 8 and the array is padded with 0xFFFFFFFF.  Three paths give the same
 * index (the smallest value; the first position holding it): AVX2 (chosen at run time),
 * SSE2 (baseline on x86-64) and portable C.  fb_rank_min_set() forces one (tests run all). */
#ifndef FB_RANK_MIN_H
#define FB_RANK_MIN_H
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#define FB_RM_HAVE_SSE2 1
#else
#define FB_RM_HAVE_SSE2 0
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define FB_RM_HAVE_AVX2 1
#else
#define FB_RM_HAVE_AVX2 0
#endif

enum { FB_RM_C = 0, FB_RM_SSE2 = 1, FB_RM_AVX2 = 2, FB_RM_AUTO = 3 };
static int fb_rank_min_path = -1;   /* resolved on first use */

static inline int fb_rm_ctz(unsigned x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctz(x);
#else
    int i = 0;
    while (!(x & 1u)) { x >>= 1; i++; }
    return i;
#endif
}

static ptrdiff_t fb_rank_min_c(const uint32_t *r, ptrdiff_t n)
{
    ptrdiff_t i, best_i = 0;
    uint32_t best = r[0];
    for (i = 1; i < n; i++)
        if (r[i] < best) { best = r[i]; best_i = i; }
    return best_i;
}

#if FB_RM_HAVE_SSE2
/* SSE2 has no unsigned 32-bit min: flip the sign bits and compare signed. */
static inline __m128i fb_rm_min_epi32(__m128i a, __m128i b)
{
    __m128i lt = _mm_cmplt_epi32(a, b);
    return _mm_or_si128(_mm_and_si128(lt, a), _mm_andnot_si128(lt, b));
}

static ptrdiff_t fb_rank_min_sse2(const uint32_t *r, ptrdiff_t n)
{
    const __m128i bias = _mm_set1_epi32((int)0x80000000u);
    __m128i m = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r), bias);
    ptrdiff_t i;
    int mask;
    for (i = 4; i < n; i += 4)
        m = fb_rm_min_epi32(m, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r + i)), bias));
    m = fb_rm_min_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = fb_rm_min_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
    for (i = 0; i < n; i += 4) {
        __m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r + i)), bias);
        mask = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, m)));
        if (mask)
            return i + fb_rm_ctz((unsigned)mask);
    }
    return 0;
}
#endif

#if FB_RM_HAVE_AVX2
__attribute__((target("avx2")))
static ptrdiff_t fb_rank_min_avx2(const uint32_t *r, ptrdiff_t n)
{
    __m256i m = _mm256_loadu_si256((const __m256i *)r);
    __m128i x;
    ptrdiff_t i;
    int mask;
    for (i = 8; i < n; i += 8)
        m = _mm256_min_epu32(m, _mm256_loadu_si256((const __m256i *)(r + i)));
    x = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 3, 2)));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1)));
    m = _mm256_broadcastd_epi32(x);
    for (i = 0; i < n; i += 8) {
        mask = _mm256_movemask_ps(_mm256_castsi256_ps(
            _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(r + i)), m)));
        if (mask)
            return i + fb_rm_ctz((unsigned)mask);
    }
    return 0;
}

static int fb_rm_cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}
#else
static int fb_rm_cpu_has_avx2(void) { return 0; }
#endif

/* Force a path (FB_RM_AUTO: the fastest this CPU has); a path this build or CPU lacks falls
 * back to the best it has.  Returns the path in use. */
static int fb_rank_min_set(int which)
{
    int best = fb_rm_cpu_has_avx2() ? FB_RM_AVX2 : (FB_RM_HAVE_SSE2 ? FB_RM_SSE2 : FB_RM_C);
    if (which == FB_RM_AUTO || which > best || (which == FB_RM_SSE2 && !FB_RM_HAVE_SSE2))
        which = best;
    fb_rank_min_path = which;
    return which;
}

static inline ptrdiff_t fb_rank_min(const uint32_t *r, ptrdiff_t n)
{
    int path = fb_rank_min_path;
    if (path < 0)
        path = fb_rank_min_set(FB_RM_AUTO);
#if FB_RM_HAVE_AVX2
    if (path == FB_RM_AVX2)
        return fb_rank_min_avx2(r, n);
#endif
#if FB_RM_HAVE_SSE2
    if (path == FB_RM_SSE2)
        return fb_rank_min_sse2(r, n);
#endif
    return fb_rank_min_c(r, n);
}
#endif
