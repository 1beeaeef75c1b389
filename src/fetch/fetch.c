/*
 * fetch.c - BOINC_FETCH_OUTPUT: ask the server how a job ended
 * (query_completed_job, or on a stock server that cannot say, the job
 * details of query_batch), have a finished job's outputs delivered
 * (the app's templates for the file numbers, from fetch_step.c, then
 * fetch_download.c for plain outputs or a zipped single output), append the job's stderr, and answer "NULL <exit_status> <elapsed> <cpu>" or one
 * error token.  Also the clean-up of what interrupted fetches left.
 *
 * Every step fills one exec_err (fetch_step.h); the executor turns it into
 * the result tail once.  doc/commands.md describes every rule and error.
 */
#include "exec/exec_cmds.h"

#include "fetch/fetch_download.h"
#include "fetch/fetch_step.h"
#include "journal/journal_batches.h"
#include "base/files.h"
#include "base/log.h"
#include "fetch/outputs.h"
#include "base/strbuf.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- leftovers of interrupted fetches ------------------------------------ */

static void cleanup_dir(const char *dir, const struct timespec *cutoff)
{
    char *errmsg = NULL;
    if (outputs_remove_stale_before(dir, cutoff, &errmsg) < 0) {
        log_warn("fetch_output: %s", errmsg ? errmsg : "out of memory");
        free(errmsg);
    }
}

void exec_fetch_remove_leftovers(const gahp_request *req)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    exec_fetch_cleanup(&req->u.fetch, &now);
}

void exec_fetch_cleanup(const gahp_fetch_output *f,
                        const struct timespec *cutoff)
{
    if (f->iwd != NULL && f->iwd[0] != '\0')
        cleanup_dir(f->iwd, cutoff);
    /* Temps sit next to each destination: also the directories of the
     * specs' <dst>s (a few; the same directory twice is harmless). */
    for (size_t i = 0; i < f->nspecs; i++) {
        char *dest = files_resolve(f->iwd, f->specs[i].dst);
        char *slash = dest != NULL ? strrchr(dest, '/') : NULL;
        if (slash != NULL) {
            *(slash == dest ? slash + 1 : slash) = '\0';
            cleanup_dir(dest, cutoff);
        }
        free(dest);
    }
}

/* Temps older than this belong to no fetch of this run: it is when this
 * process's first fetch began, less a margin.  A file's time comes from
 * the kernel's coarse clock (it can read a few milliseconds BEHIND
 * clock_gettime), so without the margin a fetch running at the same time
 * in the same directory could see another one's brand-new temp as stale
 * and remove it.  Leftovers within the margin are removed by a later run
 * (and at start-up for fetches the journal knows were running). */
#define FETCH_EPOCH_MARGIN_S 10
static pthread_once_t epoch_once = PTHREAD_ONCE_INIT;
static struct timespec fetch_epoch;

static void set_fetch_epoch(void)
{
    clock_gettime(CLOCK_REALTIME, &fetch_epoch);
    fetch_epoch.tv_sec -= FETCH_EPOCH_MARGIN_S;
}

/* ---- a finished job -------------------------------------------------------- */

static int append_stderr(const fetch_ctx *fc, const char *text, exec_err *e)
{
    if (text == NULL || text[0] == '\0')
        return 0;
    char *path = files_resolve(fc->f->iwd, fc->f->stderr_file);
    if (path == NULL)
        return errno == ENOMEM
                   ? exec_err_nomem(e)
                   : fetch_step_failf(e, EXEC_E_REFUSED,
                                 "fetch_output failed: bad stderr file %s",
                                 fc->f->stderr_file);
    char *errmsg = NULL;
    int rc = outputs_append_stderr(path, text, &errmsg);
    free(path);
    return rc == 0 ? 0 : fetch_step_fail_local(e, "saving stderr failed", errmsg);
}

/* "NULL <exit_status> <elapsed> <cpu>": times as plain decimals with six
 * digits after the point (what the server sends; never an exponent).
 * NULL with *e set on ENOMEM. */
static char *success_tail(const boinc_completed_job *cj, exec_err *e)
{
    double elapsed = cj->has_exit_status ? cj->elapsed_time : 0;
    double cpu = cj->has_exit_status ? cj->cpu_time : 0;
    if (!isfinite(elapsed) || elapsed < 0)
        elapsed = 0;
    if (!isfinite(cpu) || cpu < 0)
        cpu = 0;
    strbuf out = STRBUF_INIT;
    if (strbuf_printf(&out, "NULL %d %.6f %.6f",
                      cj->has_exit_status ? cj->exit_status : 0, elapsed,
                      cpu) != 0) {
        strbuf_free(&out);
        exec_err_nomem(e);
        return NULL;
    }
    char *tail = strbuf_detach(&out);
    if (tail == NULL)
        exec_err_nomem(e);
    return tail;
}

/* A job with exactly one output named *.zip delivers its members. */
static int deliver(fetch_ctx *fc, const boinc_templates *t, exec_err *e)
{
    return fetch_zip_applies(t) ? fetch_zip_output(fc, t->output_names[0],
                                               fetch_output_max_nbytes(t, 0), e)
                                : fetch_download_plain(fc, t, e);
}

/* The outputs of a job with a canonical result, then its stderr.  The
 * templates usually come from the cache (fetch_step.h); a download
 * that fails with cached ones may come from a template changed on the
 * server since, so they are asked for again once, and the outputs
 * downloaded again if the answer differs.  A failed download left
 * nothing in place (fetch_download.c, fetch_download.c). */
static int fetch_done(fetch_ctx *fc, long long project_id,
                      const boinc_completed_job *cj, exec_err *e)
{
    fetch_templates ft;
    int rc = fetch_templates_get(fc, project_id, &ft, e);
    if (rc == 0)
        rc = deliver(fc, &ft.t, e);
    if (rc != 0 && e->code == EXEC_E_RPC && ft.cached &&
        fetch_templates_refresh(fc, &ft) == 1) {
        exec_err_clear(e);
        fc->fetched = 0;        /* the failed attempt's files are gone */
        rc = deliver(fc, &ft.t, e);
    }
    fetch_templates_free(&ft);
    return rc == 0 ? append_stderr(fc, cj->stderr_out, e) : -1;
}

/* ---- a failed job ------------------------------------------------------------ */

/* Names of the error_mask bits (BOINC's WU_ERROR_* values). */
static int describe_mask(strbuf *sb, long mask)
{
    static const struct { long bit; const char *name; } bits[] = {
        { 1, "couldnt_send" }, { 2, "too_many_error_results" },
        { 4, "too_many_success_results" }, { 8, "too_many_total_results" },
        { 16, "cancelled" }, { 32, "no_canonical_result" },
    };
    int first = 1, rc = strbuf_printf(sb, "error mask %ld (", mask);
    for (size_t i = 0; rc == 0 && i < sizeof bits / sizeof bits[0]; i++)
        if (mask & bits[i].bit) {
            rc = strbuf_printf(sb, "%s%s", first ? "" : ", ", bits[i].name);
            first = 0;
        }
    if (rc == 0 && first)
        rc = strbuf_puts(sb, "unknown");
    return rc == 0 ? strbuf_putc(sb, ')') : rc;
}

/* A failed job: its exit status when an instance reported one (then its
 * stderr is appended), else the error naming the error_mask bits. */
static int fetch_failed(fetch_ctx *fc, const boinc_completed_job *cj, exec_err *e)
{
    if (cj->has_exit_status)
        return append_stderr(fc, cj->stderr_out, e);
    strbuf raw = STRBUF_INIT;
    int rc = -1;
    if (strbuf_printf(&raw, "job %s failed: ", fc->f->job) == 0 &&
        describe_mask(&raw, cj->error_mask) == 0 &&
        strbuf_puts(&raw, ", no instance reported") == 0)
        rc = fetch_step_failf(e, EXEC_E_REFUSED, "%s", raw.data);
    else
        rc = exec_err_nomem(e);
    strbuf_free(&raw);
    return rc;
}

/*
 * A stock server's query_completed_job dies for a job without a canonical
 * instance, but its query_batch with job details still lists the exit
 * status of each failed instance.  The job's batch comes from the journal
 * (the submit recorded it).  0 with *cj holding the latest failed
 * instance's exit status (no times, no stderr), -1 with *e set, or 1 when
 * the fallback has nothing to say (the caller keeps its error).
 */
static int failed_job_fallback(fetch_ctx *fc, long long project_id,
                               boinc_completed_job *cj, exec_err *e)
{
    long long batch_id = 0;
    int found = 0;
    if (project_id <= 0 ||
        journal_job_server_batch(fc->ctx->journal, project_id, fc->f->job, &batch_id,
                                 &found) != 0 || !found)
        return 1;
    boinc_job_detail d;
    boinc_error err = { 0 };
    int rc = 1;
    found = 0;
    if (boinc_query_job_detail(fc->ctx->client, &fc->project, (long)batch_id, fc->f->job,
                               &d, &found, &err) == BOINC_OK &&
        found && d.canonical_instance_id == 0 && d.n_exit > 0) {
        boinc_completed_job_free(cj);   /* all zero: no times, no stderr */
        cj->has_exit_status = 1;
        cj->exit_status = d.exit_statuses[d.n_exit - 1];
        log_info("fetch %s: query_completed_job failed; exit status %d from query_batch",
                 fc->f->job, cj->exit_status);
        rc = 0;
    } else if (found && d.canonical_instance_id == 0 && d.status != NULL &&
               strcmp(d.status, "error") == 0) {
        rc = fetch_step_failf(e, EXEC_E_REFUSED, "job %s failed: no instance reported "
                         "an exit status (the server's query_completed_job "
                         "failed)", fc->f->job);
    } else if (found && d.canonical_instance_id == 0 && d.status != NULL &&
               strcmp(d.status, "done") != 0) {
        rc = fetch_step_failf(e, EXEC_E_REFUSED, "job %s is not finished", fc->f->job);
    }
    if (found)
        boinc_job_detail_free(&d);
    boinc_error_clear(&err);
    return rc;
}

/* ---- the command ------------------------------------------------------------- */

/* How the job ended, its outputs and stderr delivered when it has any:
 * 0 with *cj giving the exit status and times, or -1 with *e set. */
static int fetch_job(fetch_ctx *fc, long long project_id,
                     boinc_completed_job *cj, exec_err *e)
{
    boinc_error err = { 0 };
    if (boinc_query_completed_job(fc->ctx->client, &fc->project, fc->f->job,
                                  cj, &err) != BOINC_OK) {
        /* Includes a stock server's truncated reply for failed jobs
         * (BOINC_E_PARSE with the server's PHP error text): then the exit
         * status may still come from query_batch. */
        int rc = err.code == BOINC_E_PARSE
                     ? failed_job_fallback(fc, project_id, cj, e) : 1;
        if (rc == 1)
            rc = fetch_step_fail_rpc(e, "query_completed_job", &err);
        boinc_error_clear(&err);
        return rc;
    }
    if (cj->canonical_resultid != 0)
        return fetch_done(fc, project_id, cj, e);
    if (cj->error_mask != 0)
        return fetch_failed(fc, cj, e);
    return fetch_step_failf(e, EXEC_E_REFUSED, "job %s is not finished", fc->f->job);
}

char *exec_fetch_output(exec_ctx *ctx, const gahp_request *req)
{
    fetch_ctx fc = { ctx, &req->u.fetch,
                     { req->project_url, req->authenticator }, 0 };
    boinc_completed_job cj;
    memset(&cj, 0, sizeof cj);
    exec_err e = { 0 };
    pthread_once(&epoch_once, set_fetch_epoch);
    exec_fetch_cleanup(fc.f, &fetch_epoch);
    char *tail = NULL;
    if (fetch_job(&fc, req->project_id, &cj, &e) == 0)
        tail = success_tail(&cj, &e);
    boinc_completed_job_free(&cj);
    boinc_client_set_download_limit(ctx->client, 0);
    if (tail != NULL)
        return tail;
    /* the one error token (out of memory's when it has no message) */
    return exec_err_result(&e);
}
