/*
 * command.h - everything the server knows about each GAHP command, in one
 * table (command.c): its name, whether it is synchronous or a BOINC
 * request, its field count or parser, its executor, whether a stored
 * result may be replayed to a re-issue, how it joins the reader's burst of
 * return lines, and so the COMMANDS reply; and the single point that runs
 * one journaled request (command_dispatch): a worker thread calls it with
 * its own context; the row names the executor and says whether an earlier
 * run's stored result may answer the request instead (replay,
 * doc/recovery.md).
 *
 * Adding a command: one row in command.c plus the command's own parser and
 * executor files (a synchronous one also gets its case in protocol.c).
 */
#ifndef BOINC_GAHP_COMMAND_H
#define BOINC_GAHP_COMMAND_H

#include "wire/request.h"
#include "exec/exec.h"

#include <stddef.h>

/* Synchronous commands, handled by the protocol module itself. */
typedef enum {
    SYNC_NONE = 0,              /* an asynchronous BOINC request */
    SYNC_ASYNC_MODE_OFF,
    SYNC_ASYNC_MODE_ON,
    SYNC_SELECT_PROJECT,
    SYNC_COMMANDS,
    SYNC_CONDOR_VERSION,
    SYNC_QUIT,
    SYNC_RESPONSE_PREFIX,
    SYNC_RESULTS,
    SYNC_VERSION
} sync_command;

/* How a command's return line relates to the reader's burst (the return
 * lines of the commands read in one go, written after one journal commit). */
typedef enum {
    BURST_JOIN = 0,             /* queued with the burst */
    BURST_FLUSH_AFTER,          /* the burst, this reply included, is written
                                   before the command takes effect */
    BURST_FLUSH_BEFORE          /* the burst is written, then this command
                                   writes its own reply */
} burst_mode;

/* Which of the two client languages a command belongs to (doc/blah-core.md,
 * "Two faces"): HTCondor 9.0's BOINC_* commands, or the BLAH commands of
 * HTCondor 10.0-25.x.  The dialect decides the form of an error's result
 * tail, whether a re-issue may be answered under an earlier run's id, and
 * what "success" looks like in the log. */
typedef enum {
    DIALECT_BOINC = 0,          /* "NULL ..." or one escaped error token */
    DIALECT_BLAH                /* "0 ..." / "1 <error> ..." with its own
                                   token count (row->fail) */
} command_dialect;

typedef char *(*executor_fn)(exec_ctx *ctx, const gahp_request *req);
/* Removes what an interrupted run of the request left on disk. */
typedef void (*leftover_fn)(const gahp_request *req);

typedef struct command_row {
    const char *name;           /* as on the wire (matched case-insensitively) */
    command_dialect dialect;    /* declared, never inferred from other fields */
    sync_command sync;
    size_t argc;                /* sync: tokens including the name */
    burst_mode burst;
    gahp_command cmd;           /* async: the request type */
    gahp_parse_fn parse;        /* async */
    executor_fn exec;           /* async */
    int replayable;             /* async: an earlier run's stored result still
                                   holds for an identical re-issue */
    int resume_unfinished;      /* async: start-up resumes an earlier run's
                                   unfinished request in the background */
    leftover_fn remove_leftovers; /* async, or NULL: start-up calls it for an
                                   earlier run's unfinished request it does
                                   not resume (issue 10 #5) */
    char *(*fail)(const char *msg); /* DIALECT_BLAH: the result tail of an
                                   error (BOINC commands: NULL, the one
                                   escaped token) */
    int internal;               /* journaled by the server itself, never
                                   read from a client nor listed by
                                   COMMANDS (a BLAH group's submit) */
} command_row;

/*
 * A request's row is looked up once, by name, where the request enters the
 * server (the reader's line, recovery's journal row), and then travels in
 * gahp_request.row from the parse to the result: command_dispatch and the
 * worker read it there.
 */

/* The row of a command name a client may send, or NULL when it is not
 * one. */
const command_row *command_find(const char *name);
/* 1 when row is a command of the BLAH dialect. */
int command_is_blah(const command_row *row);
/* The same, internal rows included (recovery reads the journal's rows). */
const command_row *command_find_journaled(const char *name);
/* The row of an asynchronous request type, for a request made outside the
 * table (a server task, a BLAH group closed at start-up: workers_submit
 * looks it up once); never NULL for a valid one. */
const command_row *command_of(gahp_command cmd);

/* "S <every command name>", the COMMANDS reply. */
const char *command_list_reply(void);

/* Parse the request line argv of row's command (see gahp_request_parse)
 * into a request carrying row; a synchronous row is refused with *why set. */
int command_parse(const command_row *row, char *const *argv, size_t argc,
                  gahp_request **out, const char **why);
/* command_parse of the row command_find gives argv[0]; an unknown name is
 * refused with *why set. */
int command_parse_request(char *const *argv, size_t argc, gahp_request **out,
                          const char **why);

/* The result tail of an error of row's command: msg as the one escaped
 * token of the BOINC commands, or in a BLAH command's own form (row->fail).
 * NULL on ENOMEM. */
char *command_fail(const command_row *row, const char *msg);

/* ---- running a request ------------------------------------------------- */

/*
 * Run one request through its row (req->row); return the malloc'd result
 * tail: everything after "<id> ", already escaped, with exactly the token
 * count the client expects (e.g. "NULL" or one escaped error token).  NULL
 * only on ENOMEM.
 */
char *command_dispatch(exec_ctx *ctx, const gahp_request *req);

/* Start-up recovery says whether an earlier run's request can answer (or
 * be superseded by) a new one; until then, and when not, the journal
 * look-up is skipped.  Safe to call while workers run. */
void command_set_replay_possible(exec_shared *shared, int possible);

#endif
