/*
 * file_claims.c - the registry of claimed input files (see file_claims.h).
 *
 * A list of live claims under the registry's mutex; each claim keeps its names in a
 * strset.  The claims alive at once are at most the submits running at
 * once (a few), so a new claim checks its n names against each of them:
 * O(n) set look-ups per live claim of the same project, all in memory.
 */
#include "submit/file_claims.h"

#include "base/strset.h"

#include <pthread.h>
#include <stdlib.h>

struct file_claim {
    long long project_id;
    strset *names;
    struct file_claims *owner;      /* the registry it is in */
    struct file_claim *next;
};

/* One server's claims (exec_shared.claims): every worker's submits see
 * each other's. */
struct file_claims {
    pthread_mutex_t mu;
    pthread_cond_t released;
    file_claim *list;
};

file_claims *file_claims_new(void)
{
    file_claims *fc = calloc(1, sizeof *fc);
    if (fc == NULL)
        return NULL;
    pthread_mutex_init(&fc->mu, NULL);
    pthread_cond_init(&fc->released, NULL);
    return fc;
}

void file_claims_free(file_claims *fc)
{
    if (fc == NULL)
        return;
    pthread_cond_destroy(&fc->released);
    pthread_mutex_destroy(&fc->mu);
    free(fc);
}

/* 1 if a live claim of the same project holds one of names.  Under fc->mu. */
static int conflicts(const file_claims *fc, long long project_id,
                     const char *const *names, size_t n)
{
    for (const file_claim *c = fc->list; c != NULL; c = c->next) {
        if (c->project_id != project_id)
            continue;
        for (size_t i = 0; i < n; i++)
            if (strset_contains(c->names, names[i]))
                return 1;
    }
    return 0;
}

file_claim *file_claims_acquire(file_claims *fc, long long project_id,
                                const char *const *names, size_t n)
{
    file_claim *claim = calloc(1, sizeof *claim);
    if (claim == NULL)
        return NULL;
    claim->project_id = project_id;
    claim->names = strset_new(n);
    if (claim->names == NULL)
        goto nomem;
    for (size_t i = 0; i < n; i++)
        if (strset_add(claim->names, names[i]) < 0)
            goto nomem;
    claim->owner = fc;
    pthread_mutex_lock(&fc->mu);
    while (conflicts(fc, project_id, names, n))
        pthread_cond_wait(&fc->released, &fc->mu);
    claim->next = fc->list;
    fc->list = claim;
    pthread_mutex_unlock(&fc->mu);
    return claim;
nomem:
    strset_free(claim->names);
    free(claim);
    return NULL;
}

void file_claims_release(file_claim *claim)
{
    if (claim == NULL)
        return;
    file_claims *fc = claim->owner;
    pthread_mutex_lock(&fc->mu);
    for (file_claim **p = &fc->list; *p != NULL; p = &(*p)->next) {
        if (*p == claim) {
            *p = claim->next;
            break;
        }
    }
    pthread_cond_broadcast(&fc->released);
    pthread_mutex_unlock(&fc->mu);
    strset_free(claim->names);
    free(claim);
}
