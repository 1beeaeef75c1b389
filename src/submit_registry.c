/*
 * submit_registry.c - the in-process registry of running submits (see
 * submit_registry.h): a list under one mutex, a condition variable the
 * waiters sleep on, reference counts so the last one out frees an entry.
 */
#include "submit_registry.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct active_submit {
    long long project_id;
    char *name;
    int done;
    int has_result;            /* 0: the owner left without a result */
    char *result;              /* result tail of the owner, once done */
    int refs;                  /* owner + waiters */
    struct active_submit *next;
};

static pthread_mutex_t active_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t active_cv = PTHREAD_COND_INITIALIZER;
static active_submit *active_list;

static void unref_locked(active_submit *a)
{
    if (--a->refs > 0)
        return;
    for (active_submit **pp = &active_list; *pp; pp = &(*pp)->next) {
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    }
    free(a->name);
    free(a->result);
    free(a);
}

static active_submit *find_running_locked(long long project_id, const char *name)
{
    active_submit *a = active_list;
    while (a && !(a->project_id == project_id && strcmp(a->name, name) == 0 && !a->done))
        a = a->next;
    return a;
}

/* Wait for a's owner to leave; the outcome for the waiter. */
static submit_entry wait_locked(active_submit *a, char **result)
{
    a->refs++;
    while (!a->done)
        pthread_cond_wait(&active_cv, &active_mu);
    submit_entry e = SUBMIT_OWNER_NO_RESULT;
    if (a->has_result) {
        *result = strdup(a->result);
        e = *result != NULL ? SUBMIT_ATTACHED : SUBMIT_NOMEM;
    }
    unref_locked(a);
    return e;
}

submit_entry submit_registry_enter(long long project_id, const char *name,
                                   active_submit **owner, char **result)
{
    *owner = NULL;
    *result = NULL;
    pthread_mutex_lock(&active_mu);
    active_submit *a = find_running_locked(project_id, name);
    if (a != NULL) {
        submit_entry e = wait_locked(a, result);
        pthread_mutex_unlock(&active_mu);
        return e;
    }
    a = calloc(1, sizeof *a);
    if (a == NULL || (a->name = strdup(name)) == NULL) {
        free(a);
        pthread_mutex_unlock(&active_mu);
        return SUBMIT_NOMEM;
    }
    a->project_id = project_id;
    a->refs = 1;
    a->next = active_list;
    active_list = a;
    *owner = a;
    pthread_mutex_unlock(&active_mu);
    return SUBMIT_OWNER;
}

void submit_registry_leave(active_submit *a, const char *result)
{
    pthread_mutex_lock(&active_mu);
    a->result = result ? strdup(result) : NULL;
    a->has_result = a->result != NULL;
    a->done = 1;
    pthread_cond_broadcast(&active_cv);
    unref_locked(a);
    pthread_mutex_unlock(&active_mu);
}
