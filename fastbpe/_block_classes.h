/* Character classes of UTF-8 text as bitmaps, 64 bytes to a word, for the block scanner
 * (fastbpe/_pretokenize.pyx).
 *
 * The per-character scanner looked a flag up for every byte and looped per run; here a
 * window of up to FB_WIN_WORDS * 64 bytes is classified 16 (SSE2) or 32 (AVX2) bytes at
 * a time into one bitmap per class (bit j of word i = byte start + 64 i + j), and a run's
 * end is one count-trailing-zeros.  Only ASCII bytes get class bits: a run that stops at a
 * byte >= 0x80 is continued by the exact per-character code, so the tables of
 * _unicode_tables.h stay the one authority for non-ASCII characters.
 *
 * Three classifiers fill identical bitmaps: AVX2 (x86-64 with GCC/Clang, chosen at run
 * time when the CPU and OS have it), SSE2 (every x86-64) and a portable SWAR one (8 bytes a step
 * through a byte table).  fb_classifier_set() forces one, so the tests run all of them.
 * Nothing is read outside s[start:end]. */
#ifndef FASTBPE_BLOCK_CLASSES_H
#define FASTBPE_BLOCK_CLASSES_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "_portable.h"   /* fb_ctz64, fb_clz64 */

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define FB_HAVE_SSE2 1
#else
#define FB_HAVE_SSE2 0
#endif

/* GCC/Clang on x86-64 (the target attribute; cpuid.h), not clang-cl (MSVC headers) */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(_MSC_VER)
#include <immintrin.h>
#include <cpuid.h>
#define FB_HAVE_AVX2 1
#else
#define FB_HAVE_AVX2 0
#endif

/* Classes (rows of fb_window.m).  ASCII only: a byte >= 0x80 has none of them. */
enum {
    FB_C_LETTER = 0,   /* [A-Za-z] */
    FB_C_UPPER,        /* [A-Z] (o200k's case split) */
    FB_C_LOWER,        /* [a-z] */
    FB_C_DIGIT,        /* [0-9] */
    FB_C_SPACE,        /* ASCII \s: \t \n \v \f \r and ' ' */
    FB_C_NEWLINE,      /* \r \n */
    FB_C_SP,           /* ' ' itself (the optional space of ` ?X` and the piece finders) */
    FB_C_QUOTE,        /* '\'' (contractions) */
    FB_C_OTHER,        /* ASCII, not LETTER, DIGIT or SPACE: [^\s\p{L}\p{N}] restricted to ASCII */
    FB_NCLASSES
};

#define FB_WIN_WORDS 32                 /* a window covers up to 2 KiB */
#define FB_FILL_WORDS 4                 /* classified 256 bytes at a time, as needed */

typedef struct {
    ptrdiff_t start;                    /* text offset of bit 0 of word 0 */
    ptrdiff_t end;                      /* classified up to here (exclusive) */
    int words;                          /* words filled; the two after them are 0 */
    uint64_t m[FB_NCLASSES][FB_WIN_WORDS + 2];
} fb_window;

/* ---- portable: a class byte per input byte, bits gathered 8 bytes at a time -------- */

/* Bit k of fb_byte_classes[b] = b is in class k (all but OTHER, which is derived).  Built by fb_classifier_set (at import), from the same ranges as the SIMD code; the tests check
 * all three classifiers against the flag table of _unicode_tables.h for every byte. */
static uint8_t fb_byte_classes[256];

static void fb_byte_classes_init(void)
{
    int b;
    for (b = 0; b < 256; b++) {
        int lower = b | 0x20, c = 0;
        if (b < 0x80 && lower >= 'a' && lower <= 'z') c |= 1 << FB_C_LETTER;
        if (b >= 'A' && b <= 'Z') c |= 1 << FB_C_UPPER;
        if (b >= 'a' && b <= 'z') c |= 1 << FB_C_LOWER;
        if (b >= '0' && b <= '9') c |= 1 << FB_C_DIGIT;
        if ((b >= 0x09 && b <= 0x0D) || b == 0x20) c |= 1 << FB_C_SPACE;
        if (b == 0x0A || b == 0x0D) c |= 1 << FB_C_NEWLINE;
        if (b == ' ') c |= 1 << FB_C_SP;
        if (b == '\'') c |= 1 << FB_C_QUOTE;
        fb_byte_classes[b] = (uint8_t)c;
    }
}

/* Which classifier fills the bitmaps: FB_CLS_AUTO picks the fastest the CPU has. */
enum { FB_CLS_AUTO = 0, FB_CLS_SWAR = 1, FB_CLS_SSE2 = 2, FB_CLS_AVX2 = 3 };

static int fb_classifier_chosen = -1;   /* resolved choice; -1 until first use */

/* AVX2 asked of the CPU with cpuid, and of the OS with xgetbv (it saves the YMM registers).
 * Not __builtin_cpu_supports: Apple's x86-64 toolchain lowers it to ___cpu_model, which its
 * runtime lacks, so the module would fail to import on an Intel Mac. */
static inline int fb_cpu_has_avx2(void)
{
#if FB_HAVE_AVX2
    unsigned int a, b, c, d, xcr0_lo, xcr0_hi;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    if (!(c & (1u << 27)) || !(c & (1u << 28)))     /* OSXSAVE, AVX */
        return 0;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    (void)xcr0_hi;
    if ((xcr0_lo & 6) != 6)                          /* XMM and YMM state enabled */
        return 0;
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b >> 5) & 1;                             /* AVX2 */
#else
    return 0;
#endif
}

/* Force a classifier (FB_CLS_*); returns the one now in use, which differs from the
 * request when this build or CPU lacks it (then the best available is used). */
static int fb_classifier_set(int which)
{
    int best;
    fb_byte_classes_init();             /* at import (use_scanner), before any thread scans */
    best = fb_cpu_has_avx2() ? FB_CLS_AVX2 : (FB_HAVE_SSE2 ? FB_CLS_SSE2 : FB_CLS_SWAR);
    if (which == FB_CLS_AUTO || which > best || (which == FB_CLS_SSE2 && !FB_HAVE_SSE2))
        which = best;
    fb_classifier_chosen = which;
    return which;
}

static inline int fb_classifier(void)
{
    int c = fb_classifier_chosen;
    return c >= 0 ? c : fb_classifier_set(FB_CLS_AUTO);
}

/* Bit k of each byte of x, gathered into 8 bits (byte j -> bit j). */
static inline uint64_t fb_gather_bit(uint64_t x, int k)
{
    return (((x >> k) & 0x0101010101010101ULL) * 0x0102040810204080ULL) >> 56;
}

/* Bytes [j0, len) of the word at p (len <= 64) into m (OR-ed in at bit j0 on); the
 * mask of those bytes that are < 0x80 is OR-ed into *ascii. */
static void fb_classify_swar(const uint8_t *p, int j0, int len, uint64_t m[FB_NCLASSES],
                             uint64_t *ascii)
{
    int j, i, k;
    for (j = j0; j < len; j += 8) {
        uint64_t x = 0, hi = 0;
        int take = len - j < 8 ? len - j : 8;
        for (i = 0; i < take; i++) {
            x |= (uint64_t)fb_byte_classes[p[j + i]] << (8 * i);
            hi |= (uint64_t)(p[j + i] >> 7) << i;
        }
        for (k = 0; k < FB_C_OTHER; k++)
            m[k] |= fb_gather_bit(x, k) << j;
        *ascii |= (~hi & ((take == 8) ? 0xFFu : ((1u << take) - 1))) << j;
    }
}

/* ---- SSE2: 16 bytes a step ------------------------------------------------------------ */

/* OTHER from the other rows and the mask of ASCII bytes. */
#define FB_SET_OTHER(w, i, ascii) \
    ((w)->m[FB_C_OTHER][i] = (ascii) & ~((w)->m[FB_C_LETTER][i] | (w)->m[FB_C_DIGIT][i] | (w)->m[FB_C_SPACE][i]))

#if FB_HAVE_SSE2
/* Unsigned x in [lo, lo + count) as a signed compare: shift the range to start at -128. */
#define FB_IN_RANGE_128(v, lo, count) \
    _mm_cmplt_epi8(_mm_add_epi8((v), _mm_set1_epi8((char)(0x80 - (lo)))), \
                   _mm_set1_epi8((char)(0x80 + (count))))

/* Words i0 .. i0 + count - 1 of w from the 64 * count bytes at p.  UPPER and LOWER only
 * when `cases` (o200k), else 0. */
static void fb_fill_sse2(fb_window *w, int i0, int count, const uint8_t *p, int cases)
{
    int i, j;
    for (i = i0; i < i0 + count; i++, p += 64) {
        uint64_t le = 0, up = 0, di = 0, sp = 0, nl = 0, na = 0, s20 = 0, qu = 0;
        for (j = 0; j < 64; j += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + j));
            __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
            __m128i blank = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x20));
            __m128i space = _mm_or_si128(FB_IN_RANGE_128(v, 0x09, 5), blank);
            __m128i newline = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x0A)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x0D)));
            le |= (uint64_t)(uint32_t)_mm_movemask_epi8(FB_IN_RANGE_128(lower, 'a', 26)) << j;  /* none >= 0x80 */
            di |= (uint64_t)(uint32_t)_mm_movemask_epi8(FB_IN_RANGE_128(v, '0', 10)) << j;
            sp |= (uint64_t)(uint32_t)_mm_movemask_epi8(space) << j;
            nl |= (uint64_t)(uint32_t)_mm_movemask_epi8(newline) << j;
            na |= (uint64_t)(uint32_t)_mm_movemask_epi8(v) << j;
            s20 |= (uint64_t)(uint32_t)_mm_movemask_epi8(blank) << j;
            qu |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\''))) << j;
            if (cases)
                up |= (uint64_t)(uint32_t)_mm_movemask_epi8(FB_IN_RANGE_128(v, 'A', 26)) << j;
        }
        w->m[FB_C_LETTER][i] = le;
        w->m[FB_C_UPPER][i] = up;
        w->m[FB_C_LOWER][i] = le & ~up & (cases ? ~0ULL : 0);
        w->m[FB_C_DIGIT][i] = di;
        w->m[FB_C_SPACE][i] = sp;
        w->m[FB_C_NEWLINE][i] = nl;
        w->m[FB_C_SP][i] = s20;
        w->m[FB_C_QUOTE][i] = qu;
        w->m[FB_C_OTHER][i] = ~na & ~(le | di | sp);
    }
}
#endif

/* ---- AVX2: 32 bytes a step (compiled for AVX2, called only when the CPU has it) ---- */

#if FB_HAVE_AVX2
#define FB_IN_RANGE_256(v, lo, count) \
    _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + (count))), \
                      _mm256_add_epi8((v), _mm256_set1_epi8((char)(0x80 - (lo)))))

__attribute__((target("avx2")))
static void fb_fill_avx2(fb_window *w, int i0, int count, const uint8_t *p, int cases)
{
    int i, j;
    for (i = i0; i < i0 + count; i++, p += 64) {
        uint64_t le = 0, up = 0, di = 0, sp = 0, nl = 0, na = 0, s20 = 0, qu = 0;
        for (j = 0; j < 64; j += 32) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(p + j));
            __m256i lower = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
            __m256i blank = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(0x20));
            __m256i space = _mm256_or_si256(FB_IN_RANGE_256(v, 0x09, 5), blank);
            __m256i newline = _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(0x0A)),
                                              _mm256_cmpeq_epi8(v, _mm256_set1_epi8(0x0D)));
            le |= (uint64_t)(uint32_t)_mm256_movemask_epi8(FB_IN_RANGE_256(lower, 'a', 26)) << j;
            di |= (uint64_t)(uint32_t)_mm256_movemask_epi8(FB_IN_RANGE_256(v, '0', 10)) << j;
            sp |= (uint64_t)(uint32_t)_mm256_movemask_epi8(space) << j;
            nl |= (uint64_t)(uint32_t)_mm256_movemask_epi8(newline) << j;
            na |= (uint64_t)(uint32_t)_mm256_movemask_epi8(v) << j;
            s20 |= (uint64_t)(uint32_t)_mm256_movemask_epi8(blank) << j;
            qu |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\''))) << j;
            if (cases)
                up |= (uint64_t)(uint32_t)_mm256_movemask_epi8(FB_IN_RANGE_256(v, 'A', 26)) << j;
        }
        w->m[FB_C_LETTER][i] = le;
        w->m[FB_C_UPPER][i] = up;
        w->m[FB_C_LOWER][i] = le & ~up & (cases ? ~0ULL : 0);
        w->m[FB_C_DIGIT][i] = di;
        w->m[FB_C_SPACE][i] = sp;
        w->m[FB_C_NEWLINE][i] = nl;
        w->m[FB_C_SP][i] = s20;
        w->m[FB_C_QUOTE][i] = qu;
        w->m[FB_C_OTHER][i] = ~na & ~(le | di | sp);
    }
}
#endif

/* Words i0 .. i0 + count - 1 of w from the 64 * count bytes at p, portably. */
static void fb_fill_swar(fb_window *w, int i0, int count, const uint8_t *p, int cases)
{
    int i, k;
    for (i = i0; i < i0 + count; i++, p += 64) {
        uint64_t m[FB_NCLASSES] = {0}, ascii = 0;
        fb_classify_swar(p, 0, 64, m, &ascii);
        if (!cases)
            m[FB_C_UPPER] = m[FB_C_LOWER] = 0;
        for (k = 0; k < FB_NCLASSES; k++)
            w->m[k][i] = m[k];
        FB_SET_OTHER(w, i, ascii);
    }
}

/* The last, partial word (1..63 bytes at p) as word i: portably, bytes past it read 0. */
/* The last len < 64 bytes: copied into a zeroed block and classified like a whole word
 * (the byte-table loop cost ~750 instructions a short call), then masked to len. */
static void fb_fill_partial(fb_window *w, int i, const uint8_t *p, int len, int cases)
{
    uint8_t block[64];
    uint64_t valid = (1ULL << len) - 1;
    int k, cls = fb_classifier();
    memset(block, 0, sizeof block);
    memcpy(block, p, (size_t)len);
#if FB_HAVE_AVX2
    if (cls == FB_CLS_AVX2)
        fb_fill_avx2(w, i, 1, block, cases);
    else
#endif
#if FB_HAVE_SSE2
    if (cls == FB_CLS_SSE2)
        fb_fill_sse2(w, i, 1, block, cases);
    else
#endif
        fb_fill_swar(w, i, 1, block, cases);
    for (k = 0; k < FB_NCLASSES; k++)
        w->m[k][i] &= valid;
}

/* Bit count without the popcnt instruction, which the baseline x86-64 build lacks
 * (__builtin_popcountll became a libgcc call per word). */
static inline int fb_popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

/* Are more than a third of the `bytes` bytes of words [first, last) >= 0x80?  In such text
 * (CJK, Cyrillic, ...) nearly every piece needs the per-character code, so the scanner runs
 * it directly for a while instead of classifying (measured: +35% instructions otherwise).
 * `bytes` counts what was classified, not the words' 64 each: the past-the-end bytes of a
 * last partial word are no text (counted, they sent every ASCII text under 43 bytes, as
 * GPT-NeoX's stretches between its space-run tokens, to the per-character code). */
static inline int fb_mostly_nonascii(const fb_window *w, int first, int last, ptrdiff_t bytes)
{
    int i;
    ptrdiff_t ascii = 0;
    for (i = first; i < last; i++) {
        uint64_t x = w->m[FB_C_LETTER][i] | w->m[FB_C_DIGIT][i] | w->m[FB_C_SPACE][i] | w->m[FB_C_OTHER][i];
        ascii += ~x ? fb_popcount64(x) : 64;    /* a word of ASCII without the popcount */
    }
    return 3 * (bytes - ascii) > bytes;
}

/* Make the window hold the text from `pos` on: append FB_FILL_WORDS words when they fit
 * after what is classified (pos must then lie in the window), else start afresh at pos.
 * Classifies no further than n.  `cases`: also the UPPER and LOWER rows (o200k).
 * Returns fb_mostly_nonascii() of the new words. */
static int fb_window_extend(fb_window *w, const uint8_t *s, ptrdiff_t n, ptrdiff_t pos,
                            int cases)
{
    int cls = fb_classifier(), full, k, first;
    ptrdiff_t from;
    if (pos < w->start || pos > w->end || w->words + FB_FILL_WORDS > FB_WIN_WORDS) {
        w->start = pos;
        w->end = pos;
        w->words = 0;
    }
    first = w->words;
    from = w->end;
    full = (n - w->end) / 64 < FB_FILL_WORDS ? (int)((n - w->end) / 64) : FB_FILL_WORDS;
    if (full > 0) {
#if FB_HAVE_AVX2
        if (cls == FB_CLS_AVX2)
            fb_fill_avx2(w, w->words, full, s + w->end, cases);
        else
#endif
#if FB_HAVE_SSE2
        if (cls == FB_CLS_SSE2)
            fb_fill_sse2(w, w->words, full, s + w->end, cases);
        else
#endif
            fb_fill_swar(w, w->words, full, s + w->end, cases);
        w->words += full;
        w->end += 64 * full;
    }
    if (full < FB_FILL_WORDS && w->end < n) {
        fb_fill_partial(w, w->words, s + w->end, (int)(n - w->end), cases);
        w->words += 1;
        w->end = n;
    }
    for (k = 0; k < FB_NCLASSES; k++)
        w->m[k][w->words] = w->m[k][w->words + 1] = 0;  /* sentinels: runs stop, fb_bits reads 0 */
    return fb_mostly_nonascii(w, first, w->words, w->end - from);
}

static inline void fb_window_init(fb_window *w, ptrdiff_t pos)
{
    w->start = w->end = pos;
    w->words = FB_WIN_WORDS;            /* full: the first extend starts afresh */
}

/* ---- queries ------------------------------------------------------------------------ */

/* What the scan loop reads of a window, passed by value: the compiler keeps it in
 * registers (a pointer to the window would be reloaded after every store of a piece end,
 * which might alias it). */
typedef struct {
    const uint64_t (*m)[FB_WIN_WORDS + 2];
    ptrdiff_t start, end;
} fb_view;

static inline fb_view fb_view_of(const fb_window *w)
{
    fb_view v;
    v.m = (const uint64_t (*)[FB_WIN_WORDS + 2])w->m;
    v.start = w->start;
    v.end = w->end;
    return v;
}

/* Word i of class k's bitmap (for tests). */
static inline uint64_t fb_word(const fb_window *w, int k, int i)
{
    return w->m[k][i];
}

/* Is byte q (start <= q <= end) in class k?  Byte `end` is in none. */
static inline int fb_has(fb_view w, int k, ptrdiff_t q)
{
    ptrdiff_t r = q - w.start;
    return (int)((w.m[k][r >> 6] >> (r & 63)) & 1);
}

/* Bits b .. b + 63 of the 128-bit hi:lo (0 <= b < 64).  One SHRD on x86-64 with GCC/Clang
 * (its count 0 leaves lo as it is); the two shifts elsewhere (~5 more instructions, 7 times a
 * block of the ASCII piece finder). */
static inline uint64_t fb_funnel_right(uint64_t lo, uint64_t hi, int b)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(_MSC_VER)
    __asm__("shrdq %%cl, %1, %0" : "+r"(lo) : "r"(hi), "c"(b) : "cc");
    return lo;
#else
    return (lo >> b) | ((hi << 1) << (63 - b));
#endif
}

/* The 64 class-k bits from offset q (start <= q <= end) on: bit j is byte q + j; bytes
 * from end on read 0. */
static inline uint64_t fb_bits(fb_view w, int k, ptrdiff_t q)
{
    ptrdiff_t r = q - w.start;
    ptrdiff_t i = r >> 6;
    return fb_funnel_right(w.m[k][i], w.m[k][i + 1], (int)(r & 63));
}

/* The first offset >= q (start <= q <= end) not in class k; at most end. */
static inline ptrdiff_t fb_run_end(fb_view w, int k, ptrdiff_t q)
{
    ptrdiff_t r = q - w.start;
    const uint64_t *m = w.m[k];
    ptrdiff_t i = r >> 6;
    uint64_t x = ~m[i] >> (r & 63);
    if (x)
        return q + fb_ctz64(x);
    for (i++;; i++) {
        x = ~m[i];
        if (x)
            return w.start + 64 * i + fb_ctz64(x);
    }
}

/* The last offset in [a, b) (start <= a < b <= end) in class k, or -1. */
static inline ptrdiff_t fb_last_in(fb_view w, int k, ptrdiff_t a, ptrdiff_t b)
{
    ptrdiff_t ra = a - w.start, rb = b - w.start;   /* bits [ra, rb) */
    ptrdiff_t i = (rb - 1) >> 6, lo_word = ra >> 6;
    uint64_t x = w.m[k][i];
    int top = (int)((rb - 1) & 63);
    if (top < 63)
        x &= (2ULL << top) - 1;
    for (;;) {
        if (i == lo_word)
            x &= ~0ULL << (ra & 63);
        if (x)
            return w.start + 64 * i + 63 - fb_clz64(x);
        if (i == lo_word)
            return -1;
        x = w.m[k][--i];
    }
}

#endif
