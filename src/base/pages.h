/*
 * pages.h - a region of bulk memory: one anonymous mapping, filled from
 * its start by any number of threads, given back to the kernel as a whole.
 *
 * For data that is written once, lives as long as one task and is freed
 * all at once (the bytes of a submit's new inputs kept from hashing to
 * upload).  The mapping is advised for transparent huge pages where the
 * kernel has them: on the virtual machines we measured, the first touch
 * of each 4 KiB page costs 15-25 us, and 10 MB of small mallocs cost a
 * submit 2,500 page faults; a huge page is one fault per 2 MiB
 * (doc/performance.md, "Third pass").
 *
 * Interface:
 *   page_region_new(cap)      reserve cap bytes of address space
 *   page_region_alloc(r, n)   n bytes from the region (thread-safe)
 *   page_region_free(r)       unmap it all
 * Nothing is touched, so nothing is resident, until it is written.
 */
#ifndef BOINC_GAHP_PAGES_H
#define BOINC_GAHP_PAGES_H

#include <stddef.h>

typedef struct page_region page_region;

/* A region of cap bytes (rounded up to whole huge pages); NULL when cap
 * is 0 or the mapping fails. */
page_region *page_region_new(size_t cap);

/* Most bytes of a region one allocation takes beyond the n it asks for
 * (alignment, and AddressSanitizer's red zone): a region meant for k
 * allocations of at most B bytes in all needs B + k * this. */
#define PAGE_REGION_OVERHEAD 31

/* n bytes aligned to 16, or NULL when the region has not that much left
 * (nothing is taken then).  Safe from several threads at once. */
void *page_region_alloc(page_region *r, size_t n);

/* Unmap the region: every pointer it gave is invalid after.  NULL is fine. */
void page_region_free(page_region *r);

#endif
