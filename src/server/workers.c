/*
 * workers.c - bounded worker pool, group-committing completion thread, and
 * the in-memory queue of committed, undelivered results.
 *
 * The work queue is an unbounded linked list (the reader never waits for
 * room); the number of threads is bounded by --workers.  Finished requests
 * go to the committer, which records every completion waiting in ONE
 * journal transaction (so 10,000 pings cost a handful of fsyncs, not
 * 10,000) and only then makes them visible to RESULTS.  The workers and
 * the committer are long-lived tasks of the process's thread pool
 * (base/tasks.h), which owns every thread.
 */
#include "server/workers.h"

#include "blah/blah.h"

#include "server/shared.h"

#include "server/command.h"
#include "exec/exec.h"
#include "exec/exec_ctx.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/tasks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long one commit attempt waits for another process's journal lock. */
#define COMMITTER_LOCK_WAIT_MS 1000L
/* The committer checkpoints the WAL once it holds this many frames (about
 * 1 MB of 4 KB pages; journal.h, "WAL checkpoints"). */
#define COMMITTER_CHECKPOINT_FRAMES 256

typedef struct work_item {
    struct work_item *next;
    gahp_request *req;
} work_item;

typedef struct completion {
    struct completion *next;
    long long request_row;
    long client_id;
    double started_at, completed_at;
    char *tail;
    int background;             /* commit only; no result for RESULTS */
    int transient;              /* a result about its moment (not replayable) */
    int internal;               /* a server-made request (BLAH_GROUP_SUBMIT):
                                   no client reads it, delivered when journaled */
} completion;

typedef struct {
    workers *pool;
    exec_ctx ctx;
    task *task;                     /* NULL: not started */
    const gahp_request *running;    /* the request inside command_dispatch,
                                       or NULL (guarded by the pool's mu) */
    int busy_at_stop;               /* running one when shutdown began */
} worker;

struct workers {
    exec_shared *state;             /* what the executors share (owned) */
    pthread_mutex_t mu;             /* work queue */
    pthread_cond_t cv;
    work_item *head, *tail;
    int stopping;

    size_t nworkers;
    worker *ws;
    size_t project_cap;             /* running requests per project */
    const gahp_request **blocked;   /* scratch of take_eligible (nworkers) */

    pthread_mutex_t cmu;            /* completion list */
    pthread_cond_t ccv;
    completion *chead, *ctail;
    int cstop;
    task *committer;                /* NULL: not started */
    journal *cj;                    /* committer's own connection */
    journal *shared;                /* its handle on the reader's connection
                                       (workers_commit_through), or NULL */
    journal *commit_j;              /* where completions are committed: cj,
                                       then shared (guarded by cmu) */

    pthread_mutex_t rmu;            /* results list */
    gahp_result *rhead, *rtail;

    workers_notify_fn notify;
    void *notify_arg;
};

/* ---- results ------------------------------------------------------------- */

static gahp_result *result_new(long long row, long client_id, const char *tail)
{
    gahp_result *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    strbuf sb = STRBUF_INIT;
    /* The tail may be megabytes (a 100,000-job query): appended, not
     * copied through printf's "%s", which costs several times more. */
    if (strbuf_printf(&sb, "%ld ", client_id) != 0 ||
        strbuf_reserve(&sb, strlen(tail)) != 0 || strbuf_puts(&sb, tail) != 0) {
        strbuf_free(&sb);
        free(r);
        return NULL;
    }
    r->line = strbuf_detach(&sb);
    r->request_row = row;
    r->client_id = client_id;
    return r;
}

static void append_results(workers *w, gahp_result *first, gahp_result *last)
{
    pthread_mutex_lock(&w->rmu);
    if (w->rtail != NULL)
        w->rtail->next = first;
    else
        w->rhead = first;
    w->rtail = last;
    pthread_mutex_unlock(&w->rmu);
}

int workers_add_result(workers *w, long long request_row, long client_id,
                       const char *tail)
{
    gahp_result *r = result_new(request_row, client_id, tail);
    if (r == NULL)
        return -1;
    append_results(w, r, r);
    return 0;
}

gahp_result *workers_take_results(workers *w, size_t *n)
{
    pthread_mutex_lock(&w->rmu);
    gahp_result *list = w->rhead;
    w->rhead = w->rtail = NULL;
    pthread_mutex_unlock(&w->rmu);
    size_t k = 0;
    for (gahp_result *r = list; r != NULL; r = r->next)
        k++;
    *n = k;
    return list;
}

int workers_has_results(workers *w)
{
    pthread_mutex_lock(&w->rmu);
    int has = w->rhead != NULL;
    pthread_mutex_unlock(&w->rmu);
    return has;
}

void workers_results_free(gahp_result *r)
{
    while (r != NULL) {
        gahp_result *next = r->next;
        free(r->line);
        free(r);
        r = next;
    }
}

/* ---- committer ----------------------------------------------------------- */

static void free_completions(completion *c)
{
    while (c != NULL) {
        completion *next = c->next;
        free(c->tail);
        free(c);
        c = next;
    }
}

/* Commit a list of completions through cj (retrying while the journal
 * refuses), then publish them as results.  Takes ownership of list. */
static void commit_completions(workers *w, journal *cj, completion *list)
{
    size_t n = 0;
    for (completion *c = list; c != NULL; c = c->next)
        n++;
    journal_completion *jc = calloc(n, sizeof *jc);
    if (jc == NULL) {
        log_error("out of memory committing %zu results; they stay unfinished", n);
        free_completions(list);
        return;
    }
    size_t i = 0;
    for (completion *c = list; c != NULL; c = c->next, i++)
        jc[i] = (journal_completion){ c->request_row, c->started_at,
                                      c->completed_at, c->tail, c->transient };
    /* Before the commit, outside any transaction: this commit then restarts
     * the WAL, not the next accept (journal.h, "WAL checkpoints"). */
    journal_checkpoint_if_due(w->cj, COMMITTER_CHECKPOINT_FRAMES);
    /* A result must be durable before RESULTS may show it: retry. */
    while (journal_requests_complete(cj, jc, n) != 0) {
        pthread_mutex_lock(&w->cmu);
        int stop = w->cstop;
        pthread_mutex_unlock(&w->cmu);
        if (stop) {
            log_error("shutting down with %zu results not journaled", n);
            free(jc);
            free_completions(list);
            return;
        }
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    free(jc);
    /* An internal request's outcome has no reader: delivered now, or
     * `journal status` would list it as undelivered forever (issue 41),
     * as blah.c's submit_group does for the groups it submits itself. */
    size_t ninternal = 0;
    for (completion *c = list; c != NULL; c = c->next)
        ninternal += c->internal != 0;
    if (ninternal > 0) {
        long long *rows = calloc(ninternal, sizeof *rows);
        size_t k = 0;
        for (completion *c = list; rows != NULL && c != NULL; c = c->next)
            if (c->internal)
                rows[k++] = c->request_row;
        if (rows == NULL || journal_requests_delivered(cj, rows, k, journal_now()) != 0)
            log_error("%zu internal requests stay undelivered in the journal: %s", ninternal,
                      rows == NULL ? "out of memory" : journal_errmsg(cj));
        free(rows);
    }
    gahp_result *first = NULL, *last = NULL;
    for (completion *c = list; c != NULL; c = c->next) {
        if (c->background)
            continue;
        gahp_result *r = result_new(c->request_row, c->client_id, c->tail);
        if (r == NULL) {
            log_error("out of memory: result of request %ld is journaled but "
                      "will only be delivered after a restart", c->client_id);
            continue;
        }
        if (last != NULL)
            last->next = r;
        else
            first = r;
        last = r;
    }
    free_completions(list);
    if (first != NULL) {
        append_results(w, first, last);
        if (w->notify != NULL)
            w->notify(w->notify_arg);
    }
}

static void committer_main(void *arg)
{
    workers *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->cmu);
        while (w->chead == NULL && !w->cstop)
            pthread_cond_wait(&w->ccv, &w->cmu);
        completion *list = w->chead;
        w->chead = w->ctail = NULL;
        int stop = w->cstop;
        journal *cj = w->commit_j;
        pthread_mutex_unlock(&w->cmu);
        if (list != NULL)
            commit_completions(w, cj, list);
        if (stop && list == NULL)
            break;
    }
}

static void push_completion(workers *w, completion *c)
{
    pthread_mutex_lock(&w->cmu);
    if (w->cstop) {
        /* Shutting down: the request stays unfinished in the journal. */
        pthread_mutex_unlock(&w->cmu);
        free(c->tail);
        free(c);
        return;
    }
    if (w->ctail != NULL)
        w->ctail->next = c;
    else
        w->chead = c;
    w->ctail = c;
    pthread_cond_signal(&w->ccv);
    pthread_mutex_unlock(&w->cmu);
}

/* ---- workers ------------------------------------------------------------- */

static void run_one(worker *wk, gahp_request *req)
{
    const command_row *crow = req->row;     /* found when it was parsed */
    completion *c = calloc(1, sizeof *c);
    double started = journal_now();
    char *tail = command_dispatch(&wk->ctx, req);
    if (c == NULL || tail == NULL) {
        log_error("out of memory running request %ld", req->id);
        free(c);
        free(tail);
        c = calloc(1, sizeof *c);
        /* out of memory's one message, in the command's own error form */
        tail = crow != NULL ? command_fail(crow, EXEC_NOMEM_MSG) : exec_nomem_result();
        if (c == NULL || tail == NULL) {
            free(c);
            free(tail);
            return;     /* stays unfinished in the journal */
        }
    }
    if (req->journal_id == 0 && req->background) {
        /* a server task outside the journal (exec_shared.spawn) */
        log_debug("%s finished: %s", crow != NULL ? crow->name : "?", tail);
        free(tail);
        free(c);
        return;
    }
    c->request_row = req->journal_id;
    c->client_id = req->id;
    /* A command never replayed (ping, query) answers about now: the
     * journal drops its result once delivered (issue 19). */
    c->transient = crow != NULL && !crow->replayable;
    c->started_at = started;
    c->completed_at = journal_now();
    c->tail = tail;
    c->background = req->background;
    c->internal = crow != NULL && crow->internal && req->journal_id > 0;
    /* One line per finished request, for the operator (issue 19): the
     * outcome only ("NULL ..." is success), never the arguments, which
     * name the project whose authenticator travels with them. */
    int ok = command_is_blah(crow)                       /* BLAH: "0 NULL ..." */
             ? strncmp(tail, "0 ", 2) == 0
             : strncmp(tail, "NULL", 4) == 0 && (tail[4] == ' ' || tail[4] == '\0');
    log_info("%s %ld finished: %s in %.0f ms", crow != NULL ? crow->name : "?", req->id,
             ok ? "ok" : "error", (c->completed_at - started) * 1000.0);
    push_completion(wk->pool, c);
}

/* Do a and b go to the same project?  The journal's project id when both
 * have one (cheap), else the URL. */
static int same_project(const gahp_request *a, const gahp_request *b)
{
    if (a->project_id > 0 && b->project_id > 0)
        return a->project_id == b->project_id;
    return a->project_url != NULL && b->project_url != NULL &&
           strcmp(a->project_url, b->project_url) == 0;
}

/* The projects that have project_cap requests running now, one request
 * standing for each, into w->blocked; returns their number (under w->mu).
 * O(workers^2), and there are few workers. */
static size_t find_blocked(workers *w)
{
    size_t nblocked = 0;
    for (size_t i = 0; i < w->nworkers; i++) {
        const gahp_request *r = w->ws[i].running;
        if (r == NULL || r->project_url == NULL)
            continue;
        size_t known = 0, running = 0;
        for (size_t k = 0; k < nblocked && !known; k++)
            known = same_project(w->blocked[k], r);
        for (size_t k = 0; !known && k < w->nworkers; k++)
            running += w->ws[k].running != NULL &&
                       same_project(w->ws[k].running, r);
        if (!known && running >= w->project_cap)
            w->blocked[nblocked++] = r;
    }
    return nblocked;
}

/*
 * Unlink and return the oldest queued request whose project is below its
 * cap, or NULL (under w->mu).  The cap keeps one stalled project from
 * holding every worker while requests of healthy projects wait behind it
 * (issue 10 #10); requests without a project are never held back.  Cost:
 * one pass over the queue comparing with the (at most workers / cap)
 * projects at their cap.
 */
static work_item *take_eligible(workers *w)
{
    size_t nblocked = w->head != NULL ? find_blocked(w) : 0;
    work_item *prev = NULL;
    for (work_item *it = w->head; it != NULL; prev = it, it = it->next) {
        int held = 0;
        for (size_t k = 0; k < nblocked && !held; k++)
            held = it->req->project_url != NULL &&
                   same_project(w->blocked[k], it->req);
        if (held)
            continue;
        if (prev != NULL)
            prev->next = it->next;
        else
            w->head = it->next;
        if (w->tail == it)
            w->tail = prev;
        it->next = NULL;
        return it;
    }
    return NULL;
}

static void worker_main(void *arg)
{
    worker *wk = arg;
    workers *w = wk->pool;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        work_item *it = NULL;
        while (!w->stopping && (it = take_eligible(w)) == NULL)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->stopping) {
            pthread_mutex_unlock(&w->mu);
            break;      /* it is NULL: a taken item always breaks the loop */
        }
        wk->running = it->req;
        pthread_mutex_unlock(&w->mu);

        run_one(wk, it->req);
        pthread_mutex_lock(&w->mu);
        wk->running = NULL;
        /* A slot of this project is free.  This worker looks for work
         * itself next; wake one more in case the cap held back a request
         * it will not take. */
        if (w->head != NULL)
            pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        gahp_request_free(it->req);
        free(it);
    }
}

void workers_submit(workers *w, gahp_request *req)
{
    /* A request made outside the command table (a server task, a BLAH
     * group closed at start-up) gets its row here, once. */
    if (req->row == NULL)
        req->row = command_of(req->cmd);
    work_item *it = malloc(sizeof *it);
    if (it == NULL) {
        log_error("out of memory queueing request %ld; it stays accepted in "
                  "the journal", req->id);
        gahp_request_free(req);
        return;
    }
    it->next = NULL;
    it->req = req;
    pthread_mutex_lock(&w->mu);
    if (w->tail != NULL)
        w->tail->next = it;
    else
        w->head = it;
    w->tail = it;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void workers_commit_through(workers *w, journal *primary)
{
    pthread_mutex_lock(&w->cmu);
    int done = w->shared != NULL;
    pthread_mutex_unlock(&w->cmu);
    if (done)
        return;
    char *err = NULL;
    journal *shared = journal_share(primary, &err);
    if (shared == NULL) {
        /* Only slower: the committer keeps its own connection. */
        log_warn("completions keep their own journal connection: %s",
                 err ? err : "out of memory");
        free(err);
        return;
    }
    journal_set_lock_wait(shared, COMMITTER_LOCK_WAIT_MS);
    pthread_mutex_lock(&w->cmu);
    w->shared = w->commit_j = shared;
    pthread_mutex_unlock(&w->cmu);
}

exec_shared *workers_shared(workers *w)
{
    return w->state;
}

void workers_set_session(workers *w, long long session_id)
{
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->nworkers; i++)
        w->ws[i].ctx.session_id = session_id;
    pthread_mutex_unlock(&w->mu);
}

static int init_worker(workers *w, worker *wk, int index,
                       const gahp_config *cfg, journal *primary, char **err)
{
    wk->pool = w;
    return exec_ctx_open(&wk->ctx, w->state, cfg, primary, index, err);
}

/* exec_shared.spawn: a server task on the queue like any request. */
static void spawn_task(void *arg, gahp_request *req)
{
    workers_submit(arg, req);
}

workers *workers_start(const gahp_config *cfg, journal *primary,
                       workers_notify_fn notify, void *notify_arg, char **err)
{
    *err = NULL;
    workers *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_mutex_init(&w->cmu, NULL);
    pthread_cond_init(&w->ccv, NULL);
    pthread_mutex_init(&w->rmu, NULL);
    w->notify = notify;
    w->notify_arg = notify_arg;
    w->nworkers = (size_t)cfg->workers;
    w->project_cap = (size_t)config_project_workers(cfg);
    w->ws = calloc(w->nworkers, sizeof *w->ws);
    w->blocked = calloc(w->nworkers, sizeof *w->blocked);
    w->state = shared_new();
    if (w->state != NULL) {
        w->state->spawn = spawn_task;
        w->state->spawn_arg = w;
    }
    if (w->ws == NULL || w->blocked == NULL || w->state == NULL) {
        w->nworkers = 0;
        goto failed;
    }
    if ((w->cj = journal_connect(primary, err)) == NULL)
        goto failed;
    /* The committer retries on its own and must notice a shutdown soon
     * even while another process holds the journal lock. */
    journal_set_lock_wait(w->cj, COMMITTER_LOCK_WAIT_MS);
    w->commit_j = w->cj;
    if ((w->committer = task_start(committer_main, w)) == NULL)
        goto failed;
    for (size_t i = 0; i < w->nworkers; i++) {
        worker *wk = &w->ws[i];
        if (init_worker(w, wk, (int)i, cfg, primary, err) != 0)
            goto failed;
        if ((wk->task = task_start(worker_main, wk)) == NULL)
            goto failed;
    }
    return w;
failed:
    if (*err == NULL) {
        strbuf sb = STRBUF_INIT;
        if (strbuf_puts(&sb, "cannot start the worker pool") == 0)
            *err = strbuf_detach(&sb);
    }
    workers_shutdown(w);
    return NULL;
}

/* Every thread has ended: free the pool (so leak checkers see nothing). */
static void free_pool(workers *w)
{
    for (size_t i = 0; i < w->nworkers; i++) {
        boinc_client_free(w->ws[i].ctx.client);
        journal_close(w->ws[i].ctx.journal);
    }
    while (w->head != NULL) {
        work_item *it = w->head;
        w->head = it->next;
        gahp_request_free(it->req);
        free(it);
    }
    free_completions(w->chead);
    workers_results_free(w->rhead);
    free(w->ws);
    free(w->blocked);
    shared_free(w->state);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->cmu);
    pthread_cond_destroy(&w->ccv);
    pthread_mutex_destroy(&w->rmu);
    free(w);
}

size_t workers_shutdown(workers *w)
{
    if (w == NULL)
        return 0;
    size_t executing = 0;
    pthread_mutex_lock(&w->mu);
    w->stopping = 1;
    pthread_cond_broadcast(&w->cv);
    /* Snapshot: a worker not executing now cannot start (stopping is set)
     * and leaves its loop at once; one executing now may take long. */
    for (size_t i = 0; i < w->nworkers; i++) {
        w->ws[i].busy_at_stop = w->ws[i].running != NULL;
        executing += w->ws[i].running != NULL;
    }
    pthread_mutex_unlock(&w->mu);
    /* A submit answered at its deadline runs on in a thread of its own
     * (submit.h): it counts as executing.  None can start now:
     * only an executing worker starts one. */
    if (w->state != NULL)
        executing += atomic_load(&w->state->detached_runs);
    /* The BLAH scheduler: joined when idle, else left like a busy worker. */
    if (w->state != NULL)
        executing += blah_sched_stop(w->state->blah);
    pthread_mutex_lock(&w->cmu);
    w->cstop = 1;
    pthread_cond_signal(&w->ccv);
    pthread_mutex_unlock(&w->cmu);
    if (w->committer != NULL)
        task_join(w->committer);
    w->committer = NULL;
    journal_close(w->shared);
    journal_close(w->cj);
    w->shared = w->cj = w->commit_j = NULL;
    for (size_t i = 0; i < w->nworkers; i++) {
        if (w->ws[i].task == NULL)
            continue;
        if (w->ws[i].busy_at_stop)
            task_detach(w->ws[i].task);         /* never waited for */
        else
            task_join(w->ws[i].task);
        w->ws[i].task = NULL;
    }
    if (executing > 0) {
        /* Workers busy in network I/O are not waited for (QUIT is prompt);
         * the caller keeps the journal lock and leaves with _exit, so
         * their memory and connections are left alone. */
        log_info("shutting down with %zu requests still running; they stay "
                 "unfinished in the journal", executing);
        return executing;
    }
    free_pool(w);
    return 0;
}
