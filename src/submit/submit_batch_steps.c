/*
 * submit_batch_steps.c - get_templates, create_batch and submit_batch of a
 * submit (see submit_batch_steps.h).
 */
#include "submit/submit_batch_steps.h"

#include "base/log.h"
#include "submit/engine.h"
#include "base/tasks.h"
#include "base/testpoint.h"

#include <stdlib.h>
#include <string.h>

int submit_batch_steps_check_app(submit_run *r)
{
    boinc_templates t = { 0 };
    boinc_error err = { 0 };
    if (boinc_get_templates(r->ctx->client, &r->project, r->s->app, &t, &err) != BOINC_OK) {
        int rc = engine_fail_boinc(r, (int)engine_state(r), "get_templates", &err);
        boinc_error_clear(&err);
        return rc;
    }
    int rc = 0;
    for (size_t i = 0; i < r->s->njobs && rc == 0; i++) {
        if (t.n_inputs > 0 && r->s->jobs[i].ninputs != t.n_inputs) {
            rc = engine_failf(r, (int)engine_state(r), EXEC_E_REFUSED, "submit refused",
                           "job %s has %zu input files, app %s needs %zu",
                           r->s->jobs[i].name, r->s->jobs[i].ninputs, r->s->app,
                           t.n_inputs);
        }
    }
    boinc_templates_free(&t);
    return rc;
}

/* ---- create_batch ---------------------------------------------------------- */

/*
 * Probe: did a lost create_batch make a batch?  Candidates have our name
 * and app, no jobs yet, and are not already another batch row's; the
 * newest wins.  1 and *(long long *)arg set when found.
 */
static int find_created_batch(submit_run *r, void *arg)
{
    boinc_batch_info *b = NULL;
    size_t n = 0;
    boinc_error err = { 0 };
    if (boinc_query_batches(r->ctx->client, &r->project, &b, &n, &err) != BOINC_OK) {
        engine_fail_boinc(r, BATCH_CREATE_SENT, "query_batches (resolving create_batch)", &err);
        boinc_error_clear(&err);
        return -1;
    }
    long best = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i].name == NULL || strcmp(b[i].name, r->s->batch) != 0 ||
            b[i].app_name == NULL || strcmp(b[i].app_name, r->s->app) != 0 ||
            b[i].njobs != 0 || b[i].id <= best)
            continue;
        int known = 0;
        if (journal_server_batch_known(r->ctx->journal, r->req->project_id, b[i].id, &known) != 0) {
            boinc_batch_info_free(b, n);
            return engine_fail_journal(r);
        }
        if (!known)
            best = b[i].id;
    }
    boinc_batch_info_free(b, n);
    *(long long *)arg = best;
    return best > 0;
}

static resolve_result resolve_create(submit_run *r, void *arg)
{
    (void)arg;
    long long id = 0;
    int found = engine_settle(r, find_created_batch, &id);
    if (found < 0)
        return RESOLVE_FAILED;
    if (!found)
        return RESOLVE_NOT_ACTED;
    log_info("submit %s: adopted server batch %lld created before the reply was lost",
             r->s->batch, id);
    return engine_set_state(r, BATCH_CREATED, id) == 0 ? RESOLVE_ACTED : RESOLVE_FAILED;
}

typedef struct {
    long id;            /* the server's batch id, once created */
} create_arg;

static int create_send(submit_run *r, void *arg, boinc_error *err)
{
    create_arg *a = arg;
    return boinc_create_batch(r->ctx->client, &r->project, r->s->batch, r->s->app,
                              r->create.expire_time, &a->id, err);
}

static int create_record(submit_run *r, void *arg)
{
    create_arg *a = arg;
    return engine_set_state(r, BATCH_CREATED, a->id);
}

static const step_def create_batch_step = {
    .rpc = "create_batch",
    .sent_point = "submit.create_sent",
    .done_point = "submit.created",
    .resume_refused = BATCH_HASHED,
    .resume_unknown = BATCH_CREATE_SENT,
    .sent_state = BATCH_CREATE_SENT,
    .send = create_send,
    .record_done = create_record,
    .resolve = resolve_create,
};

int submit_batch_steps_create(submit_run *r)
{
    if (r->batch.server_batch_id > 0)
        return 0;
    create_arg a = { 0 };
    return engine_step(r, &create_batch_step, &a);
}

/* ---- submit_batch ------------------------------------------------------------ */

/* The jobs' names, in the client's order (NULL: out of memory). */
static const char **job_names(const submit_run *r)
{
    const char **names = calloc(r->s->njobs ? r->s->njobs : 1, sizeof *names);
    for (size_t i = 0; names != NULL && i < r->s->njobs; i++)
        names[i] = r->s->jobs[i].name;
    return names;
}

/* State submitted, with the job rows unless they were written while the
 * request was in flight. */
static int mark_submitted(submit_run *r)
{
    if (r->jobs_journaled)
        return engine_set_submitted(r, NULL, 0);
    const char **names = job_names(r);
    if (names == NULL)
        return engine_fail_nomem(r);
    int rc = engine_set_submitted(r, names, r->s->njobs);
    free(names);
    return rc;
}

/* Probe: did a lost submit_batch create the jobs?  *(size_t *)arg = count. */
static int jobs_on_server(submit_run *r, void *arg)
{
    char **names = NULL;
    size_t n = 0;
    boinc_error err = { 0 };
    if (boinc_query_batch_jobs(r->ctx->client, &r->project, r->batch.server_batch_id,
                               &names, &n, &err) != BOINC_OK) {
        engine_fail_boinc(r, BATCH_SUBMIT_SENT, "query_batch (resolving submit_batch)", &err);
        boinc_error_clear(&err);
        return -1;
    }
    boinc_names_free(names, n);
    *(size_t *)arg = n;
    return n > 0;
}

static resolve_result resolve_submit(submit_run *r, void *arg)
{
    (void)arg;
    size_t n = 0;
    int found = engine_settle(r, jobs_on_server, &n);
    if (found <= 0)
        return found < 0 ? RESOLVE_FAILED : RESOLVE_NOT_ACTED;
    if (n != r->s->njobs) {
        engine_failf(r, BATCH_SUBMIT_SENT, EXEC_E_RPC, "submit_batch",
                  "server batch %lld has %zu jobs, expected %zu",
                  r->batch.server_batch_id, n, r->s->njobs);
        return RESOLVE_FAILED;
    }
    if (mark_submitted(r) != 0)
        return RESOLVE_FAILED;
    testpoint("submit.submitted");
    return RESOLVE_ACTED;
}

/* submit_batch's request, sent by a task of its own (submit_send). */
typedef struct {
    submit_run *r;
    const submit_jobs *jobs;
    boinc_error *err;
    int rc;
} batch_post;

static void post_batch(void *arg)
{
    batch_post *p = arg;
    const submit_jobs *j = p->jobs;
    p->rc = boinc_submit_batch(p->r->ctx->client, &p->r->project, p->r->batch.server_batch_id,
                               p->r->s->app, j->params, j->specs, j->njobs, p->err);
}

/* The job rows, written while the server creates the jobs (which takes it
 * far longer: 0.2 s for 10,000 jobs on the emulator, against 20 ms for
 * their rows).  A failure here only costs the overlap: the rows are then
 * written with the state, as before. */
static void journal_jobs_early(submit_run *r)
{
    const char **names = job_names(r);
    r->jobs_journaled = names != NULL &&
                        journal_jobs_record_early(r->ctx->journal, r->batch.id, names,
                                                  r->s->njobs) == 0;
    free(names);
}

/*
 * Send submit_batch and journal the job rows meanwhile: the request goes
 * on a task of its own (base/tasks.h; the run's client is not used by
 * this thread until it is joined), the rows on this thread's journal connection.
 * Nothing holds the journal's lock across the network.  The rows stay
 * invisible until the batch is submitted (journal_batches.h); when the
 * request did not go through they are deleted, and a later attempt or a
 * resolution writes them again with the state.
 */
static int submit_send(submit_run *r, void *arg, boinc_error *err)
{
    batch_post p = { r, arg, err, BOINC_OK };
    r->jobs_journaled = 0;
    task *t = task_start(post_batch, &p);
    if (t == NULL) {            /* no thread: no overlap, the rows come later */
        post_batch(&p);
        return p.rc;
    }
    journal_jobs_early(r);
    task_join(t);
    if (p.rc != BOINC_OK && r->jobs_journaled) {
        r->jobs_journaled = 0;
        if (journal_jobs_forget_unsubmitted(r->ctx->journal, r->batch.id) != 0)
            log_warn("submit %s: could not delete the job rows of a failed submit_batch;"
                     " they stay unused until the batch is submitted", r->s->batch);
    }
    return p.rc;
}

static int submit_record(submit_run *r, void *arg)
{
    (void)arg;
    return mark_submitted(r);
}

static const step_def submit_batch_step = {
    .rpc = "submit_batch",
    .sent_point = "submit.submit_sent",
    .done_point = "submit.submitted",
    .resume_refused = BATCH_UPLOADED,
    .resume_unknown = BATCH_SUBMIT_SENT,
    .sent_state = BATCH_SUBMIT_SENT,
    .send = submit_send,
    .record_done = submit_record,
    .resolve = resolve_submit,
};

int submit_batch_steps_submit(submit_run *r, const submit_jobs *jobs)
{
    return engine_step(r, &submit_batch_step, (void *)jobs);
}
