/*
 * manage.c - BOINC_PING (ping), BOINC_ABORT_JOBS (abort_jobs), BOINC_RETIRE_BATCH
 * (retire_batch by name) and BOINC_SET_LEASE (set_expire_time by name).
 * Each answers "NULL" or one error token; retire and lease are also
 * written to the journal's batches row when the journal knows the batch.
 */
#include "exec/exec_cmds.h"

#include "journal/journal_batches.h"
#include "base/log.h"

#include <stdlib.h>
#include <string.h>

/* "NULL" when rc is BOINC_OK, else "<step> failed: ..." (one token). */
static char *rpc_tail(int rc, const char *step, boinc_error *err)
{
    char *tail = rc == BOINC_OK ? strdup("NULL") : exec_boinc_error(step, err);
    boinc_error_clear(err);
    return tail;
}

char *exec_ping(exec_ctx *ctx, const gahp_request *req)
{
    boinc_project project = { req->project_url, req->authenticator };
    boinc_error err = { 0 };
    return rpc_tail(boinc_ping(ctx->client, &project, &err), "ping", &err);
}

/* The journal follows the server, never the other way round: a failure to
 * record is logged and the client still gets the server's answer. */
static int journal_usable(const exec_ctx *ctx, const gahp_request *req)
{
    return ctx->journal != NULL && req->project_id > 0;
}

/*
 * The client has given the jobs up whatever the server answers: marked
 * before the RPC, so no status query reports them again, not even the
 * ERROR the abort itself causes (HTCondor would apply it to the job with
 * the same cluster.proc, released into another batch).
 */
char *exec_abort_jobs(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_abort_jobs *a = &req->u.abort_jobs;
    for (size_t i = 0; journal_usable(ctx, req) && i < a->njobs; i++)
        if (journal_jobs_mark_aborted(ctx->journal, req->project_id, a->jobs[i]) != 0)
            log_warn("abort_jobs: job %s not marked aborted in the journal", a->jobs[i]);
    boinc_project project = { req->project_url, req->authenticator };
    boinc_error err = { 0 };
    int rc = boinc_abort_jobs(ctx->client, &project,
                              (const char *const *)a->jobs, a->njobs, &err);
    return rpc_tail(rc, "abort_jobs", &err);
}

char *exec_retire_batch(exec_ctx *ctx, const gahp_request *req)
{
    const char *batch = req->u.retire.batch;
    boinc_project project = { req->project_url, req->authenticator };
    boinc_error err = { 0 };
    int rc = boinc_retire_batch(ctx->client, &project, batch, &err);
    if (rc == BOINC_OK && journal_usable(ctx, req)) {
        int found = 0;
        if (journal_batch_mark_retired(ctx->journal, req->project_id, batch,
                                       journal_now(), &found) != 0)
            log_warn("retire_batch: batch %s retired on the server but not "
                     "marked in the journal", batch);
        else if (!found)
            log_debug("retire_batch: batch %s is not in the journal", batch);
    }
    return rpc_tail(rc, "retire_batch", &err);
}

char *exec_set_lease(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_set_lease *l = &req->u.lease;
    boinc_project project = { req->project_url, req->authenticator };
    boinc_error err = { 0 };
    double expire = (double)l->lease_time;
    int rc = boinc_set_expire_time(ctx->client, &project, l->batch, expire,
                                   &err);
    if (rc == BOINC_OK && journal_usable(ctx, req)) {
        int found = 0;
        if (journal_batch_set_lease(ctx->journal, req->project_id, l->batch,
                                    expire, journal_now(), &found) != 0)
            log_warn("set_expire_time: lease of batch %s set on the server "
                     "but not recorded in the journal", l->batch);
        else if (!found)
            log_debug("set_expire_time: batch %s is not in the journal",
                      l->batch);
    }
    return rpc_tail(rc, "set_expire_time", &err);
}
