/*
 * submit_deadline.c - a submit run as a detached task (submit_deadline.h;
 * the task is a thread of the process's pool, base/tasks.h).
 *
 * The thread cannot use the worker's context: a journal connection and a
 * BOINC client belong to one thread.  It gets its own (exec_ctx_open_like:
 * a client from the same source), and a reference to the worker's request
 * (gahp_request_ref): the worker may answer at the deadline and let go of
 * it while the run goes on.
 */
#include "submit/submit_deadline.h"

#include "exec/exec_ctx.h"
#include "base/log.h"
#include "base/tasks.h"

#include <stdatomic.h>
#include <stdlib.h>

typedef struct {
    exec_ctx ctx;
    gahp_request *req;
    submit_detached_fn fn;
    void *arg;
} detached_run;

static void detached_free(detached_run *d)
{
    exec_ctx_close(&d->ctx);
    gahp_request_free(d->req);
    free(d);
}

static void detached_main(void *p)
{
    detached_run *d = p;
    exec_shared *shared = d->ctx.shared;
    d->fn(&d->ctx, d->req, d->arg);
    detached_free(d);
    /* Last: once the count drops, shutdown may free what the run used (and
     * join this pool thread: tasks_shutdown waits for the return). */
    atomic_fetch_sub(&shared->detached_runs, 1);
}

int submit_deadline_detach(const exec_ctx *ctx, const gahp_request *req,
                        submit_detached_fn fn, void *arg)
{
    detached_run *d = calloc(1, sizeof *d);
    char *err = NULL;
    if (d == NULL)
        return -1;
    d->req = gahp_request_ref(req);     /* the worker may answer and let go first */
    if (exec_ctx_open_like(&d->ctx, ctx, &err) != 0) {
        log_warn("submit %ld: cannot run it in its own thread: %s", req->id,
                 err ? err : "out of memory");
        free(err);
        gahp_request_free(d->req);
        free(d);
        return -1;
    }
    d->fn = fn;
    d->arg = arg;
    atomic_fetch_add(&ctx->shared->detached_runs, 1);
    if (task_start_detached(detached_main, d) != 0) {
        detached_free(d);
        atomic_fetch_sub(&ctx->shared->detached_runs, 1);
        return -1;
    }
    return 0;
}


void submit_deadline_at(long seconds, struct timespec *at)
{
    clock_gettime(CLOCK_REALTIME, at);
    at->tv_sec += seconds;
}
