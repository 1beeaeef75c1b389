/*
 * exec.c - dispatch of one journaled request to its executor, and the
 * BOINC_PING executor.  The other commands have their executors in
 * src/exec_submit.c, src/exec_query.c, src/exec_fetch.c, src/exec_manage.c.
 */
#include "exec.h"
#include "exec_submit.h"
#include "journal_recovery.h"
#include "log.h"
#include "recovery.h"

#include "exec_cmds.h"
#include "protocol.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

char *exec_error(const char *step, const char *detail)
{
    strbuf raw = STRBUF_INIT;
    if (strbuf_printf(&raw, "%s%s%s", step, detail ? ": " : "",
                      detail ? detail : "") != 0) {
        strbuf_free(&raw);
        return NULL;
    }
    char *tok = gahp_escape(raw.data);
    strbuf_free(&raw);
    return tok;
}

char *exec_boinc_error(const char *step, const boinc_error *err)
{
    strbuf raw = STRBUF_INIT;
    int rc = strbuf_printf(&raw, "%s failed: %s", step, boinc_code_name(err->code));
    if (rc == 0 && err->msg != NULL && err->msg[0] != '\0')
        rc = strbuf_printf(&raw, ": %s", err->msg);
    if (rc != 0) {
        strbuf_free(&raw);
        return NULL;
    }
    char *tok = gahp_escape(raw.data);
    strbuf_free(&raw);
    return tok;
}

void exec_err_clear(exec_err *e)
{
    free(e->msg);
    e->msg = NULL;
    e->code = EXEC_OK;
}

void exec_err_set(exec_err *e, exec_code code, const char *what, const char *detail)
{
    exec_err_clear(e);
    e->code = code;
    e->msg = str_printf("%s%s%s", what, detail ? ": " : "", detail ? detail : "");
}

void exec_err_boinc(exec_err *e, const char *what, const boinc_error *err)
{
    exec_err_clear(e);
    e->code = err->code == BOINC_E_NOMEM ? EXEC_E_NOMEM : EXEC_E_RPC;
    int has_msg = err->msg != NULL && err->msg[0] != '\0';
    e->msg = str_printf("%s failed: %s%s%s", what, boinc_code_name(err->code),
                        has_msg ? ": " : "", has_msg ? err->msg : "");
}

char *exec_err_result(exec_err *e)
{
    /* A failure whose message could not be formed still answers with an
     * error, never with success. */
    char *tok = gahp_escape(e->msg != NULL ? e->msg : "out of memory");
    exec_err_clear(e);
    return tok;
}

static char *exec_ping(exec_ctx *ctx, const gahp_request *req)
{
    boinc_project project = { req->project_url, req->authenticator };
    boinc_error err = { 0 };
    if (boinc_ping(ctx->client, &project, &err) == BOINC_OK) {
        boinc_error_clear(&err);
        return strdup("NULL");
    }
    char *tail = exec_boinc_error("ping", &err);
    boinc_error_clear(&err);
    return tail;
}

typedef char *(*executor_fn)(exec_ctx *ctx, const gahp_request *req);

/* One executor per command. */
static const executor_fn executors[GAHP_CMD_COUNT] = {
    [GAHP_CMD_PING] = exec_ping,
    [GAHP_CMD_SUBMIT] = exec_submit,
    [GAHP_CMD_QUERY_BATCHES] = exec_query_batches,
    [GAHP_CMD_FETCH_OUTPUT] = exec_fetch_output,
    [GAHP_CMD_ABORT_JOBS] = exec_abort_jobs,
    [GAHP_CMD_RETIRE_BATCH] = exec_retire_batch,
    [GAHP_CMD_SET_LEASE] = exec_set_lease,
};

/*
 * Replay (doc/recovery.md): a result an earlier run stored but never
 * delivered goes to a re-issued request with the same command, arguments
 * and project, for the commands whose stored outcome still holds.  A failed
 * submit is not replayed: the submit executor retries it.  Returns the
 * stored tail, or NULL to run the request.
 */
static int replay_applies(const exec_ctx *ctx, const gahp_request *req)
{
    return recovery_replay_possible() && !req->background && req->journal_id > 0 &&
           req->project_id > 0 && ctx->session_id > 0 &&
           recovery_is_replayable(gahp_command_name(req->cmd));
}

static char *exec_replay(exec_ctx *ctx, const gahp_request *req)
{
    char *stored = NULL;
    if (journal_replay_take(ctx->journal, gahp_command_name(req->cmd),
                            req->args_text ? req->args_text : "", req->project_id,
                            ctx->session_id, req->journal_id, &stored) != 0)
        return NULL;    /* logged; running the request afresh is safe */
    if (stored != NULL && req->cmd == GAHP_CMD_SUBMIT && strcmp(stored, "NULL") != 0) {
        free(stored);   /* an earlier failure: the executor retries */
        return NULL;
    }
    if (stored != NULL)
        log_info("request %ld: replaying the stored result of an earlier run", req->id);
    return stored;
}

char *exec_request(exec_ctx *ctx, const gahp_request *req)
{
    if (req->project_url == NULL)
        return gahp_escape("no project selected");
    if ((unsigned)req->cmd >= GAHP_CMD_COUNT || executors[req->cmd] == NULL)
        return gahp_escape("internal error: unknown command");
    if (!replay_applies(ctx, req))
        return executors[req->cmd](ctx, req);
    char *tail = exec_replay(ctx, req);
    if (tail == NULL)
        tail = executors[req->cmd](ctx, req);
    /* This re-issue is answered: an earlier run's copy of the same request
     * (say, a submit resumed in the background) must not wait for another. */
    if (tail != NULL)
        journal_supersede(ctx->journal, gahp_command_name(req->cmd),
                          req->args_text ? req->args_text : "", req->project_id,
                          ctx->session_id, req->journal_id);
    return tail;
}
