/*
 * blah_asks.c - when HTCondor last asked about each BLAH job in flight
 * (see blah_asks.h): two generations of a string set with a parallel
 * array of times, the set's insertion index naming the slot.  A
 * generation's set is made at its first ask (NULL until then), so
 * starting one, at a rotation or after ENOMEM, cannot fail.
 */
#include "blah/blah_asks.h"

#include "base/strset.h"

#include <stdlib.h>

typedef struct {
    strset *ids;                /* NULL = empty */
    double *times;              /* times[strset_index(ids, job)] */
    size_t cap;
} generation;

struct blah_asks {
    generation cur, old;
    double cur_since;           /* when cur became the newer generation (-1: no ask yet) */
};

static void generation_free(generation *g)
{
    strset_free(g->ids);
    free(g->times);
    g->ids = NULL;
    g->times = NULL;
    g->cap = 0;
}

blah_asks *blah_asks_new(void)
{
    blah_asks *a = calloc(1, sizeof *a);
    if (a != NULL)
        a->cur_since = -1;
    return a;
}

void blah_asks_free(blah_asks *a)
{
    if (a == NULL)
        return;
    generation_free(&a->cur);
    generation_free(&a->old);
    free(a);
}

/* The time noted for job in g, or -1. */
static double noted(const generation *g, const char *job)
{
    long i = g->ids != NULL ? strset_index(g->ids, job) : -1;
    return i >= 0 ? g->times[i] : -1;
}

/* cur becomes old (the old one dropped) and an empty cur starts at now. */
static void rotate(blah_asks *a, double now)
{
    generation_free(&a->old);
    a->old = a->cur;
    a->cur = (generation){ 0 };
    a->cur_since = now;
}

/* job's slot in cur set to t; -1 on ENOMEM. */
static int set_time(generation *g, const char *job, double t)
{
    if (g->ids == NULL && (g->ids = strset_new(0)) == NULL)
        return -1;
    if (strset_add(g->ids, job) < 0)
        return -1;
    size_t i = (size_t)strset_index(g->ids, job);
    if (i >= g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        while (cap <= i)
            cap *= 2;
        double *v = realloc(g->times, cap * sizeof *v);
        if (v == NULL)
            return -1;      /* the id stays, its slot unwritten: see below */
        g->times = v;
        g->cap = cap;
    }
    g->times[i] = t;
    return 0;
}

double blah_asks_note(blah_asks *a, const char *job, double now, double memory_s)
{
    if (a->cur_since < 0)
        a->cur_since = now;
    if (now - a->cur_since >= memory_s)
        rotate(a, now);
    double before = noted(&a->cur, job);
    if (before < 0)
        before = noted(&a->old, job);
    if (set_time(&a->cur, job, now) != 0) {
        /* an id whose slot could not be grown would read a stale slot:
         * start this generation again rather than keep it */
        generation_free(&a->cur);
        return -2;
    }
    return before;
}
