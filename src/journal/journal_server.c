/*
 * journal_server.c - learned upload limits and job-to-batch look-ups
 * (journal_server.h).
 */
#include "journal/journal_server.h"

#include "journal/journal_internal.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

int journal_upload_limits_get(journal *j, long long project_id, long *max_files,
                              long long *max_bytes, int *found)
{
    sqlite3_stmt *st = NULL;
    *found = 0;
    if (sqlite3_prepare_v2(journal_db(j),
                           "SELECT max_files, max_bytes FROM upload_limits WHERE project_id = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return journal_fail(j, "prepare upload limits read");
    int rc = 0;
    if (sqlite3_bind_int64(st, 1, project_id) != SQLITE_OK) {
        rc = journal_fail(j, "bind upload limits read");
    } else {
        int step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            *found = 1;
            *max_files = (long)sqlite3_column_int64(st, 0);
            *max_bytes = sqlite3_column_int64(st, 1);
        } else if (step != SQLITE_DONE) {
            rc = journal_fail(j, "read upload limits");
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int journal_upload_limits_learn(journal *j, long long project_id, long max_files,
                                long long max_bytes, const char *reason, double now)
{
    return journal_run(j,
                       "INSERT INTO upload_limits(project_id, max_files, max_bytes, learned_at, reason)"
                       " VALUES(?1, ?2, ?3, ?4, ?5)"
                       " ON CONFLICT(project_id) DO UPDATE SET"
                       "  max_files = min(max_files, excluded.max_files),"
                       "  max_bytes = min(max_bytes, excluded.max_bytes),"
                       "  learned_at = excluded.learned_at, reason = excluded.reason",
                       "learn upload limits", "iiidt", project_id, (long long)max_files,
                       max_bytes, now, reason);
}

/* The newest batch of the project created on the server that holds a job
 * of that name (job names are unique on a server, but a journal may span
 * server resets).  Probes (batch_id, name) in the jobs' unique index for
 * each batch of the project, newest first: no full scan of jobs, which
 * holds every job ever submitted (a fetch looks its job up). */
static const char SQL_JOB_BATCH[] =
    "SELECT b.server_batch_id, b.app FROM batches b"
    " JOIN jobs ON jobs.batch_id = b.id AND jobs.name = ?2"
    " WHERE b.project_id = ?1 AND b.server_batch_id > 0 ORDER BY b.id DESC LIMIT 1";

/* That batch's server id and (app != NULL) app, malloc'd. */
static int job_batch(journal *j, long long project_id, const char *job,
                     long long *server_batch_id, char **app, int *found)
{
    sqlite3_stmt *st = NULL;
    *found = 0;
    if (app != NULL)
        *app = NULL;
    if (sqlite3_prepare_v2(journal_db(j), SQL_JOB_BATCH, -1, &st, NULL) != SQLITE_OK)
        return journal_fail(j, "prepare job batch read");
    int rc = 0;
    if (sqlite3_bind_int64(st, 1, project_id) != SQLITE_OK ||
        sqlite3_bind_text(st, 2, job, -1, SQLITE_STATIC) != SQLITE_OK) {
        rc = journal_fail(j, "bind job batch read");
    } else {
        int step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            if (server_batch_id != NULL)
                *server_batch_id = sqlite3_column_int64(st, 0);
            const char *text = (const char *)sqlite3_column_text(st, 1);
            if (app != NULL && (*app = text != NULL ? strdup(text) : NULL) == NULL)
                rc = -1;        /* out of memory (a NOT NULL column) */
            else
                *found = 1;
        } else if (step != SQLITE_DONE) {
            rc = journal_fail(j, "read job batch");
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int journal_job_server_batch(journal *j, long long project_id, const char *job,
                             long long *server_batch_id, int *found)
{
    return job_batch(j, project_id, job, server_batch_id, NULL, found);
}

int journal_job_app(journal *j, long long project_id, const char *job,
                    char **app, int *found)
{
    return job_batch(j, project_id, job, NULL, app, found);
}
