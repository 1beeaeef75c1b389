/*
 * journal_internal.h - helpers shared by the files of the journal module
 * (src/journal/journal.c and src/journal_*.c); nothing outside it includes this.
 */
#ifndef BOINC_GAHP_JOURNAL_INTERNAL_H
#define BOINC_GAHP_JOURNAL_INTERNAL_H

#include "journal/journal.h"

#include <stddef.h>

struct sqlite3_stmt;

/* Record "<what>: <sqlite error>" as the handle's error, log it, return -1. */
int journal_fail(journal *j, const char *what);

/*
 * Prepare, bind, step once and finalize sql.  types gives one letter per
 * parameter: 't' text (const char *), 'i' int64 (long long), 'd' double,
 * 'n' null (consumes no argument).  Returns 0 or journal_fail().
 */
int journal_run(journal *j, const char *sql, const char *what, const char *types, ...);

/*
 * Run sql once per item i in [0, n), all in ONE write transaction: bind(st,
 * i, arg) binds the parameters of item i.  n == 0 does nothing.  Returns 0,
 * or -1 after rolling back (the error recorded as with journal_fail).
 */
typedef void (*journal_bind_fn)(struct sqlite3_stmt *st, size_t i, void *arg);
int journal_run_each(journal *j, const char *sql, const char *what, size_t n,
                     journal_bind_fn bind, void *arg);
/* The same inside the caller's transaction (no begin/commit/rollback). */
int journal_each(journal *j, const char *sql, const char *what, size_t n,
                 journal_bind_fn bind, void *arg);

/* The column list journal_step_request_rows expects, for FROM requests r
 * LEFT JOIN projects p ON p.id = r.project_id. */
/* p.url shows a URL password as "user:***@" (migration 0006): the
 * expression puts the stored password back for the code that connects. */
#define JOURNAL_REQUEST_COLUMNS \
    "r.id, r.session_id, r.client_id, r.command, r.args, r.project_id," \
    " CASE WHEN p.url_password IS NULL OR instr(p.url, ':***@') = 0 THEN p.url" \
    " ELSE substr(p.url, 1, instr(p.url, ':***@')) || p.url_password" \
    " || substr(p.url, instr(p.url, ':***@') + 4) END," \
    " p.authenticator, r.state, r.result"

/* Step a prepared SELECT JOURNAL_REQUEST_COLUMNS ..., calling cb per row;
 * finalizes st.  A non-zero cb return stops and is returned. */
int journal_step_request_rows(journal *j, struct sqlite3_stmt *st, const char *what,
                              journal_request_cb cb, void *arg);

/* journal_checkpoint.c: WAL checkpoints on a thread of their own. */
struct sqlite3;
void journal_ckpt_attach(struct sqlite3 *db);   /* every connection */
void journal_ckpt_start(const char *path);      /* the server's primary */
void journal_ckpt_stop(void);                   /* before the primary closes */

#endif
