/*
 * exec_ctx.h - making and releasing an executor context (exec_ctx): its
 * own BOINC client and its own journal connection, for one thread.  Used
 * by every worker, and by the contexts a submit makes from its worker's
 * (a run that outlives its worker's wait, src/submit/submit.c;
 * the helper lanes of its file steps, src/submit/submit_files.c).
 *
 * The client comes from a client source (exec_client_source, exec.h):
 * the libcurl client for the server, any boinc_client implementation for
 * a test.  Ownership: the context owns its client and frees it in
 * exec_ctx_close (through boinc_client_free, i.e. the implementation's
 * own free); the source and its arg are borrowed and must outlive the
 * context and every context made from it.
 */
#ifndef BOINC_GAHP_EXEC_CTX_H
#define BOINC_GAHP_EXEC_CTX_H

#include "exec/exec.h"

/* Fill ctx (the server's shared state, config, a new libcurl client from
 * cfg, a new connection to the journal of `journal_of`).  0, or -1 with
 * *err set (malloc'd). */
int exec_ctx_open(exec_ctx *ctx, exec_shared *shared, const gahp_config *cfg,
                  const journal *journal_of, int worker_index, char **err);

/* The same with the client made by clients->make (cfg may be NULL: the
 * submit code then uses its built-in limits and one upload lane). */
int exec_ctx_open_with(exec_ctx *ctx, exec_shared *shared, const gahp_config *cfg,
                       const journal *journal_of, int worker_index,
                       const exec_client_source *clients, char **err);

/* A context for another thread like `like`: its config, worker index,
 * session, shared state and client source, a new client and journal connection. */
int exec_ctx_open_like(exec_ctx *ctx, const exec_ctx *like, char **err);

/* Free what exec_ctx_open* made (the client included). */
void exec_ctx_close(exec_ctx *ctx);

#endif
