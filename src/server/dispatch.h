/*
 * dispatch.h - the single point that runs one journaled request: a
 * worker thread calls dispatch_request() with its own context; the
 * command table names the executor and says whether an earlier run's
 * stored result may answer the request instead (replay, doc/recovery.md).
 */
#ifndef BOINC_GAHP_DISPATCH_H
#define BOINC_GAHP_DISPATCH_H

#include "exec/exec.h"

/*
 * Run one request; return the malloc'd result tail: everything after
 * "<id> ", already escaped, with exactly the token count the client
 * expects (e.g. "NULL" or one escaped error token).  NULL only on ENOMEM.
 */
char *dispatch_request(exec_ctx *ctx, const gahp_request *req);

/* Start-up recovery says whether an earlier run's request can answer (or
 * be superseded by) a new one; until then, and when not, the journal
 * look-up is skipped.  Safe to call while workers run. */
void dispatch_set_replay_possible(int possible);

#endif
