/*
 * dispatch.c - run one journaled request through the command table (see
 * dispatch.h): a bad value found while parsing, the replay of an earlier
 * run's stored result, or the command's executor.
 */
#include "server/dispatch.h"

#include "server/command_table.h"
#include "wire/gahp_text.h"
#include "journal/journal_recovery.h"
#include "base/log.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Set by start-up recovery after resumed submits were handed to the
 * (already running) workers, which read it: atomic. */
static atomic_int replay_possible;

void dispatch_set_replay_possible(int possible)
{
    atomic_store(&replay_possible, possible);
}

static int replay_applies(const exec_ctx *ctx, const gahp_request *req,
                          const command_row *row)
{
    return atomic_load(&replay_possible) && !req->background && req->journal_id > 0 &&
           req->project_id > 0 && ctx->session_id > 0 && row->replayable;
}

/*
 * Replay (doc/recovery.md): a result an earlier run stored but never
 * delivered goes to a re-issued request with the same command, arguments
 * and project, for the commands whose stored outcome still holds.  A failed
 * submit is not replayed: the submit executor retries it.  Returns the
 * stored tail, or NULL to run the request.
 */
static char *replay(exec_ctx *ctx, const gahp_request *req, const command_row *row)
{
    char *stored = NULL;
    if (journal_replay_take(ctx->journal, row->name, req->args_text ? req->args_text : "",
                            req->project_id, ctx->session_id, req->journal_id,
                            &stored) != 0)
        return NULL;    /* logged; running the request afresh is safe */
    if (stored != NULL && req->cmd == GAHP_CMD_SUBMIT && strcmp(stored, "NULL") != 0) {
        free(stored);   /* an earlier failure: the executor retries */
        return NULL;
    }
    if (stored != NULL)
        log_info("request %ld: replaying the stored result of an earlier run", req->id);
    return stored;
}

char *dispatch_request(exec_ctx *ctx, const gahp_request *req)
{
    const command_row *row = command_of(req->cmd);
    if (row == NULL || row->exec == NULL)
        return gahp_escape("internal error: unknown command");
    /* A well-framed request with a bad value: the error names the field. */
    if (req->value_error != NULL)
        return gahp_escape(req->value_error);
    if (req->project_url == NULL)
        return gahp_escape("no project selected");
    if (!replay_applies(ctx, req, row))
        return row->exec(ctx, req);
    char *tail = replay(ctx, req, row);
    if (tail == NULL)
        tail = row->exec(ctx, req);
    /* This re-issue is answered: an earlier run's copy of the same request
     * (say, a submit resumed in the background) must not wait for another. */
    if (tail != NULL)
        journal_supersede(ctx->journal, row->name, req->args_text ? req->args_text : "",
                          req->project_id, ctx->session_id, req->journal_id);
    return tail;
}
