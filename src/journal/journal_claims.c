/*
 * journal_claims.c - table output_claims: the output paths jobs write,
 * so that no two live jobs write one path (see journal_claims.h).
 */
#include "journal/journal_claims.h"

#include "journal/journal_internal.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

const journal_sql journal_sql_claims[JSTMT_COUNT] = {
    [JSTMT_CLAIM_GET] = { "read output claim",
        "SELECT job, released_at FROM output_claims WHERE path = ?1" },
    /* A claim of the same job that is still live stays live (a BLAH job's
     * fetch runs through the 9.0 fetch). */
    [JSTMT_CLAIM_PUT] = { "record output claim",
        "INSERT INTO output_claims (path, job, claimed_at, released_at) VALUES (?1, ?2, ?3, ?4)"
        " ON CONFLICT (path) DO UPDATE SET job = excluded.job, claimed_at = excluded.claimed_at,"
        " released_at = excluded.released_at"
        " WHERE output_claims.job <> excluded.job OR output_claims.released_at IS NOT NULL" },
    [JSTMT_CLAIM_RELEASE_BLAH] = { "release BLAH output claims",
        "UPDATE output_claims SET released_at = ?2 WHERE released_at IS NULL"
        " AND job = (SELECT gahp_id FROM blah_jobs WHERE id = ?1)" },
    [JSTMT_CLAIM_SINCE] = { "read job submit time",
        "SELECT max(b.created_at) FROM jobs jb JOIN batches b ON b.id = jb.batch_id"
        " WHERE b.project_id = ?1 AND jb.name = ?2" },
    [JSTMT_CLAIMS_PRUNE] = { "prune output claims",
        "DELETE FROM output_claims WHERE released_at IS NOT NULL AND released_at < ?1" },
};

void journal_claim_conflict_free(journal_claim_conflict *c)
{
    free(c->job);
    free(c->path);
    memset(c, 0, sizeof *c);
}

/* 0 free (or this job's own), 1 held by another job (*c filled), -1. */
static int check_one(journal *j, const char *job, const char *path, double since,
                     journal_claim_conflict *c)
{
    int rc = journal_query(j, JSTMT_CLAIM_GET, "t", path);
    if (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_CLAIM_GET);
        const char *other = (const char *)sqlite3_column_text(st, 0);
        int live = sqlite3_column_type(st, 1) == SQLITE_NULL;
        double released = sqlite3_column_double(st, 1);
        if (other != NULL && strcmp(other, job) != 0 && (live || released > since)) {
            c->job = strdup(other);
            c->path = strdup(path);
            rc = c->job != NULL && c->path != NULL
                     ? 1 : journal_refuse(j, "read output claim", "out of memory");
        } else {
            rc = 0;
        }
    }
    journal_reset(j, JSTMT_CLAIM_GET);
    return rc;
}

int journal_claims_take(journal *j, const char *job, const char *const *paths, size_t n,
                        double since, double now, int live, journal_claim_conflict *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < n; i++) {
        int rc = check_one(j, job, paths[i], since, c);
        if (rc == 0)
            rc = live ? journal_run(j, JSTMT_CLAIM_PUT, "ttdt", paths[i], job, now, (const char *)NULL)
                      : journal_run(j, JSTMT_CLAIM_PUT, "ttdd", paths[i], job, now, now);
        if (rc != 0) {
            if (rc < 0)
                journal_claim_conflict_free(c);
            return rc;
        }
    }
    return 0;
}

typedef struct {
    long long project_id;
    const char *job;
    const char *const *paths;
    size_t n;
    double now;
    journal_claim_conflict *c;
} fetch_txn;

static int fetch_claims(journal *j, void *arg)
{
    fetch_txn *t = arg;
    double since = t->now;
    int rc = journal_query(j, JSTMT_CLAIM_SINCE, "it", t->project_id, t->job);
    if (rc == 1 && sqlite3_column_type(journal_row(j, JSTMT_CLAIM_SINCE), 0) != SQLITE_NULL)
        since = sqlite3_column_double(journal_row(j, JSTMT_CLAIM_SINCE), 0);
    journal_reset(j, JSTMT_CLAIM_SINCE);
    if (rc < 0)
        return -1;
    return journal_claims_take(j, t->job, t->paths, t->n, since, t->now, 0, t->c);
}

/* 1 when job holds a live claim on every path (a BLAH job's fetch: its
 * claims were taken when it was accepted), 0 when not, -1. */
static int all_live_own(journal *j, const char *job, const char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = journal_query(j, JSTMT_CLAIM_GET, "t", paths[i]);
        if (rc == 1) {
            sqlite3_stmt *st = journal_row(j, JSTMT_CLAIM_GET);
            const char *owner = (const char *)sqlite3_column_text(st, 0);
            rc = owner != NULL && strcmp(owner, job) == 0 &&
                 sqlite3_column_type(st, 1) == SQLITE_NULL;
        }
        journal_reset(j, JSTMT_CLAIM_GET);
        if (rc != 1)
            return rc;
    }
    return 1;
}

int journal_claims_fetch(journal *j, long long project_id, const char *job,
                         const char *const *paths, size_t n, double now,
                         journal_claim_conflict *c)
{
    memset(c, 0, sizeof *c);
    if (n == 0)
        return 0;
    /* nothing to write: no write transaction (no commit per BLAH fetch) */
    int own = all_live_own(j, job, paths, n);
    if (own != 0)
        return own == 1 ? 0 : -1;
    fetch_txn t = { project_id, job, paths, n, now, c };
    int rc = journal_txn(j, fetch_claims, &t);
    if (rc != 1)
        journal_claim_conflict_free(c);
    return rc;
}

int journal_claims_release_blah(journal *j, long long blah_row, double now)
{
    return journal_run(j, JSTMT_CLAIM_RELEASE_BLAH, "id", blah_row, now);
}

int journal_claims_prune(journal *j, double cutoff, long long *deleted)
{
    if (journal_run(j, JSTMT_CLAIMS_PRUNE, "d", cutoff) != 0)
        return -1;
    *deleted += sqlite3_changes(journal_db(j));
    return 0;
}
