/*
 * submit_run.h - what one run of a BOINC_SUBMIT carries between its parts
 * (exec_submit.c drives it; submit_inputs.c, submit_driver.c,
 * submit_batch_steps.c and submit_files.c each do one concern), and the
 * one way they record a failure.
 *
 * Error convention: a part that fails calls run_fail*() (which keeps ONE
 * error for the client, a code plus a message, and journals state failed
 * with the state to resume from) and returns -1; 0 is success.
 */
#ifndef BOINC_GAHP_SUBMIT_RUN_H
#define BOINC_GAHP_SUBMIT_RUN_H

#include "boinc/boinc.h"
#include "exec/exec.h"
#include "journal/journal_submit.h"

#include <stddef.h>

/* Bounds of the requests a submit sends.  One struct so that a caller can
 * tune them in one place (exec_submit.c: a stock PHP's limits, or the
 * configured ones; submit_files.c lowers the upload bounds further to the
 * limits learned from the project's replies). */
typedef struct {
    size_t query_chunk_files;       /* names per query_files request */
    size_t upload_chunk_files;      /* files per upload_files request */
    long long upload_chunk_bytes;   /* bytes per upload_files request */
    size_t upload_connections;      /* upload_files requests in flight at once */
} submit_limits;

/* Parameters of create_batch (extensible). */
typedef struct {
    double expire_time;             /* absolute; exec_submit.c sets it finite */
} create_batch_params;

typedef struct {
    exec_ctx *ctx;
    const gahp_request *req;
    const gahp_submit *s;
    boinc_project project;
    journal_batch batch;
    submit_limits limits;
    create_batch_params create;
    size_t ninputs;             /* inputs over all jobs */
    char **input_phys;          /* phys name of each input, job order */
    exec_err error;             /* set once failed */
} submit_run;

/* The state the batch is at: a failed batch resumes at its resume_state. */
batch_state run_state(const submit_run *r);

/* Record a failure (see the convention above).  resume < 0: the journal
 * row is left as it is (a local failure that changed nothing). */
int run_fail(submit_run *r, int resume, exec_code code, const char *what,
             const char *detail);
int run_failf(submit_run *r, int resume, exec_code code, const char *what,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A failed RPC: "<rpc> failed: <boinc code>: <message>". */
int run_fail_boinc(submit_run *r, int resume, const char *rpc, const boinc_error *err);
/* Journal r->error again as the batch's failure (several upload lanes
 * failed at once: the journal keeps the one the client is given). */
int run_fail_record_again(submit_run *r, int resume);
/* A journal write or read failed. */
int run_fail_journal(submit_run *r);
int run_fail_nomem(submit_run *r);

/* Re-read the batch row; set its state (and server batch id when > 0). */
int run_reload(submit_run *r);
int run_set_state(submit_run *r, batch_state state, long long server_batch_id);

#endif
