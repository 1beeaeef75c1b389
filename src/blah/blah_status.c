/*
 * blah_status.c - BLAH_JOB_STATUS, BLAH_JOB_CANCEL and BLAH_PING (see
 * blah.h).
 *
 * Status and cancel read and write the journal only and answer at once,
 * whatever the network does (doc/blah-core.md, "Status from the journal"):
 * the grid manager asks about each job on its own, once per probe
 * interval, and holds a job after a few error answers.  The network work
 * (queries, leases, aborts, fetches of finished jobs into Iwd,
 * retirement) is the scheduler's (blah_sched.c); a cancel kicks it.
 */
#include "blah/blah_internal.h"

#include "exec/exec_cmds.h"
#include "journal/journal_blah.h"
#include "wire/classad.h"
#include "wire/gahp_text.h"
#include "base/log.h"
#include "base/strbuf.h"

#include <stdlib.h>
#include <string.h>

/* The JobStatus values (HTCondor's) of the answers that carry more than
 * the status; every other answer takes its state's (blah_job_status). */
enum { JS_COMPLETED = 4, JS_HELD = 5 };


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

/* A hold reason as a person reads it in condor_q -hold: one line (control
 * characters become spaces), at most BLAH_REASON_MAX bytes, cut at a UTF-8
 * character boundary with "..." (a server's error may quote a 2 KB
 * request).  NULL on ENOMEM. */
#define BLAH_REASON_MAX 300
static char *plain_reason(const char *text)
{
    size_t n = strlen(text), keep = n;
    if (n > BLAH_REASON_MAX) {
        keep = BLAH_REASON_MAX - 3;
        while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
            keep--;         /* not inside a character */
    }
    char *out = malloc(keep + 4);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < keep; i++)
        out[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? ' ' : text[i];
    memcpy(out + keep, keep < n ? "..." : "", keep < n ? 4 : 1);
    return out;
}

/* Held, with the reason (plain, see above) and extra attributes. */
static char *held_with(const char *job, const char *reason, const char *extra)
{
    strbuf sb = STRBUF_INIT;
    char *plain = plain_reason(reason), *out = NULL;
    if (plain != NULL && strbuf_puts(&sb, "; HoldReason = ") == 0 &&
        classad_put_string(&sb, plain) == 0 && strbuf_puts(&sb, extra ? extra : "") == 0)
        out = status_tail(job, JS_HELD, sb.data);
    free(plain);
    strbuf_free(&sb);
    return out;
}

static char *held(const char *job, const char *reason)
{
    return held_with(job, reason, NULL);
}

/* Completed, with the exit code and times journaled at its delivery (0
 * each when none were: the columns are typed, never read from text). */
static char *completed(const journal_blah_job *job)
{
    /* a server's times may be huge: no fixed buffer.  Milliseconds, not
     * whole seconds: a short job's 0.3 s of CPU must not read as 0 in the
     * job's history (issue 40); the grid manager copies the expressions. */
    char *extra = str_printf("; ExitCode = %ld; ExitBySignal = false;"
                             " RemoteWallClockTime = %.3f; RemoteUserCpu = %.3f",
                             job->exit_code, job->wall_s, job->cpu_s);
    char *out = extra != NULL ? status_tail(job->gahp_id, JS_COMPLETED, extra) : NULL;
    free(extra);
    return out;
}

/* ---- BLAH_JOB_STATUS ------------------------------------------------------------- */

/* A job that failed on the project, its end delivered: held with its exit
 * code (its stderr is in Err), or with why no instance said one. */
static char *failed_on_project(const journal_blah_job *job)
{
    char *why, *extra = NULL;
    if (job->has_numbers) {
        why = str_printf("BOINC job %s failed on the project with exit code %ld (its stderr, "
                         "when the server gives it, is in the job's error file); "
                         "condor_release submits it again",
                         job->gahp_id, job->exit_code);
        extra = str_printf("; ExitCode = %ld; RemoteWallClockTime = %.3f; RemoteUserCpu = %.3f",
                           job->exit_code, job->wall_s, job->cpu_s);
    } else {
        why = str_printf("BOINC job %s failed on the project: %s; condor_release submits it "
                         "again", job->gahp_id,
                         job->fetch_result != NULL ? job->fetch_result : "");
    }
    char *out = why != NULL && (extra != NULL || !job->has_numbers)
        ? held_with(job->gahp_id, why, extra) : NULL;
    free(why);
    free(extra);
    return out;
}

/* A job whose batch could not be submitted, for good: held with the
 * journal's plain copy of the error (batches.error_msg: the escaped token
 * is the 9.0 client's, never read here). */
static char *batch_refused(const journal_blah_job *job)
{
    const char *msg = job->batch_error_msg;
    char *why = str_printf("BOINC batch %s could not be submitted: %s", job->batch,
                           msg != NULL ? msg : "unknown error");
    char *out = why != NULL ? held(job->gahp_id, why) : NULL;
    free(why);
    return out;
}

/* The answer is the job's state (journal/blah_job_state.h, derived from
 * the same columns every journal write checks its transition from) with
 * what that state carries: a hold's reason, a completed job's numbers. */
static char *answer(const journal_blah_job *job)
{
    blah_job_state s = journal_blah_job_state(job);
    switch (s) {
    case BJS_HELD_ALONE:
        return held(job->gahp_id, job->held_reason != NULL ? job->held_reason
                                                            : "held (no reason recorded)");
    case BJS_HELD_FAILED:
        return failed_on_project(job);
    case BJS_COMPLETED:
        return completed(job);
    case BJS_HELD_SUBMIT:
        return batch_refused(job);
    default:
        /* removed (3); idle (1) while gathering, submitting, submitted
         * again after an outage, or split; running (2) from IN_PROGRESS
         * until its outputs are in Iwd (it ran, so it is not idle) */
        return status_tail(job->gahp_id, blah_job_status(s), NULL);
    }
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

char *exec_blah_status(exec_ctx *ctx, const gahp_request *req)
{
    journal_blah_job job;
    char *tail;
    if (read_job(ctx, req->u.blah_job.job_id, &job, &tail) != 0)
        return tail;
    /* a run's first BLAH command starts the scheduler (it may be a
     * status: the jobs were submitted by an earlier run) */
    blah_sched_ensure(ctx);
    if (blah_job_awaits_pass(journal_blah_job_state(&job)))
        blah_status_asked(ctx, job.project_id, job.gahp_id);
    tail = answer(&job);
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
        blah_send_aborts(ctx, &on);     /* the scheduler sends it, with the others owed */
    }
    journal_blah_job_free(&job);
    return rc != 0 ? blah_fail(journal_errmsg(ctx->journal)) : strdup("0 NULL");
}

char *exec_blah_ping(exec_ctx *ctx, const gahp_request *req)
{
    exec_project project = exec_project_of(req);
    exec_err e = { 0 };
    if (exec_ping_op(ctx, &project, &e) == 0)
        return strdup("0 NULL");
    char *out = blah_fail(e.msg != NULL ? e.msg : EXEC_NOMEM_MSG);
    exec_err_clear(&e);
    return out;
}
