/*
 * journal_requests.c - the SQL of the tables sessions, projects and
 * requests: server runs, projects and their secrets, accepted requests
 * (write-ahead, group-committed completions, delivery), crash recovery
 * and replay (journal_requests.h), and the statements of retention
 * (run by journal_prune.c).
 *
 * Every statement is in the table below and runs through journal_run /
 * journal_query (journal_internal.h); writes run inside journal_txn.
 */
#include "journal/journal_requests.h"

#include "journal/journal.h"
#include "journal/journal_batches.h"
#include "journal/journal_internal.h"

#include "base/strbuf.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The column list request_rows expects, for FROM requests r LEFT JOIN
 * projects p ON p.id = r.project_id.  p.url shows a URL password as
 * "user:***@" (migration 0006): the expression puts the stored password
 * back for the code that connects. */
#define REQUEST_COLUMNS \
    "r.id, r.session_id, r.client_id, r.command, r.args, r.project_id," \
    " CASE WHEN p.url_password IS NULL OR instr(p.url, ':***@') = 0 THEN p.url" \
    " ELSE substr(p.url, 1, instr(p.url, ':***@')) || p.url_password" \
    " || substr(p.url, instr(p.url, ':***@') + 4) END," \
    " p.authenticator, r.state," \
    " coalesce(r.result, (SELECT t.result FROM transient_results t" \
    "                     WHERE t.request_id = r.id))"

/* The rows of earlier sessions that a re-issue of (command, args, project)
 * answers: neither delivered, closed nor already answered.  The prefix
 * term is what lets SQLite find the candidates through
 * requests_command_args_prefix (migration 0014: an index of the whole text
 * held a 1.3 MB key per 10,000-job submit); the whole text is compared
 * after it, as `+args`: a plain `args = ?2` lets SQLite substitute ?2 for
 * args in the prefix term, which then matches the index no more (EXPLAIN
 * QUERY PLAN: command=? only). */
#define SAME_REQUEST_EARLIER \
    " command = ?1 AND substr(args, 1, 64) = substr(?2, 1, 64) AND +args = ?2" \
    " AND project_id = ?3 AND session_id < ?4" \
    " AND closed_at IS NULL AND replayed_by IS NULL AND state <> '" JOURNAL_DELIVERED "'"

const journal_sql journal_sql_requests[JSTMT_COUNT] = {
    /* ---- sessions ---- */
    [JSTMT_SESSION_INSERT] = { "session insert",
        "INSERT INTO sessions (started_at, pid, version) VALUES (?, ?, ?)" },
    [JSTMT_SESSION_CONDOR_VERSION] = { "session update",
        "UPDATE sessions SET condor_version = ? WHERE id = ?" },
    [JSTMT_SESSION_END] = { "session end",
        "UPDATE sessions SET ended_at = ?, clean_exit = ? WHERE id = ?" },
    [JSTMT_SESSIONS_PRUNE] = { "prune sessions",
        "DELETE FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ?1"
        " AND id NOT IN (SELECT session_id FROM requests)"
        " AND id NOT IN (SELECT resumed_session FROM requests"
        " WHERE resumed_session IS NOT NULL)"
        " AND id NOT IN (SELECT confirmed_in FROM requests"
        " WHERE confirmed_in IS NOT NULL)" },

    /* ---- projects ---- */
    [JSTMT_PROJECT_FIND] = { "project lookup",
        "SELECT id FROM projects WHERE url = ? AND authenticator = ?" },
    [JSTMT_PROJECT_INSERT] = { "project insert",
        "INSERT INTO projects (url, authenticator, first_used_at, url_password)"
        " VALUES (?, ?, ?, ?)" },
    /* ?3 repeats ?1: an unchanged password writes nothing */
    [JSTMT_PROJECT_PASSWORD] = { "project password update",
        "UPDATE projects SET url_password = ? WHERE id = ? AND url_password IS NOT ?" },
    [JSTMT_PROJECT_STATUS_SEQ] = { "status change number",
        "SELECT status_seq FROM projects WHERE id = ?1" },
    /* once per status reply that changed a job (journal_batches.c) */
    [JSTMT_PROJECT_STATUS_SEQ_ADVANCE] = { "advance status change number",
        "UPDATE projects SET status_seq = status_seq + 1 WHERE id = ?1" },

    /* ---- requests ---- */
    [JSTMT_REQUEST_INSERT] = { "request insert",
        "INSERT INTO requests (session_id, client_id, command, args,"
        " project_id, state, accepted_at) VALUES (?, ?, ?, ?, ?, '"
        JOURNAL_ACCEPTED "', ?)" },
    [JSTMT_REQUEST_COMPLETE] = { "request complete",
        "UPDATE requests SET state = '" JOURNAL_COMPLETED "',"
        " started_at = coalesce(started_at, ?1), completed_at = ?2,"
        " result = CASE WHEN ?4 THEN NULL ELSE ?3 END, transient = ?4 WHERE id = ?5" },
    /* A transient result waits for its delivery apart (migration 0009). */
    [JSTMT_TRANSIENT_RESULT_STORE] = { "transient result",
        "INSERT OR REPLACE INTO transient_results (request_id, result) VALUES (?1, ?2)" },
    [JSTMT_TRANSIENT_RESULT_DROP] = { "transient result delivered",
        "DELETE FROM transient_results WHERE request_id = ?1" },
    /* retention: the results of closed requests about to be pruned */
    [JSTMT_TRANSIENT_RESULTS_PRUNE] = { "prune transient results",
        "DELETE FROM transient_results WHERE request_id IN (SELECT id FROM requests"
        " WHERE state = '" JOURNAL_DELIVERED "' OR (closed_at IS NOT NULL AND closed_at < ?1))" },
    /* A transient result (a ping's, a query's: about its moment) serves
     * nothing once delivered: it goes (issue 19, migration 0009). */
    [JSTMT_REQUEST_DELIVERED] = { "request delivered",
        "UPDATE requests SET state = '" JOURNAL_DELIVERED "', delivered_at = ?,"
        " result = CASE WHEN transient = 1 THEN NULL ELSE result END"
        " WHERE id = ? AND state = '" JOURNAL_COMPLETED "'" },
    [JSTMT_REQUEST_ARGS] = { "request args lookup",
        "SELECT args FROM requests WHERE id = ?" },
    /* Delivered requests, and requests recovery closed (an earlier run's
     * work that can no longer be answered), older than the retention.
     * Rows that other rows still reference (a batch's submit, the
     * re-issue a stored result was replayed to) are kept until the
     * referencing row goes: with foreign keys on, deleting them would
     * fail the whole prune.  The NOT IN subqueries are not correlated, so
     * SQLite evaluates each once. */
    [JSTMT_REQUESTS_PRUNE] = { "prune requests",
        "DELETE FROM requests WHERE"
        " ((state = '" JOURNAL_DELIVERED "' AND delivered_at < ?1)"
        "  OR (closed_at IS NOT NULL AND closed_at < ?1)"
        "  OR (confirmed_in IS NOT NULL AND completed_at < ?1))"
        " AND id NOT IN (SELECT request_id FROM batches WHERE request_id IS NOT NULL)"
        " AND id NOT IN (SELECT request_id FROM blah_groups WHERE request_id IS NOT NULL)"
        " AND id NOT IN (SELECT replayed_by FROM requests WHERE replayed_by IS NOT NULL)" },
    /* requests_state (state, id) serves this: undelivered rows only. */
    [JSTMT_RECOVERY_SCAN] = { "recovery scan",
        "SELECT " REQUEST_COLUMNS
        " FROM requests r LEFT JOIN projects p ON p.id = r.project_id"
        " WHERE r.state IN ('" JOURNAL_ACCEPTED "', '" JOURNAL_COMPLETED "')"
        " AND r.session_id < ?1"
        " AND r.closed_at IS NULL AND r.replayed_by IS NULL"
        " AND r.confirmed_in IS NULL ORDER BY r.id" },
    [JSTMT_REQUEST_CLOSE] = { "close requests",
        "UPDATE requests SET closed_at = ?1 WHERE id = ?2" },
    [JSTMT_REQUEST_RESUMED] = { "mark resumed",
        "UPDATE requests SET resumed_session = ?1 WHERE id = ?2" },
    /* A success wins over an error, then the oldest
     * (requests_command_args_prefix finds the candidates). */
    [JSTMT_REPLAY_FIND] = { "replay lookup",
        "SELECT id, result FROM requests WHERE" SAME_REQUEST_EARLIER
        " AND state = '" JOURNAL_COMPLETED "'"
        " ORDER BY result IS NOT 'NULL' AND result NOT LIKE 'NULL %', id LIMIT 1" },
    [JSTMT_REPLAY_MARK] = { "replay mark",
        "UPDATE requests SET state = '" JOURNAL_DELIVERED "',"
        " delivered_at = ?5, replayed_by = ?6 WHERE" SAME_REQUEST_EARLIER
        " AND state = '" JOURNAL_COMPLETED "'" },
    /*
     * The client confirmed an earlier run's submit of batch (?1, ?2) in
     * session ?3 without re-issuing it: a status query gave it a group of
     * the batch's jobs (issue 19).  The submit is then answered, like one
     * replayed: not undelivered, not kept for replay.  A re-issue still
     * finds it (SAME_REQUEST_EARLIER ignores confirmed_in) and marks it
     * replayed_by as before.
     */
    [JSTMT_REQUEST_CONFIRM] = { "confirm submit by query",
        "UPDATE requests SET confirmed_in = ?3"
        " WHERE id = (SELECT request_id FROM batches WHERE project_id = ?1 AND name = ?2)"
        " AND session_id < ?3 AND state <> '" JOURNAL_DELIVERED "'"
        " AND closed_at IS NULL AND replayed_by IS NULL AND confirmed_in IS NULL" },
    /*
     * Retention (journal_prune.c): the text of an answered submit whose
     * batch stores its job-set identity serves nothing any more (re-issues
     * are matched on the identity; replay and recovery only read
     * unanswered rows): a short note replaces it.  A 10,000-job submit's
     * text is about 1.3 MB (in the row; before 0014 also in the index).
     */
    [JSTMT_REQUESTS_COMPACT_SUBMITS] = { "compact submit texts",
        "UPDATE requests SET args = '(submit text of ' || length(args)"
        " || ' characters dropped: its batch''s job_set_md5 identifies it)'"
        " WHERE command = 'BOINC_SUBMIT' AND completed_at IS NOT NULL"
        " AND (state = '" JOURNAL_DELIVERED "' OR replayed_by IS NOT NULL"
        "      OR closed_at IS NOT NULL OR confirmed_in IS NOT NULL)"
        " AND id IN (SELECT request_id FROM batches WHERE job_set_md5 IS NOT NULL)"
        " AND substr(args, 1, 16) <> '(submit text of '" },
    [JSTMT_SUPERSEDE] = { "supersede",
        "UPDATE requests SET replayed_by = ?5 WHERE" SAME_REQUEST_EARLIER
        " AND id <> ?5" },
    /* The same for a submit found by its batch's job-set identity: the
     * earlier request is the batch's owner row, whatever its text (HTCondor
     * re-issues a submit with its jobs in another order).  Like
     * SAME_REQUEST_EARLIER, confirmed_in does not stop it. */
    [JSTMT_SUPERSEDE_SUBMIT] = { "supersede submit",
        "UPDATE requests SET replayed_by = ?3 WHERE id = ?1 AND id <> ?3"
        " AND command = 'BOINC_SUBMIT' AND session_id < ?2"
        " AND closed_at IS NULL AND replayed_by IS NULL"
        " AND state <> '" JOURNAL_DELIVERED "'" },
};

static long long last_rowid(journal *j)
{
    return sqlite3_last_insert_rowid(journal_db(j));
}

/* ---- sessions ------------------------------------------------------------ */

typedef struct {
    const char *version;
    long long *session_id;
} session_new;

static int session_insert(journal *j, void *arg)
{
    session_new *s = arg;
    if (journal_run(j, JSTMT_SESSION_INSERT, "dit", journal_now(), (long long)getpid(),
                    s->version) != 0)
        return -1;
    *s->session_id = last_rowid(j);
    return 0;
}

int journal_session_begin(journal *j, const char *version, long long *session_id)
{
    session_new s = { version, session_id };
    return journal_txn(j, session_insert, &s);
}

int journal_session_set_condor_version(journal *j, long long session_id,
                                       const char *condor_version)
{
    return journal_run_txn(j, JSTMT_SESSION_CONDOR_VERSION, "ti", condor_version,
                           session_id);
}

int journal_session_end(journal *j, long long session_id, int clean)
{
    return journal_run_txn(j, JSTMT_SESSION_END, "dii", journal_now(),
                           (long long)(clean != 0), session_id);
}

/* ---- projects ------------------------------------------------------------ */

/*
 * A URL's password ("scheme://user:PASS@host/...") is a secret (issue 10
 * #11): split url into the form the views show, with "***" for it, and
 * the password (NULL when there is none).  Both malloc'd; -1 on ENOMEM.
 */
static int split_url_password(const char *url, char **shown, char **password)
{
    *shown = NULL;
    *password = NULL;
    const char *host = strstr(url, "://");
    size_t auth_len = host != NULL ? strcspn(host + 3, "/") : 0;
    const char *at = NULL, *colon = NULL;
    for (size_t i = 0; host != NULL && i < auth_len; i++)
        if (host[3 + i] == '@')
            at = host + 3 + i;      /* the last '@' ends the user info */
    if (at != NULL)
        colon = memchr(host + 3, ':', (size_t)(at - (host + 3)));
    if (colon == NULL || colon + 1 == at) {
        *shown = strdup(url);
        return *shown != NULL ? 0 : -1;
    }
    *password = strndup(colon + 1, (size_t)(at - colon - 1));
    *shown = str_printf("%.*s***%s", (int)(colon + 1 - url), url, at);
    return *shown != NULL && *password != NULL ? 0 : -1;
}

static void free_secret(char *s)
{
    if (s != NULL)
        memset(s, 0, strlen(s));
    free(s);
}

typedef struct {
    const char *url;            /* as shown: a password is "***" */
    const char *password;       /* NULL: none */
    const char *authenticator;
    long long *project_id;
} project_key;

static int project_find_or_insert(journal *j, void *arg)
{
    const project_key *k = arg;
    int rc = journal_query(j, JSTMT_PROJECT_FIND, "tt", k->url, k->authenticator);
    if (rc == 1)
        *k->project_id = sqlite3_column_int64(journal_row(j, JSTMT_PROJECT_FIND), 0);
    journal_reset(j, JSTMT_PROJECT_FIND);
    if (rc < 0)
        return -1;
    /* known: keep its stored password current (it may have changed) */
    if (rc == 1)
        return journal_run(j, JSTMT_PROJECT_PASSWORD, "tit", k->password, *k->project_id,
                           k->password);
    if (journal_run(j, JSTMT_PROJECT_INSERT, "ttdt", k->url, k->authenticator,
                    journal_now(), k->password) != 0)
        return -1;
    *k->project_id = last_rowid(j);
    return 0;
}

int journal_project_id(journal *j, const char *url, const char *authenticator,
                       long long *project_id)
{
    char *shown, *password;
    int rc = -1;
    if (split_url_password(url, &shown, &password) == 0) {
        project_key k = { shown, password, authenticator, project_id };
        /* the reader's group commit calls this inside its transaction */
        rc = journal_in_txn(j) ? project_find_or_insert(j, &k)
                               : journal_txn(j, project_find_or_insert, &k);
    } else {
        rc = journal_refuse(j, "project", "out of memory");
    }
    free(shown);
    free_secret(password);
    return rc;
}

int journal_project_status_seq(journal *j, long long project_id, long long *seq)
{
    *seq = 0;
    int rc = journal_query(j, JSTMT_PROJECT_STATUS_SEQ, "i", project_id);
    if (rc == 1)
        *seq = sqlite3_column_int64(journal_row(j, JSTMT_PROJECT_STATUS_SEQ), 0);
    journal_reset(j, JSTMT_PROJECT_STATUS_SEQ);
    return rc < 0 ? -1 : 0;
}

/* ---- requests ------------------------------------------------------------ */

int journal_request_insert(journal *j, long long session_id, long client_id,
                           const char *command, const char *args_text,
                           long long project_id, double accepted_at,
                           long long *request_row)
{
    if (journal_run(j, JSTMT_REQUEST_INSERT, "iittkd", session_id, (long long)client_id,
                    command, args_text, project_id, accepted_at) != 0)
        return -1;
    *request_row = last_rowid(j);
    return 0;
}

typedef struct {
    const journal_completion *c;
    size_t n;
} completions;

static int complete_rows(journal *j, void *arg)
{
    const completions *cs = arg;
    for (size_t i = 0; i < cs->n; i++) {
        const journal_completion *c = &cs->c[i];
        if (journal_run(j, JSTMT_REQUEST_COMPLETE, "ddtii", c->started_at, c->completed_at,
                        c->result, (long long)(c->transient != 0), c->request_row) != 0)
            return -1;
        if (c->transient && journal_run(j, JSTMT_TRANSIENT_RESULT_STORE, "it",
                                        c->request_row, c->result) != 0)
            return -1;
    }
    return 0;
}

int journal_requests_complete(journal *j, const journal_completion *c, size_t n)
{
    if (n == 0)
        return 0;
    completions cs = { c, n };
    return journal_txn(j, complete_rows, &cs);
}

/* Statement id (?1 a value, ?2 a request row) for each of n rows, in one
 * transaction. */
typedef struct {
    jstmt id;
    const long long *rows;
    size_t n;
    char type;                  /* 'd' or 'i': the value's */
    double dval;
    long long ival;
} row_update;

static int update_each_row(journal *j, void *arg)
{
    const row_update *u = arg;
    for (size_t i = 0; i < u->n; i++) {
        int rc = u->type == 'd' ? journal_run(j, u->id, "di", u->dval, u->rows[i])
                                : journal_run(j, u->id, "ii", u->ival, u->rows[i]);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int update_rows(journal *j, row_update *u)
{
    return u->n == 0 ? 0 : journal_txn(j, update_each_row, u);
}

typedef struct {
    const long long *rows;
    size_t n;
    double at;
} delivery;

/* Each row delivered, and its transient result (if any) gone with it. */
static int deliver_rows(journal *j, void *arg)
{
    const delivery *d = arg;
    for (size_t i = 0; i < d->n; i++)
        if (journal_run(j, JSTMT_REQUEST_DELIVERED, "di", d->at, d->rows[i]) != 0 ||
            journal_run(j, JSTMT_TRANSIENT_RESULT_DROP, "i", d->rows[i]) != 0)
            return -1;
    return 0;
}

int journal_requests_delivered(journal *j, const long long *rows, size_t n,
                               double delivered_at)
{
    delivery d = { rows, n, delivered_at };
    return n == 0 ? 0 : journal_txn(j, deliver_rows, &d);
}

int journal_request_args(journal *j, long long request_row, char **args)
{
    *args = NULL;
    int rc = journal_query(j, JSTMT_REQUEST_ARGS, "i", request_row);
    if (rc == 1) {
        const unsigned char *t = sqlite3_column_text(journal_row(j, JSTMT_REQUEST_ARGS), 0);
        if (t != NULL && (*args = strdup((const char *)t)) == NULL)
            rc = journal_refuse(j, "request args lookup", "out of memory");
    }
    journal_reset(j, JSTMT_REQUEST_ARGS);
    return rc < 0 ? -1 : 0;
}

/* ---- scans: recovery and the request iterator ---------------------------- */

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* Step the query id (already bound and stepped once: first = its first
 * result) over REQUEST_COLUMNS rows, calling cb per row.  A non-zero cb
 * return stops and is returned. */
static int request_rows(journal *j, jstmt id, int first, journal_request_cb cb, void *arg)
{
    int rc = first, stopped = 0;
    while (rc == 1) {
        sqlite3_stmt *st = journal_row(j, id);
        journal_request_row row = {
            sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
            (long)sqlite3_column_int64(st, 2), col_text(st, 3), col_text(st, 4),
            sqlite3_column_int64(st, 5), col_text(st, 6), col_text(st, 7),
            col_text(st, 8), col_text(st, 9)
        };
        stopped = cb(&row, arg);
        if (stopped != 0)
            break;
        rc = journal_next(j, id);
    }
    journal_reset(j, id);
    if (stopped != 0)
        return stopped;
    return rc < 0 ? -1 : 0;
}

int journal_recovery_scan(journal *j, long long session_id,
                          journal_request_cb cb, void *arg)
{
    int first = journal_query(j, JSTMT_RECOVERY_SCAN, "i", session_id);
    return request_rows(j, JSTMT_RECOVERY_SCAN, first, cb, arg);
}

int journal_requests_close(journal *j, const long long *rows, size_t n)
{
    row_update u = { JSTMT_REQUEST_CLOSE, rows, n, 'd', journal_now(), 0 };
    return update_rows(j, &u);
}

int journal_requests_resumed(journal *j, const long long *rows, size_t n,
                             long long session_id)
{
    row_update u = { JSTMT_REQUEST_RESUMED, rows, n, 'i', 0.0, session_id };
    return update_rows(j, &u);
}

/* ---- replay -------------------------------------------------------------- */

typedef struct {
    const char *command, *args;
    long long project_id, session_id, new_row;
    char *stored;               /* the result taken (malloc'd) */
} replay;

static int replay_in_txn(journal *j, void *arg)
{
    replay *r = arg;
    int rc = journal_query(j, JSTMT_REPLAY_FIND, "ttii", r->command, r->args,
                           r->project_id, r->session_id);
    if (rc == 1) {
        const char *t = col_text(journal_row(j, JSTMT_REPLAY_FIND), 1);
        r->stored = strdup(t ? t : "NULL");
    }
    journal_reset(j, JSTMT_REPLAY_FIND);
    if (rc <= 0)
        return rc;              /* none (nothing written), or an error */
    /* Every stored result of this request is answered by the re-issue. */
    if (r->stored == NULL)
        return journal_refuse(j, "replay lookup", "out of memory");
    return journal_run(j, JSTMT_REPLAY_MARK, "ttiidi", r->command, r->args, r->project_id,
                       r->session_id, journal_now(), r->new_row);
}

int journal_replay_take(journal *j, const char *command, const char *args,
                        long long project_id, long long session_id,
                        long long new_row, char **result)
{
    replay r = { command, args, project_id, session_id, new_row, NULL };
    *result = NULL;
    if (journal_txn(j, replay_in_txn, &r) != 0) {
        free(r.stored);
        return -1;
    }
    *result = r.stored;
    return 0;
}

int journal_supersede(journal *j, const char *command, const char *args,
                      long long project_id, long long session_id, long long new_row)
{
    return journal_run_txn(j, JSTMT_SUPERSEDE, "ttiii", command, args, project_id,
                           session_id, new_row);
}

int journal_supersede_submit(journal *j, long long earlier_row, long long session_id,
                             long long new_row)
{
    return journal_run_txn(j, JSTMT_SUPERSEDE_SUBMIT, "iii", earlier_row, session_id,
                           new_row);
}
