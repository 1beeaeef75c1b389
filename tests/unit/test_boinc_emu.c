/*
 * test_boinc_emu.c - the BOINC RPC client against a real HTTP server: the
 * project emulator (build/boinc_emu, or $BOINC_EMU) started on 127.0.0.1
 * with a fresh state directory.  Every RPC is called for real through the
 * public API (a whole job life cycle), then injected faults check retries,
 * error codes and that an error page never lands in an output file.  A
 * one-shot socket server in a thread (also on 127.0.0.1) answers with a
 * redirect to a file: URL, which the emulator cannot do.
 *
 * Proxy variables point at a dead port, with no_proxy=127.0.0.1, so the
 * test also proves that loopback traffic bypasses the proxy.
 */
#define _GNU_SOURCE     /* nftw, strndup */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "boinc/boinc.h"
#include "base/files.h"
#include "base/strbuf.h"

/* One emulator for the whole program. */

/* upload_files with every file read from its path (no size known, so
 * unchecked): local_paths[i] goes as part file_i under phys_names[i]. */
static int boinc_upload_files(boinc_client *c, const boinc_project *p, long batch_id,
                              const char *const *phys_names,
                              const char *const *local_paths, size_t n, boinc_error *err)
{
    boinc_upload_src *src = calloc(n ? n : 1, sizeof *src);
    if (src == NULL)
        return BOINC_E_NOMEM;
    for (size_t k = 0; k < n; k++)
        src[k] = (boinc_upload_src){ local_paths ? local_paths[k] : NULL, NULL, -1 };
    int rc = boinc_upload_files_src(c, p, batch_id, phys_names, src, n, err);
    free(src);
    return rc;
}

static struct {
    char state_dir[64];
    char *emu_path;
    pid_t pid;
    char *url;          /* project URL, ends in '/' */
    char *auth;
    char *control;      /* control API base, ends in '/' */
    boinc_client *client;
    boinc_project project;
    char work_dir[64];  /* temp files of the tests */
} E = { .pid = -1 };

/* ---- tiny helpers ---------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir)
{
    if (dir[0] != '\0')
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* malloc'd value of "key": "value" in a one-line JSON object. */
static char *json_string(const char *json, const char *key)
{
    strbuf pat = STRBUF_INIT;
    if (strbuf_printf(&pat, "\"%s\"", key) != 0)
        return NULL;
    const char *p = strstr(json, strbuf_str(&pat));
    size_t klen = pat.len;
    strbuf_free(&pat);
    if (p == NULL)
        return NULL;
    p = strchr(p + klen, '"');
    if (p == NULL)
        return NULL;
    const char *end = strchr(p + 1, '"');
    if (end == NULL)
        return NULL;
    return strndup(p + 1, (size_t)(end - p - 1));
}

/* Value of "key": N (first occurrence) in JSON text; -1 if absent. */
static long json_number(const char *json, const char *key)
{
    strbuf pat = STRBUF_INIT;
    if (strbuf_printf(&pat, "\"%s\":", key) != 0)
        return -1;
    const char *p = strstr(json, strbuf_str(&pat));
    size_t klen = pat.len;
    strbuf_free(&pat);
    if (p == NULL)
        return -1;
    p += klen;
    while (*p == ' ')
        p++;
    char *end;
    long v = strtol(p, &end, 10);
    return end == p ? -1 : v;
}

static size_t collect(char *data, size_t size, size_t nmemb, void *arg)
{
    return strbuf_append(arg, data, size * nmemb) == 0 ? size * nmemb : 0;
}

/* Call the emulator's control API (POST unless get); returns the body. */
static char *control(const char *path_and_query, int get)
{
    strbuf url = STRBUF_INIT, body = STRBUF_INIT;
    assert_int_equal(strbuf_printf(&url, "%s%s", E.control, path_and_query),
                     0);
    CURL *h = curl_easy_init();
    assert_non_null(h);
    curl_easy_setopt(h, CURLOPT_URL, strbuf_str(&url));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    if (!get)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK || status != 200)
        fail_msg("control %s: curl %d, HTTP %ld: %s", strbuf_str(&url),
                 (int)rc, status, strbuf_str(&body));
    strbuf_free(&url);
    return strbuf_detach(&body);
}

static long counter(const char *rpc)
{
    char *json = control("counters", 1);
    long v = json_number(json, rpc);
    free(json);
    return v;
}

static void inject(const char *endpoint, const char *kind, int count)
{
    strbuf q = STRBUF_INIT;
    assert_int_equal(strbuf_printf(&q, "fault?endpoint=%s&kind=%s&count=%d",
                                   endpoint, kind, count), 0);
    free(control(strbuf_str(&q), 0));
    strbuf_free(&q);
}

static char *work_path(const char *name)
{
    strbuf p = STRBUF_INIT;
    assert_int_equal(strbuf_printf(&p, "%s/%s", E.work_dir, name), 0);
    return strbuf_detach(&p);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Fresh empty output file for get_output; returns its fd. */
static int open_output(const char *name)
{
    char *path = work_path(name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    free(path);
    assert_true(fd >= 0);
    return fd;
}

static char *read_fd(int fd)
{
    strbuf sb = STRBUF_INIT;
    char buf[4096];
    assert_true(lseek(fd, 0, SEEK_SET) == 0);
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        assert_int_equal(strbuf_append(&sb, buf, (size_t)n), 0);
    assert_true(n == 0);
    return strbuf_detach(&sb);
}

static void assert_ok(int rc, boinc_error *err, const char *what)
{
    if (rc != BOINC_OK)
        fail_msg("%s: %s (%d): %s", what, boinc_code_name((boinc_code)rc), rc,
                 err->msg ? err->msg : "");
    assert_null(err->msg);
}

/* ---- emulator lifetime --------------------------------------------------------- */

/* Read the first stdout line of the emulator (at most 30 s). */
static char *read_first_line(int fd)
{
    strbuf line = STRBUF_INIT;
    for (;;) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        int r = poll(&pfd, 1, 30000);
        if (r <= 0)
            return NULL;
        char ch;
        ssize_t n = read(fd, &ch, 1);
        if (n <= 0)
            return NULL;
        if (ch == '\n')
            return strbuf_detach(&line);
        if (strbuf_putc(&line, ch) != 0)
            return NULL;
    }
}

static int start_emulator(void **state)
{
    (void)state;
    /* Loopback must bypass the (dead) proxy, as in production tests. */
    setenv("http_proxy", "http://127.0.0.1:9", 1);
    setenv("https_proxy", "http://127.0.0.1:9", 1);
    setenv("HTTP_PROXY", "http://127.0.0.1:9", 1);
    setenv("HTTPS_PROXY", "http://127.0.0.1:9", 1);
    setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
    setenv("no_proxy", "127.0.0.1", 1);
    setenv("NO_PROXY", "127.0.0.1", 1);
    if (boinc_global_init() != 0)
        return -1;
    snprintf(E.state_dir, sizeof E.state_dir, "/tmp/boinc_emu_state.XXXXXX");
    snprintf(E.work_dir, sizeof E.work_dir, "/tmp/boinc_emu_work.XXXXXX");
    if (mkdtemp(E.state_dir) == NULL || mkdtemp(E.work_dir) == NULL)
        return -1;
    if (access(E.emu_path, X_OK) != 0) {
        fprintf(stderr, "emulator %s not found (set BOINC_EMU or run "
                        "`make build/boinc_emu`)\n", E.emu_path);
        return -1;
    }
    int out[2];
    if (pipe(out) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execl(E.emu_path, E.emu_path, "--state-dir", E.state_dir, "--port",
              "0", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    E.pid = pid;
    char *line = read_first_line(out[0]);
    /* Keep the pipe open but unread: the emulator writes nothing more to
     * stdout that matters, and closing it could SIGPIPE a later write. */
    if (line == NULL) {
        fprintf(stderr, "emulator printed no first line\n");
        return -1;
    }
    E.url = json_string(line, "url");
    E.auth = json_string(line, "authenticator");
    E.control = json_string(line, "control");
    free(line);
    if (E.url == NULL || E.auth == NULL || E.control == NULL)
        return -1;
    boinc_options opts;
    boinc_options_default(&opts);
    opts.connect_timeout_ms = 5000;
    opts.total_timeout_ms = 60000;
    opts.retry_budget_ms = 20000;
    E.client = boinc_client_new(&opts);
    E.project.url = E.url;
    E.project.authenticator = E.auth;
    return E.client != NULL ? 0 : -1;
}

static int stop_emulator(void **state)
{
    (void)state;
    if (E.pid > 0) {
        kill(E.pid, SIGTERM);
        int status;
        waitpid(E.pid, &status, 0);
    }
    boinc_client_free(E.client);
    free(E.url);
    free(E.auth);
    free(E.control);
    rm_tree(E.state_dir);
    rm_tree(E.work_dir);
    boinc_global_cleanup();
    return 0;
}

static int clear_faults(void **state)
{
    (void)state;
    free(control("clear_faults", 0));
    return 0;
}

static int clear_quirks(void **state)
{
    free(control("quirks?set=none", 0));
    return clear_faults(state);
}

/* Id of the batch made by test_abort, for the quirks test. */
static long abort_batch_id;

/* ---- the RPCs, for real ------------------------------------------------------------ */

static void test_ping(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    assert_ok(boinc_ping(E.client, &E.project, &err), &err, "ping");
}

static void test_templates_uppercase(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    boinc_templates t;
    assert_ok(boinc_get_templates(E.client, &E.project, "uppercase", &t, &err),
              &err, "get_templates");
    assert_true(t.n_inputs >= 1);
    assert_true(t.n_outputs >= 1);
    assert_non_null(t.output_names[0]);
    boinc_templates_free(&t);
    assert_int_equal(boinc_get_templates(E.client, &E.project, "no_such_app",
                                         &t, &err),
                     BOINC_E_SERVER);
    assert_non_null(strstr(err.msg, "no_such_app"));
    boinc_error_clear(&err);
}

/* Poll query_batch2 for job_name's status, advancing virtual time. */
static char *wait_status(const char *batch, const char *want)
{
    boinc_error err = { 0 };
    const char *names[] = { batch };
    for (int round = 0; round < 40; round++) {
        boinc_query_result r;
        assert_ok(boinc_query_batch2(E.client, &E.project, "0", names, 1, &r,
                                     &err),
                  &err, "query_batch2");
        assert_int_equal(r.nbatches, 1);
        assert_int_equal(r.batches[0].njobs, 1);
        char *status = strdup(r.batches[0].jobs[0].status);
        boinc_query_result_free(&r);
        if (strcmp(status, want) == 0 || strcmp(status, "ERROR") == 0)
            return status;
        free(status);
        free(control("advance?seconds=60", 0));
    }
    return strdup("TIMEOUT");
}

/* The input file and its physical name (the emulator, like real servers,
 * does not check the name against the content). */
#define INPUT_TEXT "hello boinc & friends <1>\n"
#define INPUT_PHYS "5f1e0a6c2b8d4e7f9a0b1c2d3e4f5a6b.txt"

static void test_job_life_cycle(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    long batch_id = 0;
    assert_ok(boinc_create_batch(E.client, &E.project, "ut batch & one",
                                 "uppercase", (double)time(NULL) + 86400,
                                 &batch_id, &err),
              &err, "create_batch");
    assert_true(batch_id > 0);

    const char *phys[] = { INPUT_PHYS };
    unsigned char absent[1] = { 0 };
    assert_ok(boinc_query_files(E.client, &E.project, batch_id, phys, 1,
                                absent, &err),
              &err, "query_files");
    assert_int_equal(absent[0], 1);

    char *input = work_path("input.txt");
    write_file(input, INPUT_TEXT);
    const char *paths[] = { input };
    assert_ok(boinc_upload_files(E.client, &E.project, batch_id, phys, paths,
                                 1, &err),
              &err, "upload_files");
    free(input);
    /* Without a batch id query_files only asks: now the file is there. */
    assert_ok(boinc_query_files(E.client, &E.project, 0, phys, 1, absent,
                                &err),
              &err, "query_files without batch");
    assert_int_equal(absent[0], 0);

    boinc_job_spec job = { "ut_job_1", "--some arg", 1, phys };
    gahp_job_params params = { 0, 0, 0, 0, 0, 0 };
    assert_ok(boinc_submit_batch(E.client, &E.project, batch_id, "uppercase",
                                 &params, &job, 1, &err),
              &err, "submit_batch");

    char *status = wait_status("ut batch & one", "DONE");
    assert_string_equal(status, "DONE");
    free(status);

    boinc_completed_job cj;
    assert_ok(boinc_query_completed_job(E.client, &E.project, "ut_job_1", &cj,
                                        &err),
              &err, "query_completed_job");
    assert_int_equal(cj.error_mask, 0);
    assert_true(cj.canonical_resultid > 0);
    boinc_completed_job_free(&cj);

    int fd = open_output("out0");
    long long nbytes = -1;
    assert_ok(boinc_get_output_file(E.client, &E.project, "ut_job_1", 0, fd,
                                    &nbytes, &err),
              &err, "get_output");
    char *got = read_fd(fd);
    close(fd);
    char want[] = INPUT_TEXT;
    for (char *p = want; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    assert_string_equal(got, want);
    assert_int_equal(nbytes, (long long)strlen(want));
    free(got);

    boinc_batch_info *batches = NULL;
    size_t nb = 0;
    assert_ok(boinc_query_batches(E.client, &E.project, &batches, &nb, &err),
              &err, "query_batches");
    int seen = 0;
    for (size_t i = 0; i < nb; i++)
        if (batches[i].id == batch_id) {
            assert_string_equal(batches[i].name, "ut batch & one");
            assert_string_equal(batches[i].app_name, "uppercase");
            assert_int_equal(batches[i].njobs, 1);
            seen = 1;
        }
    assert_true(seen);
    boinc_batch_info_free(batches, nb);

    char **names = NULL;
    size_t nn = 0;
    assert_ok(boinc_query_batch_jobs(E.client, &E.project, batch_id, &names,
                                     &nn, &err),
              &err, "query_batch");
    assert_int_equal(nn, 1);
    assert_string_equal(names[0], "ut_job_1");
    boinc_names_free(names, nn);

    assert_ok(boinc_set_expire_time(E.client, &E.project, "ut batch & one",
                                    (double)time(NULL) + 3600, &err),
              &err, "set_expire_time");
    assert_ok(boinc_retire_batch(E.client, &E.project, "ut batch & one", &err),
              &err, "retire_batch");
}

static void test_abort(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    long batch_id = 0;
    assert_ok(boinc_create_batch(E.client, &E.project, "ut_abort_batch",
                                 "uppercase", 0, &batch_id, &err),
              &err, "create_batch");
    abort_batch_id = batch_id;
    const char *phys[] = { INPUT_PHYS };
    unsigned char absent[1] = { 1 };
    assert_ok(boinc_query_files(E.client, &E.project, batch_id, phys, 1,
                                absent, &err),
              &err, "query_files");
    assert_int_equal(absent[0], 0);     /* uploaded by the life cycle test */
    boinc_job_spec job = { "ut_job_abort", NULL, 1, phys };
    assert_ok(boinc_submit_batch(E.client, &E.project, batch_id, "uppercase",
                                 NULL, &job, 1, &err),
              &err, "submit_batch");
    const char *jobs[] = { "ut_job_abort" };
    assert_ok(boinc_abort_jobs(E.client, &E.project, jobs, 1, &err), &err,
              "abort_jobs");
    const char *names[] = { "ut_abort_batch" };
    boinc_query_result r;
    assert_ok(boinc_query_batch2(E.client, &E.project, "0", names, 1, &r,
                                 &err),
              &err, "query_batch2");
    assert_string_equal(r.batches[0].jobs[0].status, "ERROR");
    boinc_query_result_free(&r);

    /* Server errors keep the server's words. */
    const char *unknown[] = { "ut_no_such_batch" };
    assert_int_equal(boinc_query_batch2(E.client, &E.project, "0", unknown, 1,
                                        &r, &err),
                     BOINC_E_SERVER);
    assert_non_null(strstr(err.msg, "no batch named ut_no_such_batch"));
    boinc_error_clear(&err);
}

/* The emulator's real-server quirks: PHP warnings between elements and
 * the stock query_completed_job bug (a PHP fatal error mid-reply). */
static void test_real_server_quirks(void **state)
{
    (void)state;
    assert_true(abort_batch_id > 0);
    free(control("quirks?set=php-warnings,qcj-stock", 0));
    boinc_error err = { 0 };
    boinc_batch_info *b = NULL;
    size_t n = 0;
    assert_ok(boinc_query_batches(E.client, &E.project, &b, &n, &err), &err,
              "query_batches with PHP warnings");
    int seen = 0;
    for (size_t i = 0; i < n; i++)
        seen |= b[i].id == abort_batch_id &&
                strcmp(b[i].name, "ut_abort_batch") == 0;
    assert_true(seen);
    boinc_batch_info_free(b, n);
    char **names = NULL;
    assert_ok(boinc_query_batch_jobs(E.client, &E.project, abort_batch_id,
                                     &names, &n, &err),
              &err, "query_batch with PHP warnings");
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "ut_job_abort");
    boinc_names_free(names, n);
    boinc_completed_job cj;
    assert_int_equal(boinc_query_completed_job(E.client, &E.project,
                                               "ut_job_abort", &cj, &err),
                     BOINC_E_PARSE);
    assert_non_null(strstr(err.msg, "server error: Fatal error"));
    assert_null(strchr(err.msg, '\n'));
    boinc_error_clear(&err);
    assert_ok(boinc_retire_batch(E.client, &E.project, "ut_abort_batch", &err),
              &err, "retire_batch with PHP warnings");
}

/* ---- faults ------------------------------------------------------------------------ */

static void test_http500_retried(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    long before = counter("ping");
    inject("ping", "http500", 1);
    assert_ok(boinc_ping(E.client, &E.project, &err), &err,
              "ping after one HTTP 500");
    assert_int_equal(counter("ping"), before + 2);
}

static void test_unsafe_request_sent_once(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    long before = counter("create_batch");
    inject("create_batch", "http503", 1);
    long id = 0;
    assert_int_equal(boinc_create_batch(E.client, &E.project, "ut_once",
                                        "uppercase", 0, &id, &err),
                     BOINC_E_HTTP);
    assert_int_equal(err.http_status, 503);
    assert_non_null(strstr(err.msg, "HTTP 503"));
    assert_int_equal(counter("create_batch"), before + 1);
    boinc_error_clear(&err);
}

static void test_connection_refused(void **state)
{
    (void)state;
    /* A port that was just free: bind to 0, read it, close it. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &alen), 0);
    close(s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/emu/",
             (unsigned)ntohs(a.sin_port));
    boinc_options opts;
    boinc_options_default(&opts);
    opts.retry_budget_ms = 1200;
    boinc_client *c = boinc_client_new(&opts);
    assert_non_null(c);
    boinc_project p = { url, E.auth };
    boinc_error err = { 0 };
    assert_int_equal(boinc_ping(c, &p, &err), BOINC_E_TRANSPORT);
    assert_int_equal(err.code, BOINC_E_TRANSPORT);
    assert_non_null(strstr(err.msg, "ping"));
    assert_null(strstr(err.msg, E.auth));
    assert_null(strchr(err.msg, '\n'));
    boinc_error_clear(&err);
    boinc_client_free(c);
}

/* Project URL with a wrong path: the web server's own 4xx page, reported
 * with its status and text, and not retried. */
static void expect_http_error(const char *path, long status, const char *want)
{
    char url[128];
    const char *port_end = strchr(E.url + strlen("http://"), '/');
    snprintf(url, sizeof url, "%.*s%s", (int)(port_end - E.url), E.url, path);
    boinc_project p = { url, E.auth };
    boinc_error err = { 0 };
    assert_int_equal(boinc_ping(E.client, &p, &err), BOINC_E_HTTP);
    assert_int_equal(err.http_status, status);
    if (strstr(err.msg, want) == NULL)
        fail_msg("'%s' lacks '%s'", err.msg, want);
    boinc_error_clear(&err);
}

static void test_http_4xx_pages(void **state)
{
    (void)state;
    expect_http_error("/emux/", 403,
                      "ping: HTTP 403 Forbidden: You don't have permission");
    expect_http_error("/nothing/here/", 404, "ping: HTTP 404 Not Found");
}

/* https to a plain-HTTP port: the TLS handshake fails, promptly, as a
 * transport error (https is allowed, nothing falls back to http). */
static void test_https_to_plain_port(void **state)
{
    (void)state;
    char url[128];
    snprintf(url, sizeof url, "https://%s", E.url + strlen("http://"));
    boinc_options opts;
    boinc_options_default(&opts);
    opts.retry_budget_ms = 0;
    boinc_client *c = boinc_client_new(&opts);
    assert_non_null(c);
    boinc_project p = { url, E.auth };
    boinc_error err = { 0 };
    assert_int_equal(boinc_ping(c, &p, &err), BOINC_E_TRANSPORT);
    assert_int_equal(err.http_status, 0);
    boinc_error_clear(&err);
    boinc_client_free(c);
}

/* A one-shot HTTP server on 127.0.0.1 that answers every request with a
 * redirect to a file: URL (the emulator never redirects). */
typedef struct {
    int listener;
    int served;
} redirect_server;

static void *serve_redirect(void *arg)
{
    redirect_server *rs = arg;
    int fd = accept(rs->listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    /* A GET has no body: read up to the blank line ending the headers. */
    strbuf req = STRBUF_INIT;
    char buf[1024];
    while (strstr(strbuf_str(&req), "\r\n\r\n") == NULL) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0 || strbuf_append(&req, buf, (size_t)n) != 0)
            break;
    }
    static const char reply[] =
        "HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\n"
        "Content-Type: text/html\r\nContent-Length: 5\r\n"
        "Connection: close\r\n\r\nmoved";
    if (write(fd, reply, sizeof reply - 1) == (ssize_t)(sizeof reply - 1))
        rs->served = 1;
    strbuf_free(&req);
    close(fd);
    return NULL;
}

static void test_redirect_not_followed(void **state)
{
    (void)state;
    redirect_server rs = { socket(AF_INET, SOCK_STREAM, 0), 0 };
    assert_true(rs.listener >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    assert_int_equal(bind(rs.listener, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(rs.listener, 4), 0);
    assert_int_equal(getsockname(rs.listener, (struct sockaddr *)&a, &alen),
                     0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, serve_redirect, &rs), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/p/",
             (unsigned)ntohs(a.sin_port));
    boinc_project p = { url, E.auth };
    boinc_error err = { 0 };
    int fd = open_output("out_redirect");
    long long nbytes = -1;
    assert_int_equal(boinc_get_output_file(E.client, &p, "j", 0, fd, &nbytes,
                                           &err),
                     BOINC_E_HTTP);
    assert_int_equal(err.http_status, 302);
    assert_null(strstr(err.msg, E.auth));
    struct stat st;
    assert_true(fstat(fd, &st) == 0 && st.st_size == 0);
    close(fd);
    boinc_error_clear(&err);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(rs.served);
    close(rs.listener);
}

static void test_truncated_reply(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    inject("ping", "truncate", 1);
    assert_int_equal(boinc_ping(E.client, &E.project, &err), BOINC_E_PARSE);
    assert_non_null(strstr(err.msg, "Fatal error"));
    boinc_error_clear(&err);
    inject("query_batches", "malformed", 1);
    boinc_batch_info *b = NULL;
    size_t n = 0;
    assert_int_equal(boinc_query_batches(E.client, &E.project, &b, &n, &err),
                     BOINC_E_PARSE);
    assert_null(b);
    boinc_error_clear(&err);
}

static void test_output_error_page_not_saved(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    inject("get_output.php", "html_error", 1);
    int fd = open_output("out_err");
    long long nbytes = -1;
    assert_int_equal(boinc_get_output_file(E.client, &E.project, "ut_job_1", 0,
                                           fd, &nbytes, &err),
                     BOINC_E_SERVER);
    assert_non_null(strstr(err.msg, "injected fault"));
    assert_null(strstr(err.msg, E.auth));
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(nbytes, 0);
    close(fd);
    boinc_error_clear(&err);

    /* Unknown job: the server's ERROR: text, nothing written. */
    fd = open_output("out_unknown");
    assert_int_equal(boinc_get_output_file(E.client, &E.project, "ut_nojob", 0,
                                           fd, &nbytes, &err),
                     BOINC_E_SERVER);
    assert_true(fstat(fd, &st) == 0 && st.st_size == 0);
    close(fd);
    boinc_error_clear(&err);
}

static void test_output_dropped_then_retried(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    long before = counter("get_output");
    /* after=1: the real file is sent with its Content-Length, then the
     * connection is cut half way: a partial file, written and then wiped
     * before the retry. */
    free(control("fault?endpoint=get_output.php&kind=drop&count=1&after=1",
                 0));
    int fd = open_output("out_drop");
    long long nbytes = -1;
    assert_ok(boinc_get_output_file(E.client, &E.project, "ut_job_1", 0, fd,
                                    &nbytes, &err),
              &err, "get_output after a dropped transfer");
    char *got = read_fd(fd);
    assert_string_equal(got, "HELLO BOINC & FRIENDS <1>\n");
    free(got);
    close(fd);
    assert_int_equal(counter("get_output"), before + 2);
}

/* A file of known size is first opened when the body reaches it: one
 * that is gone, or not a regular file, aborts the request after the
 * files before it went out, and the server stores none of them. */
static void test_upload_known_size_checked_on_the_way(void **state)
{
    (void)state;
    char *good = work_path("known_size_good.txt");
    write_file(good, "hello");
    char md5[FILES_MD5_HEX_LEN + 1];
    assert_int_equal(files_md5_hex_mem("hello", 5, md5), 0);
    char *good_phys = boinc_phys_name(md5, "good.txt");
    char *missing = work_path("known_size_missing.txt");
    struct { const char *path; const char *why; } bad[] = {
        { missing, "No such file" },
        { E.work_dir, "not a regular file" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        long requests = counter("upload_files"), stored = counter("files_uploaded");
        const char *phys[] = { good_phys, "0123456789abcdef0123456789abcdef.txt" };
        boinc_upload_src src[] = { { good, NULL, 5 }, { bad[i].path, NULL, 5 } };
        boinc_error err = { 0 };
        assert_int_equal(boinc_upload_files_src(E.client, &E.project, 0, phys, src, 2, &err),
                         BOINC_E_IO);
        assert_int_equal(err.reached, 1);       /* the request had started */
        assert_non_null(strstr(err.msg, bad[i].path));
        assert_non_null(strstr(err.msg, bad[i].why));
        assert_int_equal(counter("upload_files"), requests);   /* never a whole request */
        assert_int_equal(counter("files_uploaded"), stored);
        boinc_error_clear(&err);
    }
    unlink(good);
    free(good);
    free(good_phys);
    free(missing);
}

static void test_upload_missing_local_file(void **state)
{
    (void)state;
    boinc_error err = { 0 };
    long before = counter("upload_files");
    char *missing = work_path("does_not_exist.txt");
    const char *phys[] = { "0123456789abcdef0123456789abcdef.txt" };
    const char *paths[] = { missing };
    assert_int_equal(boinc_upload_files(E.client, &E.project, 0, phys, paths,
                                        1, &err),
                     BOINC_E_IO);
    assert_non_null(strstr(err.msg, missing));
    /* Nothing was sent. */
    assert_int_equal(counter("upload_files"), before);
    free(missing);
    boinc_error_clear(&err);
}

static void test_big_upload_streamed(void **state)
{
    (void)state;
    /* 10 MiB from disk through curl_mime_filedata. */
    char *path = work_path("big.dat");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    char block[4096];
    memset(block, 'z', sizeof block);
    for (int i = 0; i < 10 * 256; i++)
        assert_int_equal(fwrite(block, 1, sizeof block, f), sizeof block);
    assert_int_equal(fclose(f), 0);
    char *json = control("counters", 1);
    long bytes_before = json_number(json, "bytes_uploaded");
    free(json);
    boinc_error err = { 0 };
    const char *phys[] = { "abcdefabcdefabcdefabcdefabcdefab.dat" };
    const char *paths[] = { path };
    /* a project with raised PHP limits (the emulator's default is a
     * stock server's 8M post / 2M file) */
    free(control("limits?set=none", 0));
    int rc = boinc_upload_files(E.client, &E.project, 0, phys, paths, 1, &err);
    free(control("limits?set=stock", 0));
    assert_ok(rc, &err, "upload of 10 MiB");
    json = control("counters", 1);
    assert_int_equal(json_number(json, "bytes_uploaded") - bytes_before,
                     10L * 1024 * 1024);
    free(json);
    free(path);
}

static void test_timeout_then_retry(void **state)
{
    (void)state;
    boinc_options opts;
    boinc_options_default(&opts);
    opts.total_timeout_ms = 1000;   /* ample for a normal ping */
    opts.retry_budget_ms = 10000;
    boinc_client *c = boinc_client_new(&opts);
    assert_non_null(c);
    free(control("fault?endpoint=ping&kind=delay&count=1&delay_ms=3000", 0));
    boinc_error err = { 0 };
    assert_ok(boinc_ping(c, &E.project, &err), &err,
              "ping after one timed-out attempt");
    /* Without a retry budget the timeout is the answer. */
    boinc_client_free(c);
    opts.retry_budget_ms = 0;
    c = boinc_client_new(&opts);
    assert_non_null(c);
    free(control("fault?endpoint=ping&kind=delay&count=1&delay_ms=3000", 0));
    assert_int_equal(boinc_ping(c, &E.project, &err), BOINC_E_TRANSPORT);
    assert_non_null(strstr(err.msg, "ping"));
    boinc_error_clear(&err);
    boinc_client_free(c);
}

/* Several threads, one client each, at the same time. */
static void *ping_many(void *arg)
{
    (void)arg;
    boinc_client *c = boinc_client_new(NULL);
    if (c == NULL)
        return (void *)1;
    boinc_error err = { 0 };
    intptr_t failures = 0;
    for (int i = 0; i < 25; i++) {
        const char *names[] = { "ut_abort_batch" };
        boinc_query_result r;
        if (boinc_ping(c, &E.project, &err) != BOINC_OK ||
            boinc_query_batch2(c, &E.project, "0", names, 1, &r, &err) !=
                BOINC_OK)
            failures++;
        else
            boinc_query_result_free(&r);
        boinc_error_clear(&err);
    }
    boinc_client_free(c);
    return (void *)failures;
}

static void test_threads_own_clients(void **state)
{
    (void)state;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, ping_many, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *res = NULL;
        assert_int_equal(pthread_join(th[i], &res), 0);
        assert_true(res == NULL);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *env = getenv("BOINC_EMU");
    if (env != NULL && *env != '\0') {
        E.emu_path = strdup(env);
    } else {
        /* build/unit/test_boinc_emu -> build/boinc_emu (also build-asan/) */
        strbuf p = STRBUF_INIT;
        const char *slash = strrchr(argv[0], '/');
        if (slash != NULL)
            strbuf_append(&p, argv[0], (size_t)(slash - argv[0]));
        else
            strbuf_puts(&p, ".");
        strbuf_puts(&p, "/../boinc_emu");
        E.emu_path = strbuf_detach(&p);
    }
    if (E.emu_path == NULL)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_ping, clear_faults),
        cmocka_unit_test_teardown(test_templates_uppercase, clear_faults),
        cmocka_unit_test_teardown(test_job_life_cycle, clear_faults),
        cmocka_unit_test_teardown(test_abort, clear_faults),
        cmocka_unit_test_teardown(test_real_server_quirks, clear_quirks),
        cmocka_unit_test_teardown(test_http500_retried, clear_faults),
        cmocka_unit_test_teardown(test_unsafe_request_sent_once, clear_faults),
        cmocka_unit_test_teardown(test_connection_refused, clear_faults),
        cmocka_unit_test_teardown(test_http_4xx_pages, clear_faults),
        cmocka_unit_test_teardown(test_upload_missing_local_file,
                                  clear_faults),
        cmocka_unit_test_teardown(test_upload_known_size_checked_on_the_way, clear_faults),
        cmocka_unit_test_teardown(test_big_upload_streamed, clear_faults),
        cmocka_unit_test_teardown(test_timeout_then_retry, clear_faults),
        cmocka_unit_test_teardown(test_threads_own_clients, clear_faults),
        cmocka_unit_test_teardown(test_https_to_plain_port, clear_faults),
        cmocka_unit_test_teardown(test_redirect_not_followed, clear_faults),
        cmocka_unit_test_teardown(test_truncated_reply, clear_faults),
        cmocka_unit_test_teardown(test_output_error_page_not_saved,
                                  clear_faults),
        cmocka_unit_test_teardown(test_output_dropped_then_retried,
                                  clear_faults),
    };
    int failed = cmocka_run_group_tests(tests, start_emulator, stop_emulator);
    free(E.emu_path);
    return failed ? 1 : 0;
}
