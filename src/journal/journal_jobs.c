/*
 * journal_jobs.c - SQL of the query and management commands: last job
 * status seen on the server, retired batches, leases (journal_jobs.h).
 *
 * Uses the connection's sqlite3* (journal_db) and the process-wide write
 * transaction of journal_begin/commit; statements are prepared per call
 * (these commands are rare compared to a query's network round trip).
 */
#include "journal/journal_jobs.h"

#include "journal/journal_internal.h"

#include "base/log.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static int prepare(journal *j, const char *sql, sqlite3_stmt **st,
                   const char *what)
{
    if (sqlite3_prepare_v2(journal_db(j), sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return journal_fail(j, what);
    }
    return 0;
}

/* The status update of one job; bound and stepped once per job.  A changed
 * row takes the project's next change number (the counter itself moves
 * once per reply, after the rows: journal_jobs_record_statuses). */
static const char SQL_UPDATE_STATUS[] =
    "UPDATE jobs SET status = ?1, updated_at = ?2,"
    "       status_seq = (SELECT status_seq + 1 FROM projects WHERE id = ?4)"
    " WHERE name = ?3"
    "   AND batch_id = (SELECT id FROM batches WHERE project_id = ?4 AND name = ?5)"
    /* updated_at means "when status last changed": leave equal rows be. */
    "   AND status IS NOT ?1";

static int update_one(journal *j, sqlite3_stmt *st, long long project_id,
                      const char *batch, const journal_job_status *job,
                      double now, long long *changed)
{
    sqlite3_reset(st);
    if (sqlite3_bind_text(st, 1, job->status, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_double(st, 2, now) != SQLITE_OK ||
        sqlite3_bind_text(st, 3, job->name, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_int64(st, 4, project_id) != SQLITE_OK ||
        sqlite3_bind_text(st, 5, batch, -1, SQLITE_STATIC) != SQLITE_OK)
        return journal_fail(j, "bind job status");
    if (sqlite3_step(st) != SQLITE_DONE)
        return journal_fail(j, "update job status");
    *changed += sqlite3_changes(journal_db(j));
    return 0;
}

/* Batches whose recorded reply is newer than this one are left alone. */
static const char SQL_BATCH_CURRENT[] =
    "SELECT 1 FROM batches WHERE project_id = ?1 AND name = ?2"
    "   AND (status_server_time IS NULL OR status_server_time <= ?3)";

static const char SQL_SET_SERVER_TIME[] =
    "UPDATE batches SET status_server_time = ?3"
    " WHERE project_id = ?1 AND name = ?2"
    "   AND EXISTS (SELECT 1 FROM jobs WHERE jobs.batch_id = batches.id)";

/* Is the reply at server_time at least as new as the batch's record?
 * Also stores it when so.  *current = 1 or 0. */
static int batch_reply_current(journal *j, long long project_id,
                               const char *batch, double server_time,
                               int *current)
{
    *current = 1;
    if (server_time <= 0)
        return 0;
    sqlite3_stmt *st = NULL;
    if (prepare(j, SQL_BATCH_CURRENT, &st, "prepare batch reply check") != 0)
        return -1;
    sqlite3_bind_int64(st, 1, project_id);
    sqlite3_bind_text(st, 2, batch, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, server_time);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return journal_fail(j, "batch reply check");
    *current = rc == SQLITE_ROW;
    if (!*current)
        return 0;
    return journal_run(j, SQL_SET_SERVER_TIME, "record batch server time", "itd",
                       project_id, batch, server_time);
}

static int record_batch(journal *j, sqlite3_stmt *st, long long project_id,
                        const journal_batch_report *rep, double server_time,
                        double now, long long *n)
{
    int current = 1;
    if (batch_reply_current(j, project_id, rep->batch, server_time, &current) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && current && i < rep->njobs; i++)
        rc = update_one(j, st, project_id, rep->batch, &rep->jobs[i], now, n);
    return rc;
}

int journal_jobs_record_statuses(journal *j, long long project_id,
                                 const journal_batch_report *reports,
                                 size_t nreports, double server_time,
                                 double now, long long *changed)
{
    long long n = 0;
    sqlite3_stmt *st = NULL;
    if (changed != NULL)
        *changed = 0;
    if (prepare(j, SQL_UPDATE_STATUS, &st, "prepare job status update") != 0)
        return -1;
    if (journal_begin(j) != 0) {
        sqlite3_finalize(st);
        return -1;
    }
    int rc = 0;
    for (size_t b = 0; rc == 0 && b < nreports; b++)
        rc = record_batch(j, st, project_id, &reports[b], server_time, now, &n);
    sqlite3_finalize(st);
    /* An unchanged poll writes nothing here: the counter moves only when
     * some job took its next number. */
    if (rc == 0 && n > 0)
        rc = journal_run(j, "UPDATE projects SET status_seq = status_seq + 1 WHERE id = ?1",
                         "advance status change number", "i", project_id);
    if (rc == 0)
        rc = journal_commit(j);
    else
        journal_rollback(j);
    if (rc == 0 && changed != NULL)
        *changed = n;
    return rc;
}

int journal_jobs_poll_state(journal *j, long long project_id, const char *batch,
                            journal_batch_poll *out)
{
    sqlite3_stmt *st = NULL;
    memset(out, 0, sizeof *out);
    if (prepare(j,
                "SELECT (SELECT count(*) FROM jobs WHERE jobs.batch_id = b.id),"
                "       b.status_server_time, b.client_session"
                "  FROM batches b WHERE b.project_id = ?1 AND b.name = ?2",
                &st, "prepare batch poll state") != 0)
        return -1;
    sqlite3_bind_int64(st, 1, project_id);
    sqlite3_bind_text(st, 2, batch, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->njobs = sqlite3_column_int64(st, 0);
        out->has_server_time = sqlite3_column_type(st, 1) != SQLITE_NULL;
        out->server_time = sqlite3_column_double(st, 1);
        out->client_session = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return journal_fail(j, "batch poll state");
    return 0;
}

int journal_jobs_each(journal *j, long long project_id, const char *batch,
                      long long since, journal_job_visit_fn visit, void *arg, size_t *n)
{
    sqlite3_stmt *st = NULL;
    *n = 0;
    /* Every row: in insertion order.  Changed rows: through the
     * (batch_id, status_seq) index, which reads only those. */
    if (prepare(j, since < 0
                ? "SELECT jobs.name, jobs.status FROM jobs JOIN batches"
                  "  ON jobs.batch_id = batches.id"
                  " WHERE batches.project_id = ?1 AND batches.name = ?2"
                  "   AND jobs.aborted = 0"
                  " ORDER BY jobs.id"
                : "SELECT jobs.name, jobs.status FROM jobs JOIN batches"
                  "  ON jobs.batch_id = batches.id"
                  " WHERE batches.project_id = ?1 AND batches.name = ?2"
                  "   AND jobs.status_seq > ?3 AND jobs.aborted = 0",
                &st, "prepare job list") != 0)
        return -1;
    sqlite3_bind_int64(st, 1, project_id);
    sqlite3_bind_text(st, 2, batch, -1, SQLITE_STATIC);
    if (since >= 0)
        sqlite3_bind_int64(st, 3, since);
    int rc, stopped = 0;
    while (stopped == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(st, 0);
        const unsigned char *status = sqlite3_column_text(st, 1);
        stopped = visit(arg, name ? (const char *)name : "", (const char *)status);
        if (stopped == 0)
            (*n)++;
    }
    sqlite3_finalize(st);
    if (stopped != 0)
        return stopped;
    if (rc != SQLITE_DONE)
        return journal_fail(j, "job list");
    return 0;
}

/* Run one UPDATE of batches (project_id = ?1, name = ?2, updated_at = ?3,
 * and optionally a REAL ?4) in its own transaction. */
static int update_batch(journal *j, const char *sql, long long project_id,
                        const char *batch, double now, const double *value,
                        int *found, const char *what)
{
    sqlite3_stmt *st = NULL;
    if (found != NULL)
        *found = 0;
    if (prepare(j, sql, &st, what) != 0)
        return -1;
    if (sqlite3_bind_int64(st, 1, project_id) != SQLITE_OK ||
        sqlite3_bind_text(st, 2, batch, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_double(st, 3, now) != SQLITE_OK ||
        (value != NULL && sqlite3_bind_double(st, 4, *value) != SQLITE_OK)) {
        journal_fail(j, what);
        sqlite3_finalize(st);
        return -1;
    }
    if (journal_begin(j) != 0) {
        sqlite3_finalize(st);
        return -1;
    }
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : journal_fail(j, what);
    int n = sqlite3_changes(journal_db(j));
    sqlite3_finalize(st);
    if (rc == 0)
        rc = journal_commit(j);
    else
        journal_rollback(j);
    if (rc == 0 && found != NULL)
        *found = n > 0;
    return rc;
}

int journal_batch_mark_retired(journal *j, long long project_id,
                               const char *batch, double now, int *found)
{
    return update_batch(j,
                        "UPDATE batches SET retired = 1, updated_at = ?3"
                        " WHERE project_id = ?1 AND name = ?2",
                        project_id, batch, now, NULL, found,
                        "mark batch retired");
}

int journal_batch_set_lease(journal *j, long long project_id,
                            const char *batch, double lease, double now,
                            int *found)
{
    return update_batch(j,
                        "UPDATE batches SET lease = ?4, updated_at = ?3"
                        " WHERE project_id = ?1 AND name = ?2",
                        project_id, batch, now, &lease, found,
                        "record batch lease");
}

int journal_project_status_seq(journal *j, long long project_id, long long *seq)
{
    sqlite3_stmt *st = NULL;
    *seq = 0;
    if (prepare(j, "SELECT status_seq FROM projects WHERE id = ?1", &st,
                "prepare status change number") != 0)
        return -1;
    sqlite3_bind_int64(st, 1, project_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *seq = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return journal_fail(j, "status change number");
    return 0;
}

/* One write statement in a transaction of its own. */
static int run_alone(journal *j, const char *sql, const char *what, const char *types,
                     long long a, const char *b, long long c)
{
    if (journal_begin(j) != 0)
        return -1;
    if (journal_run(j, sql, what, types, a, b, c) != 0) {
        journal_rollback(j);
        return -1;
    }
    return journal_commit(j);
}

int journal_jobs_mark_aborted(journal *j, long long project_id, const char *job)
{
    return run_alone(j, "UPDATE jobs SET aborted = 1"
                        " WHERE aborted = 0 AND name = ?2 AND batch_id IN"
                        "   (SELECT id FROM batches WHERE project_id = ?1)",
                     "mark job aborted", "it", project_id, job, 0);
}

int journal_batch_set_client_session(journal *j, long long project_id, const char *batch,
                                     long long session_id)
{
    return run_alone(j, "UPDATE batches SET client_session = ?3"
                        " WHERE project_id = ?1 AND name = ?2"
                        "   AND client_session IS NOT ?3",
                     "record the client's batch", "iti", project_id, batch, session_id);
}
