/*
 * command.c - the one table of GAHP commands and the running of one
 * journaled request through it (see command.h): a bad value found while
 * parsing, the replay of an earlier run's stored result, or the command's
 * executor.
 */
#include "server/command.h"

#include "blah/blah.h"
#include "exec/exec_cmds.h"
#include "wire/gahp_text.h"
#include "journal/journal_requests.h"
#include "base/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SYNC(n, id, count, b) { .name = n, .sync = id, .argc = count, .burst = b }
#define ASYNC(n, c, p, e, replay) \
    { .name = n, .cmd = c, .parse = p, .exec = e, .replayable = replay }
#define ASYNC_RESUMED(n, c, p, e) \
    { .name = n, .cmd = c, .parse = p, .exec = e, .replayable = 1, .resume_unfinished = 1 }
/* A BLAH command: never replayed (each executor answers a repeated request
 * from the journal itself: a repeated submit of a live JobDirectory gets
 * its job id, of a cancelled one a new job), errors in its own form. */
#define BLAH(n, c, p, e, f) \
    { .name = n, .dialect = DIALECT_BLAH, .cmd = c, .parse = p, .exec = e, .fail = f }

/* In the order of the COMMANDS reply (alphabetical). */
static const command_row rows[] = {
    SYNC("ASYNC_MODE_OFF", SYNC_ASYNC_MODE_OFF, 1, BURST_FLUSH_AFTER),
    SYNC("ASYNC_MODE_ON", SYNC_ASYNC_MODE_ON, 1, BURST_FLUSH_AFTER),
    /* HTCondor 10.0-25.x, grid_resource = batch boinc (blah/). */
    BLAH("BLAH_JOB_CANCEL", GAHP_CMD_BLAH_CANCEL, gahp_parse_blah_job, exec_blah_cancel,
         blah_fail),
    BLAH("BLAH_JOB_STATUS", GAHP_CMD_BLAH_STATUS, gahp_parse_blah_job, exec_blah_status,
         blah_status_fail),
    BLAH("BLAH_JOB_SUBMIT", GAHP_CMD_BLAH_SUBMIT, gahp_parse_blah_submit, exec_blah_submit,
         blah_submit_fail),
    BLAH("BLAH_PING", GAHP_CMD_BLAH_PING, gahp_parse_blah_ping, exec_blah_ping, blah_fail),
    ASYNC("BOINC_ABORT_JOBS", GAHP_CMD_ABORT_JOBS, gahp_parse_abort, exec_abort_jobs, 1),
    /* An interrupted fetch may have left temp files and zip work dirs. */
    { .name = "BOINC_FETCH_OUTPUT", .cmd = GAHP_CMD_FETCH_OUTPUT,
      .parse = gahp_parse_fetch, .exec = exec_fetch_output, .replayable = 1,
      .remove_leftovers = exec_fetch_remove_leftovers },
    /* A ping or query always runs fresh: its answer is about now.  Not
     * replayable also means its stored result goes once delivered
     * (workers.c marks it transient; doc/journal.md, "Retention"). */
    ASYNC("BOINC_PING", GAHP_CMD_PING, gahp_parse_ping, exec_ping, 0),
    ASYNC("BOINC_QUERY_BATCHES", GAHP_CMD_QUERY_BATCHES, gahp_parse_query,
          exec_query_batches, 0),
    ASYNC("BOINC_RETIRE_BATCH", GAHP_CMD_RETIRE_BATCH, gahp_parse_retire,
          exec_retire_batch, 1),
    SYNC("BOINC_SELECT_PROJECT", SYNC_SELECT_PROJECT, 3, BURST_JOIN),
    ASYNC("BOINC_SET_LEASE", GAHP_CMD_SET_LEASE, gahp_parse_lease, exec_set_lease, 1),
    /* An unfinished submit is resumed at start-up: its steps are journaled. */
    ASYNC_RESUMED("BOINC_SUBMIT", GAHP_CMD_SUBMIT, gahp_parse_submit, exec_submit),
    SYNC("COMMANDS", SYNC_COMMANDS, 1, BURST_JOIN),
    SYNC("CONDOR_VERSION", SYNC_CONDOR_VERSION, 2, BURST_JOIN),
    SYNC("QUIT", SYNC_QUIT, 1, BURST_FLUSH_AFTER),
    /* The reply to RESPONSE_PREFIX still carries the old prefix. */
    SYNC("RESPONSE_PREFIX", SYNC_RESPONSE_PREFIX, 2, BURST_FLUSH_AFTER),
    /* RESULTS reports what is committed: every earlier line goes first. */
    SYNC("RESULTS", SYNC_RESULTS, 1, BURST_FLUSH_BEFORE),
    SYNC("VERSION", SYNC_VERSION, 1, BURST_JOIN),
    /* Internal: a BLAH group's BOINC batch, submitted and resumed like a
     * BOINC_SUBMIT (blah/blah.c journals it; its client id is the group's).
     * Its stored result is kept as a submit's is (replayable: never
     * transient); no client re-issues it, so it is never replayed. */
    { .name = "BLAH_GROUP_SUBMIT", .cmd = GAHP_CMD_SUBMIT, .parse = gahp_parse_submit,
      .exec = exec_submit, .replayable = 1, .resume_unfinished = 1, .internal = 1 },
    /* Internal, never journaled: the wait of a BLAH group for its last jobs
     * (a group left open by a crash is closed at start-up instead). */
    { .name = "BLAH_GROUP_LEAD", .cmd = GAHP_CMD_BLAH_LEAD, .parse = gahp_parse_blah_lead,
      .exec = exec_blah_lead, .internal = 1 },
};

#define NROWS (sizeof rows / sizeof rows[0])

const command_row *command_find_journaled(const char *name)
{
    for (size_t i = 0; i < NROWS; i++)
        if (strcasecmp(name, rows[i].name) == 0)
            return &rows[i];
    return NULL;
}

const command_row *command_find(const char *name)
{
    const command_row *row = command_find_journaled(name);
    return row != NULL && !row->internal ? row : NULL;
}

const command_row *command_of(gahp_command cmd)
{
    /* A client's command first: BLAH_GROUP_SUBMIT shares BOINC_SUBMIT's
     * request type and runs as one. */
    const command_row *internal = NULL;
    for (size_t i = 0; i < NROWS; i++) {
        if (rows[i].sync != SYNC_NONE || rows[i].cmd != cmd)
            continue;
        if (!rows[i].internal)
            return &rows[i];
        if (internal == NULL)
            internal = &rows[i];
    }
    return internal;
}

static pthread_once_t reply_once = PTHREAD_ONCE_INIT;
static char *list_reply;

static void build_list_reply(void)
{
    size_t len = 2;
    for (size_t i = 0; i < NROWS; i++)
        if (!rows[i].internal)
            len += 1 + strlen(rows[i].name);
    list_reply = malloc(len);
    if (list_reply == NULL)
        return;
    char *d = list_reply;
    *d++ = 'S';
    for (size_t i = 0; i < NROWS; i++) {
        if (rows[i].internal)
            continue;
        *d++ = ' ';
        size_t n = strlen(rows[i].name);
        memcpy(d, rows[i].name, n);
        d += n;
    }
    *d = '\0';
}

const char *command_list_reply(void)
{
    pthread_once(&reply_once, build_list_reply);
    /* Without memory for this one small string the command fails. */
    return list_reply != NULL ? list_reply : "F";
}

int command_parse(const command_row *row, char *const *argv, size_t argc,
                  gahp_request **out, const char **why)
{
    *out = NULL;
    if (row == NULL || row->sync != SYNC_NONE) {
        *why = "unknown command";
        return -1;
    }
    if (gahp_request_parse(row->cmd, row->parse, argv, argc, out, why) != 0)
        return -1;
    (*out)->row = row;
    return 0;
}

int command_parse_request(char *const *argv, size_t argc, gahp_request **out,
                          const char **why)
{
    return command_parse(argc > 0 ? command_find(argv[0]) : NULL, argv, argc, out, why);
}

int command_is_blah(const command_row *row)
{
    return row != NULL && row->dialect == DIALECT_BLAH;
}

char *command_fail(const command_row *row, const char *msg)
{
    return command_is_blah(row) ? row->fail(msg) : gahp_escape(msg);
}

/* ---- running a request ------------------------------------------------- */

/* Set by start-up recovery after resumed submits were handed to the
 * (already running) workers, which read it: atomic (exec_shared). */
void command_set_replay_possible(exec_shared *shared, int possible)
{
    atomic_store(&shared->replay_possible, possible);
}

static int replay_applies(const exec_ctx *ctx, const gahp_request *req,
                          const command_row *row)
{
    return atomic_load(&ctx->shared->replay_possible) && !req->background &&
           req->journal_id > 0 &&
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

char *command_dispatch(exec_ctx *ctx, const gahp_request *req)
{
    const command_row *row = req->row;
    if (row == NULL || row->exec == NULL)
        return gahp_escape("internal error: unknown command");
    /* A well-framed request with a bad value: the error names the field. */
    if (req->value_error != NULL) {
        /* refused at accept time (an ad that cannot be read, a field with
         * a bad value): the log says why, as the result does; a value
         * error never holds an authenticator (protocol.c) */
        log_info("%s %ld refused: %s", row->name, req->id, req->value_error);
        return command_fail(row, req->value_error);
    }
    if (req->project_url == NULL)
        return command_fail(row, command_is_blah(row)
                    ? "no BOINC project is configured: set project_url and authenticator_file "
                      "in boinc_gahp.conf (doc/htcondor.md)"
                    : "no project selected");
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
