/*
 * exec_query.c - BOINC_QUERY_BATCHES: one query_batch2 RPC for all the
 * requested batches, turned into
 *   NULL <server_time> {<n> {<job> <status>}*n}*nbatches
 * and the last seen job statuses recorded in the journal.
 */
#include "exec_cmds.h"

#include "journal_jobs.h"
#include "log.h"
#include "gahp_text.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

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

static char *format_result(const boinc_query_result *r)
{
    strbuf out = STRBUF_INIT;
    int rc = strbuf_puts(&out, "NULL ");
    if (rc == 0)
        rc = gahp_escape_append(&out, r->server_time);
    for (size_t b = 0; rc == 0 && b < r->nbatches; b++) {
        const boinc_batch_status *bs = &r->batches[b];
        rc = strbuf_printf(&out, " %zu", bs->njobs);
        for (size_t i = 0; rc == 0 && i < bs->njobs; i++) {
            const boinc_job_status *js = &bs->jobs[i];
            if (!is_known_status(js->status))
                log_warn("query_batch2: job %s has unknown status %s; "
                         "reported as IN_PROGRESS", js->name, js->status);
            rc = strbuf_putc(&out, ' ');
            if (rc == 0)
                rc = gahp_escape_append(&out, js->name);
            if (rc == 0)
                rc = strbuf_printf(&out, " %s", exec_protocol_status(js->status));
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
                            const boinc_query_result *r)
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
                                     r->nbatches, journal_now(), &changed) != 0)
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

char *exec_query_batches(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_query_batches *q = &req->u.query;
    boinc_project project = { req->project_url, req->authenticator };
    boinc_error err = { 0 };
    boinc_query_result r;
    memset(&r, 0, sizeof r);
    /* min_mod_time goes to the server verbatim: it is the server_time
     * string of the previous answer, and reformatting could lose digits. */
    if (boinc_query_batch2(ctx->client, &project, q->min_mod_time,
                           (const char *const *)q->batches, q->nbatches, &r,
                           &err) != BOINC_OK) {
        /* The server's text stays last, so "no batch named NAME" ends the
         * message as HTCondor requires. */
        if (restore_batch_name(&err, q) != 0) {
            boinc_error_clear(&err);
            boinc_query_result_free(&r);
            return NULL;
        }
        char *tail = exec_boinc_error("query_batch2", &err);
        boinc_error_clear(&err);
        boinc_query_result_free(&r);
        return tail;
    }
    boinc_error_clear(&err);
    char *tail;
    const char *bad = r.nbatches != q->nbatches
                          ? "reply does not answer every batch"
                          : check_reply(&r);
    if (bad != NULL) {
        tail = exec_error("query_batch2 failed", bad);
    } else {
        tail = format_result(&r);
        if (tail != NULL)
            record_statuses(ctx, req, &r);
    }
    boinc_query_result_free(&r);
    return tail;
}
