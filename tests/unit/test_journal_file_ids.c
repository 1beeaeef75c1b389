/*
 * test_journal_file_ids.c - batch files' state changes by row id
 * (journal_file_group.ids, migration 0011): runs of consecutive ids as
 * ranges and scattered ids as a list change exactly the files named, in
 * their own batch only; and migration 0011 keeps every row's rowid as its
 * id, with its order, state and uniqueness.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tmp_journal.h"

#include "journal/journal.h"
#include "journal/journal_requests.h"
#include "journal/journal_batches.h"
#include "journal/journal_files.h"
#include "base/strbuf.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static int setup(void **state)
{
    (void)state;
    return tmp_journal_setup("test_journal_file_ids");
}

static int teardown(void **state)
{
    (void)state;
    return tmp_journal_teardown();
}

static journal *open_j(void)
{
    char *err = NULL;
    journal *j = tmp_journal_open(&err);
    if (j == NULL)
        fail_msg("journal_open: %s", err ? err : "?");
    return j;
}

/* A batch named bname (its own request, id rid) with n files f<base+i>. */
static long long batch_with_files(journal *j, long long sid, const char *bname, long rid,
                                  int base, size_t n)
{
    long long project = 0, batch = 0, request = 0;
    assert_int_equal(journal_project_id(j, "http://127.0.0.1/p/", "k", &project), 0);
    assert_int_equal(journal_begin(j), 0);
    assert_int_equal(journal_request_insert(j, sid, rid, "BOINC_PING", "", 0, journal_now(),
                                            &request), 0);
    assert_int_equal(journal_commit(j), 0);
    assert_int_equal(journal_batch_create(j, project, bname, "app", 1, "x", request, &batch),
                     0);
    journal_batch_file *bf = calloc(n, sizeof *bf);
    char (*names)[16] = calloc(n, sizeof *names);
    assert_non_null(bf);
    assert_non_null(names);
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "f%03d.dat", base + (int)i);
        bf[i] = (journal_batch_file){ names[i], (char *)"/in", 1, NULL, 0 };
    }
    assert_int_equal(journal_batch_files_add(j, batch, bf, n), 0);
    free(bf);
    free(names);
    return batch;
}

/* The batch's files as a string of state initials, in list order. */
static char *states(journal *j, long long batch, journal_batch_file **keep, size_t *nkeep)
{
    journal_batch_file *f = NULL;
    size_t n = 0;
    assert_int_equal(journal_batch_files_list(j, batch, NULL, &f, &n), 0);
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < n; i++)
        strbuf_putc(&sb, f[i].state[0]);
    if (keep != NULL) {
        *keep = f;
        *nkeep = n;
    } else {
        journal_batch_files_free(f, n);
    }
    return strbuf_detach(&sb);
}

static void test_states_by_id(void **state)
{
    (void)state;
    long long sid;
    journal *j = open_j();
    assert_int_equal(journal_session_begin(j, "1.0.0", &sid), 0);
    long long b1 = batch_with_files(j, sid, "b1", 1, 0, 30);
    long long b2 = batch_with_files(j, sid, "b2", 2, 100, 30);
    journal_batch_file *f = NULL, *f2 = NULL;
    size_t n = 0, n2 = 0;
    free(states(j, b1, &f, &n));
    free(states(j, b2, &f2, &n2));
    assert_int_equal(n, 30);
    /* a run of 12 (a range), then 3 scattered ones and a run of 2 (a list) */
    const char *names[17];
    long long ids[17];
    size_t k = 0;
    for (size_t i = 3; i < 15; i++, k++) {
        names[k] = f[i].phys_name;
        ids[k] = f[i].id;
    }
    static const size_t scattered[] = { 17, 20, 22, 27, 28 };
    for (size_t s = 0; s < 5; s++, k++) {
        names[k] = f[scattered[s]].phys_name;
        ids[k] = f[scattered[s]].id;
    }
    journal_file_group g = { names, k, BFILE_UPLOAD_SENT, ids };
    assert_int_equal(journal_batch_files_advance(j, b1, &g, 1, 0, NULL, 0, NULL), 0);
    char *s = states(j, b1, NULL, NULL);
    assert_string_equal(s, "hhhuuuuuuuuuuuuhhuhhuhuhhhhuuh");
    free(s);
    /* the other batch's ids under b1's row change nothing */
    long long other[10];
    for (size_t i = 0; i < 10; i++)
        other[i] = f2[i].id;
    journal_file_group g2 = { names, 10, BFILE_CONFIRMED, other };
    assert_int_equal(journal_batch_files_advance(j, b1, &g2, 1, 0, NULL, 0, NULL), 0);
    s = states(j, b2, NULL, NULL);
    assert_string_equal(s, "hhhhhhhhhhhhhhhhhhhhhhhhhhhhhh");
    free(s);
    s = states(j, b1, NULL, NULL);
    assert_string_equal(s, "hhhuuuuuuuuuuuuhhuhhuhuhhhhuuh");
    free(s);
    journal_batch_files_free(f, n);
    journal_batch_files_free(f2, n2);
    journal_close(j);
}

/* One integer from a query on a plain connection. */
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

/* 0011 rebuilds batch_files: each row's id is its rowid before (gaps
 * kept), order and states kept, (batch_id, phys_name) still unique. */
static void test_migration_0011_keeps_rowids(void **state)
{
    (void)state;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(tmp_journal_path(), &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL), SQLITE_OK);
    for (int n = 1; n <= 10; n++)
        assert_int_equal(sqlite3_exec(db, journal_migration_text(n), NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "PRAGMA user_version=10;"
        "INSERT INTO projects (url, authenticator, first_used_at) VALUES ('http://127.0.0.1/p/', 'k', 1);"
        "INSERT INTO batches (project_id, name, app, state, spec_md5, njobs, created_at,"
        " updated_at) VALUES (1, 'b', 'a', 3, 'x', 1, 1, 1);"
        "INSERT INTO batch_files (rowid, batch_id, phys_name, local_path, size, state, updated_at)"
        " VALUES (4, 1, 'z.dat', '/z', 1, 'uploaded', 1), (9, 1, 'a.dat', '/a', 1, 'absent', 1),"
        " (10, 1, 'm.dat', '/m', 1, 'hashed', 1);",
        NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    journal *j = open_j();
    journal_batch_file *f = NULL;
    size_t n = 0;
    char *s = states(j, 1, &f, &n);
    assert_string_equal(s, "uah");
    free(s);
    assert_int_equal(n, 3);
    assert_int_equal(f[0].id, 4);
    assert_int_equal(f[1].id, 9);
    assert_int_equal(f[2].id, 10);
    assert_string_equal(f[1].phys_name, "a.dat");
    journal_batch_files_free(f, n);
    journal_close(j);
    assert_int_equal(query_int("PRAGMA user_version"), journal_migration_count());
    assert_int_equal(query_int("SELECT id FROM batch_files WHERE phys_name = 'm.dat'"), 10);
    assert_int_equal(query_int("SELECT count(*) FROM audit_batch_files"), 3);
    assert_int_equal(query_int("SELECT files FROM audit_batches"), 3);
    assert_int_equal(sqlite3_open(tmp_journal_path(), &db), SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db, "INSERT INTO batch_files (batch_id, phys_name,"
                                      " local_path, size, state, updated_at)"
                                      " VALUES (1, 'a.dat', '/a', 1, 'hashed', 2)",
                                      NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_states_by_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migration_0011_keeps_rowids, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
