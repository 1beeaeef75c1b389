/*
 * manage.c - BOINC_PING (ping), BOINC_ABORT_JOBS (abort_jobs), BOINC_RETIRE_BATCH
 * (retire_batch by name) and BOINC_SET_LEASE (set_expire_time by name).
 * Each answers "NULL" or one error token; retire and lease are also
 * written to the journal's batches row when the journal knows the batch.
 * Ping, abort, retire and lease are typed core operations (exec_*_op, used by
 * the BLAH scheduler as they are) with their BOINC_* command as a face.
 */
#include "exec/exec_cmds.h"

#include "journal/journal_batches.h"
#include "base/log.h"

#include <stdlib.h>
#include <string.h>

/* The journal follows the server, never the other way round: a failure to
 * record is logged and the client still gets the server's answer. */
static int journal_usable(const exec_ctx *ctx, const exec_project *project)
{
    return ctx->journal != NULL && project->journal_id > 0;
}

/* 0 when rc is BOINC_OK, else -1 with *e the failed RPC's error. */
static int rpc_result(int rc, const char *step, boinc_error *err, exec_err *e)
{
    if (rc != BOINC_OK)
        exec_err_boinc(e, step, err);
    boinc_error_clear(err);
    return rc == BOINC_OK ? 0 : -1;
}

/* A 9.0 face's tail: "NULL", or the operation's error as one token. */
static char *face_tail(int rc, exec_err *e)
{
    return rc == 0 ? strdup("NULL") : exec_err_result(e);
}

int exec_ping_op(exec_ctx *ctx, const exec_project *project, exec_err *e)
{
    boinc_project p = { project->url, project->authenticator };
    boinc_error err = { 0 };
    return rpc_result(boinc_ping(ctx->client, &p, &err), "ping", &err, e);
}

char *exec_ping(exec_ctx *ctx, const gahp_request *req)
{
    exec_project project = exec_project_of(req);
    exec_err e = { 0 };
    return face_tail(exec_ping_op(ctx, &project, &e), &e);
}

/*
 * The client has given the jobs up whatever the server answers: marked
 * before the RPC, so no status query reports them again, not even the
 * ERROR the abort itself causes (HTCondor would apply it to the job with
 * the same cluster.proc, released into another batch).
 */
int exec_abort_jobs_op(exec_ctx *ctx, const exec_project *project,
                       const char *const *jobs, size_t n, exec_err *e)
{
    for (size_t i = 0; journal_usable(ctx, project) && i < n; i++)
        if (journal_jobs_mark_aborted(ctx->journal, project->journal_id, jobs[i]) != 0)
            log_warn("abort_jobs: job %s not marked aborted in the journal", jobs[i]);
    boinc_project bp = { project->url, project->authenticator };
    boinc_error err = { 0 };
    return rpc_result(boinc_abort_jobs(ctx->client, &bp, jobs, n, &err), "abort_jobs", &err,
                      e);
}

char *exec_abort_jobs(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_abort_jobs *a = &req->u.abort_jobs;
    exec_project project = exec_project_of(req);
    exec_err e = { 0 };
    int rc = exec_abort_jobs_op(ctx, &project, (const char *const *)a->jobs, a->njobs, &e);
    return face_tail(rc, &e);
}

int exec_retire_batch_op(exec_ctx *ctx, const exec_project *project, const char *batch,
                         exec_err *e)
{
    boinc_project bp = { project->url, project->authenticator };
    boinc_error err = { 0 };
    int rc = boinc_retire_batch(ctx->client, &bp, batch, &err);
    if (rc == BOINC_OK && journal_usable(ctx, project)) {
        int found = 0;
        if (journal_batch_mark_retired(ctx->journal, project->journal_id, batch,
                                       journal_now(), &found) != 0)
            log_warn("retire_batch: batch %s retired on the server but not "
                     "marked in the journal", batch);
        else if (!found)
            log_debug("retire_batch: batch %s is not in the journal", batch);
    }
    return rpc_result(rc, "retire_batch", &err, e);
}

char *exec_retire_batch(exec_ctx *ctx, const gahp_request *req)
{
    exec_project project = exec_project_of(req);
    exec_err e = { 0 };
    return face_tail(exec_retire_batch_op(ctx, &project, req->u.retire.batch, &e), &e);
}

int exec_set_lease_op(exec_ctx *ctx, const exec_project *project, const char *batch,
                      double expire, exec_err *e)
{
    boinc_project bp = { project->url, project->authenticator };
    boinc_error err = { 0 };
    int rc = boinc_set_expire_time(ctx->client, &bp, batch, expire, &err);
    if (rc == BOINC_OK && journal_usable(ctx, project)) {
        int found = 0;
        if (journal_batch_set_lease(ctx->journal, project->journal_id, batch,
                                    expire, journal_now(), &found) != 0)
            log_warn("set_expire_time: lease of batch %s set on the server "
                     "but not recorded in the journal", batch);
        else if (!found)
            log_debug("set_expire_time: batch %s is not in the journal", batch);
    }
    return rpc_result(rc, "set_expire_time", &err, e);
}

char *exec_set_lease(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_set_lease *l = &req->u.lease;
    exec_project project = exec_project_of(req);
    exec_err e = { 0 };
    return face_tail(exec_set_lease_op(ctx, &project, l->batch, (double)l->lease_time, &e),
                     &e);
}
