/*
 * fetch_templates.c - BOINC_FETCH_OUTPUT's template cache
 * (fetch_templates_*, declared in fetch_step.h): one process-wide list of
 * (project URL, app, templates) under a mutex.
 *
 * Pipelined fetches run on several workers at once, so the first fetches
 * of an app would all miss together: one of them asks the server while
 * the others wait for its answer on a condition variable ("loading"
 * entry), and a run of N fetches costs one get_templates.  If that RPC
 * fails, the entry goes and a waiting fetch asks in turn.
 */
#include "fetch/fetch_step.h"

#include "base/strbuf.h"
#include "base/log.h"
#include "fetch/outputs.h"
#include "journal/journal_batches.h"

#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

typedef struct tpl_entry {
    struct tpl_entry *next;
    char *url;
    char *app;
    int loading;                /* a fetch is asking the server for it */
    boinc_templates t;          /* when !loading */
    double fetched_at;          /* CLOCK_MONOTONIC seconds, when !loading */
} tpl_entry;

/* One server's cache (exec_shared.templates). */
struct fetch_templates_cache {
    pthread_mutex_t lock;
    pthread_cond_t loaded;      /* an entry stopped loading */
    tpl_entry *head;
    size_t count;
};

fetch_templates_cache *fetch_templates_cache_new(void)
{
    fetch_templates_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->loaded, NULL);
    return c;
}

static double monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- copies of templates --------------------------------------------------- */

/* names[0..n) may hold NULLs (boinc_templates pads input names). */
static int copy_names(char *const *src, size_t n, char ***dst)
{
    *dst = NULL;
    if (n == 0)
        return 0;
    char **d = calloc(n, sizeof *d);
    if (d == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (src[i] != NULL && (d[i] = strdup(src[i])) == NULL) {
            boinc_names_free(d, n);
            return -1;
        }
    *dst = d;
    return 0;
}

static int templates_copy(const boinc_templates *src, boinc_templates *dst)
{
    memset(dst, 0, sizeof *dst);
    if (copy_names(src->input_names, src->n_inputs, &dst->input_names) != 0)
        return -1;
    dst->n_inputs = src->n_inputs;
    if (copy_names(src->output_names, src->n_outputs, &dst->output_names) != 0) {
        boinc_templates_free(dst);
        return -1;
    }
    dst->n_outputs = src->n_outputs;
    if (src->output_max_nbytes != NULL && src->n_outputs > 0) {
        size_t size = src->n_outputs * sizeof *dst->output_max_nbytes;
        dst->output_max_nbytes = malloc(size);
        if (dst->output_max_nbytes == NULL) {
            boinc_templates_free(dst);
            return -1;
        }
        memcpy(dst->output_max_nbytes, src->output_max_nbytes, size);
    }
    return 0;
}

/* Both without limits, or the same limit for each output. */
static int same_limits(const boinc_templates *a, const boinc_templates *b)
{
    if (a->output_max_nbytes == NULL || b->output_max_nbytes == NULL)
        return a->output_max_nbytes == b->output_max_nbytes;
    return memcmp(a->output_max_nbytes, b->output_max_nbytes,
                  a->n_outputs * sizeof *a->output_max_nbytes) == 0;
}

static int same_names(char *const *a, char *const *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((a[i] == NULL) != (b[i] == NULL) ||
            (a[i] != NULL && strcmp(a[i], b[i]) != 0))
            return 0;
    return 1;
}

static int templates_equal(const boinc_templates *a, const boinc_templates *b)
{
    return a->n_inputs == b->n_inputs && a->n_outputs == b->n_outputs &&
           same_names(a->input_names, b->input_names, a->n_inputs) &&
           same_names(a->output_names, b->output_names, a->n_outputs) &&
           same_limits(a, b);
}

/* ---- the list (callers hold c->lock) ------------------------------------- */

static tpl_entry *entry_find(fetch_templates_cache *c, const char *url, const char *app)
{
    for (tpl_entry *x = c->head; x != NULL; x = x->next)
        if (strcmp(x->url, url) == 0 && strcmp(x->app, app) == 0)
            return x;
    return NULL;
}

static void entry_remove(fetch_templates_cache *c, tpl_entry *x)
{
    for (tpl_entry **p = &c->head; *p != NULL; p = &(*p)->next)
        if (*p == x) {
            *p = x->next;
            c->count--;
            break;
        }
    boinc_templates_free(&x->t);
    free(x->url);
    free(x->app);
    free(x);
}

/* Make room for one more entry: drop the least recently fetched one that
 * no fetch is loading (if every one is loading, the list grows by one). */
static void make_room(fetch_templates_cache *c)
{
    if (c->count < FETCH_TEMPLATES_MAX_ENTRIES)
        return;
    tpl_entry *oldest = NULL;
    for (tpl_entry *x = c->head; x != NULL; x = x->next)
        if (!x->loading && (oldest == NULL || x->fetched_at < oldest->fetched_at))
            oldest = x;
    if (oldest != NULL)
        entry_remove(c, oldest);
}

/* A new loading entry at the head, or NULL on out of memory. */
static tpl_entry *entry_add_loading(fetch_templates_cache *c, const char *url, const char *app)
{
    make_room(c);
    tpl_entry *x = calloc(1, sizeof *x);
    if (x == NULL || (x->url = strdup(url)) == NULL ||
        (x->app = strdup(app)) == NULL) {
        if (x != NULL)
            free(x->url);
        free(x);
        return NULL;
    }
    x->loading = 1;
    x->next = c->head;
    c->head = x;
    c->count++;
    return x;
}

/* ---- asking the server and the journal ---------------------------------------- */

/* get_templates by the job's name: the uncached fetch's RPC. */
static int ask_by_job(fetch_ctx *fc, boinc_templates *t, exec_err *e)
{
    boinc_error err = { 0 };
    if (boinc_get_templates_for_job(fc->ctx->client, &fc->project, fc->f->job,
                                    t, &err) != BOINC_OK) {
        boinc_templates_free(t);
        return fetch_step_fail_rpc(e, "get_templates", &err);
    }
    return 0;
}

/* The app of fc's job, malloc'd, or NULL: a job the journal does not
 * know, or a journal that cannot say (then the fetch asks by job name,
 * uncached, as it would anyway). */
static char *job_app(fetch_ctx *fc, long long project_id)
{
    if (project_id <= 0 || fc->project.url == NULL)
        return NULL;
    char *app = NULL;
    int found = 0;
    if (journal_job_app(fc->ctx->journal, project_id, fc->f->job, &app,
                        &found) != 0) {
        log_warn("fetch %s: the journal cannot say the job's app; templates "
                 "asked by job name", fc->f->job);
        return NULL;
    }
    return app;
}

/* Under c->lock: 1 with *out a copy of a fresh entry; 0 with *mine a
 * new loading entry this fetch must fill (finish_load); -1 out of memory.
 * Waits while another fetch loads the same entry. */
static int lookup_or_claim(fetch_templates_cache *c, const char *url, const char *app,
                           boinc_templates *out, tpl_entry **mine)
{
    *mine = NULL;
    for (;;) {
        tpl_entry *x = entry_find(c, url, app);
        if (x != NULL && x->loading) {
            pthread_cond_wait(&c->loaded, &c->lock);
            continue;
        }
        if (x != NULL && monotonic_now() - x->fetched_at < FETCH_TEMPLATES_MAX_AGE_S)
            return templates_copy(&x->t, out) == 0 ? 1 : -1;
        if (x != NULL)
            entry_remove(c, x);    /* too old: ask again */
        *mine = entry_add_loading(c, url, app);
        return *mine != NULL ? 0 : -1;
    }
}

/* Under c->lock: the entry this fetch loaded gets t, or goes when t is
 * NULL (the RPC failed) or cannot be copied; waiting fetches wake up. */
static void finish_load(fetch_templates_cache *c, tpl_entry *x, const boinc_templates *t)
{
    if (t == NULL || templates_copy(t, &x->t) != 0) {
        entry_remove(c, x);
    } else {
        x->loading = 0;
        x->fetched_at = monotonic_now();
    }
    pthread_cond_broadcast(&c->loaded);
}

/* ---- the interface ------------------------------------------------------------ */

int fetch_templates_get(fetch_ctx *fc, long long project_id,
                        fetch_templates *out, exec_err *e)
{
    memset(out, 0, sizeof *out);
    out->app = job_app(fc, project_id);
    if (out->app == NULL)
        return ask_by_job(fc, &out->t, e);
    fetch_templates_cache *c = fc->ctx->shared->templates;
    tpl_entry *mine = NULL;
    pthread_mutex_lock(&c->lock);
    int hit = lookup_or_claim(c, fc->project.url, out->app, &out->t, &mine);
    pthread_mutex_unlock(&c->lock);
    if (hit == 1) {
        out->cached = 1;
        return 0;
    }
    if (hit < 0)
        return exec_err_nomem(e);
    int rc = ask_by_job(fc, &out->t, e);
    pthread_mutex_lock(&c->lock);
    finish_load(c, mine, rc == 0 ? &out->t : NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* Under c->lock: the entry of (url, app) gets t (when no fetch is
 * loading it), or goes when t is NULL. */
static void entry_replace(fetch_templates_cache *c, const char *url, const char *app,
                          const boinc_templates *t)
{
    tpl_entry *x = entry_find(c, url, app);
    if (x == NULL || x->loading)
        return;
    boinc_templates copy;
    if (t == NULL || templates_copy(t, &copy) != 0) {
        entry_remove(c, x);
        return;
    }
    boinc_templates_free(&x->t);
    x->t = copy;
    x->fetched_at = monotonic_now();
}

int fetch_templates_refresh(fetch_ctx *fc, fetch_templates *ft)
{
    if (!ft->cached || ft->app == NULL)
        return 0;
    boinc_templates fresh;
    exec_err e = { 0 };
    int rc = ask_by_job(fc, &fresh, &e);
    exec_err_clear(&e);
    fetch_templates_cache *c = fc->ctx->shared->templates;
    pthread_mutex_lock(&c->lock);
    entry_replace(c, fc->project.url, ft->app, rc == 0 ? &fresh : NULL);
    pthread_mutex_unlock(&c->lock);
    if (rc != 0)
        return 0;
    if (templates_equal(&fresh, &ft->t)) {
        boinc_templates_free(&fresh);
        return 0;
    }
    log_info("fetch %s: the templates of app %s changed on the server; "
             "downloading again with the new ones", fc->f->job, ft->app);
    boinc_templates_free(&ft->t);
    ft->t = fresh;
    ft->cached = 0;
    return 1;
}

void fetch_templates_free(fetch_templates *ft)
{
    boinc_templates_free(&ft->t);
    free(ft->app);
    ft->app = NULL;
    ft->cached = 0;
}

void fetch_templates_cache_free(fetch_templates_cache *c)
{
    if (c == NULL)
        return;
    while (c->head != NULL)
        entry_remove(c, c->head);
    pthread_cond_destroy(&c->loaded);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
