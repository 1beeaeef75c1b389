/*
 * input_hold.c - kept input bytes between hashing and upload (see
 * input_hold.h).  Written by the submit's planning thread only; the upload
 * lanes only read it, after planning, so the store needs no lock.  The
 * budget is process-wide (several submits run at once) and atomic.
 */
#include "submit/input_hold.h"

#include "base/strset.h"

#include <stdatomic.h>
#include <stdlib.h>

struct input_hold {
    strset *names;          /* physical name -> index */
    void **data;
    long long *sizes;
    size_t n, cap;
};

static atomic_llong held_bytes;

int input_hold_reserve(long long size)
{
    if (size < 0 || size > INPUT_HOLD_FILE_MAX)
        return 0;
    long long now = atomic_load(&held_bytes);
    do {
        if (now + size > INPUT_HOLD_TOTAL_MAX)
            return 0;
    } while (!atomic_compare_exchange_weak(&held_bytes, &now, now + size));
    return 1;
}

long long input_hold_budget(size_t nfiles)
{
    if (nfiles <= INPUT_HOLD_FULL_FILES)
        return INPUT_HOLD_TOTAL_MAX;
    double share = (double)INPUT_HOLD_FULL_FILES / (double)nfiles;
    return (long long)((double)INPUT_HOLD_TOTAL_MAX * share * share);
}

void input_hold_unreserve(long long size)
{
    atomic_fetch_sub(&held_bytes, size);
}

input_hold *input_hold_new(size_t n)
{
    input_hold *h = calloc(1, sizeof *h);
    size_t cap = n ? n : 1;
    if (h == NULL)
        return NULL;
    h->names = strset_new(n);
    h->data = calloc(cap, sizeof *h->data);
    h->sizes = calloc(cap, sizeof *h->sizes);
    h->cap = cap;
    if (h->names == NULL || h->data == NULL || h->sizes == NULL) {
        input_hold_free(h);
        return NULL;
    }
    return h;
}

int input_hold_put(input_hold *h, const char *phys_name, void *data, long long size)
{
    int added = h->n < h->cap ? strset_add(h->names, phys_name) : -1;
    if (added <= 0) {
        free(data);
        input_hold_unreserve(size);
        return added;
    }
    h->data[h->n] = data;
    h->sizes[h->n] = size;
    h->n++;
    return 1;
}

const void *input_hold_get(const input_hold *h, const char *phys_name, long long *size)
{
    long i = h != NULL ? strset_index(h->names, phys_name) : -1;
    if (i < 0)
        return NULL;
    *size = h->sizes[i];
    return h->data[i];
}

void input_hold_free(input_hold *h)
{
    if (h == NULL)
        return;
    for (size_t i = 0; i < h->n; i++) {
        free(h->data[i]);
        input_hold_unreserve(h->sizes[i]);
    }
    strset_free(h->names);
    free(h->data);
    free(h->sizes);
    free(h);
}
