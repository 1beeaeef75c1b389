/*
 * exec_cmds.h - the executors of the BOINC_* commands, named by their
 * rows in server/command.c; each lives in its command's folder (submit/,
 * fetch/, cmd/).
 *
 * Each returns the malloc'd result tail (everything after "<id> ",
 * escaped, with exactly the token count HTCondor expects: "NULL ..." or
 * one error token), or NULL on ENOMEM.  doc/commands.md has the RPCs each
 * one makes and every error result.
 */
#ifndef BOINC_GAHP_EXEC_CMDS_H
#define BOINC_GAHP_EXEC_CMDS_H

#include "exec/exec.h"

#include <time.h>

/* submit/submit.c: the typed core operation that submits a job set (req
 * is a BOINC_SUBMIT request, or a BLAH group's internal one): run it, or
 * resume it, or answer from the journal, or attach to the run of the same
 * batch in progress.  0 when the batch is submitted; -1 with *e (its code,
 * plain message, and the input it was refused for: exec_err_blame; also
 * "submit still running" at the deadline and the different-jobs refusal).
 * The caller clears *e. */
int exec_submit_job_set(exec_ctx *ctx, const gahp_request *req, exec_err *e);
/* Its 9.0 face, BOINC_SUBMIT: "NULL" or the error as one escaped token. */
char *exec_submit(exec_ctx *ctx, const gahp_request *req);

/* cmd/query.c: BOINC_QUERY_BATCHES, the 9.0 face of exec_refresh_batches. */
char *exec_query_batches(exec_ctx *ctx, const gahp_request *req);
/* The typed core operation: one or two query_batch2 calls over the
 * batches names[0..n) (every job of a batch the journal has no reply for,
 * else the changes since its last one), their jobs' statuses recorded in
 * the journal.  0, or -1 with *e (exec_err_boinc's codes:
 * EXEC_E_UNREACHABLE when the project did not answer). */
int exec_refresh_batches(exec_ctx *ctx, const exec_project *project,
                         const char *const *names, size_t n, exec_err *e);

/* fetch/fetch.c */
char *exec_fetch_output(exec_ctx *ctx, const gahp_request *req);
/* The same as a typed core operation (doc/blah-core.md): how the job
 * ended, its outputs (when it has a canonical result) and stderr (when an
 * instance reported an exit status) delivered.  0 with *out, or -1 with
 * *e set (EXEC_E_REFUSED: the job failed without an exit status, or is
 * not finished; EXEC_E_UNREACHABLE: the project did not answer;
 * EXEC_E_RPC: it answered with an error; EXEC_E_LOCAL: a file could not
 * be written). */
typedef struct {
    long exit_code;             /* 0 when no instance reported one */
    double elapsed_s, cpu_s;    /* >= 0, finite */
} exec_fetch_outcome;
int exec_fetch_job(exec_ctx *ctx, const gahp_request *req, exec_fetch_outcome *out,
                   exec_err *e);

/* Remove what an interrupted fetch of f left in its directories (temp
 * files, zip work directories) last modified before cutoff.  Called by
 * every fetch for its own job and by start-up recovery for fetches an
 * earlier run left unfinished (issue 10 #5). */
void exec_fetch_cleanup(const gahp_fetch_output *f,
                        const struct timespec *cutoff);
/* Start-up's form (server/command.c): everything an interrupted fetch of
 * req left, whatever its age - no fetch of this run has started yet. */
void exec_fetch_remove_leftovers(const gahp_request *req);

/* cmd/manage.c: BOINC_PING, and the 9.0 faces of the typed core
 * operations below (each "NULL" or its exec_err as one error token). */
char *exec_ping(exec_ctx *ctx, const gahp_request *req);
char *exec_abort_jobs(exec_ctx *ctx, const gahp_request *req);
char *exec_retire_batch(exec_ctx *ctx, const gahp_request *req);
char *exec_set_lease(exec_ctx *ctx, const gahp_request *req);
/* The typed core operations: 0, or -1 with *e (exec_err_boinc's codes).
 * Ping: one ping RPC.  Abort: the jobs are marked aborted in the journal first (whatever the
 * server answers), then one abort_jobs.  Retire and lease: the RPC, then
 * the journal's batches row when it knows the batch (a failure to record
 * is logged, not the operation's). */
int exec_ping_op(exec_ctx *ctx, const exec_project *project, exec_err *e);
int exec_abort_jobs_op(exec_ctx *ctx, const exec_project *project,
                       const char *const *jobs, size_t n, exec_err *e);
int exec_retire_batch_op(exec_ctx *ctx, const exec_project *project, const char *batch,
                         exec_err *e);
int exec_set_lease_op(exec_ctx *ctx, const exec_project *project, const char *batch,
                      double expire, exec_err *e);

/* blah/ (HTCondor 10.0-25.x, grid_resource = batch boinc): result tails
 * "<rc> <error|NULL> ..." with the token counts the grid manager asserts
 * (doc/commands.md, "BLAH commands"). */
char *exec_blah_submit(exec_ctx *ctx, const gahp_request *req);
char *exec_blah_status(exec_ctx *ctx, const gahp_request *req);
char *exec_blah_cancel(exec_ctx *ctx, const gahp_request *req);
char *exec_blah_ping(exec_ctx *ctx, const gahp_request *req);
/* Internal: wait until a BLAH group should close, close and submit it. */
char *exec_blah_lead(exec_ctx *ctx, const gahp_request *req);

#endif
