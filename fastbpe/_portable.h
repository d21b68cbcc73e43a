/* Compiler differences in one place, so the kernels build with GCC and Clang (Linux, macOS)
 * and with MSVC (Windows): each builtin has an MSVC intrinsic and a plain C fallback that
 * gives the same result (prefetch is only a hint: its fallback does nothing). */
#ifndef FASTBPE_PORTABLE_H
#define FASTBPE_PORTABLE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#include <stdlib.h>     /* _byteswap_uint64 */
#define FB_MSVC 1
#else
#define FB_MSVC 0
#endif

/* Ask for the cache line at p before it is read. */
static inline void fb_prefetch(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#elif FB_MSVC && (defined(_M_X64) || defined(_M_IX86))
    _mm_prefetch((const char *)p, _MM_HINT_T0);
#elif FB_MSVC && defined(_M_ARM64)
    __prefetch(p);
#else
    (void)p;
#endif
}

/* Trailing / leading zero bits of x; x must not be 0. */
static inline ptrdiff_t fb_ctz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#elif FB_MSVC && (defined(_M_X64) || defined(_M_ARM64))
    unsigned long i;
    _BitScanForward64(&i, x);
    return (ptrdiff_t)i;
#else
    ptrdiff_t r = 0;
    while (!(x & 1)) { x >>= 1; r++; }
    return r;
#endif
}

static inline ptrdiff_t fb_clz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(x);
#elif FB_MSVC && (defined(_M_X64) || defined(_M_ARM64))
    unsigned long i;
    _BitScanReverse64(&i, x);
    return 63 - (ptrdiff_t)i;
#else
    ptrdiff_t r = 0;
    while (!(x >> 63)) { x <<= 1; r++; }
    return r;
#endif
}

/* x with its bytes in reverse order. */
static inline uint64_t fb_bswap64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap64(x);
#elif FB_MSVC
    return _byteswap_uint64(x);
#else
    x = ((x & 0x00FF00FF00FF00FFULL) << 8) | ((x >> 8) & 0x00FF00FF00FF00FFULL);
    x = ((x & 0x0000FFFF0000FFFFULL) << 16) | ((x >> 16) & 0x0000FFFF0000FFFFULL);
    return (x << 32) | (x >> 32);
#endif
}

/* Relaxed atomic loads and stores of one byte (BPETable.self_merging: written by whichever
 * thread first meets a token, always the same value, so concurrent readers see 0 or it). */
#if defined(__GNUC__) || defined(__clang__)
#define fb_load_u8(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define fb_store_u8(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#else
#define fb_load_u8(p) (*(volatile unsigned char *)(p))
#define fb_store_u8(p, v) (*(volatile unsigned char *)(p) = (v))
#endif

#endif
