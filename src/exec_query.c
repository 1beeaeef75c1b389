/*
 * exec_query.c - BOINC_QUERY_BATCHES, answered so that HTCondor's grid
 * manager cannot lose a status (issue 8; doc/protocol.md, "Status
 * queries"):
 *
 *  - the server is asked incrementally: min_mod_time is a margin below the
 *    server_time of the last reply recorded for each requested batch (not
 *    the client's value, which it only updates after partial queries), so
 *    a change in the same second as that server_time is not lost;
 *  - every status seen is recorded in the journal (jobs.status);
 *  - the client gets, for every batch whose jobs the journal knows, the
 *    FULL list of its jobs from the journal: never a 0-job group for a
 *    batch that has jobs (the client would resubmit it), and every DONE or
 *    ERROR repeated until the client has read it (its reply loop stops
 *    after the first unconfirmed batch it confirms).  A batch the journal
 *    does not know gets the server's group as is.
 */
#include "exec_cmds.h"

#include "journal_jobs.h"
#include "log.h"
#include "protocol.h"
#include "strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Server modification times have one-second resolution (and several web
 * servers may answer): ask again for everything modified since this many
 * seconds before the last recorded server_time.  A repeated status is a
 * no-op for the client. */
#define QUERY_MARGIN_S 5

const char *exec_protocol_status(const char *server_status)
{
    if (strcmp(server_status, "DONE") == 0)
        return "DONE";
    if (strcmp(server_status, "ERROR") == 0)
        return "ERROR";
    /* The GAHP protocol knows only IN_PROGRESS, DONE and ERROR: a job not
     * sent yet (UNSENT) or in a state we do not know is still pending. */
    return "IN_PROGRESS";
}

static int is_known_status(const char *s)
{
    return strcmp(s, "DONE") == 0 || strcmp(s, "ERROR") == 0 ||
           strcmp(s, "IN_PROGRESS") == 0 || strcmp(s, "UNSENT") == 0;
}

/* An empty token would change the token count HTCondor reads. */
static const char *check_reply(const boinc_query_result *r)
{
    if (r->server_time == NULL || r->server_time[0] == '\0')
        return "reply has no server_time";
    for (size_t b = 0; b < r->nbatches; b++)
        for (size_t i = 0; i < r->batches[b].njobs; i++) {
            const boinc_job_status *js = &r->batches[b].jobs[i];
            if (js->name == NULL || js->name[0] == '\0')
                return "reply has a job without a name";
            if (js->status == NULL || js->status[0] == '\0')
                return "reply has a job without a status";
        }
    return NULL;
}

/* " <job> <status>" for one job line. */
static int put_job(strbuf *out, const char *name, const char *status)
{
    if (!is_known_status(status))
        log_warn("query_batch2: job %s has unknown status %s; reported as "
                 "IN_PROGRESS", name, status);
    int rc = strbuf_putc(out, ' ');
    if (rc == 0)
        rc = gahp_escape_append(out, name);
    if (rc == 0)
        rc = strbuf_printf(out, " %s", exec_protocol_status(status));
    return rc;
}

static int put_server_group(strbuf *out, const boinc_batch_status *bs)
{
    int rc = strbuf_printf(out, " %zu", bs->njobs);
    for (size_t i = 0; rc == 0 && i < bs->njobs; i++)
        rc = put_job(out, bs->jobs[i].name, bs->jobs[i].status);
    return rc;
}

static int cmp_job_ptr(const void *a, const void *b)
{
    const boinc_job_status *x = *(const boinc_job_status *const *)a;
    const boinc_job_status *y = *(const boinc_job_status *const *)b;
    return strcmp(x->name, y->name);
}

/* The server's newest status of job `name` in this reply, or NULL. */
static const char *server_status(const boinc_job_status **index, size_t n,
                                 const char *name)
{
    boinc_job_status key = { 0 };
    const boinc_job_status *kp = &key;
    key.name = (char *)name;
    const boinc_job_status **hit = bsearch(&kp, index, n, sizeof *index, cmp_job_ptr);
    return hit != NULL ? (*hit)->status : NULL;
}

/*
 * The full group of a batch from the journal's job rows, each status
 * overlaid with this reply's (so the answer is right even when recording
 * failed).  Returns 0, 1 when the journal cannot serve it (use the
 * server's group), -1 on ENOMEM.
 */
static int put_journal_group(exec_ctx *ctx, long long project_id,
                             const char *batch, const boinc_batch_status *bs,
                             strbuf *out)
{
    journal_job_row *rows = NULL;
    size_t n = 0;
    if (journal_jobs_list(ctx->journal, project_id, batch, &rows, &n) != 0 || n == 0) {
        journal_jobs_list_free(rows, n);
        return 1;
    }
    const boinc_job_status **index = calloc(bs->njobs ? bs->njobs : 1, sizeof *index);
    if (index == NULL) {
        journal_jobs_list_free(rows, n);
        return -1;
    }
    for (size_t i = 0; i < bs->njobs; i++)
        index[i] = &bs->jobs[i];
    qsort(index, bs->njobs, sizeof *index, cmp_job_ptr);
    int rc = strbuf_printf(out, " %zu", n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *st = server_status(index, bs->njobs, rows[i].name);
        if (st == NULL)
            st = rows[i].status != NULL ? rows[i].status : "IN_PROGRESS";
        rc = put_job(out, rows[i].name, st);
    }
    free(index);
    journal_jobs_list_free(rows, n);
    return rc == 0 ? 0 : -1;
}

static char *format_result(exec_ctx *ctx, const gahp_request *req,
                           const journal_batch_poll *poll,
                           const boinc_query_result *r)
{
    strbuf out = STRBUF_INIT;
    int rc = strbuf_puts(&out, "NULL ");
    if (rc == 0)
        rc = gahp_escape_append(&out, r->server_time);
    for (size_t b = 0; rc == 0 && b < r->nbatches; b++) {
        const boinc_batch_status *bs = &r->batches[b];
        size_t mark = out.len;
        rc = poll[b].njobs > 0
                 ? put_journal_group(ctx, req->project_id, req->u.query.batches[b],
                                     bs, &out)
                 : 1;
        if (rc == 1) {
            out.len = mark;     /* drop any partial group */
            if (out.data != NULL)
                out.data[mark] = '\0';
            rc = put_server_group(&out, bs);
        }
    }
    if (rc != 0) {
        strbuf_free(&out);
        return NULL;
    }
    return strbuf_detach(&out);
}

/* Remember the statuses for batches the journal knows.  A journal failure
 * is logged, not reported: the client's answer is the server's truth, and
 * the next query records the statuses again. */
static void record_statuses(exec_ctx *ctx, const gahp_request *req,
                            const boinc_query_result *r, double server_time)
{
    if (ctx->journal == NULL || req->project_id <= 0)
        return;
    size_t total = 0;
    for (size_t b = 0; b < r->nbatches; b++)
        total += r->batches[b].njobs;
    journal_batch_report *reports = calloc(r->nbatches ? r->nbatches : 1,
                                           sizeof *reports);
    journal_job_status *jobs = calloc(total ? total : 1, sizeof *jobs);
    if (reports == NULL || jobs == NULL) {
        log_warn("query_batch2: out of memory recording job statuses");
        free(reports);
        free(jobs);
        return;
    }
    size_t k = 0;
    for (size_t b = 0; b < r->nbatches; b++) {
        reports[b].batch = req->u.query.batches[b];
        reports[b].njobs = r->batches[b].njobs;
        reports[b].jobs = &jobs[k];
        for (size_t i = 0; i < r->batches[b].njobs; i++, k++) {
            jobs[k].name = r->batches[b].jobs[i].name;
            jobs[k].status = r->batches[b].jobs[i].status;
        }
    }
    long long changed = 0;
    if (journal_jobs_record_statuses(ctx->journal, req->project_id, reports,
                                     r->nbatches, server_time, journal_now(),
                                     &changed) != 0)
        log_warn("query_batch2: job statuses not recorded in the journal");
    else
        log_debug("query_batch2: %lld job status change(s) recorded", changed);
    free(reports);
    free(jobs);
}

/* Does the (squashed, maybe cut with " [...]") tail of a server message
 * stand for the batch name? */
static int tail_names(const char *tail, const char *name)
{
    static const char cut[] = " [...]";
    char *sq = boinc_one_line(name);
    if (sq == NULL)
        return 0;
    size_t tl = strlen(tail), cl = sizeof cut - 1;
    int match = strcmp(sq, tail) == 0;
    if (!match && tl > cl && strcmp(tail + tl - cl, cut) == 0)
        match = strlen(sq) > tl - cl && strncmp(sq, tail, tl - cl) == 0;
    free(sq);
    return match;
}

/*
 * HTCondor takes everything after "no batch named " as the batch name and
 * resubmits that batch.  The client module squashes server text to one
 * line (and caps it), which would alter a name with double spaces, a
 * newline, trailing blanks or great length; put back the exact requested
 * name the message stands for.  0, or -1 on ENOMEM (err unchanged).
 */
static int restore_batch_name(boinc_error *err, const gahp_query_batches *q)
{
    static const char marker[] = "no batch named ";
    char *at = err->code == BOINC_E_SERVER && err->msg != NULL
                   ? strstr(err->msg, marker) : NULL;
    if (at == NULL)
        return 0;
    const char *tail = at + sizeof marker - 1;
    const char *exact = NULL;
    for (size_t i = 0; i < q->nbatches; i++)
        if (strcmp(q->batches[i], tail) == 0)
            return 0;                   /* already exact */
    for (size_t i = 0; exact == NULL && i < q->nbatches; i++)
        if (tail_names(tail, q->batches[i]))
            exact = q->batches[i];
    if (exact == NULL)
        return 0;
    strbuf fixed = STRBUF_INIT;
    if (strbuf_append(&fixed, err->msg, (size_t)(tail - err->msg)) != 0 ||
        strbuf_puts(&fixed, exact) != 0) {
        strbuf_free(&fixed);
        return -1;
    }
    char *msg = strbuf_detach(&fixed);
    if (msg == NULL)
        return -1;
    free(err->msg);
    err->msg = msg;
    return 0;
}

/* What the journal knows of each requested batch (njobs 0 = not served
 * from the journal, also when the journal cannot be read). */
static journal_batch_poll *load_poll_states(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_query_batches *q = &req->u.query;
    journal_batch_poll *poll = calloc(q->nbatches ? q->nbatches : 1, sizeof *poll);
    if (poll == NULL || ctx->journal == NULL || req->project_id <= 0)
        return poll;
    for (size_t b = 0; b < q->nbatches; b++)
        if (journal_jobs_poll_state(ctx->journal, req->project_id, q->batches[b],
                                    &poll[b]) != 0)
            memset(&poll[b], 0, sizeof poll[b]);
    return poll;
}

/* A margin below t, whole seconds; 0 (= every job) when t is not > 0. */
static double with_margin(double t)
{
    return t > QUERY_MARGIN_S ? floor(t) - QUERY_MARGIN_S : 0;
}

/*
 * min_mod_time for the server: the lowest of, per batch, the margin below
 * the journal's last recorded server_time (0 when never recorded), or for
 * a batch the journal does not serve, the margin below the client's value.
 */
static void server_min_mod_time(const gahp_query_batches *q,
                                const journal_batch_poll *poll, char out[32])
{
    double client = 0, m = HUGE_VAL;
    if (parse_double_strict(q->min_mod_time, &client) != 0 || !isfinite(client))
        client = 0;
    for (size_t b = 0; b < q->nbatches; b++) {
        double t = poll[b].njobs > 0
                       ? (poll[b].has_server_time ? poll[b].server_time : 0)
                       : client;
        t = with_margin(t);
        if (t < m)
            m = t;
    }
    if (!(m > 0) || m == HUGE_VAL)
        snprintf(out, 32, "0");
    else
        snprintf(out, 32, "%.0f", m);
}

/* The server's reply turned into the client's answer (or an error). */
static char *answer(exec_ctx *ctx, const gahp_request *req,
                    const journal_batch_poll *poll, const boinc_query_result *r)
{
    const gahp_query_batches *q = &req->u.query;
    const char *bad = r->nbatches != q->nbatches
                          ? "reply does not answer every batch"
                          : check_reply(r);
    if (bad != NULL)
        return exec_error("query_batch2 failed", bad);
    double server_time = 0;
    if (parse_double_strict(r->server_time, &server_time) != 0 || !isfinite(server_time))
        server_time = 0;        /* recorded statuses, but no time: asks all next */
    record_statuses(ctx, req, r, server_time);
    return format_result(ctx, req, poll, r);
}

char *exec_query_batches(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_query_batches *q = &req->u.query;
    boinc_project project = { req->project_url, req->authenticator };
    boinc_error err = { BOINC_OK, 0, NULL };
    boinc_query_result r;
    memset(&r, 0, sizeof r);
    journal_batch_poll *poll = load_poll_states(ctx, req);
    if (poll == NULL)
        return NULL;
    char mmt[32];
    server_min_mod_time(q, poll, mmt);
    log_debug("query_batch2: min_mod_time %s sent (client's %s)", mmt, q->min_mod_time);
    char *tail;
    if (boinc_query_batch2(ctx->client, &project, mmt,
                           (const char *const *)q->batches, q->nbatches, &r,
                           &err) != BOINC_OK) {
        /* The server's text stays last, so "no batch named NAME" ends the
         * message as HTCondor requires. */
        tail = restore_batch_name(&err, q) != 0 ? NULL
                                                 : exec_boinc_error("query_batch2", &err);
    } else {
        tail = answer(ctx, req, poll, &r);
    }
    boinc_error_clear(&err);
    boinc_query_result_free(&r);
    free(poll);
    return tail;
}
