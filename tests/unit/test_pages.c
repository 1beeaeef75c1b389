/*
 * test_pages.c - a page region (base/pages.h) gives aligned, disjoint,
 * writable room up to its capacity and then NULL without taking any;
 * threads filling one region at once never get overlapping room; the
 * mapping is advised for transparent huge pages where the kernel has them.
 */
#include "base/pages.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB ((size_t)1024 * 1024)

static void test_no_region_of_nothing(void **state)
{
    (void)state;
    assert_null(page_region_new(0));
    page_region_free(NULL);
}

static void test_room_up_to_the_capacity(void **state)
{
    (void)state;
    page_region *r = page_region_new(1);        /* rounded up to 2 MiB */
    assert_non_null(r);
    /* a request beyond what is left takes nothing */
    assert_null(page_region_alloc(r, 2 * MIB + 1));
    assert_null(page_region_alloc(r, SIZE_MAX));
    unsigned char *first = page_region_alloc(r, 1000);
    assert_non_null(first);
    size_t got = 1, step = 0;
    unsigned char *prev = first;
    memset(first, 0xab, 1000);
    for (;;) {
        unsigned char *p = page_region_alloc(r, 1000);
        if (p == NULL)
            break;
        assert_int_equal((uintptr_t)p % 16, 0);
        if (step == 0)
            step = (size_t)(p - prev);
        assert_int_equal((size_t)(p - prev), step);     /* one after the other */
        memset(p, 0xab, 1000);
        prev = p;
        got++;
    }
    assert_true(step >= 1000 && step % 16 == 0);
    assert_int_equal(got, 2 * MIB / step);      /* the whole region, no more */
    assert_int_equal(first[0], 0xab);
    page_region_free(r);
}

#define THREADS 4
#define PER_THREAD 20000
#define ITEM 24

typedef struct {
    page_region *r;
    unsigned char tag;
    unsigned char *got[PER_THREAD];
} filler;

static void *fill(void *arg)
{
    filler *f = arg;
    for (size_t i = 0; i < PER_THREAD; i++) {
        f->got[i] = page_region_alloc(f->r, ITEM);
        if (f->got[i] != NULL)
            memset(f->got[i], f->tag, ITEM);
    }
    return NULL;
}

static void test_threads_get_disjoint_room(void **state)
{
    (void)state;
    page_region *r = page_region_new(THREADS * PER_THREAD * 32);
    assert_non_null(r);
    static filler f[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        f[i].r = r;
        f[i].tag = (unsigned char)(i + 1);
        assert_int_equal(pthread_create(&t[i], NULL, fill, &f[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    /* every item still holds its own thread's tag: nothing overlapped */
    for (int i = 0; i < THREADS; i++) {
        for (size_t k = 0; k < PER_THREAD; k++) {
            assert_non_null(f[i].got[k]);
            for (size_t b = 0; b < ITEM; b++)
                assert_int_equal(f[i].got[k][b], f[i].tag);
        }
    }
    page_region_free(r);
}

/* The VmFlags of the mapping that holds p ("hg": advised for huge pages). */
static int mapping_flag(const void *p, const char *flag)
{
    FILE *fp = fopen("/proc/self/smaps", "r");
    if (fp == NULL)
        return -1;
    char line[512];
    int in = 0, found = 0;
    while (fgets(line, sizeof line, fp) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0) {
            char want[8];
            snprintf(want, sizeof want, " %s", flag);
            found = strstr(line, want) != NULL;
            break;
        }
    }
    fclose(fp);
    return found;
}

static void test_advised_for_huge_pages(void **state)
{
    (void)state;
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0)
        skip();         /* a kernel without transparent huge pages */
    page_region *r = page_region_new(8 * MIB);
    assert_non_null(r);
    unsigned char *p = page_region_alloc(r, 100);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % (2 * MIB), 0);      /* from a huge-page boundary */
    p[0] = 1;
    assert_int_equal(mapping_flag(p, "hg"), 1);
    page_region_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_region_of_nothing),
        cmocka_unit_test(test_room_up_to_the_capacity),
        cmocka_unit_test(test_threads_get_disjoint_room),
        cmocka_unit_test(test_advised_for_huge_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
