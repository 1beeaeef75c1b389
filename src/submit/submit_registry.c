/*
 * submit_registry.c - what the running submits of one server share (see
 * submit_registry.h): the registry of running submits (a list under one
 * mutex, a condition variable the waiters sleep on, reference counts so
 * the last one out frees an entry), then the claims on input files.
 */
#include "submit/submit_registry.h"
#include "base/strset.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct active_submit {
    long long project_id;
    char *name;
    int done;
    int has_result;            /* 0: the owner left without an outcome */
    exec_err result;           /* the owner's outcome, once done (typed: a
                                  waiter formats it in its own dialect) */
    int refs;                  /* owner + waiters */
    struct active_submit *next;
    submit_registry *reg;       /* the registry it is in */
};

/* One server's running submits (exec_shared.submits). */
struct submit_registry {
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* an owner left */
    active_submit *list;
};

submit_registry *submit_registry_new(void)
{
    submit_registry *reg = calloc(1, sizeof *reg);
    if (reg == NULL)
        return NULL;
    pthread_mutex_init(&reg->mu, NULL);
    pthread_cond_init(&reg->cv, NULL);
    return reg;
}

void submit_registry_free(submit_registry *reg)
{
    if (reg == NULL)
        return;
    pthread_cond_destroy(&reg->cv);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

static void unref_locked(active_submit *a)
{
    if (--a->refs > 0)
        return;
    for (active_submit **pp = &a->reg->list; *pp; pp = &(*pp)->next) {
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    }
    free(a->name);
    exec_err_clear(&a->result);
    free(a);
}

static active_submit *find_running_locked(submit_registry *reg, long long project_id,
                                          const char *name)
{
    active_submit *a = reg->list;
    while (a && !(a->project_id == project_id && strcmp(a->name, name) == 0 && !a->done))
        a = a->next;
    return a;
}

/*
 * Wait (holding a reference, which this drops) for a's owner to leave or
 * `until` to pass; the outcome for the waiter.
 */
static submit_entry wait_locked(active_submit *a, const struct timespec *until,
                                exec_err *result)
{
    int timed_out = 0;
    while (!a->done && !timed_out) {
        if (until == NULL)
            pthread_cond_wait(&a->reg->cv, &a->reg->mu);
        else if (pthread_cond_timedwait(&a->reg->cv, &a->reg->mu, until) == ETIMEDOUT)
            timed_out = !a->done;
    }
    submit_entry e = SUBMIT_OWNER_NO_RESULT;
    if (timed_out) {
        e = SUBMIT_STILL_RUNNING;
    } else if (a->has_result) {
        e = exec_err_copy(result, &a->result) == 0 ? SUBMIT_ATTACHED : SUBMIT_NOMEM;
    }
    unref_locked(a);
    return e;
}

submit_entry submit_registry_enter(submit_registry *reg, long long project_id,
                                   const char *name, const struct timespec *until,
                                   active_submit **owner, exec_err *result)
{
    *owner = NULL;
    memset(result, 0, sizeof *result);
    pthread_mutex_lock(&reg->mu);
    active_submit *a = find_running_locked(reg, project_id, name);
    if (a != NULL) {
        a->refs++;
        submit_entry e = wait_locked(a, until, result);
        pthread_mutex_unlock(&reg->mu);
        return e;
    }
    a = calloc(1, sizeof *a);
    if (a == NULL || (a->name = strdup(name)) == NULL) {
        free(a);
        pthread_mutex_unlock(&reg->mu);
        return SUBMIT_NOMEM;
    }
    a->project_id = project_id;
    a->refs = 1;
    a->reg = reg;
    a->next = reg->list;
    reg->list = a;
    *owner = a;
    pthread_mutex_unlock(&reg->mu);
    return SUBMIT_OWNER;
}

void submit_registry_ref(active_submit *a)
{
    pthread_mutex_lock(&a->reg->mu);
    a->refs++;
    pthread_mutex_unlock(&a->reg->mu);
}

submit_entry submit_registry_wait(active_submit *a, const struct timespec *until,
                                  exec_err *result)
{
    memset(result, 0, sizeof *result);
    submit_registry *reg = a->reg;
    pthread_mutex_lock(&reg->mu);
    submit_entry e = wait_locked(a, until, result);
    pthread_mutex_unlock(&reg->mu);
    return e;
}

void submit_registry_leave(active_submit *a, const exec_err *result)
{
    submit_registry *reg = a->reg;
    pthread_mutex_lock(&reg->mu);
    /* a copy that cannot be made is no outcome: waiters read the journal */
    a->has_result = result != NULL && exec_err_copy(&a->result, result) == 0;
    a->done = 1;
    pthread_cond_broadcast(&reg->cv);
    unref_locked(a);
    pthread_mutex_unlock(&reg->mu);
}

/* ==== file claims =======================================================
 *
 * The registry of claimed input files (see submit_registry.h).
 *
 * A list of live claims under the registry's mutex; each claim keeps its names in a
 * strset.  The claims alive at once are at most the submits running at
 * once (a few), so a new claim checks its n names against each of them:
 * O(n) set look-ups per live claim of the same project, all in memory.
 */

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
