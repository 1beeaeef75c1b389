/*
 * journal_recovery.c - SQL of crash recovery (part of the journal module).
 */
#include "journal_recovery.h"

#include "journal_internal.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

int journal_recovery_scan(journal *j, long long session_id,
                          journal_request_cb cb, void *arg)
{
    sqlite3_stmt *st;
    /* requests_state (state, id) serves this: undelivered rows only. */
    if (sqlite3_prepare_v2(journal_db(j),
            "SELECT r.id, r.session_id, r.client_id, r.command, r.args, r.project_id,"
            " p.url, p.authenticator, r.state, r.result"
            " FROM requests r LEFT JOIN projects p ON p.id = r.project_id"
            " WHERE r.state IN ('" JOURNAL_ACCEPTED "', '" JOURNAL_STARTED "', '"
            JOURNAL_COMPLETED "') AND r.session_id < ?1"
            " AND r.closed_at IS NULL AND r.replayed_by IS NULL ORDER BY r.id",
            -1, &st, NULL) != SQLITE_OK)
        return journal_fail(j, "recovery scan");
    sqlite3_bind_int64(st, 1, session_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        journal_request_row row = {
            sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
            (long)sqlite3_column_int64(st, 2), col_text(st, 3), col_text(st, 4),
            sqlite3_column_int64(st, 5), col_text(st, 6), col_text(st, 7),
            col_text(st, 8), col_text(st, 9)
        };
        int r = cb(&row, arg);
        if (r != 0) {
            sqlite3_finalize(st);
            return r;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return journal_fail(j, "recovery scan");
    return 0;
}

/* One UPDATE per row, all in one transaction: binds (value, row). */
static int update_rows(journal *j, const char *sql, const char *what,
                       const long long *rows, size_t n, int bind_double,
                       double dval, long long ival)
{
    if (n == 0)
        return 0;
    if (journal_begin(j) != 0)
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(journal_db(j), sql, -1, &st, NULL) != SQLITE_OK) {
        journal_fail(j, what);
        journal_rollback(j);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (bind_double)
            sqlite3_bind_double(st, 1, dval);
        else
            sqlite3_bind_int64(st, 1, ival);
        sqlite3_bind_int64(st, 2, rows[i]);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) {
            journal_fail(j, what);
            sqlite3_finalize(st);
            journal_rollback(j);
            return -1;
        }
    }
    sqlite3_finalize(st);
    return journal_commit(j);
}

int journal_requests_close(journal *j, const long long *rows, size_t n)
{
    return update_rows(j, "UPDATE requests SET closed_at = ?1 WHERE id = ?2",
                       "close requests", rows, n, 1, journal_now(), 0);
}

int journal_requests_resumed(journal *j, const long long *rows, size_t n,
                             long long session_id)
{
    return update_rows(j, "UPDATE requests SET resumed_session = ?1 WHERE id = ?2",
                       "mark resumed", rows, n, 0, 0.0, session_id);
}

int journal_replay_take(journal *j, const char *command, const char *args,
                        long long project_id, long long session_id,
                        long long new_row, const char *only_result,
                        char **result)
{
    *result = NULL;
    if (journal_begin(j) != 0)
        return -1;
    sqlite3_stmt *st;
    /* requests_command_args (command, args) finds the candidates. */
    if (sqlite3_prepare_v2(journal_db(j),
            "SELECT id, result FROM requests WHERE command = ?1 AND args = ?2"
            " AND project_id IS ?3 AND session_id < ?4 AND state = '"
            JOURNAL_COMPLETED "' AND closed_at IS NULL AND replayed_by IS NULL"
            " AND (?5 IS NULL OR result = ?5) ORDER BY id LIMIT 1",
            -1, &st, NULL) != SQLITE_OK) {
        journal_fail(j, "replay lookup");
        journal_rollback(j);
        return -1;
    }
    sqlite3_bind_text(st, 1, command, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, args, -1, SQLITE_STATIC);
    if (project_id > 0)
        sqlite3_bind_int64(st, 3, project_id);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int64(st, 4, session_id);
    if (only_result != NULL)
        sqlite3_bind_text(st, 5, only_result, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 5);
    int rc = sqlite3_step(st);
    long long old_row = 0;
    char *stored = NULL;
    if (rc == SQLITE_ROW) {
        old_row = sqlite3_column_int64(st, 0);
        const char *t = col_text(st, 1);
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
    if (stored == NULL ||
        journal_run(j, "UPDATE requests SET state = '" JOURNAL_DELIVERED "',"
                       " delivered_at = ?, replayed_by = ? WHERE id = ?",
                    "replay mark", "dii", journal_now(), new_row, old_row) != 0) {
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
