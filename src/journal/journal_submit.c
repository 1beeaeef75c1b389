/*
 * journal_submit.c - SQL for BOINC_SUBMIT's progress: batches, batch_files,
 * jobs, file_md5_cache.  Part of the journal module (the only SQL code).
 */
#include "journal/journal_submit.h"

#include "journal/journal_internal.h"
#include "base/strbuf.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

void journal_batch_free(journal_batch *b)
{
    if (b == NULL)
        return;
    free(b->name);
    free(b->app);
    free(b->error);
    free(b->spec_md5);
    free(b->job_set_md5);
    memset(b, 0, sizeof *b);
}

int journal_batch_find(journal *j, long long project_id, const char *name,
                       journal_batch *out, int *found)
{
    sqlite3_stmt *st;
    memset(out, 0, sizeof *out);
    *found = 0;
    if (sqlite3_prepare_v2(journal_db(j),
            "SELECT id, project_id, name, app, server_batch_id, state, resume_state,"
            " error, spec_md5, njobs, request_id, job_set_md5 FROM batches"
            " WHERE project_id = ?1 AND name = ?2", -1, &st, NULL) != SQLITE_OK)
        return journal_fail(j, "batch lookup");
    sqlite3_bind_int64(st, 1, project_id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->id = sqlite3_column_int64(st, 0);
        out->project_id = sqlite3_column_int64(st, 1);
        out->name = dup_col(st, 2);
        out->app = dup_col(st, 3);
        out->server_batch_id = sqlite3_column_int64(st, 4);
        out->state = (batch_state)sqlite3_column_int(st, 5);
        out->resume_state = sqlite3_column_type(st, 6) == SQLITE_NULL
                                ? out->state
                                : (batch_state)sqlite3_column_int(st, 6);
        out->error = dup_col(st, 7);
        out->spec_md5 = dup_col(st, 8);
        out->njobs = (long)sqlite3_column_int64(st, 9);
        out->request_id = sqlite3_column_int64(st, 10);
        out->job_set_md5 = dup_col(st, 11);     /* NULL before migration 0004 */
        *found = 1;
        if (out->name == NULL || out->app == NULL || out->spec_md5 == NULL) {
            sqlite3_finalize(st);
            journal_batch_free(out);
            *found = 0;
            return journal_fail(j, "batch lookup (out of memory)");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return journal_fail(j, "batch lookup");
    return 0;
}

/* Run one statement in its own write transaction. */
#define RUN_TXN(j, ...)                                   \
    do {                                                  \
        if (journal_begin(j) != 0)                        \
            return -1;                                    \
        if (journal_run(j, __VA_ARGS__) != 0) {           \
            journal_rollback(j);                          \
            return -1;                                    \
        }                                                 \
        return journal_commit(j);                         \
    } while (0)

int journal_batch_create(journal *j, long long project_id, const char *name,
                         const char *app, long njobs, const char *spec_md5,
                         long long request_id, long long *batch_row)
{
    double now = journal_now();
    if (journal_begin(j) != 0)
        return -1;
    if (journal_run(j,
            "INSERT INTO batches (project_id, name, app, state, njobs, spec_md5,"
            " request_id, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            "batch insert", "ittiitidd", project_id, name, app, (long long)BATCH_NEW,
            (long long)njobs,
            spec_md5, request_id, now, now) != 0) {
        journal_rollback(j);
        return -1;
    }
    *batch_row = sqlite3_last_insert_rowid(journal_db(j));
    return journal_commit(j);
}

int journal_batch_set_state(journal *j, long long batch_row, batch_state state,
                            long long server_batch_id)
{
    RUN_TXN(j, "UPDATE batches SET state = ?1, resume_state = NULL, error = NULL,"
               " server_batch_id = CASE WHEN ?2 > 0 THEN ?2 ELSE server_batch_id END,"
               " updated_at = ?3 WHERE id = ?4",
            "batch state", "iidi", (long long)state, server_batch_id, journal_now(),
            batch_row);
}

int journal_batch_set_failed(journal *j, long long batch_row,
                             batch_state resume_state, const char *error)
{
    RUN_TXN(j, "UPDATE batches SET state = ?1, resume_state = ?2,"
               " error = ?3, updated_at = ?4 WHERE id = ?5",
            "batch failed", "iitdi", (long long)BATCH_FAILED, (long long)resume_state,
            error, journal_now(), batch_row);
}

int journal_batch_set_owner(journal *j, long long batch_row, long long request_id)
{
    RUN_TXN(j, "UPDATE batches SET request_id = ?1, updated_at = ?2 WHERE id = ?3",
            "batch owner", "idi", request_id, journal_now(), batch_row);
}

int journal_batch_set_job_set(journal *j, long long batch_row, const char *job_set_md5)
{
    RUN_TXN(j, "UPDATE batches SET job_set_md5 = ?1 WHERE id = ?2",
            "batch job set", "ti", job_set_md5, batch_row);
}

int journal_request_args(journal *j, long long request_row, char **args)
{
    sqlite3_stmt *st;
    *args = NULL;
    if (sqlite3_prepare_v2(journal_db(j), "SELECT args FROM requests WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return journal_fail(j, "request args lookup");
    sqlite3_bind_int64(st, 1, request_row);
    int rc = sqlite3_step(st);
    int oom = 0;
    if (rc == SQLITE_ROW && (*args = dup_col(st, 0)) == NULL)
        oom = 1;
    sqlite3_finalize(st);
    if (oom || (rc != SQLITE_ROW && rc != SQLITE_DONE))
        return journal_fail(j, "request args lookup");
    return 0;
}

int journal_server_batch_known(journal *j, long long project_id,
                               long long server_batch_id, int *known)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(journal_db(j),
            "SELECT 1 FROM batches WHERE project_id = ? AND server_batch_id = ?",
            -1, &st, NULL) != SQLITE_OK)
        return journal_fail(j, "server batch lookup");
    sqlite3_bind_int64(st, 1, project_id);
    sqlite3_bind_int64(st, 2, server_batch_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return journal_fail(j, "server batch lookup");
    *known = rc == SQLITE_ROW;
    return 0;
}

/* ---- MD5 cache ----------------------------------------------------------- */

static long long mtime_ns(const files_stat_key *k)
{
    return k->mtime_sec * 1000000000LL + k->mtime_nsec;
}

/* One prepared statement stepped for every key, inside ONE deferred (read)
 * transaction: one WAL snapshot and no per-key prepare or lock round, which
 * is what makes a resubmit of 10,000 cached inputs cheap. */
int journal_md5_lookup_many(journal *j, const files_stat_key *const *keys, size_t n,
                            char (*md5s)[33], unsigned char *hits)
{
    if (n == 0)
        return 0;
    sqlite3 *db = journal_db(j);
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return journal_fail(j, "md5 cache lookup");
    int failed = sqlite3_prepare_v2(db,
            "SELECT md5 FROM file_md5_cache"
            " WHERE path = ? AND size = ? AND mtime_ns = ? AND inode = ?",
            -1, &st, NULL) != SQLITE_OK;
    for (size_t i = 0; i < n && !failed; i++) {
        hits[i] = 0;
        sqlite3_bind_text(st, 1, keys[i]->path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, keys[i]->size);
        sqlite3_bind_int64(st, 3, mtime_ns(keys[i]));
        sqlite3_bind_int64(st, 4, (sqlite3_int64)keys[i]->inode);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            const char *m = (const char *)sqlite3_column_text(st, 0);
            if (m != NULL && strlen(m) == 32) {
                memcpy(md5s[i], m, 33);
                hits[i] = 1;
            }
        }
        failed = rc != SQLITE_ROW && rc != SQLITE_DONE;
        sqlite3_reset(st);
    }
    if (failed)
        journal_fail(j, "md5 cache lookup");   /* before finalize clears the error */
    sqlite3_finalize(st);
    /* A read-only transaction: ending it cannot lose anything. */
    sqlite3_exec(db, failed ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
    return failed ? -1 : 0;
}

typedef struct {
    const files_stat_key *const *keys;
    const char *const *md5s;
    double now;
} md5_rows;

static void bind_md5_row(sqlite3_stmt *st, size_t i, void *arg)
{
    const md5_rows *m = arg;
    sqlite3_bind_text(st, 1, m->keys[i]->path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, m->keys[i]->size);
    sqlite3_bind_int64(st, 3, mtime_ns(m->keys[i]));
    sqlite3_bind_int64(st, 4, (sqlite3_int64)m->keys[i]->inode);
    sqlite3_bind_text(st, 5, m->md5s[i], -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 6, m->now);
}

int journal_md5_store(journal *j, const files_stat_key *const *keys,
                      const char *const *md5s, size_t n)
{
    md5_rows m = { keys, md5s, journal_now() };
    return journal_run_each(j,
            "INSERT OR REPLACE INTO file_md5_cache (path, size, mtime_ns, inode, md5,"
            " hashed_at) VALUES (?, ?, ?, ?, ?, ?)", "md5 cache store", n, bind_md5_row, &m);
}

/* ---- batch files ---------------------------------------------------------- */

typedef struct {
    long long batch_row;
    const journal_batch_file *files;
    const char *const *names;
    const char *state;
    double now;
} file_rows;

static void bind_new_file(sqlite3_stmt *st, size_t i, void *arg)
{
    const file_rows *f = arg;
    sqlite3_bind_int64(st, 1, f->batch_row);
    sqlite3_bind_text(st, 2, f->files[i].phys_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, f->files[i].local_path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, f->files[i].size);
    sqlite3_bind_double(st, 5, f->now);
}

int journal_batch_files_add(journal *j, long long batch_row,
                            const journal_batch_file *files, size_t n)
{
    file_rows f = { batch_row, files, NULL, NULL, journal_now() };
    if (journal_begin(j) != 0)
        return -1;
    if (journal_each(j, "INSERT OR IGNORE INTO batch_files (batch_id, phys_name,"
                        " local_path, size, state, updated_at)"
                        " VALUES (?, ?, ?, ?, '" BFILE_HASHED "', ?)",
                     "batch files insert", n, bind_new_file, &f) != 0 ||
        journal_run(j, "UPDATE batches SET state = ?, updated_at = ?"
                       " WHERE id = ? AND state = ?",
                    "batch state", "idii", (long long)BATCH_HASHED, f.now, batch_row,
                    (long long)BATCH_NEW) != 0) {
        journal_rollback(j);
        return -1;
    }
    return journal_commit(j);
}

void journal_batch_files_free(journal_batch_file *f, size_t n)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        free(f[i].phys_name);
        free(f[i].local_path);
        free(f[i].state);
    }
    free(f);
}

/*
 * The batch's files (parameter ?1) with the state they are in: a 'hashed'
 * file that an unanswered query announcement names is 'query_sent'
 * (migration 0007).  Without announcements the IN list is empty and costs
 * one look-up of the batch_file_queries index.
 */
#define SQL_FILES_WITH_STATE \
    "SELECT phys_name, local_path, size, state FROM (" \
    " SELECT rowid AS rid, phys_name, local_path, size," \
    "  CASE WHEN state = '" BFILE_HASHED "' AND phys_name IN" \
    "   (SELECT e.value FROM batch_file_queries q, json_each(q.names) e" \
    "    WHERE q.batch_id = ?1)" \
    "  THEN '" BFILE_QUERY_SENT "' ELSE state END AS state" \
    " FROM batch_files WHERE batch_id = ?1)"

int journal_batch_files_list(journal *j, long long batch_row, const char *state,
                             journal_batch_file **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(journal_db(j),
            SQL_FILES_WITH_STATE " WHERE ?2 IS NULL OR state = ?2 ORDER BY rid",
            -1, &st, NULL) != SQLITE_OK)
        return journal_fail(j, "batch files list");
    sqlite3_bind_int64(st, 1, batch_row);
    if (state != NULL)
        sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
    journal_batch_file *v = NULL;
    size_t len = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            journal_batch_file *nv = realloc(v, ncap * sizeof *nv);
            if (nv == NULL)
                goto oom;
            v = nv;
            cap = ncap;
        }
        journal_batch_file *f = &v[len];
        f->phys_name = dup_col(st, 0);
        f->local_path = dup_col(st, 1);
        f->size = sqlite3_column_int64(st, 2);
        f->state = dup_col(st, 3);
        len++;
        if (f->phys_name == NULL || f->local_path == NULL || f->state == NULL)
            goto oom;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        journal_batch_files_free(v, len);
        return journal_fail(j, "batch files list");
    }
    *out = v;
    *n = len;
    return 0;
oom:
    sqlite3_finalize(st);
    journal_batch_files_free(v, len);
    return journal_fail(j, "batch files list (out of memory)");
}

static void bind_file_state(sqlite3_stmt *st, size_t i, void *arg)
{
    const file_rows *f = arg;
    sqlite3_bind_text(st, 1, f->state, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, f->now);
    sqlite3_bind_int64(st, 3, f->batch_row);
    sqlite3_bind_text(st, 4, f->names[i], -1, SQLITE_STATIC);
}

/*
 * The names as a JSON array for json_each(): one UPDATE per call instead
 * of one per file, which saves each file's statement overhead (the row
 * rewrites themselves remain; doc/performance.md).  -1 when a name holds a byte outside printable ASCII
 * (JSON would need \u escapes; physical names never do) or memory ran
 * out: the caller then updates row by row.
 */
static int names_json(strbuf *sb, const char *const *names, size_t n)
{
    if (strbuf_putc(sb, '[') != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if ((i > 0 && strbuf_putc(sb, ',') != 0) || strbuf_putc(sb, '"') != 0)
            return -1;
        for (const unsigned char *p = (const unsigned char *)names[i]; *p != '\0'; p++) {
            if (*p < 0x20 || *p >= 0x7f)
                return -1;
            if ((*p == '"' || *p == '\\') && strbuf_putc(sb, '\\') != 0)
                return -1;
            if (strbuf_putc(sb, (char)*p) != 0)
                return -1;
        }
        if (strbuf_putc(sb, '"') != 0)
            return -1;
    }
    return strbuf_putc(sb, ']');
}

#define SQL_FILE_STATE "UPDATE batch_files SET state = ?, updated_at = ?" \
                       " WHERE batch_id = ? AND phys_name = ?"
#define SQL_FILES_STATE "UPDATE batch_files SET state = ?1, updated_at = ?2" \
                        " WHERE batch_id = ?3 AND phys_name IN (SELECT value FROM json_each(?4))"

/* Set the state of the named files, inside the caller's transaction. */
static int update_file_states(journal *j, const file_rows *f, size_t n)
{
    if (n == 0)
        return 0;
    strbuf json = STRBUF_INIT;
    if (names_json(&json, f->names, n) != 0) {
        strbuf_free(&json);
        return journal_each(j, SQL_FILE_STATE, "batch files state", n, bind_file_state,
                            (void *)f);
    }
    int rc = journal_run(j, SQL_FILES_STATE, "batch files state", "tdit", f->state, f->now,
                         f->batch_row, strbuf_str(&json));
    strbuf_free(&json);
    return rc;
}


/* Set the states of the groups inside the caller's transaction. */
static int update_groups(journal *j, long long batch_row, const journal_file_group *groups,
                         size_t ngroups, double now)
{
    for (size_t g = 0; g < ngroups; g++) {
        file_rows f = { batch_row, NULL, groups[g].names, groups[g].state, now };
        if (update_file_states(j, &f, groups[g].n) != 0)
            return -1;
    }
    return 0;
}

int journal_batch_files_advance(journal *j, long long batch_row,
                                const journal_file_group *groups, size_t ngroups,
                                long long answered, const char *const *names, size_t n,
                                long long *announced)
{
    size_t changes = 0;
    for (size_t g = 0; g < ngroups; g++)
        changes += groups[g].n;
    if (changes == 0 && answered <= 0 && names == NULL)
        return 0;               /* nothing to journal: no empty transaction */
    double now = journal_now();
    strbuf json = STRBUF_INIT;
    if (names != NULL && names_json(&json, names, n) != 0) {
        strbuf_free(&json);     /* out of memory: physical names are plain ASCII */
        return journal_fail(j, "query announcement (out of memory)");
    }
    int rc = journal_begin(j);
    if (rc == 0 &&
        (update_groups(j, batch_row, groups, ngroups, now) != 0 ||
         (answered > 0 && journal_run(j, "DELETE FROM batch_file_queries WHERE id = ?",
                                      "query answered", "i", answered) != 0) ||
         (names != NULL &&
          journal_run(j, "INSERT INTO batch_file_queries (batch_id, names, sent_at)"
                         " VALUES (?, ?, ?)", "query announcement", "itd", batch_row,
                      strbuf_str(&json), now) != 0))) {
        journal_rollback(j);
        rc = -1;
    }
    if (rc == 0 && names != NULL)
        *announced = sqlite3_last_insert_rowid(journal_db(j));
    strbuf_free(&json);
    return rc == 0 ? journal_commit(j) : -1;
}

int journal_batch_files_set_state(journal *j, long long batch_row,
                                  const char *const *phys_names, size_t n,
                                  const char *state)
{
    journal_file_group g = { phys_names, n, state };
    return journal_batch_files_advance(j, batch_row, &g, 1, 0, NULL, 0, NULL);
}

int journal_batch_file_queries_forget(journal *j, long long batch_row)
{
    return journal_run(j, "DELETE FROM batch_file_queries WHERE batch_id = ?",
                       "query announcements forgotten", "i", batch_row);
}

static void bind_job(sqlite3_stmt *st, size_t i, void *arg)
{
    const file_rows *f = arg;
    sqlite3_bind_int64(st, 1, f->batch_row);
    sqlite3_bind_text(st, 2, f->names[i], -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, f->now);
}

int journal_batch_set_submitted(journal *j, long long batch_row,
                                const char *const *job_names, size_t n)
{
    file_rows f = { batch_row, NULL, job_names, NULL, journal_now() };
    if (journal_begin(j) != 0)
        return -1;
    if (journal_each(j, "INSERT OR IGNORE INTO jobs (batch_id, name, status, updated_at)"
                        " VALUES (?, ?, 'IN_PROGRESS', ?)", "jobs insert", n, bind_job, &f) != 0 ||
        journal_run(j, "UPDATE batches SET state = ?, resume_state = NULL,"
                       " error = NULL, updated_at = ? WHERE id = ?",
                    "batch submitted", "idi", (long long)BATCH_SUBMITTED, f.now,
                    batch_row) != 0 ||
        /* answered announcements are deleted with their answer; one a
         * crash left after its files were resolved is harmless (its files
         * are no longer 'hashed') and goes here */
        journal_batch_file_queries_forget(j, batch_row) != 0) {
        journal_rollback(j);
        return -1;
    }
    return journal_commit(j);
}
