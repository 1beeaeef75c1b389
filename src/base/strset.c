/*
 * strset.c - a set of C strings: open addressing with linear probing,
 * FNV-1a hashing, table size a power of two kept at most half full.
 * Strings are never removed, so no tombstones are needed.
 */
#include "base/strset.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct strset {
    char **slots;       /* NULL = empty slot */
    size_t *order;      /* order[i]: insertion index of slots[i] */
    size_t nslots;      /* power of two */
    size_t count;
};

#define STRSET_MIN_SLOTS 16

static uint64_t strset_hash(const char *s)
{
    uint64_t h = 14695981039346656037ULL;     /* FNV-1a 64-bit offset basis */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;                /* FNV-1a 64-bit prime */
    }
    return h;
}

/* Index of str's slot, or of the empty slot where it would go. */
static size_t strset_find_slot(char *const *slots, size_t nslots, const char *str)
{
    size_t mask = nslots - 1;
    size_t i = (size_t)strset_hash(str) & mask;
    while (slots[i] && strcmp(slots[i], str) != 0)
        i = (i + 1) & mask;
    return i;
}

strset *strset_new(size_t expected)
{
    size_t nslots = STRSET_MIN_SLOTS;
    /* Keep the load factor at most 1/2 for the expected size. */
    while (nslots / 2 < expected) {
        if (nslots > SIZE_MAX / 4) {
            errno = ENOMEM;
            return NULL;
        }
        nslots *= 2;
    }
    strset *set = malloc(sizeof *set);
    if (!set)
        return NULL;
    set->slots = calloc(nslots, sizeof *set->slots);
    set->order = calloc(nslots, sizeof *set->order);
    if (!set->slots || !set->order) {
        free(set->slots);
        free(set->order);
        free(set);
        return NULL;
    }
    set->nslots = nslots;
    set->count = 0;
    return set;
}

void strset_free(strset *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->nslots; i++)
        free(set->slots[i]);
    free(set->slots);
    free(set->order);
    free(set);
}

static int strset_grow(strset *set)
{
    if (set->nslots > SIZE_MAX / (2 * sizeof *set->slots)) {
        errno = ENOMEM;
        return -1;
    }
    size_t nslots = set->nslots * 2;
    char **slots = calloc(nslots, sizeof *slots);
    size_t *order = calloc(nslots, sizeof *order);
    if (!slots || !order) {
        free(slots);
        free(order);
        return -1;
    }
    for (size_t i = 0; i < set->nslots; i++) {
        if (set->slots[i]) {
            size_t k = strset_find_slot(slots, nslots, set->slots[i]);
            slots[k] = set->slots[i];
            order[k] = set->order[i];
        }
    }
    free(set->slots);
    free(set->order);
    set->slots = slots;
    set->order = order;
    set->nslots = nslots;
    return 0;
}

int strset_add(strset *set, const char *str)
{
    size_t i = strset_find_slot(set->slots, set->nslots, str);
    if (set->slots[i])
        return 0;
    char *copy = strdup(str);
    if (!copy)
        return -1;
    if ((set->count + 1) > set->nslots / 2) {
        if (strset_grow(set) != 0) {
            free(copy);
            return -1;
        }
        i = strset_find_slot(set->slots, set->nslots, str);
    }
    set->slots[i] = copy;
    set->order[i] = set->count;
    set->count++;
    return 1;
}

int strset_contains(const strset *set, const char *str)
{
    return set->slots[strset_find_slot(set->slots, set->nslots, str)] != NULL;
}

long strset_index(const strset *set, const char *str)
{
    size_t i = strset_find_slot(set->slots, set->nslots, str);
    return set->slots[i] != NULL ? (long)set->order[i] : -1;
}

size_t strset_count(const strset *set)
{
    return set->count;
}
