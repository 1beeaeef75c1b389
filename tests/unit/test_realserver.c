/*
 * test_realserver.c - unit tests for the real-server rules on the GAHP
 * side: the job argument rule and create_work's line limits (job_args.c),
 * upload chunk planning and limit-error recognition (submit_files.c),
 * learned limits and job look-ups in a real journal (journal_files.h, journal_batches.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "exec/job_args.h"
#include "journal/journal.h"
#include "journal/journal_internal.h"   /* journal_db */
#include "journal/journal_batches.h"
#include "journal/journal_files.h"
#include "submit/submit_files.h"

#include <sqlite3.h>
#include <unistd.h>

static void test_args_carried_verbatim(void **state)
{
    (void)state;
    const char *args[] = { "a$b", "x`y", "50%_d", "a&b<c>", "\xc3\xa9t\xc3\xa9" };
    const char *files[] = { "d41d8cd98f00b204e9800998ecf8427e.txt" };
    char *line = NULL, *why = NULL;
    assert_int_equal(job_args_command_line("j#1", args, 5, files, 1, &line, &why), 0);
    assert_null(why);
    assert_string_equal(line, "a$b x`y 50%_d a&b<c> \xc3\xa9t\xc3\xa9");
    free(line);
    assert_int_equal(job_args_command_line("j#1", NULL, 0, files, 1, &line, &why), 0);
    assert_string_equal(line, "");
    free(line);
}

static void test_args_refused(void **state)
{
    (void)state;
    static const struct { const char *arg, *phrase; } bad[] = {
        { "", "is empty" }, { "two words", "white space" }, { "tab\there", "white space" },
        { "it's", "contains '" }, { "say\"hi", "contains \"" },
        { "a\nb", "line break" }, { "a\rb", "line break" }, { "bell\a", "control character" },
        { "c:\\new", "contains \\ (a real server's database rewrites backslashes" },
        { "end\\", "contains \\" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[] = { "ok", bad[i].arg };
        char *line = NULL, *why = NULL;
        assert_int_equal(job_args_command_line("job#7", args, 2, NULL, 0, &line, &why), 1);
        assert_null(line);
        assert_non_null(strstr(why, "argument 2 of job job#7"));
        assert_non_null(strstr(why, bad[i].phrase));
        free(why);
    }
    char *line = NULL, *why = NULL;
    assert_int_equal(job_args_command_line("job 7", NULL, 0, NULL, 0, &line, &why), 1);
    assert_non_null(strstr(why, "job name job 7"));
    free(why);
}

/* submit_batch's request is XML: a byte that is not strict UTF-8 would
 * fail the whole batch at the server, so it is refused up front. */
static void test_args_must_be_utf8(void **state)
{
    (void)state;
    static const char *const good[] = {
        "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
        "\xef\xbf\xbd", "\xed\x9f\xbf", "\xee\x80\x80", "\xc2\x80",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *args[] = { good[i] };
        char *line = NULL, *why = NULL;
        assert_int_equal(job_args_command_line("j", args, 1, NULL, 0, &line, &why), 0);
        assert_string_equal(line, good[i]);
        free(line);
    }
    static const struct { const char *arg, *shown, *phrase; } bad[] = {
        { "h\xffllo", "h\\377llo", "is not valid UTF-8" },
        { "\x80", "\\200", "is not valid UTF-8" },                 /* stray continuation */
        { "x\xc3", "x\\303", "is not valid UTF-8" },               /* cut short */
        { "\xc3x", "\\303x", "is not valid UTF-8" },
        { "\xc0\xaf", "\\300\\257", "is not valid UTF-8" },        /* overlong / */
        { "\xc1\xbf", "\\301\\277", "is not valid UTF-8" },
        { "\xe0\x80\xaf", "\\340\\200\\257", "is not valid UTF-8" },
        { "\xf0\x80\x80\xaf", "\\360\\200\\200\\257", "is not valid UTF-8" },
        { "\xed\xa0\x80", "\\355\\240\\200", "is not valid UTF-8" },   /* surrogate */
        { "\xed\xbf\xbf", "\\355\\277\\277", "is not valid UTF-8" },
        { "\xf4\x90\x80\x80", "\\364\\220\\200\\200", "is not valid UTF-8" }, /* > U+10FFFF */
        { "\xf5\x80\x80\x80", "\\365\\200\\200\\200", "is not valid UTF-8" },
        { "\xe2\x82", "\\342\\202", "is not valid UTF-8" },
        { "\xef\xbf\xbe", "\xef\xbf\xbe", "contains U+FFFE or U+FFFF" },
        { "\xef\xbf\xbf", "\xef\xbf\xbf", "contains U+FFFE or U+FFFF" },
        { "\xc3\xa9\xff", "\xc3\xa9\\377", "is not valid UTF-8" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[] = { "ok", bad[i].arg };
        char *line = NULL, *why = NULL;
        assert_int_equal(job_args_command_line("job#7", args, 2, NULL, 0, &line, &why), 1);
        assert_null(line);
        char *want = str_printf("argument 2 of job job#7 (%s) %s", bad[i].shown,
                                bad[i].phrase);
        assert_non_null(want);
        if (strstr(why, want) == NULL)
            fail_msg("%s: wanted %s", why, want);
        free(want);
        free(why);
    }
    /* and a job name, a word of the same request */
    char *line = NULL, *why = NULL;
    assert_int_equal(job_args_command_line("j\xfe", NULL, 0, NULL, 0, &line, &why), 1);
    assert_non_null(strstr(why, "job name j\\376 is not valid UTF-8"));
    free(why);
}

static void test_line_limits(void **state)
{
    (void)state;
    /* 3 option words + name + 95 args = 99 tokens: accepted; one more: refused */
    const char *args[96];
    for (int i = 0; i < 96; i++)
        args[i] = "w";
    char *line = NULL, *why = NULL;
    size_t bytes, tokens;
    job_line_measure("n", args, 95, NULL, 0, &bytes, &tokens);
    assert_int_equal(tokens, 98);
    const char *files[] = { "f.txt" };
    assert_int_equal(job_args_command_line("n", args, 95, files, 1, &line, &why), 0);
    free(line);
    assert_int_equal(job_args_command_line("n", args, 96, files, 1, &line, &why), 1);
    assert_non_null(strstr(why, "words"));
    free(why);
    /* bytes: " --wu_name n --command_line \"X\"\n" = 31 + len(X) */
    job_line_measure("n", args, 1, NULL, 0, &bytes, &tokens);
    assert_int_equal(bytes, strlen(" --wu_name n --command_line \"w\"\n"));
    char *big = malloc(JOB_LINE_MAX_BYTES);
    assert_non_null(big);
    size_t fit = JOB_LINE_MAX_BYTES - strlen(" --wu_name n --command_line \"\"\n");
    memset(big, 'x', fit);
    big[fit] = '\0';
    const char *one[] = { big };
    assert_int_equal(job_args_command_line("n", one, 1, NULL, 0, &line, &why), 0);
    free(line);
    /* one byte more: a 4,095-byte line, which create_work refuses */
    assert_int_equal(JOB_LINE_MAX_BYTES, 4094);
    big[fit] = 'x';
    big[fit + 1] = '\0';
    assert_int_equal(job_args_command_line("n", one, 1, NULL, 0, &line, &why), 1);
    assert_non_null(strstr(why, "bytes"));
    free(why);
    free(big);
}

static void test_plan_within_limits(void **state)
{
    (void)state;
    long long sizes[70];
    for (int i = 0; i < 60; i++)
        sizes[i] = 150 * 1024;
    for (int i = 60; i < 70; i++)
        sizes[i] = 1024 * 1024;
    upload_limits lim = { UPLOAD_DEFAULT_FILES, UPLOAD_DEFAULT_BYTES };
    size_t *starts = NULL, n = 0;
    assert_int_equal(upload_plan_chunks(sizes, 70, &lim, &starts, &n), 0);
    for (size_t c = 0; c < n; c++) {
        size_t end = c + 1 < n ? starts[c + 1] : 70;
        assert_true(end - starts[c] <= 20);
        assert_true(upload_request_bytes(sizes + starts[c], end - starts[c]) <= UPLOAD_DEFAULT_BYTES);
    }
    free(starts);
    /* a file larger than any chunk goes alone */
    long long big[] = { 10, 9LL * 1024 * 1024, 10 };
    assert_int_equal(upload_plan_chunks(big, 3, &lim, &starts, &n), 0);
    assert_int_equal(n, 3);
    free(starts);
}

static void test_classify_and_shrink(void **state)
{
    (void)state;
    long received;
    char *name;
    assert_int_equal(upload_limit_classify("# of uploaded files (20) doesn't agree with request (30)",
                                           &received, &name), UPLOAD_LIMIT_FILES);
    assert_int_equal(received, 20);
    assert_int_equal(upload_limit_classify("can't parse request message:", &received, &name),
                     UPLOAD_LIMIT_POST);
    assert_int_equal(upload_limit_classify("can't parse request message: &lt;x", &received, &name),
                     UPLOAD_LIMIT_NONE);
    assert_int_equal(upload_limit_classify("abc.bin upload failed because: The uploaded file "
                                           "exceeds upload_max_filesize of php.ini.",
                                           &received, &name), UPLOAD_LIMIT_FILESIZE);
    assert_string_equal(name, "abc.bin");
    free(name);
    assert_int_equal(upload_limit_classify("file immutability violation for x", &received,
                                           &name), UPLOAD_LIMIT_NONE);
    assert_null(name);
    assert_int_equal(upload_limit_classify(NULL, &received, &name), UPLOAD_LIMIT_NONE);

    upload_limits lim = { 20, UPLOAD_DEFAULT_BYTES };
    assert_int_equal(upload_limits_shrink(&lim, UPLOAD_LIMIT_FILES, 20, 1000000, 5), 0);
    assert_int_equal(lim.max_files, 5);
    assert_int_equal(upload_limits_shrink(&lim, UPLOAD_LIMIT_FILES, 5, 1000000, 0), 0);
    assert_int_equal(lim.max_files, 2);
    assert_int_equal(upload_limits_shrink(&lim, UPLOAD_LIMIT_POST, 2, 6000000, 0), 0);
    assert_int_equal(lim.max_bytes, 3000000);
    assert_int_equal(lim.max_files, 2);     /* the count is not what failed */
    /* one file: nothing left to shrink */
    assert_int_equal(upload_limits_shrink(&lim, UPLOAD_LIMIT_POST, 1, 6000000, 0), -1);
    assert_string_equal(upload_limit_setting(UPLOAD_LIMIT_FILESIZE), "upload_max_filesize");
}

/* Per-job isolation: the input an upload's local read failure names, and
 * the texts of an input too large for the server. */
static void test_unreadable_input_and_too_large_texts(void **state)
{
    (void)state;
    const char *paths[] = { "/j/in.1", "/j/in.10", "/j/a b/in.2" };
    assert_string_equal(upload_unreadable_path(paths, 3, "cannot read input file /j/in.10: "
                                               "No such file or directory"), "/j/in.10");
    assert_string_equal(upload_unreadable_path(paths, 3, "cannot read input file /j/in.1: "
                                               "Permission denied"), "/j/in.1");
    assert_string_equal(upload_unreadable_path(paths, 3, "input file /j/a b/in.2 changed "
                                               "since it was hashed (it is shorter)"),
                        "/j/a b/in.2");
    assert_null(upload_unreadable_path(paths, 3, "cannot read input file /j/in.100: x"));
    assert_null(upload_unreadable_path(paths, 3, NULL));

    char *detail = NULL, *why = NULL;
    upload_too_large_texts("abc.bin", "/j/in.3", 4194304, "too big", UPLOAD_LIMIT_FILESIZE,
                           &detail, &why);
    assert_non_null(strstr(detail, "input abc.bin (/j/in.3) is 4194304 bytes"));
    assert_non_null(strstr(detail, "raise upload_max_filesize"));
    assert_string_equal(why, "input file /j/in.3 is 4194304 bytes, more than the BOINC server "
                             "takes in one upload (its php.ini upload_max_filesize)");
    free(detail);
    free(why);
    upload_too_large_texts("abc.bin", "/j/in.3", 9000000, NULL, UPLOAD_LIMIT_POST, &detail,
                           &why);
    assert_non_null(strstr(why, "post_max_size and upload_max_filesize"));
    free(detail);
    free(why);
}

/* The first refusal of an upload whose limits were above a stock
 * server's: the count the server named when it names one, else the stock
 * defaults (issue 42: a sampled mutant that took the count from any other
 * refusal, and ignored it in a files refusal, survived every net). */
static void test_first_refusal_limits(void **state)
{
    (void)state;
    upload_limits lim = { 100, 5 * UPLOAD_DEFAULT_BYTES };
    upload_limits_first_refusal(&lim, UPLOAD_LIMIT_FILES, 7);
    assert_int_equal(lim.max_files, 7);
    assert_int_equal(lim.max_bytes, UPLOAD_DEFAULT_BYTES);

    lim = (upload_limits){ 100, 5 * UPLOAD_DEFAULT_BYTES };
    upload_limits_first_refusal(&lim, UPLOAD_LIMIT_FILES, 0);     /* no count named */
    assert_int_equal(lim.max_files, UPLOAD_DEFAULT_FILES);

    lim = (upload_limits){ 100, 5 * UPLOAD_DEFAULT_BYTES };
    upload_limits_first_refusal(&lim, UPLOAD_LIMIT_POST, 7);      /* not a count */
    assert_int_equal(lim.max_files, UPLOAD_DEFAULT_FILES);
    assert_int_equal(lim.max_bytes, UPLOAD_DEFAULT_BYTES);

    lim = (upload_limits){ 3, 1000 };                    /* already below: kept */
    upload_limits_first_refusal(&lim, UPLOAD_LIMIT_FILES, 7);
    assert_int_equal(lim.max_files, 3);
    assert_int_equal(lim.max_bytes, 1000);
}

static void test_journal_learned_limits_and_job_batch(void **state)
{
    (void)state;
    char dir[] = "/tmp/boinc_gahp_test_realserver.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/j.db", dir);
    journal_options o = { path, 0, 1000, 0 };
    char *err = NULL;
    journal *j = journal_open(&o, &err);
    assert_non_null(j);
    long long p1 = 0, p2 = 0;
    assert_int_equal(journal_project_id(j, "http://127.0.0.1:9/a/", "x", &p1), 0);
    assert_int_equal(journal_project_id(j, "http://127.0.0.1:9/b/", "x", &p2), 0);
    long files = 0;
    long long bytes = 0;
    int found = 1;
    assert_int_equal(journal_upload_limits_get(j, p1, &files, &bytes, &found), 0);
    assert_int_equal(found, 0);
    assert_int_equal(journal_upload_limits_learn(j, p1, 5, 8000000, "count", 1.0), 0);
    /* a limit only goes down */
    assert_int_equal(journal_upload_limits_learn(j, p1, 10, 3000000, "post", 2.0), 0);
    assert_int_equal(journal_upload_limits_get(j, p1, &files, &bytes, &found), 0);
    assert_int_equal(found, 1);
    assert_int_equal(files, 5);
    assert_int_equal(bytes, 3000000);
    assert_int_equal(journal_upload_limits_get(j, p2, &files, &bytes, &found), 0);
    assert_int_equal(found, 0);

    /* the submit request that owns the batch (a row the FK needs) */
    assert_int_equal(sqlite3_exec(journal_db(j),
                                  "INSERT INTO sessions (started_at, pid, version) VALUES (1, 1, 't');"
                                  "INSERT INTO requests (session_id, client_id, command, args,"
                                  " state, accepted_at) VALUES (1, 2, 'BOINC_SUBMIT', '',"
                                  " 'accepted', 1)", NULL, NULL, NULL), SQLITE_OK);
    long long row = 0, sid = 0;
    assert_int_equal(journal_batch_create(j, p1, "b", "uppercase", 1, "d41d", 1, &row), 0);
    assert_int_equal(journal_job_server_batch(j, p1, "b#0", &sid, &found), 0);
    assert_int_equal(found, 0);
    assert_int_equal(journal_batch_set_state(j, row, BATCH_CREATED, 42), 0);
    const char *names[] = { "b#0" };
    assert_int_equal(journal_batch_set_submitted(j, row, names, 1), 0);
    assert_int_equal(journal_job_server_batch(j, p1, "b#0", &sid, &found), 0);
    assert_int_equal(found, 1);
    assert_int_equal(sid, 42);
    assert_int_equal(journal_job_server_batch(j, p2, "b#0", &sid, &found), 0);
    assert_int_equal(found, 0);
    /* the app of a job (the fetch's template cache key) */
    char *app = NULL;
    assert_int_equal(journal_job_app(j, p1, "b#0", &app, &found), 0);
    assert_int_equal(found, 1);
    assert_string_equal(app, "uppercase");
    free(app);
    assert_int_equal(journal_job_app(j, p2, "b#0", &app, &found), 0);
    assert_int_equal(found, 0);
    assert_null(app);
    assert_int_equal(journal_job_app(j, p1, "b#1", &app, &found), 0);
    assert_int_equal(found, 0);
    journal_close(j);
    unlink(path);
    char side[160];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_carried_verbatim),
        cmocka_unit_test(test_args_refused),
        cmocka_unit_test(test_args_must_be_utf8),
        cmocka_unit_test(test_line_limits),
        cmocka_unit_test(test_plan_within_limits),
        cmocka_unit_test(test_classify_and_shrink),
        cmocka_unit_test(test_unreadable_input_and_too_large_texts),
        cmocka_unit_test(test_first_refusal_limits),
        cmocka_unit_test(test_journal_learned_limits_and_job_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
