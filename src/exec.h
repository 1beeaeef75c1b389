/*
 * exec.h - the single dispatch point that runs one journaled request.
 *
 * A worker thread calls exec_request() with its own context.  Each command
 * has its own executor behind it (BOINC_PING here in exec.c; the others
 * are added as src/exec_<command>.c files).
 */
#ifndef BOINC_GAHP_EXEC_H
#define BOINC_GAHP_EXEC_H

#include "boinc.h"
#include "commands.h"
#include "config.h"
#include "journal.h"

typedef struct {
    boinc_client *client;       /* owned by this worker, not shared */
    journal *journal;           /* this worker's own connection */
    const gahp_config *config;
    int worker_index;
    long long session_id;       /* 0 until main sets it */
} exec_ctx;

/*
 * Run one request; return the malloc'd result tail: everything after
 * "<id> ", already escaped, with exactly the token count the client
 * expects (e.g. "NULL" or one escaped error token).  NULL only on ENOMEM.
 */
char *exec_request(exec_ctx *ctx, const gahp_request *req);

/* Helpers for executors: one escaped error token "<step>: <detail>". */
char *exec_error(const char *step, const char *detail);
/* "<step> failed: <boinc code name>: <message>" as one escaped token. */
char *exec_boinc_error(const char *step, const boinc_error *err);

#endif
