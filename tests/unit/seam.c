/*
 * seam.c - the command seam tests' fixture (see seam.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "seam.h"
#include "tmp_journal.h"

#include "base/strbuf.h"
#include "exec/exec_ctx.h"
#include "journal/journal_batches.h"
#include "server/command.h"
#include "server/shared.h"
#include "wire/gahp_text.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long last_request;

void seam_open(seam *s, const char *prefix)
{
    memset(s, 0, sizeof *s);
    if (tmp_journal_setup(prefix) != 0)
        fail_msg("no temporary directory");
    char *err = NULL;
    s->j = tmp_journal_open(&err);
    if (s->j == NULL)
        fail_msg("journal_open: %s", err ? err : "?");
    assert_int_equal(journal_session_begin(s->j, "test", &s->session), 0);
    assert_int_equal(journal_project_id(s->j, SEAM_URL, SEAM_AUTH, &s->project), 0);
    sc_world_init(&s->w, NULL);
    s->clients = sc_source(&s->w);
    s->shared = shared_new();
    assert_non_null(s->shared);
    /* the defaults of config.c */
    s->cfg.max_output_bytes = 4L * 1024 * 1024 * 1024;
    s->cfg.max_fetch_bytes = 16L * 1024 * 1024 * 1024;
    s->cfg.max_unzip_bytes = 16L * 1024 * 1024 * 1024;
    s->cfg.max_unzip_ratio = 200;
}

void seam_close(seam *s)
{
    shared_free(s->shared);
    journal_close(s->j);
    sc_world_destroy(&s->w);
    tmp_journal_teardown();
}

const char *seam_dir(void)
{
    return tmp_journal_dir();
}

long long seam_batch(seam *s, const char *name, const char *app, long long server_batch_id,
                     const char *const *jobs, size_t n)
{
    /* its submit's request row, answered NULL */
    long long request = 0, row = 0;
    char *args = str_printf("%s %s %zu", name, app, n);
    assert_non_null(args);
    assert_int_equal(journal_begin(s->j), 0);
    assert_int_equal(journal_request_insert(s->j, s->session, 1, "BOINC_SUBMIT", args,
                                            s->project, journal_now(), &request), 0);
    assert_int_equal(journal_commit(s->j), 0);
    free(args);
    journal_completion c = { request, journal_now(), journal_now(), "NULL", 0 };
    assert_int_equal(journal_requests_complete(s->j, &c, 1), 0);
    assert_int_equal(journal_batch_create(s->j, s->project, name, app, (long)n,
                                          "0123456789abcdef0123456789abcdef", request,
                                          &row), 0);
    assert_int_equal(journal_batch_set_state(s->j, row, BATCH_CREATED, server_batch_id), 0);
    assert_int_equal(journal_batch_set_submitted(s->j, row, jobs, n), 0);
    return row;
}

char *seam_run(seam *s, const char *line)
{
    /* parse as the reader does */
    char *copy = strdup(line);
    assert_non_null(copy);
    gahp_args a = { 0 };
    assert_int_equal(gahp_tokenize(copy, strlen(copy), &a), GAHP_TOK_OK);
    gahp_request *req = NULL;
    const char *why = NULL;
    if (command_parse_request(a.argv, a.argc, &req, &why) != 0)
        fail_msg("not a request: %s (%s)", line, why);
    gahp_args_free(&a);
    free(copy);
    req->project_url = strdup(SEAM_URL);
    req->authenticator = strdup(SEAM_AUTH);
    req->project_id = s->project;
    /* accepted: journaled before S */
    assert_int_equal(journal_begin(s->j), 0);
    assert_int_equal(journal_request_insert(s->j, s->session, req->id, req->row->name,
                                            req->args_text, req->project_id, journal_now(),
                                            &req->journal_id), 0);
    assert_int_equal(journal_commit(s->j), 0);
    last_request = req->journal_id;
    /* a worker runs it */
    s->w.ncalls = 0;
    memset(s->w.seen, 0, sizeof s->w.seen);
    s->w.nq2 = 0;
    exec_ctx ctx;
    char *err = NULL;
    if (exec_ctx_open_with(&ctx, s->shared, &s->cfg, s->j, 0, &s->clients, &err) != 0)
        fail_msg("exec_ctx_open_with: %s", err ? err : "?");
    ctx.session_id = s->session;
    double started = journal_now();
    char *tail = command_dispatch(&ctx, req);
    exec_ctx_close(&ctx);
    assert_non_null(tail);
    /* the committer stores it (transient: a command never replayed) */
    const command_row *row = command_of(req->cmd);
    journal_completion c = { req->journal_id, started, journal_now(), tail,
                             row != NULL && !row->replayable };
    assert_int_equal(journal_requests_complete(s->j, &c, 1), 0);
    char *out = str_printf("%ld %s", req->id, tail);
    assert_non_null(out);
    free(tail);
    gahp_request_free(req);
    return out;
}

char *seam_sql(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *sql = str_vprintf(fmt, ap);
    va_end(ap);
    assert_non_null(sql);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(tmp_journal_path(), &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    char *v = NULL;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        v = strdup(sqlite3_column_type(st, 0) == SQLITE_NULL
                       ? "NULL" : (const char *)sqlite3_column_text(st, 0));
    else if (rc == SQLITE_DONE)
        v = strdup("(no row)");
    else
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(sql);
    assert_non_null(v);
    return v;
}

char *seam_stored(long long request_row)
{
    return seam_sql("SELECT r.state || ': ' || COALESCE(r.result, t.result, 'NULL') "
                    "FROM requests r LEFT JOIN transient_results t ON t.request_id = r.id "
                    "WHERE r.id = %lld", request_row);
}

long long seam_last_request(void)
{
    return last_request;
}
