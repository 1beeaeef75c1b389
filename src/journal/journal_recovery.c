/*
 * journal_recovery.c - SQL of crash recovery (part of the journal module).
 */
#include "journal/journal_recovery.h"

#include "journal/journal_internal.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

int journal_recovery_scan(journal *j, long long session_id,
                          journal_request_cb cb, void *arg)
{
    sqlite3_stmt *st;
    /* requests_state (state, id) serves this: undelivered rows only. */
    if (sqlite3_prepare_v2(journal_db(j),
            "SELECT " JOURNAL_REQUEST_COLUMNS " FROM requests r LEFT JOIN projects p ON p.id = r.project_id"
            " WHERE r.state IN ('" JOURNAL_ACCEPTED "', '" JOURNAL_COMPLETED "')"
            " AND r.session_id < ?1"
            " AND r.closed_at IS NULL AND r.replayed_by IS NULL ORDER BY r.id",
            -1, &st, NULL) != SQLITE_OK)
        return journal_fail(j, "recovery scan");
    sqlite3_bind_int64(st, 1, session_id);
    return journal_step_request_rows(j, st, "recovery scan", cb, arg);
}

typedef struct {
    const long long *rows;
    int is_double;
    double dval;
    long long ival;
} row_update;

static void bind_row_update(sqlite3_stmt *st, size_t i, void *arg)
{
    const row_update *u = arg;
    if (u->is_double)
        sqlite3_bind_double(st, 1, u->dval);
    else
        sqlite3_bind_int64(st, 1, u->ival);
    sqlite3_bind_int64(st, 2, u->rows[i]);
}

int journal_requests_close(journal *j, const long long *rows, size_t n)
{
    row_update u = { rows, 1, journal_now(), 0 };
    return journal_run_each(j, "UPDATE requests SET closed_at = ?1 WHERE id = ?2",
                            "close requests", n, bind_row_update, &u);
}

int journal_requests_resumed(journal *j, const long long *rows, size_t n,
                             long long session_id)
{
    row_update u = { rows, 0, 0.0, session_id };
    return journal_run_each(j, "UPDATE requests SET resumed_session = ?1 WHERE id = ?2",
                            "mark resumed", n, bind_row_update, &u);
}

/* The rows of earlier sessions that a re-issue of (command, args, project)
 * answers: neither delivered, closed nor already answered. */
#define SAME_REQUEST_EARLIER \
    " command = ?1 AND args = ?2 AND project_id = ?3 AND session_id < ?4" \
    " AND closed_at IS NULL AND replayed_by IS NULL AND state <> '" JOURNAL_DELIVERED "'"

static void bind_same_request(sqlite3_stmt *st, const char *command, const char *args,
                              long long project_id, long long session_id)
{
    sqlite3_bind_text(st, 1, command, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, args, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, project_id);
    sqlite3_bind_int64(st, 4, session_id);
}

int journal_replay_take(journal *j, const char *command, const char *args,
                        long long project_id, long long session_id,
                        long long new_row, char **result)
{
    *result = NULL;
    if (journal_begin(j) != 0)
        return -1;
    sqlite3_stmt *st;
    /* A success wins over an error, then the oldest (requests_command_args
     * finds the candidates). */
    if (sqlite3_prepare_v2(journal_db(j),
            "SELECT id, result FROM requests WHERE" SAME_REQUEST_EARLIER
            " AND state = '" JOURNAL_COMPLETED "'"
            " ORDER BY result IS NOT 'NULL' AND result NOT LIKE 'NULL %', id LIMIT 1",
            -1, &st, NULL) != SQLITE_OK) {
        journal_fail(j, "replay lookup");
        journal_rollback(j);
        return -1;
    }
    bind_same_request(st, command, args, project_id, session_id);
    int rc = sqlite3_step(st);
    char *stored = NULL;
    if (rc == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 1);
        stored = strdup(t ? t : "NULL");
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        journal_fail(j, "replay lookup");
        journal_rollback(j);
        return -1;
    }
    if (rc == SQLITE_DONE) {
        journal_rollback(j);
        return 0;
    }
    /* Every stored result of this request is answered by the re-issue. */
    if (stored == NULL ||
        journal_run(j, "UPDATE requests SET state = '" JOURNAL_DELIVERED "',"
                       " delivered_at = ?5, replayed_by = ?6 WHERE" SAME_REQUEST_EARLIER
                       " AND state = '" JOURNAL_COMPLETED "'",
                    "replay mark", "ttiidi", command, args,
                    project_id, session_id, journal_now(),
                    new_row) != 0) {
        free(stored);
        journal_rollback(j);
        return -1;
    }
    if (journal_commit(j) != 0) {
        free(stored);
        return -1;
    }
    *result = stored;
    return 0;
}

int journal_supersede(journal *j, const char *command, const char *args,
                      long long project_id, long long session_id, long long new_row)
{
    if (journal_begin(j) != 0)
        return -1;
    if (journal_run(j, "UPDATE requests SET replayed_by = ?5 WHERE" SAME_REQUEST_EARLIER
                       " AND id <> ?5",
                    "supersede", "ttiii", command, args,
                    project_id, session_id, new_row) != 0) {
        journal_rollback(j);
        return -1;
    }
    return journal_commit(j);
}
