/* Memory for the large tables the encode kernel reads at random (token and pair slots, the
 * piece cache): on Linux, 2 MiB-aligned and marked for transparent huge pages, so a probe
 * into several MiB of slots needs one TLB entry per 2 MiB instead of one per 4 KiB.  The
 * advice is only advice: where the kernel gives no huge pages the memory is ordinary.
 * Other systems: plain malloc.  Free with free(). */
#ifndef FASTBPE_TABLE_ALLOC_H
#define FASTBPE_TABLE_ALLOC_H
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define FB_HUGE_PAGE ((size_t)1 << 21)

static void* fb_table_alloc(size_t nbytes, int zero) {
    void* p = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (nbytes >= FB_HUGE_PAGE / 2) {
        size_t rounded = (nbytes + FB_HUGE_PAGE - 1) & ~(FB_HUGE_PAGE - 1);
        if (posix_memalign(&p, FB_HUGE_PAGE, rounded) != 0)
            return NULL;
        madvise(p, rounded, MADV_HUGEPAGE);
        /* Memory malloc hands back is often already backed by small pages (freed by
           earlier allocations: loading a file frees tens of MiB): the advice alone would
           leave those small.  Dropping them makes the next touch fault in huge pages, and
           zero ones: malloc's memory is private and anonymous, whose dropped pages read as
           zeros (madvise(2)), so a table asked zeroed needs no memset, which touched every
           page of it at load (the piece cache's 4 MiB: ~4M instructions a tokenizer) */
        if (madvise(p, rounded, MADV_DONTNEED) != 0 && zero)
            memset(p, 0, nbytes);
        return p;
    }
#endif
    p = zero ? calloc(nbytes ? nbytes : 1, 1) : malloc(nbytes ? nbytes : 1);
    return p;
}
#endif
