/*
 * test_journal_retention.c - the bounded journal (issue 19) on real SQLite
 * files: the full prune (batches with their jobs and files, submit texts,
 * transient results, free pages returned), the confirmation of an earlier
 * run's submit by a status query, the failed-at-new audit row, the backup
 * copy made before a migration and the message for a newer journal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tmp_journal.h"

#include "journal/journal.h"
#include "journal/journal_internal.h"
#include "journal/journal_requests.h"
#include "journal/journal_batches.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static int setup(void **state)
{
    (void)state;
    return tmp_journal_setup("test_retention");
}

static int teardown(void **state)
{
    (void)state;
    return tmp_journal_teardown();
}

static journal *open_try(char **err)
{
    return tmp_journal_open(err);
}

static journal *open_session(long long *sid)
{
    char *err = NULL;
    journal *j = open_try(&err);
    if (j == NULL)
        fail_msg("journal_open: %s", err ? err : "?");
    assert_int_equal(journal_session_begin(j, "1.0.0", sid), 0);
    return j;
}

static long long query_int(const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(tmp_journal_path(), &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* The first column of the first row as text (malloc'd; NULL for NULL). */
static char *query_text(const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(tmp_journal_path(), &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(st, 0);
    char *v = t ? strdup((const char *)t) : NULL;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void exec_ok(journal *j, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(journal_db(j), sql, NULL, NULL, &msg) != SQLITE_OK) {
        journal_rollback(j);    /* else the next test waits for the mutex */
        fail_msg("%s: %s", sql, msg ? msg : "?");
    }
}

/* A submit request of session sid, accepted at `at`, completed, delivered
 * at `at` when delivered; its row. */
static long long submit_row(journal *j, long long sid, long long pid, const char *args,
                            double at, int delivered)
{
    long long row;
    assert_int_equal(journal_begin(j), 0);
    assert_int_equal(journal_request_insert(j, sid, 1, "BOINC_SUBMIT", args, pid, at, &row), 0);
    assert_int_equal(journal_commit(j), 0);
    journal_completion c = { row, at, at, "NULL", 0 };
    assert_int_equal(journal_requests_complete(j, &c, 1), 0);
    if (delivered)
        assert_int_equal(journal_requests_delivered(j, &row, 1, at), 0);
    return row;
}

/* A batch of 100 jobs and 3 files owned by request `req`. */
static void batch_with_rows(journal *j, long long pid, const char *name, long long req,
                            int retired, double updated, const char *lease)
{
    char sql[2048];
    snprintf(sql, sizeof sql,
             "INSERT INTO batches (project_id, name, app, state, spec_md5, njobs,"
             " request_id, created_at, updated_at, retired, lease, job_set_md5)"
             " VALUES (%lld, '%s', 'a', 7, 'x', 100, %lld, %f, %f, %d, %s, 'md5');"
             "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)"
             " INSERT INTO jobs (batch_id, name, status, updated_at)"
             " SELECT (SELECT id FROM batches WHERE name = '%s'), '%s_' || i, 'DONE', 1 FROM n;"
             "INSERT INTO batch_files (batch_id, phys_name, local_path, size, state, updated_at)"
             " SELECT id, name || '_f' || k, '/in/' || name || k, 1, 'uploaded', 1"
             " FROM batches, (SELECT 1 AS k UNION SELECT 2 UNION SELECT 3) WHERE name = '%s';"
             "INSERT INTO batch_file_queries (batch_id, names, sent_at)"
             " SELECT id, '[]', 1 FROM batches WHERE name = '%s';",
             pid, name, req, updated, updated, retired, lease, name, name, name, name);
    assert_int_equal(journal_begin(j), 0);
    exec_ok(j, sql);
    assert_int_equal(journal_commit(j), 0);
}

/* Retired and expired batches older than the retention go with their
 * jobs, files and queries, and so do their submits; recent ones, active
 * ones and one whose submit is unfinished stay. */
static void test_old_batches_go_with_their_rows(void **state)
{
    (void)state;
    long long sid, pid;
    journal *j = open_session(&sid);
    assert_int_equal(journal_project_id(j, "http://127.0.0.1/p/", "k", &pid), 0);
    double old = journal_now() - 30 * 86400.0, now = journal_now();
    batch_with_rows(j, pid, "retired_old", submit_row(j, sid, pid, "r o", old, 1), 1, old,
                    "NULL");
    char lease[64];
    snprintf(lease, sizeof lease, "%f", old);
    batch_with_rows(j, pid, "expired_old", submit_row(j, sid, pid, "e o", old, 1), 0, old,
                    lease);
    batch_with_rows(j, pid, "retired_new", submit_row(j, sid, pid, "r n", now, 1), 1, now,
                    "NULL");
    batch_with_rows(j, pid, "active_old", submit_row(j, sid, pid, "a o", old, 1), 0, old,
                    "NULL");
    /* retired long ago but its submit unfinished (resumed in the background) */
    long long running;
    assert_int_equal(journal_begin(j), 0);
    assert_int_equal(journal_request_insert(j, sid, 7, "BOINC_SUBMIT", "u o", pid, old,
                                            &running), 0);
    assert_int_equal(journal_commit(j), 0);
    batch_with_rows(j, pid, "unfinished_old", running, 1, old, "NULL");

    journal_prune_counts pc;
    assert_int_equal(journal_prune_report(j, 7, &pc), 0);
    assert_int_equal(pc.batches, 2);
    assert_int_equal(pc.jobs, 200);
    assert_int_equal(pc.files, 6);
    assert_int_equal(pc.requests, 2);       /* the two submits they held */
    assert_int_equal(query_int("SELECT count(*) FROM batches WHERE name IN"
                               " ('retired_new', 'active_old', 'unfinished_old')"), 3);
    assert_int_equal(query_int("SELECT count(*) FROM batches"), 3);
    assert_int_equal(query_int("SELECT count(*) FROM jobs"), 300);
    assert_int_equal(query_int("SELECT count(*) FROM batch_files"), 9);
    assert_int_equal(query_int("SELECT count(*) FROM batch_file_queries"), 3);
    assert_int_equal(query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
    journal_close(j);
}

/* Failed batches that were never leased go by their last change (a failed
 * submit's name is never used again by HTCondor), with their submit; a
 * recent failure, and an old failed batch that has a lease in the future,
 * stay. */
static void test_old_failed_batches_go(void **state)
{
    (void)state;
    long long sid, pid;
    journal *j = open_session(&sid);
    assert_int_equal(journal_project_id(j, "http://127.0.0.1/p/", "k", &pid), 0);
    double old = journal_now() - 30 * 86400.0, now = journal_now();
    char future[64];
    snprintf(future, sizeof future, "%f", now + 86400.0);
    batch_with_rows(j, pid, "failed_old", submit_row(j, sid, pid, "f o", old, 1), 0, old, "NULL");
    batch_with_rows(j, pid, "hash_failed_old", submit_row(j, sid, pid, "h o", old, 1), 0, old,
                    "NULL");
    batch_with_rows(j, pid, "failed_new", submit_row(j, sid, pid, "f n", now, 1), 0, now, "NULL");
    batch_with_rows(j, pid, "failed_leased", submit_row(j, sid, pid, "f l", old, 1), 0, old,
                    future);
    assert_int_equal(journal_begin(j), 0);
    exec_ok(j, "UPDATE batches SET state = 8, resume_state = 2, error = 'x'"
               " WHERE name IN ('failed_old', 'failed_new', 'failed_leased');"
               "UPDATE batches SET state = 0, error = 'input' WHERE name = 'hash_failed_old'");
    assert_int_equal(journal_commit(j), 0);

    journal_prune_counts pc;
    assert_int_equal(journal_prune_report(j, 7, &pc), 0);
    assert_int_equal(pc.batches, 2);
    assert_int_equal(pc.requests, 2);
    assert_int_equal(query_int("SELECT count(*) FROM batches WHERE name IN"
                               " ('failed_new', 'failed_leased')"), 2);
    assert_int_equal(query_int("SELECT count(*) FROM batches"), 2);
    assert_int_equal(query_int("SELECT count(*) FROM pragma_foreign_key_check"), 0);
    journal_close(j);
}

/* A ping's or a query's result goes once delivered; a
 * replayable command's stays. */
static void test_transient_results_go_once_delivered(void **state)
{
    (void)state;
    long long sid, rows[3];
    journal *j = open_session(&sid);
    assert_int_equal(journal_begin(j), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(journal_request_insert(j, sid, i + 1, i ? "BOINC_QUERY_BATCHES"
                                                : "BOINC_FETCH_OUTPUT", "b", 0,
                                                journal_now(), &rows[i]), 0);
    assert_int_equal(journal_commit(j), 0);
    journal_completion c[] = { { rows[0], 1, 2, "NULL", 0 }, { rows[1], 1, 2, "NULL 5 big", 1 },
                               { rows[2], 1, 2, "NULL 6 big", 1 } };
    assert_int_equal(journal_requests_complete(j, c, 3), 0);
    /* kept apart until delivered (requests.result NULL) */
    assert_int_equal(query_int("SELECT count(*) FROM transient_results WHERE result LIKE '%big'"),
                     2);
    assert_int_equal(query_int("SELECT count(*) FROM requests WHERE result IS NULL"), 2);
    assert_int_equal(query_int("SELECT count(*) FROM audit_undelivered WHERE result LIKE '%big'"),
                     2);
    assert_int_equal(journal_requests_delivered(j, rows, 2, journal_now()), 0);
    /* one not delivered yet keeps it */
    assert_int_equal(query_int("SELECT count(*) FROM transient_results"), 1);
    assert_int_equal(query_int("SELECT count(*) FROM transient_results WHERE result = 'NULL 6 big'"),
                     1);
    char *kept = query_text("SELECT result FROM requests WHERE command = 'BOINC_FETCH_OUTPUT'");
    assert_string_equal(kept, "NULL");
    free(kept);
    journal_close(j);
}

/* An answered submit's text is replaced once its batch stores the job-set
 * identity; an unanswered one, or one without identity, keeps it. */
static void test_submit_text_dropped_once_identity_stored(void **state)
{
    (void)state;
    long long sid, pid;
    journal *j = open_session(&sid);
    assert_int_equal(journal_project_id(j, "http://127.0.0.1/p/", "k", &pid), 0);
    double now = journal_now();
    batch_with_rows(j, pid, "b1", submit_row(j, sid, pid, "b1 app 1 job1 long text", now, 1),
                    0, now, "NULL");
    batch_with_rows(j, pid, "b2", submit_row(j, sid, pid, "b2 app 1 job2 long text", now, 0),
                    0, now, "NULL");
    batch_with_rows(j, pid, "b3", submit_row(j, sid, pid, "b3 app 1 job3 long text", now, 1),
                    0, now, "NULL");
    assert_int_equal(journal_begin(j), 0);
    exec_ok(j, "UPDATE batches SET job_set_md5 = NULL WHERE name = 'b3'");
    assert_int_equal(journal_commit(j), 0);
    journal_prune_counts pc;
    assert_int_equal(journal_prune_report(j, 7, &pc), 0);
    assert_int_equal(pc.submit_texts, 1);
    char *t = query_text("SELECT args FROM requests r JOIN batches b ON b.request_id = r.id"
                         " WHERE b.name = 'b1'");
    assert_non_null(strstr(t, "submit text of 23 characters dropped"));
    free(t);
    assert_int_equal(query_int("SELECT count(*) FROM requests WHERE args LIKE '%long text'"), 2);
    /* a second prune finds nothing more to do */
    assert_int_equal(journal_prune_report(j, 7, &pc), 0);
    assert_int_equal(pc.submit_texts, 0);
    journal_close(j);
}

/* A query's group confirms an earlier run's unanswered submit of the
 * batch: not undelivered, not scanned by recovery, named in the view. */
static int count_rows(const journal_request_row *row, void *arg)
{
    (void)row;
    (*(int *)arg)++;
    return 0;
}

static void test_query_confirms_earlier_submit(void **state)
{
    (void)state;
    long long sid1, sid2, pid;
    journal *j = open_session(&sid1);
    assert_int_equal(journal_project_id(j, "http://127.0.0.1/p/", "k", &pid), 0);
    long long row = submit_row(j, sid1, pid, "b app 1 j", journal_now(), 0);
    batch_with_rows(j, pid, "b", row, 0, journal_now(), "NULL");
    journal_close(j);
    j = open_session(&sid2);
    assert_int_equal(journal_requests_resumed(j, &row, 1, sid2), 0);
    int n = 0;
    assert_int_equal(journal_recovery_scan(j, sid2, count_rows, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(query_int("SELECT count(*) FROM audit_undelivered"), 1);
    /* the same session's own submit is not touched; the earlier one is */
    assert_int_equal(journal_batch_set_client_session(j, pid, "b", sid2), 0);
    n = 0;
    assert_int_equal(journal_recovery_scan(j, sid2 + 1, count_rows, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(query_int("SELECT count(*) FROM audit_undelivered"), 0);
    char *what = query_text("SELECT what_became_of_it FROM audit_pending_at_stop");
    char want[128];
    snprintf(want, sizeof want, "confirmed by a status query in session %lld", sid2);
    assert_non_null(strstr(what, want));
    free(what);
    journal_close(j);
}

/* The journal runs in incremental vacuum mode and a prune returns the
 * pages it freed: the file shrinks. */
static void test_prune_returns_free_pages(void **state)
{
    (void)state;
    long long sid, pid;
    journal *j = open_session(&sid);
    assert_int_equal(query_int("PRAGMA auto_vacuum"), 2);
    assert_int_equal(journal_project_id(j, "http://127.0.0.1/p/", "k", &pid), 0);
    double old = journal_now() - 30 * 86400.0;
    char name[32];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "old%d", i);
        batch_with_rows(j, pid, name, submit_row(j, sid, pid, name, old, 1), 1, old, "NULL");
    }
    exec_ok(j, "PRAGMA wal_checkpoint(TRUNCATE)");
    long long pages_before = query_int("PRAGMA page_count");
    journal_prune_counts pc;
    assert_int_equal(journal_prune_report(j, 7, &pc), 0);
    assert_int_equal(pc.batches, 40);
    assert_true(pc.pages_freed > 0);
    assert_int_equal(query_int("PRAGMA freelist_count"), 0);
    assert_true(query_int("PRAGMA page_count") < pages_before);
    journal_close(j);
}

/* A submit that failed before hashing keeps state new with its error:
 * audit_batches shows it failed at 'new'; hashing later clears it. */
static void test_failed_at_new_shows_in_audit(void **state)
{
    (void)state;
    long long sid, pid;
    journal *j = open_session(&sid);
    assert_int_equal(journal_project_id(j, "http://127.0.0.1/p/", "k", &pid), 0);
    assert_int_equal(journal_begin(j), 0);
    exec_ok(j, "INSERT INTO batches (project_id, name, app, state, spec_md5, njobs,"
               " created_at, updated_at) VALUES (1, 'b', 'a', 0, 'x', 1, 1, 1)");
    assert_int_equal(journal_commit(j), 0);
    long long id = query_int("SELECT id FROM batches WHERE name = 'b'");
    journal_batch_error je = { "input\\ file:\\ /x", "input file: /x", 0, NULL, NULL };
    assert_int_equal(journal_batch_note_error(j, id, &je), 0);
    char *step = query_text("SELECT step || '/' || failed_step || '/' || error"
                            " FROM audit_batches");
    assert_string_equal(step, "failed/new/input\\ file:\\ /x");
    free(step);
    /* the plain copy beside the token (migration 0019) */
    char *plain = query_text("SELECT error_msg FROM batches WHERE name = 'b'");
    assert_string_equal(plain, "input file: /x");
    free(plain);
    assert_int_equal(journal_begin(j), 0);
    exec_ok(j, "UPDATE batches SET state = 1, error = NULL WHERE state = 0");
    assert_int_equal(journal_commit(j), 0);
    step = query_text("SELECT step FROM audit_batches");
    assert_string_equal(step, "hashed");
    free(step);
    journal_close(j);
}

/* A journal of an older schema is copied (0600) before it is migrated. */
static void test_backup_before_migration(void **state)
{
    (void)state;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(tmp_journal_path(), &db), SQLITE_OK);
    for (int n = 1; n <= 8; n++)
        assert_int_equal(sqlite3_exec(db, journal_migration_text(n), NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=8;"
                                  "INSERT INTO sessions (started_at, pid, version)"
                                  " VALUES (1, 2, 'old')", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    long long sid;
    journal *j = open_session(&sid);
    assert_int_equal(query_int("PRAGMA user_version"), journal_migration_count());
    journal_close(j);
    char bak[300];
    snprintf(bak, sizeof bak, "%s.v8.bak", tmp_journal_path());
    struct stat st;
    assert_int_equal(stat(bak, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(sqlite3_open(bak, &db), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT (SELECT user_version FROM pragma_user_version),"
                                        " (SELECT version FROM sessions)", -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 8);
    assert_string_equal((const char *)sqlite3_column_text(q, 1), "old");
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/* A journal written by a newer program: refused with what to do. */
static void test_newer_journal_message(void **state)
{
    (void)state;
    long long sid;
    journal_close(open_session(&sid));
    sqlite3 *db;
    assert_int_equal(sqlite3_open(tmp_journal_path(), &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    char *err = NULL;
    assert_null(open_try(&err));
    assert_non_null(err);
    assert_non_null(strstr(err, "schema version 99"));
    assert_non_null(strstr(err, "a newer boinc_gahp wrote it"));
    assert_non_null(strstr(err, ".bak"));
    free(err);
}

/* The schema of the journal at the path, one line per object (type, name,
 * SQL), sorted: what two journals must share to be the same version. */
static char *schema_of(const char *path)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT group_concat(type || ' ' || name || ' '"
                                        " || coalesce(sql, ''), char(10)) FROM (SELECT * FROM"
                                        " sqlite_master WHERE name NOT LIKE 'sqlite_%'"
                                        " ORDER BY type, name)", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    const char *t = (const char *)sqlite3_column_text(q, 0);
    char *s = strdup(t ? t : "");
    sqlite3_finalize(q);
    sqlite3_close(db);
    return s;
}

/* A journal of every earlier schema version k (migrations 1..k, each with
 * its user_version, as the boinc_gahp of that version left it), with rows
 * in it, is upgraded by journal_open to the current version: the same
 * schema as a journal created new, and its rows intact (issue 42).  A
 * migration skipped or applied twice shows here. */
static void test_every_earlier_version_upgraded(void **state)
{
    (void)state;
    long long sid;
    journal_close(open_session(&sid));
    char *fresh = schema_of(tmp_journal_path());
    int count = journal_migration_count();
    for (int k = 1; k < count; k++) {
        char *ext[] = { "", "-wal", "-shm" };
        for (size_t e = 0; e < 3; e++) {
            char p[400];
            snprintf(p, sizeof p, "%s%s", tmp_journal_path(), ext[e]);
            unlink(p);
        }
        sqlite3 *db;
        assert_int_equal(sqlite3_open(tmp_journal_path(), &db), SQLITE_OK);
        for (int n = 1; n <= k; n++) {
            char pragma[64];
            snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", n);
            assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
            assert_int_equal(sqlite3_exec(db, journal_migration_text(n), NULL, NULL, NULL),
                             SQLITE_OK);
            assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
            assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
        }
        assert_int_equal(sqlite3_exec(db, "INSERT INTO sessions (started_at, pid, version)"
                                      " VALUES (1, 2, 'old');"
                                      "INSERT INTO projects (url, authenticator, first_used_at)"
                                      " VALUES ('http://127.0.0.1/old/', 'auth', 3)",
                                      NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        char *err = NULL;
        journal *j = open_try(&err);
        if (j == NULL)
            fail_msg("version %d: journal_open: %s", k, err ? err : "?");
        journal_close(j);
        assert_int_equal(query_int("PRAGMA user_version"), count);
        char *upgraded = schema_of(tmp_journal_path());
        if (strcmp(upgraded, fresh) != 0)
            fail_msg("version %d upgraded: the schema differs from a new journal's", k);
        free(upgraded);
        char *old = query_text("SELECT version || '/' || pid FROM sessions WHERE id = 1");
        assert_string_equal(old, "old/2");
        free(old);
        old = query_text("SELECT url || authenticator || first_used_at FROM projects");
        assert_string_equal(old, "http://127.0.0.1/old/auth3.0");
        free(old);
    }
    free(fresh);
}

/* A journal exactly one schema version newer than this program: refused
 * as well (the boundary of the newer-journal check). */
static void test_one_version_newer_refused(void **state)
{
    (void)state;
    long long sid;
    journal_close(open_session(&sid));
    sqlite3 *db;
    assert_int_equal(sqlite3_open(tmp_journal_path(), &db), SQLITE_OK);
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", journal_migration_count() + 1);
    assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    char *err = NULL;
    assert_null(open_try(&err));
    assert_non_null(err);
    char want[64];
    snprintf(want, sizeof want, "schema version %d", journal_migration_count() + 1);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "a newer boinc_gahp wrote it"));
    free(err);
}

/* The pruner cannot have its own connection (the journal's file is gone
 * under the open journal): journal_pruner_start says so, -1 with the
 * reason, for main to log (issue 42: a sampled mutant returned 0 and the
 * journal silently went unpruned). */
static void test_pruner_without_a_connection_fails(void **state)
{
    (void)state;
    long long sid;
    journal *j = open_session(&sid);
    char moved[400];
    snprintf(moved, sizeof moved, "%s.moved", tmp_journal_path());
    assert_int_equal(rename(tmp_journal_path(), moved), 0);
    char *err = NULL;
    assert_int_equal(journal_pruner_start(j, 7, &err), -1);
    assert_non_null(err);
    assert_non_null(strstr(err, "cannot open journal"));
    free(err);
    journal_pruner_stop();
    assert_int_equal(rename(moved, tmp_journal_path()), 0);
    journal_close(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_old_batches_go_with_their_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_failed_batches_go, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transient_results_go_once_delivered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_submit_text_dropped_once_identity_stored, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_query_confirms_earlier_submit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prune_returns_free_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_at_new_shows_in_audit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backup_before_migration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_journal_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_earlier_version_upgraded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_version_newer_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pruner_without_a_connection_fails, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
