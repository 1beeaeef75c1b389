/*
 * file_claims.c - the registry of claimed input files (see file_claims.h).
 *
 * A list of live claims under one mutex; each claim keeps its names in a
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
    struct file_claim *next;
};

/* Process-wide by nature: every worker's submits must see each other's. */
static pthread_mutex_t claims_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t claims_released = PTHREAD_COND_INITIALIZER;
static file_claim *claims;

/* 1 if a live claim of the same project holds one of names.  Under claims_mu. */
static int conflicts(long long project_id, const char *const *names, size_t n)
{
    for (const file_claim *c = claims; c != NULL; c = c->next) {
        if (c->project_id != project_id)
            continue;
        for (size_t i = 0; i < n; i++)
            if (strset_contains(c->names, names[i]))
                return 1;
    }
    return 0;
}

file_claim *file_claims_acquire(long long project_id, const char *const *names, size_t n)
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
    pthread_mutex_lock(&claims_mu);
    while (conflicts(project_id, names, n))
        pthread_cond_wait(&claims_released, &claims_mu);
    claim->next = claims;
    claims = claim;
    pthread_mutex_unlock(&claims_mu);
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
    pthread_mutex_lock(&claims_mu);
    for (file_claim **p = &claims; *p != NULL; p = &(*p)->next) {
        if (*p == claim) {
            *p = claim->next;
            break;
        }
    }
    pthread_cond_broadcast(&claims_released);
    pthread_mutex_unlock(&claims_mu);
    strset_free(claim->names);
    free(claim);
}
