/*
 * exec_ctx.h - making and releasing an executor context (exec_ctx): its
 * own BOINC client and its own journal connection, for one thread.  Used
 * by every worker, and by a submit that outlives its worker's wait (see
 * src/submit/submit.c, "deadline").
 */
#ifndef BOINC_GAHP_EXEC_CTX_H
#define BOINC_GAHP_EXEC_CTX_H

#include "exec/exec.h"

/* Fill ctx (config, a new client from cfg, a new connection to the
 * journal of `journal_of`).  0, or -1 with *err set (malloc'd). */
int exec_ctx_open(exec_ctx *ctx, const gahp_config *cfg, const journal *journal_of,
                  int worker_index, char **err);

/* Free what exec_ctx_open made. */
void exec_ctx_close(exec_ctx *ctx);

#endif
