/*
 * blah_status.c - BLAH_JOB_STATUS, BLAH_JOB_CANCEL and BLAH_PING (see
 * blah.h).
 *
 * Status at scale: the grid manager asks about each job on its own, once
 * per probe interval.  A status is answered from the journal; the journal
 * is refreshed from the server at most once per blah_status_interval per
 * project, by one BOINC_QUERY_BATCHES run over every batch with a job
 * HTCondor still waits for (query_batch2 takes them all in one request),
 * and only by one request at a time: the others wait for it and read its
 * outcome.  The same refresh renews the leases of those batches (a BOINC
 * server retires a batch at its expire time: a job running longer than
 * that would be lost), sends the aborts still owed and retires batches
 * that are finished.
 *
 * Outputs where HTCondor expects them: HTCondor 25.0 takes status 4 as
 * "done" and never looks for files, so the outputs are fetched into Iwd
 * (BOINC_FETCH_OUTPUT's engine) before a job is reported completed, with
 * the exit code the server recorded.
 */
#include "blah/blah_internal.h"

#include "exec/exec_cmds.h"
#include "journal/journal_blah.h"
#include "wire/classad.h"
#include "wire/gahp_text.h"
#include "base/log.h"
#include "base/num.h"
#include "base/strbuf.h"
#include "base/testpoint.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* JobStatus values (HTCondor's). */
enum { JS_IDLE = 1, JS_RUNNING = 2, JS_REMOVED = 3, JS_COMPLETED = 4, JS_HELD = 5 };

/* A lease is renewed when it ends within this, to now + BLAH_LEASE_S
 * (HTCondor 9.0's own rule for its BOINC batches). */
#define BLAH_LEASE_MARGIN_S (4 * 3600.0)
#define BLAH_LEASE_S (6 * 3600.0)

/* ---- replies ------------------------------------------------------------------- */

/* "0 NULL <status> <ad>": the ad is one escaped token. */
static char *status_tail(const char *job, int status, const char *extra)
{
    strbuf ad = STRBUF_INIT, sb = STRBUF_INIT;
    char *out = NULL;
    if (strbuf_puts(&ad, "[ BatchJobId = ") == 0 && classad_put_string(&ad, job) == 0 &&
        strbuf_printf(&ad, "; JobStatus = %d%s ]", status, extra ? extra : "") == 0 &&
        strbuf_printf(&sb, "0 NULL %d ", status) == 0 && gahp_escape_append(&sb, ad.data) == 0)
        out = strbuf_detach(&sb);
    strbuf_free(&ad);
    strbuf_free(&sb);
    return out;
}

static char *held(const char *job, const char *reason)
{
    strbuf sb = STRBUF_INIT;
    char *out = NULL;
    if (strbuf_puts(&sb, "; HoldReason = ") == 0 && classad_put_string(&sb, reason) == 0)
        out = status_tail(job, JS_HELD, sb.data);
    strbuf_free(&sb);
    return out;
}

/* The numbers of the fetch's result "NULL <exit> <elapsed> <cpu>", read up
 * to the first that is not one (an error result leaves all three alone). */
static void fetch_numbers(const char *r, long *exit_code, double *elapsed, double *cpu)
{
    if (r == NULL || strncmp(r, "NULL ", 5) != 0)
        return;
    const char *f[3];
    size_t n[3];
    const char *p = r + 5;
    for (int i = 0; i < 3; i++) {
        f[i] = p;
        n[i] = strcspn(p, " ");
        p += n[i];
        if (*p == ' ')
            p++;
    }
    if (num_parse_long_blanks(f[0], n[0], LONG_MIN, LONG_MAX, exit_code) == 0 &&
        num_parse_double_blanks(f[1], n[1], elapsed) == 0)
        (void)num_parse_double_blanks(f[2], n[2], cpu);
}

/* Completed, from the fetch's result. */
static char *completed(const char *job, const char *fetch_result)
{
    long exit_code = 0;
    double elapsed = 0, cpu = 0;
    fetch_numbers(fetch_result, &exit_code, &elapsed, &cpu);
    /* a server's times may be huge: no fixed buffer */
    char *extra = str_printf("; ExitCode = %ld; ExitBySignal = false;"
                             " RemoteWallClockTime = %.0f; RemoteUserCpu = %.0f",
                             exit_code, elapsed, cpu);
    char *out = extra != NULL ? status_tail(job, JS_COMPLETED, extra) : NULL;
    free(extra);
    return out;
}

/* ---- internal requests ------------------------------------------------------------- */

static char *run_internal(exec_ctx *ctx, const gahp_request *like, gahp_command cmd,
                          gahp_parse_fn parse, const char *command, const char *args,
                          char *(*exec)(exec_ctx *, const gahp_request *))
{
    gahp_request *r = blah_request(cmd, parse, command, args, like);
    if (r == NULL)
        return NULL;
    char *tail = exec(ctx, r);
    gahp_request_free(r);
    return tail;
}

static char *one_name_args(const char *name, const char *rest)
{
    strbuf sb = STRBUF_INIT;
    if (gahp_escape_append(&sb, name) != 0 || (rest != NULL && strbuf_puts(&sb, rest) != 0)) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* The job's BOINC_FETCH_OUTPUT (its journaled fields after the job name)
 * with like's project; NULL on error (logged by blah_request). */
static gahp_request *fetch_request(const char *gahp_id, const char *fetch_args,
                                   const gahp_request *like)
{
    strbuf sb = STRBUF_INIT;
    gahp_request *r = NULL;
    if (gahp_escape_append(&sb, gahp_id) == 0 && strbuf_printf(&sb, " %s", fetch_args) == 0)
        r = blah_request(GAHP_CMD_FETCH_OUTPUT, gahp_parse_fetch, "BOINC_FETCH_OUTPUT", sb.data,
                         like);
    strbuf_free(&sb);
    return r;
}

/* ---- aborts, leases, retirement -------------------------------------------------- */

typedef struct {
    exec_ctx *ctx;
    const gahp_request *like;
} blah_job_ctx;

static int send_abort(long long row, const char *gahp_id, const char *batch, int in_batch,
                      void *arg)
{
    blah_job_ctx *c = arg;
    if (in_batch) {
        char *args = one_name_args(gahp_id, NULL);
        char *tail = args != NULL ? run_internal(c->ctx, c->like, GAHP_CMD_ABORT_JOBS,
                                                 gahp_parse_abort, "BOINC_ABORT_JOBS", args,
                                                 exec_abort_jobs) : NULL;
        free(args);
        int ok = blah_tail_ok(tail);
        if (!ok)
            log_warn("BLAH: job %s of batch %s: abort failed (sent again later): %s",
                     gahp_id, batch, tail ? tail : "out of memory");
        free(tail);
        if (!ok)
            return 0;
        log_info("BLAH: job %s of batch %s aborted", gahp_id, batch);
    }
    if (journal_blah_abort_done(c->ctx->journal, row) != 0)
        log_error("BLAH: the abort of job %s cannot be recorded: %s", gahp_id,
                  journal_errmsg(c->ctx->journal));
    return 0;
}

void blah_send_aborts(exec_ctx *ctx, const gahp_request *like)
{
    blah_job_ctx c = { ctx, like };
    if (journal_blah_aborts(ctx->journal, like->project_id, send_abort, &c) != 0)
        log_error("BLAH: pending aborts cannot be read: %s", journal_errmsg(ctx->journal));
}

typedef struct {
    char **names;
    double *leases;
    size_t n, cap;
} name_list;

static int collect_name(const char *name, double lease, void *arg)
{
    name_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->names, cap * sizeof *v);
        if (v == NULL)
            return -1;
        l->names = v;
        double *d = realloc(l->leases, cap * sizeof *d);
        if (d == NULL)
            return -1;
        l->leases = d;
        l->cap = cap;
    }
    if ((l->names[l->n] = strdup(name)) == NULL)
        return -1;
    l->leases[l->n++] = lease;
    return 0;
}

static void names_free(name_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    free(l->leases);
    memset(l, 0, sizeof *l);
}

/* One BOINC_QUERY_BATCHES over the live batches: their jobs' statuses
 * land in the journal. */
static void query_batches(exec_ctx *ctx, const gahp_request *like, const name_list *l)
{
    strbuf sb = STRBUF_INIT;
    int rc = strbuf_printf(&sb, "0 %zu", l->n);
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        rc = strbuf_putc(&sb, ' ') != 0 || gahp_escape_append(&sb, l->names[i]) != 0;
    char *tail = rc == 0 ? run_internal(ctx, like, GAHP_CMD_QUERY_BATCHES, gahp_parse_query,
                                        "BOINC_QUERY_BATCHES", sb.data, exec_query_batches)
                         : NULL;
    if (!blah_tail_ok(tail))
        log_warn("BLAH: status query of %zu batch%s failed (statuses from the journal): %s",
                 l->n, l->n == 1 ? "" : "es", tail ? tail : "out of memory");
    free(tail);
    strbuf_free(&sb);
}

static void renew_leases(exec_ctx *ctx, const gahp_request *like, const name_list *l)
{
    double now = journal_now();
    for (size_t i = 0; i < l->n; i++) {
        if (l->leases[i] > now + BLAH_LEASE_MARGIN_S)
            continue;
        char rest[40];
        snprintf(rest, sizeof rest, " %.0f", now + BLAH_LEASE_S);
        char *args = one_name_args(l->names[i], rest);
        char *tail = args != NULL ? run_internal(ctx, like, GAHP_CMD_SET_LEASE, gahp_parse_lease,
                                                 "BOINC_SET_LEASE", args, exec_set_lease)
                                  : NULL;
        if (!blah_tail_ok(tail))
            log_warn("BLAH: batch %s: lease not renewed: %s", l->names[i],
                     tail ? tail : "out of memory");
        free(tail);
        free(args);
    }
}

static void retire_done(exec_ctx *ctx, const gahp_request *like)
{
    name_list l = { 0 };
    if (journal_blah_done_batches(ctx->journal, like->project_id, collect_name, &l) != 0)
        log_error("BLAH: finished batches cannot be read: %s", journal_errmsg(ctx->journal));
    for (size_t i = 0; i < l.n; i++) {
        char *args = one_name_args(l.names[i], NULL);
        char *tail = args != NULL ? run_internal(ctx, like, GAHP_CMD_RETIRE_BATCH,
                                                 gahp_parse_retire, "BOINC_RETIRE_BATCH", args,
                                                 exec_retire_batch) : NULL;
        if (blah_tail_ok(tail))
            log_info("BLAH: batch %s finished: retired", l.names[i]);
        else
            log_warn("BLAH: batch %s: retire failed: %s", l.names[i], tail ? tail : "ENOMEM");
        free(tail);
        free(args);
    }
    names_free(&l);
}

/* ---- the refresh ------------------------------------------------------------------ */

static blah_refresh *refresh_entry(struct blah_state *st, long long project_id)
{
    for (blah_refresh *r = st->refreshes; r != NULL; r = r->next)
        if (r->project_id == project_id)
            return r;
    blah_refresh *r = calloc(1, sizeof *r);
    if (r != NULL) {
        r->project_id = project_id;
        r->next = st->refreshes;
        st->refreshes = r;
    }
    return r;
}

static void refresh_work(exec_ctx *ctx, const gahp_request *like)
{
    name_list l = { 0 };
    if (journal_blah_live_batches(ctx->journal, like->project_id, collect_name, &l) != 0)
        log_error("BLAH: live batches cannot be read: %s", journal_errmsg(ctx->journal));
    if (l.n > 0) {
        query_batches(ctx, like, &l);
        renew_leases(ctx, like, &l);
    }
    names_free(&l);
    blah_send_aborts(ctx, like);
    retire_done(ctx, like);
}

/* Refresh like's project unless another request did within the interval
 * (or is doing it now: then wait for its outcome). */
static void refresh(exec_ctx *ctx, const gahp_request *like)
{
    struct blah_state *st = ctx->shared->blah;
    double interval = ctx->config != NULL ? ctx->config->blah_status_interval_s : 30.0;
    pthread_mutex_lock(&st->mu);
    blah_refresh *r = refresh_entry(st, like->project_id);
    while (r != NULL && r->running)
        pthread_cond_wait(&st->cv, &st->mu);
    int due = r == NULL || r->last == 0 || blah_clock() - r->last >= interval;
    if (r != NULL && due)
        r->running = 1;
    pthread_mutex_unlock(&st->mu);
    if (!due)
        return;
    refresh_work(ctx, like);
    pthread_mutex_lock(&st->mu);
    if (r != NULL) {
        r->running = 0;
        r->last = blah_clock();
    }
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

/* ---- BLAH_JOB_STATUS ------------------------------------------------------------- */

/* Fetch a DONE job's outputs into Iwd; the completed tail or an error. */
static char *fetch_done(exec_ctx *ctx, const gahp_request *req, const journal_blah_job *job)
{
    /* Noted first, so that a start-up after a crash in the middle removes
     * the temp files this fetch may leave in Iwd (blah_remove_leftovers). */
    if (journal_blah_fetch_started(ctx->journal, job->row, journal_now()) != 0)
        return blah_status_fail(journal_errmsg(ctx->journal));
    gahp_request *freq = fetch_request(job->gahp_id, job->fetch_args, req);
    char *tail = freq != NULL ? exec_fetch_output(ctx, freq) : NULL;
    gahp_request_free(freq);
    if (tail == NULL)
        return NULL;
    testpoint("blah.fetched");
    if (!blah_tail_ok(tail)) {
        char *msg = blah_tail_message(tail);
        free(tail);
        log_warn("BLAH: job %s: outputs not fetched (asked again at the next status): %s",
                 job->gahp_id, msg ? msg : "?");
        char *out = blah_status_fail(msg != NULL ? msg : "outputs not fetched");
        free(msg);
        return out;
    }
    if (journal_blah_fetched(ctx->journal, job->row, tail, journal_now()) != 0) {
        free(tail);
        return blah_status_fail(journal_errmsg(ctx->journal));
    }
    log_info("BLAH: job %s done: outputs in its Iwd", job->gahp_id);
    retire_done(ctx, req);      /* its batch, when it was the last job */
    char *out = completed(job->gahp_id, tail);
    free(tail);
    return out;
}

/* The status of a job whose batch is on the server, from its BOINC status. */
static char *server_status(exec_ctx *ctx, const gahp_request *req, const journal_blah_job *job)
{
    const char *s = job->boinc_status;
    if (s != NULL && strcmp(s, "DONE") == 0)
        return fetch_done(ctx, req, job);
    if (s != NULL && strcmp(s, "ERROR") == 0) {
        char *why = str_printf("BOINC job %s ended in error on the project (its app failed, "
                               "or too many of its results did); condor_release submits it "
                               "again", job->gahp_id);
        char *out = why != NULL ? held(job->gahp_id, why) : NULL;
        free(why);
        return out;
    }
    if (s != NULL && strcmp(s, "IN_PROGRESS") == 0)
        return status_tail(job->gahp_id, JS_RUNNING, NULL);
    return status_tail(job->gahp_id, JS_IDLE, NULL);
}

static char *answer(exec_ctx *ctx, const gahp_request *req, const journal_blah_job *job)
{
    if (job->cancelled)
        return status_tail(job->gahp_id, JS_REMOVED, NULL);
    if (job->fetched)
        return completed(job->gahp_id, job->fetch_result);
    if (strcmp(job->group_state, "closed") != 0 || job->batch_state < 0)
        return status_tail(job->gahp_id, JS_IDLE, NULL);       /* gathering, submitting */
    if (job->batch_state == 8) {
        char *why = str_printf("BOINC batch %s could not be submitted: %s", job->batch,
                               job->batch_error ? job->batch_error : "unknown error");
        char *out = why != NULL ? held(job->gahp_id, why) : NULL;
        free(why);
        return out;
    }
    if (job->batch_state != 7)
        return status_tail(job->gahp_id, JS_IDLE, NULL);
    return server_status(ctx, req, job);
}

static int read_job(exec_ctx *ctx, const char *id, journal_blah_job *job, char **tail)
{
    int found = 0;
    *tail = NULL;
    if (journal_blah_job_get(ctx->journal, id, job, &found) != 0) {
        *tail = blah_status_fail(journal_errmsg(ctx->journal));
        return -1;
    }
    if (!found) {
        char *why = str_printf("no job %s in this boinc_gahp's journal", id);
        *tail = why != NULL ? blah_status_fail(why) : NULL;
        free(why);
        return -1;
    }
    return 0;
}

/* req as if it named the job's own project (the configured default, or
 * the one its batch_project named): a shallow copy, the union shared. */
static gahp_request on_project(const gahp_request *req, const journal_blah_job *job)
{
    gahp_request r = *req;
    r.project_id = job->project_id;
    r.project_url = job->project_url;
    r.authenticator = job->authenticator;
    return r;
}

char *exec_blah_status(exec_ctx *ctx, const gahp_request *req0)
{
    const char *id = req0->u.blah_job.job_id;
    journal_blah_job job;
    char *tail;
    if (read_job(ctx, id, &job, &tail) != 0)
        return tail;
    gahp_request on = on_project(req0, &job);
    const gahp_request *req = &on;
    int waiting = !job.cancelled && !job.fetched && strcmp(job.group_state, "closed") == 0 &&
                  job.batch_state == 7;
    if (waiting) {
        refresh(ctx, req);
        journal_blah_job_free(&job);
        if (read_job(ctx, id, &job, &tail) != 0)
            return tail;
        on = on_project(req0, &job);
    }
    tail = answer(ctx, req, &job);
    journal_blah_job_free(&job);
    return tail;
}

/* ---- BLAH_JOB_CANCEL, BLAH_PING ----------------------------------------------------- */

char *exec_blah_cancel(exec_ctx *ctx, const gahp_request *req)
{
    const char *id = req->u.blah_job.job_id;
    journal_blah_job job;
    int found = 0;
    if (journal_blah_job_get(ctx->journal, id, &job, &found) != 0)
        return blah_fail(journal_errmsg(ctx->journal));
    if (!found) {
        /* nothing of ours to end: HTCondor forgets the job either way */
        log_info("BLAH: cancel of %s, a job this journal does not know: nothing to do", id);
        return strdup("0 NULL");
    }
    int first = !job.cancelled;
    int rc = journal_blah_cancel(ctx->journal, job.row, journal_now());
    if (rc == 0) {
        if (first)
            log_info("BLAH: job %s cancelled", id);
        gahp_request on = on_project(req, &job);
        blah_send_aborts(ctx, &on);
        retire_done(ctx, &on);
    }
    journal_blah_job_free(&job);
    return rc != 0 ? blah_fail(journal_errmsg(ctx->journal)) : strdup("0 NULL");
}

char *exec_blah_ping(exec_ctx *ctx, const gahp_request *req)
{
    char *tail = exec_ping(ctx, req);
    if (tail == NULL)
        return NULL;
    if (blah_tail_ok(tail)) {
        free(tail);
        return strdup("0 NULL");
    }
    char *msg = blah_tail_message(tail);
    free(tail);
    char *out = blah_fail(msg != NULL ? msg : "ping failed");
    free(msg);
    return out;
}

/* ---- start-up ------------------------------------------------------------------- */

typedef struct {
    const gahp_request *like;
    size_t n;
} leftovers;

static int remove_one(const char *gahp_id, const char *fetch_args, void *arg)
{
    leftovers *l = arg;
    gahp_request *r = fetch_request(gahp_id, fetch_args, l->like);
    if (r != NULL) {
        exec_fetch_remove_leftovers(r);
        l->n++;
    }
    gahp_request_free(r);
    return 0;
}

int blah_remove_leftovers(exec_ctx *ctx)
{
    /* The callback only removes files: no journal work under the read. */
    gahp_request like = { 0 };
    like.project_url = "";
    like.authenticator = "";
    leftovers l = { &like, 0 };
    if (journal_blah_interrupted_fetches(ctx->journal, remove_one, &l) != 0) {
        log_error("BLAH: interrupted fetches cannot be read: %s", journal_errmsg(ctx->journal));
        return -1;
    }
    return (int)l.n;
}
