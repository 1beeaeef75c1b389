/*
 * pages.c - a region of bulk memory in one anonymous mapping (pages.h).
 *
 * The mapping is over-allocated by one huge page and used from its first
 * huge-page boundary, so that the kernel can back it with whole huge
 * pages; the allocation is a bump of an atomic offset, so the hash pool's
 * threads fill one region without a lock.
 */
#include "base/pages.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define PAGES_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAGES_ASAN 1
#endif
#endif

#ifdef PAGES_ASAN
/* AddressSanitizer cannot see inside a mapping of our own: the region
 * starts poisoned, each allocation is unpoisoned, and a poisoned gap
 * follows each one, so an overrun is caught as with malloc. */
#include <sanitizer/asan_interface.h>
#define REDZONE ((size_t)16)
#else
#define REDZONE ((size_t)0)
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

#define HUGE_PAGE ((size_t)2 * 1024 * 1024)
#define REGION_ALIGN ((size_t)16)

_Static_assert(REDZONE + REGION_ALIGN - 1 <= PAGE_REGION_OVERHEAD,
               "pages.h promises at most PAGE_REGION_OVERHEAD bytes over each allocation");

struct page_region {
    void *map;                  /* what mmap gave */
    size_t map_len;
    unsigned char *base;        /* the first huge-page boundary in it */
    size_t cap;
    atomic_size_t used;
};

page_region *page_region_new(size_t cap)
{
    if (cap == 0 || cap > SIZE_MAX - 2 * HUGE_PAGE)
        return NULL;
    cap = (cap + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    page_region *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->map_len = cap + HUGE_PAGE;
    /* MAP_NORESERVE: address space, not a commitment of memory */
    r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r->map == MAP_FAILED) {
        free(r);
        return NULL;
    }
    uintptr_t at = ((uintptr_t)r->map + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    r->base = (unsigned char *)at;
    r->cap = cap;
    atomic_init(&r->used, 0);
#ifdef MADV_HUGEPAGE
    /* advice only: without transparent huge pages the region works the
     * same, a fault per 4 KiB page */
    (void)madvise(r->base, r->cap, MADV_HUGEPAGE);
#endif
    ASAN_POISON_MEMORY_REGION(r->base, r->cap);
    return r;
}

void *page_region_alloc(page_region *r, size_t n)
{
    if (n > r->cap - REDZONE)
        return NULL;
    size_t need = (n + REDZONE + REGION_ALIGN - 1) & ~(REGION_ALIGN - 1);
    size_t at = atomic_load(&r->used);
    do {
        if (need > r->cap - at)
            return NULL;
    } while (!atomic_compare_exchange_weak(&r->used, &at, at + need));
    ASAN_UNPOISON_MEMORY_REGION(r->base + at, n);
    return r->base + at;
}

void page_region_free(page_region *r)
{
    if (r == NULL)
        return;
    ASAN_UNPOISON_MEMORY_REGION(r->base, r->cap);
    munmap(r->map, r->map_len);
    free(r);
}
