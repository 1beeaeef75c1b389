/*
 * test_fetch_seam.c - BOINC_FETCH_OUTPUT (src/fetch/) run the way a worker
 * runs it (command_dispatch, seam.h) with the scripted BOINC client
 * (scripted_client.h), a real journal and real temporary directories.
 *
 * The scripted server has one finished job j1 (and j2, j3 ... as a test
 * needs) of app "fapp", whose template has two outputs, out.txt and
 * log.txt; the journal has the batch "fb" that a submit of this journal
 * left, with jobs j1 and j2.  Each test checks the line the client would
 * get from RESULTS, the files on disk (every name in the directories it
 * touches: no temp file, no half file under a final name), the RPCs made
 * (and the download limit each get_output ran under) and the journal's
 * rows: the stored result, and the jobs untouched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "seam.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "server/shared.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

static const char OUT[] = "hello output\n";     /* 13 bytes */
static const char LOG[] = "log data\n";         /* 9 bytes */
static const char STDERR_J1[] = "stderr of j1\n";

static seam S;
static char *iwd;       /* <dir>/iwd */
static char *other;     /* <dir>/other: a destination outside iwd */

/* ---- helpers ----------------------------------------------------------------- */

/* The contents of a file (malloc'd), or NULL when it does not exist. */
static char *slurp(const char *dir, const char *name)
{
    char *path = str_printf("%s/%s", dir, name);
    assert_non_null(path);
    FILE *fp = fopen(path, "rb");
    free(path);
    if (fp == NULL)
        return NULL;
    strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
        assert_int_equal(strbuf_append(&sb, buf, n), 0);
    fclose(fp);
    char *text = sb.data != NULL ? strbuf_detach(&sb) : strdup("");
    assert_non_null(text);
    return text;
}

static void assert_file(const char *dir, const char *name, const char *want)
{
    char *got = slurp(dir, name);
    if (got == NULL)
        fail_msg("%s/%s does not exist", dir, name);
    assert_string_equal(got, want);
    free(got);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char *path = str_printf("%s/%s", dir, name);
    assert_non_null(path);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    assert_int_equal(fclose(fp), 0);
    free(path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every name in dir, sorted, space separated ("" when empty). */
static char *listing(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && n < 64)
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(strbuf_printf(&sb, "%s%s", i ? " " : "", names[i]), 0);
        free(names[i]);
    }
    char *text = sb.data != NULL ? strbuf_detach(&sb) : strdup("");
    assert_non_null(text);
    return text;
}

static void assert_listing(const char *dir, const char *want)
{
    char *got = listing(dir);
    if (strcmp(got, want) != 0)
        fail_msg("%s holds \"%s\", expected \"%s\"", dir, got, want);
    free(got);
}

/* Run one request line; its RESULTS line must be want, and the journal
 * must have stored the same tail as the request's result. */
static void run_expect(const char *line, const char *want)
{
    char *got = seam_run(&S, line);
    if (strcmp(got, want) != 0)
        fail_msg("result line\n  %s\nexpected\n  %s", got, want);
    char *stored = seam_stored(seam_last_request());
    char *want_stored = str_printf("completed: %s", strchr(want, ' ') + 1);
    assert_string_equal(stored, want_stored);
    free(stored);
    free(want_stored);
    free(got);
}

/* BOINC_FETCH_OUTPUT <id> <job> <iwd> <stderr> <mode> <n> <specs>; the
 * paths of these tests hold no character that needs escaping. */
static char *fetch_line(long id, const char *job, const char *stderr_file,
                        const char *mode_and_specs)
{
    char *line = str_printf("BOINC_FETCH_OUTPUT %ld %s %s %s %s", id, job, iwd, stderr_file,
                            mode_and_specs);
    assert_non_null(line);
    return line;
}

static void fetch_expect(long id, const char *job, const char *stderr_file,
                         const char *mode_and_specs, const char *want)
{
    char *line = fetch_line(id, job, stderr_file, mode_and_specs);
    run_expect(line, want);
    free(line);
}

/* The get_output calls of the last run, as "file:limit ..." */
static char *downloads(void)
{
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < S.w.ncalls; i++)
        if (S.w.calls[i].kind == K_GET_OUTPUT)
            assert_int_equal(strbuf_printf(&sb, "%s%d:%lld", sb.len ? " " : "",
                                           S.w.calls[i].file_num, S.w.calls[i].limit), 0);
    char *text = sb.data != NULL ? strbuf_detach(&sb) : strdup("");
    assert_non_null(text);
    return text;
}

static void assert_downloads(const char *want)
{
    char *got = downloads();
    assert_string_equal(got, want);
    free(got);
}

/* The fetch wrote nothing of the batch and its jobs. */
static void assert_jobs_untouched(void)
{
    char *jobs = seam_sql("SELECT group_concat(name || '=' || status || '/' || status_seq, ' ') "
                          "FROM (SELECT * FROM jobs ORDER BY id)");
    assert_string_equal(jobs, "j1=UNSENT/0 j2=UNSENT/0");
    free(jobs);
    char *state = seam_sql("SELECT state || ' ' || server_batch_id FROM batches WHERE name = 'fb'");
    assert_string_equal(state, "7 77");      /* BATCH_SUBMITTED */
    free(state);
}

static void set_output(size_t i, const char *name, const void *data, size_t len,
                       long long declared, long long max_nbytes)
{
    S.w.outputs[i] = (sc_output){ name, max_nbytes, data, len, declared };
    if (S.w.noutputs < i + 1)
        S.w.noutputs = i + 1;
}

static void add_job(sc_fjob j)
{
    assert_true(S.w.nfjobs < SC_MAX_FJOBS);
    S.w.fjobs[S.w.nfjobs++] = j;
}

/* A server's templates cache starts empty again (a new exec_shared). */
static void fresh_cache(void)
{
    shared_free(S.shared);
    S.shared = shared_new();
    assert_non_null(S.shared);
}

/* 16 GiB: config.c's default --max-fetch-bytes, the limit of a file the
 * template gives no max_nbytes. */
#define FULL "17179869184"
#define FULL_LESS_OUT "17179869171"     /* what out.txt's 13 bytes leave */

static int setup(void **state)
{
    (void)state;
    seam_open(&S, "test_fetch_seam");
    iwd = str_printf("%s/iwd", seam_dir());
    other = str_printf("%s/other", seam_dir());
    if (iwd == NULL || other == NULL || mkdir(iwd, 0700) != 0 || mkdir(other, 0700) != 0)
        return -1;
    static const char *const jobs[] = { "j1", "j2" };
    seam_batch(&S, "fb", "fapp", 77, jobs, 2);
    S.w.detail_batch_id = 77;
    set_output(0, "out.txt", OUT, strlen(OUT), -1, 0);
    set_output(1, "log.txt", LOG, strlen(LOG), -1, 0);
    add_job((sc_fjob){ .name = "j1", .canonical_resultid = 1001, .has_exit_status = 1,
                       .exit_status = 0, .elapsed = 12.5, .cpu = 3.25,
                       .stderr_out = STDERR_J1 });
    add_job((sc_fjob){ .name = "j2", .canonical_resultid = 1002, .has_exit_status = 1,
                       .exit_status = 2, .elapsed = 1, .cpu = 0.5 });
    return 0;
}

/* Remove dir and everything in it (what a test, or a broken fetch, left). */
static void empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = str_printf("%s/%s", dir, e->d_name);
        if (p != NULL && unlink(p) != 0)
            empty_dir(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

static int teardown(void **state)
{
    (void)state;
    empty_dir(iwd);
    empty_dir(other);
    free(iwd);
    free(other);
    seam_close(&S);
    return 0;
}

/* ---- ALL and SOME ---------------------------------------------------------------- */

/* ALL: every output under its own name in iwd, the stderr appended, the
 * exit status and times in the result; nothing else in iwd. */
static void test_all(void **state)
{
    (void)state;
    fetch_expect(7, "j1", "err.txt", "ALL 0", "7 NULL 0 12.500000 3.250000");
    assert_listing(iwd, "err.txt log.txt out.txt");
    assert_file(iwd, "out.txt", OUT);
    assert_file(iwd, "log.txt", LOG);
    assert_file(iwd, "err.txt", STDERR_J1);
    assert_int_equal(S.w.seen[K_COMPLETED], 1);
    assert_int_equal(S.w.seen[K_TEMPLATES_JOB], 1);
    assert_downloads("0:" FULL " 1:" FULL_LESS_OUT);
    assert_int_equal(S.w.seen[K_OTHER], 0);
    assert_jobs_untouched();
}

/* SOME: only the outputs a spec names, each to its <dst> (here outside
 * iwd); a spec naming no output and a spec to /dev/null are skipped (the
 * latter not even downloaded); the stderr still goes to iwd. */
static void test_some(void **state)
{
    (void)state;
    char *specs = str_printf("SOME 3 out.txt %s/renamed.txt nosuch.txt x.txt log.txt /dev/null",
                             other);
    fetch_expect(8, "j1", "err.txt", specs, "8 NULL 0 12.500000 3.250000");
    free(specs);
    assert_listing(iwd, "err.txt");
    assert_listing(other, "renamed.txt");
    assert_file(other, "renamed.txt", OUT);
    assert_downloads("0:" FULL);
    assert_jobs_untouched();
}

/* SOME without specs fetches nothing, but the stderr is appended. */
static void test_some_without_specs(void **state)
{
    (void)state;
    fetch_expect(9, "j1", "err.txt", "SOME 0", "9 NULL 0 12.500000 3.250000");
    assert_listing(iwd, "err.txt");
    assert_downloads("");
}

/* ---- zip ------------------------------------------------------------------------- */

/* A zip archive of a.txt and b.txt (malloc'd bytes). */
static void *make_zip(size_t *len)
{
    char *path = str_printf("%s/made.zip", seam_dir());
    int e = 0;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &e);
    assert_non_null(z);
    zip_source_t *a = zip_source_buffer(z, "alpha\n", 6, 0);
    zip_source_t *b = zip_source_buffer(z, "bravo\n", 6, 0);
    assert_true(zip_file_add(z, "a.txt", a, ZIP_FL_OVERWRITE) >= 0);
    assert_true(zip_file_add(z, "b.txt", b, ZIP_FL_OVERWRITE) >= 0);
    assert_int_equal(zip_close(z), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    char *bytes = malloc((size_t)st.st_size);
    FILE *fp = fopen(path, "rb");
    assert_non_null(bytes);
    assert_non_null(fp);
    assert_int_equal(fread(bytes, 1, (size_t)st.st_size, fp), (size_t)st.st_size);
    fclose(fp);
    unlink(path);
    free(path);
    *len = (size_t)st.st_size;
    return bytes;
}

/* A job whose only output is a .zip delivers the members, not the
 * archive: ALL puts both in iwd; SOME places only the named member, at
 * its <dst>.  The private work directory goes either way. */
static void test_zip(void **state)
{
    (void)state;
    size_t len = 0;
    void *zip = make_zip(&len);
    S.w.noutputs = 0;
    set_output(0, "result.zip", zip, len, -1, 0);

    fetch_expect(10, "j1", "err.txt", "ALL 0", "10 NULL 0 12.500000 3.250000");
    assert_listing(iwd, "a.txt b.txt err.txt");
    assert_file(iwd, "a.txt", "alpha\n");
    assert_file(iwd, "b.txt", "bravo\n");
    assert_downloads("0:" FULL);

    char *specs = str_printf("SOME 1 b.txt %s/b-renamed.txt", other);
    fetch_expect(11, "j2", "j2-err.txt", specs, "11 NULL 2 1.000000 0.500000");
    free(specs);
    assert_listing(other, "b-renamed.txt");
    assert_file(other, "b-renamed.txt", "bravo\n");
    assert_listing(iwd, "a.txt b.txt err.txt");
    assert_jobs_untouched();
    free(zip);
}

/* ---- failures: nothing published ------------------------------------------------- */

/* The second download fails: the first output, complete in its temp
 * file, is not put in place either, an older file of that name stays as
 * it was, no temp file is left, no stderr is appended.  The same fetch
 * asked again succeeds. */
static void test_failed_download(void **state)
{
    (void)state;
    write_file(iwd, "out.txt", "an older out.txt\n");
    sc_fault f = { K_GET_OUTPUT, 2, O_REFUSED };
    sc_world_script(&S.w, &f, 1);
    fetch_expect(12, "j1", "err.txt", "ALL 0",
                 "12 get_output\\ of\\ log.txt\\ (file\\ 1)\\ failed:\\ server\\ error:\\ "
                 "scripted\\ refusal");
    assert_listing(iwd, "out.txt");
    assert_file(iwd, "out.txt", "an older out.txt\n");
    assert_downloads("0:" FULL " 1:" FULL_LESS_OUT);

    sc_world_script(&S.w, NULL, 0);
    fetch_expect(13, "j1", "err.txt", "ALL 0", "13 NULL 0 12.500000 3.250000");
    assert_listing(iwd, "err.txt log.txt out.txt");
    assert_file(iwd, "out.txt", OUT);
    assert_file(iwd, "err.txt", STDERR_J1);
    assert_jobs_untouched();
}

/* The server announces one size and sends another (fewer bytes, then
 * more): a transport error naming both, nothing in place. */
static void test_lying_size(void **state)
{
    (void)state;
    set_output(1, "log.txt", LOG, strlen(LOG), 100, 0);
    fetch_expect(14, "j1", "err.txt", "ALL 0",
                 "14 get_output\\ of\\ log.txt\\ (file\\ 1)\\ failed:\\ transport\\ error:\\ "
                 "get_output:\\ body\\ shorter\\ than\\ Content-Length\\ (9\\ of\\ 100\\ bytes)");
    assert_listing(iwd, "");

    set_output(0, "out.txt", OUT, strlen(OUT), 5, 0);
    set_output(1, "log.txt", LOG, strlen(LOG), -1, 0);
    fresh_cache();
    fetch_expect(15, "j1", "err.txt", "ALL 0",
                 "15 get_output\\ of\\ out.txt\\ (file\\ 0)\\ failed:\\ transport\\ error:\\ "
                 "get_output:\\ got\\ 13\\ bytes,\\ Content-Length\\ said\\ 5");
    assert_listing(iwd, "");
    assert_jobs_untouched();
}

/* The template's max_nbytes bounds its output's download (and only that
 * one): a server sending more is refused, nothing in place.  The fetch's
 * total (--max-fetch-bytes) bounds what is left for the next output, and
 * a fetch that used it all up is refused before the next download. */
static void test_max_nbytes_stop(void **state)
{
    (void)state;
    set_output(1, "log.txt", LOG, strlen(LOG), -1, 4);
    fetch_expect(16, "j1", "err.txt", "ALL 0",
                 "16 get_output\\ of\\ log.txt\\ (file\\ 1)\\ failed:\\ local\\ I/O\\ error:\\ "
                 "get_output:\\ output\\ file\\ larger\\ than\\ the\\ limit\\ of\\ 4\\ bytes\\ "
                 "(--max-output-bytes\\ /\\ --max-fetch-bytes\\ /\\ the\\ template's\\ "
                 "max_nbytes)");
    assert_listing(iwd, "");
    assert_downloads("0:" FULL " 1:4");

    /* a max_nbytes the output keeps to */
    set_output(1, "log.txt", LOG, strlen(LOG), -1, 9);
    fresh_cache();
    fetch_expect(17, "j1", "err.txt", "ALL 0", "17 NULL 0 12.500000 3.250000");
    assert_downloads("0:" FULL " 1:9");
    assert_listing(iwd, "err.txt log.txt out.txt");
    empty_dir(iwd);
    assert_int_equal(mkdir(iwd, 0700), 0);

    /* --max-fetch-bytes 20: 13 bytes of out.txt leave 7 for log.txt */
    set_output(1, "log.txt", LOG, strlen(LOG), -1, 0);
    fresh_cache();
    S.cfg.max_fetch_bytes = 20;
    fetch_expect(18, "j1", "err.txt", "ALL 0",
                 "18 get_output\\ of\\ log.txt\\ (file\\ 1)\\ failed:\\ local\\ I/O\\ error:\\ "
                 "get_output:\\ output\\ file\\ larger\\ than\\ the\\ limit\\ of\\ 7\\ bytes\\ "
                 "(--max-output-bytes\\ /\\ --max-fetch-bytes\\ /\\ the\\ template's\\ "
                 "max_nbytes)");
    assert_downloads("0:20 1:7");
    assert_listing(iwd, "");

    /* --max-fetch-bytes 13: nothing left for log.txt, not even asked */
    S.cfg.max_fetch_bytes = 13;
    fetch_expect(19, "j1", "err.txt", "ALL 0",
                 "19 get_output\\ of\\ log.txt\\ failed:\\ the\\ fetch\\ already\\ reached\\ "
                 "--max-fetch-bytes\\ (13\\ bytes)");
    assert_downloads("0:13");
    assert_listing(iwd, "");
    assert_jobs_untouched();
}

/* ---- stderr ------------------------------------------------------------------------ */

/* A relative stderr file is in iwd, an absolute one where it says; the
 * text is appended after what the file holds, once (a repeated fetch
 * leaves a file that already ends with it as it is); a job without
 * stderr_out writes no stderr file. */
static void test_stderr_placement(void **state)
{
    (void)state;
    fetch_expect(20, "j1", "sub-err.txt", "SOME 0", "20 NULL 0 12.500000 3.250000");
    assert_listing(iwd, "sub-err.txt");
    assert_file(iwd, "sub-err.txt", STDERR_J1);

    char *abs = str_printf("%s/err.log", other);
    write_file(other, "err.log", "earlier text\n");
    fetch_expect(21, "j1", abs, "SOME 0", "21 NULL 0 12.500000 3.250000");
    char *want = str_printf("earlier text\n%s", STDERR_J1);
    assert_file(other, "err.log", want);
    fetch_expect(22, "j1", abs, "SOME 0", "22 NULL 0 12.500000 3.250000");
    assert_file(other, "err.log", want);
    assert_listing(other, "err.log");
    free(want);
    free(abs);

    fetch_expect(23, "j2", "j2-err.txt", "SOME 0", "23 NULL 2 1.000000 0.500000");
    assert_listing(iwd, "sub-err.txt");
}

/* ---- how the job ended ----------------------------------------------------------- */

/* A failed job with an exit status: the status and its stderr, no
 * download; without one, the error mask named; a job not finished; a job
 * the server does not know. */
static void test_job_outcomes(void **state)
{
    (void)state;
    add_job((sc_fjob){ .name = "j3", .error_mask = 2, .has_exit_status = 1,
                       .exit_status = 3, .elapsed = 1, .cpu = 0.5, .stderr_out = "boom\n" });
    add_job((sc_fjob){ .name = "j4", .error_mask = 16 | 32 });
    add_job((sc_fjob){ .name = "j5" });
    fetch_expect(24, "j3", "err.txt", "ALL 0", "24 NULL 3 1.000000 0.500000");
    assert_downloads("");
    assert_int_equal(S.w.seen[K_TEMPLATES_JOB], 0);
    assert_listing(iwd, "err.txt");
    assert_file(iwd, "err.txt", "boom\n");

    fetch_expect(25, "j4", "err4.txt", "ALL 0",
                 "25 job\\ j4\\ failed:\\ error\\ mask\\ 48\\ (cancelled,\\ no_canonical_result),"
                 "\\ no\\ instance\\ reported");
    fetch_expect(26, "j5", "err5.txt", "ALL 0", "26 job\\ j5\\ is\\ not\\ finished");
    fetch_expect(27, "j9", "err9.txt", "ALL 0",
                 "27 query_completed_job\\ failed:\\ server\\ error:\\ no\\ such\\ job");
    assert_int_equal(S.w.seen[K_JOB_DETAIL], 0);
    assert_listing(iwd, "err.txt");
    assert_jobs_untouched();
}

/* A stock server's query_completed_job dies for a failed job: the exit
 * status comes from query_batch's job details, of the server batch the
 * journal recorded for the job (77); without a failed instance, the
 * batch's word on the job. */
static void test_stock_server_fallback(void **state)
{
    (void)state;
    S.w.fjobs[1] = (sc_fjob){ .name = "j2", .completed_broken = 1, .detail_exit = 246,
                              .detail_status = "error" };
    fetch_expect(28, "j2", "j2-err.txt", "ALL 0", "28 NULL 246 0.000000 0.000000");
    assert_int_equal(S.w.seen[K_JOB_DETAIL], 1);
    assert_downloads("");
    assert_listing(iwd, "");

    S.w.fjobs[1].detail_exit = -1;
    fetch_expect(29, "j2", "j2-err.txt", "ALL 0",
                 "29 job\\ j2\\ failed:\\ no\\ instance\\ reported\\ an\\ exit\\ status\\ "
                 "(the\\ server's\\ query_completed_job\\ failed)");
    S.w.fjobs[1].detail_status = "in progress";
    fetch_expect(30, "j2", "j2-err.txt", "ALL 0", "30 job\\ j2\\ is\\ not\\ finished");
    assert_listing(iwd, "");
}

/* ---- the templates ----------------------------------------------------------------- */

/* One get_templates per app: the second job's fetch uses the cached
 * answer.  When the server's template changed so that a download fails
 * (an output dropped: its number is gone), the fetch asks again once and
 * downloads with the new answer. */
static void test_templates_cached_then_refreshed(void **state)
{
    (void)state;
    fetch_expect(31, "j1", "err.txt", "ALL 0", "31 NULL 0 12.500000 3.250000");
    assert_int_equal(S.w.seen[K_TEMPLATES_JOB], 1);
    fetch_expect(32, "j2", "j2-err.txt", "SOME 0", "32 NULL 2 1.000000 0.500000");
    assert_int_equal(S.w.seen[K_TEMPLATES_JOB], 0);

    empty_dir(iwd);
    assert_int_equal(mkdir(iwd, 0700), 0);
    S.w.noutputs = 1;       /* log.txt dropped from the app's template */
    fetch_expect(33, "j1", "err.txt", "ALL 0", "33 NULL 0 12.500000 3.250000");
    assert_int_equal(S.w.seen[K_TEMPLATES_JOB], 1);
    assert_downloads("0:" FULL " 1:" FULL_LESS_OUT " 0:" FULL);
    assert_listing(iwd, "err.txt out.txt");
}

int main(void)
{
    log_open(NULL, LOG_ERROR, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_some, setup, teardown),
        cmocka_unit_test_setup_teardown(test_some_without_specs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_download, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lying_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_nbytes_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stderr_placement, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_outcomes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stock_server_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_templates_cached_then_refreshed, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
