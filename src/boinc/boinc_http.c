/*
 * boinc_http.c - HTTP transport of the BOINC RPC client (libcurl): the
 * client object (one curl handle, so connections are reused), multipart
 * POSTs with retries for safe requests, and streaming output downloads.
 *
 * Security: only http/https, redirects are not followed, TLS peer and host
 * verification on unless the caller turns it off, proxies from the
 * environment as libcurl does.  The authenticator only travels inside the
 * request body or the get_output URL; neither is ever logged (the URL only
 * through log_redact_url) and error messages are scrubbed of it.
 */
#include "boinc/boinc_internal.h"

#include "base/files.h"
#include "base/log.h"
#include "base/testpoint.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <libxml/parser.h>
#include <libxml/xmlmemory.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Largest error body kept for a message (the rest is discarded). */
#define ERROR_BODY_MAX (64 * 1024)
/* Backoff schedule for safe requests. */
#define BACKOFF_FIRST_MS 500
#define BACKOFF_CAP_MS 10000

struct boinc_curl_client {
    boinc_client base;          /* first: what callers hold (boinc.h) */
    CURL *curl;
    boinc_options opts;
    char *ca_file;              /* owned copies of opts strings */
    char *ca_path;
    unsigned int rand_state;    /* per-client jitter source (rand_r) */
    long long fetch_limit;      /* boinc_client_set_download_limit, 0 = none */
    const char *secret_auth;    /* boinc_client_set_secrets: not owned */
    const char *secret_url;
    char errbuf[CURL_ERROR_SIZE];   /* libcurl's fixed-size detail buffer */
};

/* ---- lifetime ------------------------------------------------------------ */

/*
 * Allocation faults (tests only, base/testpoint.h): with
 * BOINC_GAHP_TEST_FAULT_AT=alloc... armed, libcurl and libxml2 allocate
 * through these, and the armed allocation fails as it would when memory
 * runs out.  Unarmed, the libraries keep their own allocators.
 */
static void *curl_malloc_or_fault(size_t n)
{
    return testfault_alloc("curl") ? NULL : malloc(n);
}

static void *curl_calloc_or_fault(size_t nmemb, size_t size)
{
    return testfault_alloc("curl") ? NULL : calloc(nmemb, size);
}

static void *curl_realloc_or_fault(void *p, size_t n)
{
    return testfault_alloc("curl") ? NULL : realloc(p, n);
}

static char *curl_strdup_or_fault(const char *s)
{
    return testfault_alloc("curl") ? NULL : strdup(s);
}

static void *xml_malloc_or_fault(size_t n)
{
    return testfault_alloc("xml") ? NULL : malloc(n);
}

static void *xml_realloc_or_fault(void *p, size_t n)
{
    return testfault_alloc("xml") ? NULL : realloc(p, n);
}

static char *xml_strdup_or_fault(const char *s)
{
    return testfault_alloc("xml") ? NULL : strdup(s);
}

int boinc_global_init(void)
{
    CURLcode rc;
    if (testfault_armed("alloc")) {
        if (xmlMemSetup(free, xml_malloc_or_fault, xml_realloc_or_fault,
                        xml_strdup_or_fault) != 0)
            return -1;
        rc = curl_global_init_mem(CURL_GLOBAL_DEFAULT, curl_malloc_or_fault, free,
                                  curl_realloc_or_fault, curl_strdup_or_fault,
                                  curl_calloc_or_fault);
    } else {
        rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    }
    if (rc != CURLE_OK)
        return -1;
    xmlInitParser();
    return 0;
}

void boinc_global_cleanup(void)
{
    xmlCleanupParser();
    curl_global_cleanup();
}

void boinc_options_default(boinc_options *opts)
{
    opts->connect_timeout_ms = 10000;
    opts->total_timeout_ms = 300000;
    opts->retry_budget_ms = 60000;
    opts->ca_file = NULL;
    opts->ca_path = NULL;
    opts->tls_verify = 1;
    opts->max_reply_bytes = BOINC_DEFAULT_MAX_REPLY;
    opts->max_download_bytes = BOINC_DEFAULT_MAX_DOWNLOAD;
}

void boinc_curl_set_download_limit(boinc_client *client, long long max_bytes)
{
    boinc_curl_of(client)->fetch_limit = max_bytes > 0 ? max_bytes : 0;
}

void boinc_curl_set_secrets(boinc_curl_client *c, const char *authenticator,
                            const char *project_url)
{
    c->secret_auth = authenticator;
    c->secret_url = project_url;
}

/* The byte limit of the next download: the smaller one that is set. */
static long long download_limit(const boinc_curl_client *c)
{
    long long a = c->opts.max_download_bytes > 0 ? c->opts.max_download_bytes : 0;
    long long b = c->fetch_limit;
    if (a == 0)
        return b;
    return b == 0 || a < b ? a : b;
}

static char *dup_opt(const char *s, int *failed)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *failed = 1;
    return d;
}

boinc_client *boinc_client_new(const boinc_options *opts)
{
    boinc_curl_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->base.ops = &boinc_curl_ops;
    if (opts != NULL)
        c->opts = *opts;
    else
        boinc_options_default(&c->opts);
    /* curl rejects negative timeouts; 0 means "no limit of its own"
     * (connect: curl's built-in 300 s) and, for the budget, "no retries". */
    if (c->opts.connect_timeout_ms < 0)
        c->opts.connect_timeout_ms = 0;
    if (c->opts.total_timeout_ms < 0)
        c->opts.total_timeout_ms = 0;
    if (c->opts.retry_budget_ms < 0)
        c->opts.retry_budget_ms = 0;
    int failed = 0;
    c->ca_file = dup_opt(c->opts.ca_file, &failed);
    c->ca_path = dup_opt(c->opts.ca_path, &failed);
    c->opts.ca_file = c->ca_file;
    c->opts.ca_path = c->ca_path;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    c->rand_state = (unsigned int)(ts.tv_nsec ^ (long)(uintptr_t)c);
    c->curl = curl_easy_init();
    if (failed || c->curl == NULL) {
        boinc_curl_free(&c->base);
        return NULL;
    }
    return &c->base;
}

void boinc_curl_free(boinc_client *client)
{
    boinc_curl_client *c = boinc_curl_of(client);
    if (c == NULL)
        return;
    if (c->curl != NULL)
        curl_easy_cleanup(c->curl);
    free(c->ca_file);
    free(c->ca_path);
    free(c);
}

char *boinc_http_escape(const char *s, void *client)
{
    boinc_curl_client *c = client;
    char *esc = curl_easy_escape(c->curl, s, 0);
    if (esc == NULL)
        return NULL;
    char *copy = strdup(esc);
    curl_free(esc);
    return copy;
}

/* ---- retry policy ---------------------------------------------------------- */

long boinc_backoff_ms(unsigned attempt, double jitter01)
{
    long delay = BACKOFF_FIRST_MS;
    for (unsigned i = 0; i < attempt && delay < BACKOFF_CAP_MS; i++)
        delay *= 2;
    if (delay > BACKOFF_CAP_MS)
        delay = BACKOFF_CAP_MS;
    if (jitter01 < 0)
        jitter01 = 0;
    if (jitter01 > 1)
        jitter01 = 1;
    /* Jitter keeps many workers that failed together from retrying in
     * lock step against a recovering server. */
    return (long)((double)delay * (0.5 + 0.5 * jitter01));
}

int boinc_is_retryable(int code, long http_status)
{
    return code == BOINC_E_TRANSPORT ||
           (code == BOINC_E_HTTP && http_status >= 500 && http_status <= 599);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- one HTTP exchange ----------------------------------------------------- */

/* What the callbacks of one transfer collect. */
typedef struct {
    strbuf *body;           /* reply body (POST) or error body (GET) */
    strbuf reason;          /* reason phrase of the last status line */
    int nomem;
    long long limit;        /* reply body / downloaded file bytes; 0 = none */
    int too_big;            /* the body went past limit: transfer aborted */
    /* downloads only */
    CURL *curl;
    int fd;
    int decided;            /* 0 until the first body byte was seen */
    int is_file;
    long long written;
    int io_errno;
} transfer;

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
    transfer *t = arg;
    size_t n = size * nmemb;
    if (n > 5 && memcmp(data, "HTTP/", 5) == 0) {
        /* "HTTP/1.1 403 Forbidden\r\n": keep "Forbidden". */
        const char *sp = memchr(data, ' ', n);
        const char *sp2 = sp ? memchr(sp + 1, ' ', n - (size_t)(sp + 1 - data))
                             : NULL;
        strbuf_reset(&t->reason);
        if (sp2 != NULL) {
            size_t len = n - (size_t)(sp2 + 1 - data);
            while (len > 0 && (sp2[len] == '\r' || sp2[len] == '\n'))
                len--;
            if (strbuf_append(&t->reason, sp2 + 1, len) != 0)
                t->nomem = 1;
        }
    }
    return n;
}

/* Room for the whole body at once when the server announced its length
 * (a 9 MB query_batch2 reply would otherwise be copied through a dozen
 * doubling steps into a 16 MB buffer).  Only within the reply limit: a
 * length over it is left to the limit check, and a length that lies costs
 * at most the limit, which a real reply may use anyway. */
static void reserve_announced(transfer *t)
{
    curl_off_t announced = -1;
    if (t->curl == NULL ||
        curl_easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
                          &announced) != CURLE_OK || announced <= 0)
        return;
    if (t->limit > 0 ? announced > t->limit
                     : announced > BOINC_DEFAULT_MAX_REPLY)
        return;
    /* a failure here is no failure: appending grows the buffer as before */
    (void)strbuf_reserve(t->body, (size_t)announced);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    transfer *t = arg;
    size_t n = size * nmemb;
    /* Abort as soon as the reply would pass the limit: memory stays
     * bounded whatever the server sends (issue 10 #1). */
    if (t->limit > 0 && (long long)n > t->limit - (long long)t->body->len) {
        t->too_big = 1;
        return 0;
    }
    if (t->body->len == 0)
        reserve_announced(t);
    if (strbuf_append(t->body, data, n) != 0) {
        t->nomem = 1;
        return 0;       /* aborts the transfer */
    }
    return n;
}

/* Download callback: file bytes go straight to the fd as they arrive;
 * anything that is not a file (error page) is kept, bounded, for the
 * message and never written to the fd. */
static size_t on_download(char *data, size_t size, size_t nmemb, void *arg)
{
    transfer *t = arg;
    size_t n = size * nmemb;
    if (!t->decided) {
        long status = 0;
        char *ctype = NULL;
        curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(t->curl, CURLINFO_CONTENT_TYPE, &ctype);
        t->is_file = status == 200 && boinc_output_is_file(ctype);
        t->decided = 1;
    }
    if (t->is_file) {
        if (t->limit > 0 && (long long)n > t->limit - t->written) {
            t->too_big = 1;
            return 0;
        }
        if (files_write_all(t->fd, data, n) != 0) {
            t->io_errno = errno;
            return 0;
        }
        t->written += (long long)n;
        return n;
    }
    if (t->body->len < ERROR_BODY_MAX &&
        strbuf_append(t->body, data, n) != 0) {
        t->nomem = 1;
        return 0;
    }
    return n;
}

/* Options shared by every request. */
static CURLcode setup_handle(boinc_curl_client *c, const char *url, transfer *t)
{
    CURL *h = c->curl;
    CURLcode rc = CURLE_OK;
    curl_easy_reset(h);     /* keeps the connection cache */
    c->errbuf[0] = '\0';
#define SET(opt, val) \
    do { if (rc == CURLE_OK) rc = curl_easy_setopt(h, opt, val); } while (0)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_NOSIGNAL, 1L);      /* threads: no SIGALRM for timeouts */
    SET(CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms);
    SET(CURLOPT_TIMEOUT_MS, c->opts.total_timeout_ms);
#if LIBCURL_VERSION_NUM >= 0x075500
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
    SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    SET(CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    /* A redirect of a POST would silently turn it into a GET: report the
     * 3xx instead of following it. */
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_SSL_VERIFYPEER, c->opts.tls_verify ? 1L : 0L);
    SET(CURLOPT_SSL_VERIFYHOST, c->opts.tls_verify ? 2L : 0L);
    if (c->opts.ca_file != NULL)
        SET(CURLOPT_CAINFO, c->opts.ca_file);
    if (c->opts.ca_path != NULL)
        SET(CURLOPT_CAPATH, c->opts.ca_path);
    SET(CURLOPT_ERRORBUFFER, c->errbuf);
    SET(CURLOPT_USERAGENT, "boinc_gahp");
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, t);
#undef SET
    return rc;
}

/*
 * What the operator must fix for a failure that retrying cannot fix
 * (issue 28: certificate failures were retried for the whole budget),
 * NULL for any other.  Each of these fails before a byte of the request
 * is sent: name resolution, URL parsing, the TLS handshake.
 */
static const char *setup_fix(CURLcode rc)
{
    switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:    /* issuer, name, expiry */
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
        return "the project's certificate cannot be verified: give the CA that "
               "signed it with ca_file or ca_path, or have the project fix the "
               "certificate (its name, its expiry)";
    case CURLE_URL_MALFORMAT:
        return "the project URL is malformed: fix it";
    case CURLE_COULDNT_RESOLVE_HOST:
        return "the host name of the project URL is unknown: fix the URL";
    default:
        return NULL;
    }
}

/* 1 when the host of the transfer's URL is an IP address, which needs no
 * name resolution (0 when it is a name, or cannot be told). */
static int host_is_address(CURL *curl)
{
    char *url = NULL, *host = NULL;
    CURLU *u = curl_url();
    int literal = 0;
    if (u != NULL && curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK &&
        url != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host != NULL) {
        unsigned char addr[sizeof(struct in6_addr)];
        size_t n = strlen(host);
        /* an IPv6 host comes back in brackets */
        if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
            host[n - 1] = '\0';
            literal = inet_pton(AF_INET6, host + 1, addr) == 1;
        } else {
            literal = inet_pton(AF_INET, host, addr) == 1;
        }
    }
    curl_free(host);
    curl_url_cleanup(u);
    return literal;
}

/* Turn a failed curl_easy_perform into a boinc error. */
static int curl_failure(boinc_curl_client *c, CURLcode rc, const char *what,
                        boinc_error *err)
{
    /* A "could not resolve" for an IP address is no unknown host name: the
     * resolver itself failed (libcurl reports its own out of memory so),
     * which may pass (found by the BLAH allocation sweep). */
    const char *fix = rc == CURLE_COULDNT_RESOLVE_HOST && host_is_address(c->curl)
        ? NULL : setup_fix(rc);
    boinc_code code = rc == CURLE_UNSUPPORTED_PROTOCOL ? BOINC_E_BADARG
                      : fix != NULL ? BOINC_E_SETUP : BOINC_E_TRANSPORT;
    const char *detail = c->errbuf[0] != '\0' ? c->errbuf : NULL;
    boinc_fail(err, code, 0, "%s: %s%s%s%s%s", what,
               curl_easy_strerror(rc), detail ? ": " : "", detail ? detail : "",
               fix ? "; not retried: " : "", fix ? fix : "");
    if (fix != NULL)
        err->reached = 0;   /* failed before sending: not acted, for certain */
    return code;
}

/* Non-200: "HTTP 403 Forbidden: <first words of the body>". */
static int http_failure(long status, const transfer *t, const char *what,
                        boinc_error *err)
{
    /* An error page repeats the status in its <title>/<h1>: start after
     * them, so the message reads "HTTP 403 Forbidden: You don't have..." */
    const char *text = strbuf_str(t->body);
    size_t len = t->body->len;
    const char *marks[] = { "</h1>", "</H1>", "</title>", "</TITLE>" };
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        const char *m = strstr(text, marks[i]);
        if (m != NULL) {
            len -= (size_t)(m + strlen(marks[i]) - text);
            text = m + strlen(marks[i]);
            break;
        }
    }
    char *snippet = boinc_html_summary(text, len, 200);
    char *reason = boinc_squash(strbuf_str(&t->reason), t->reason.len, 100);
    if (snippet == NULL || reason == NULL) {
        free(snippet);
        free(reason);
        return boinc_fail(err, BOINC_E_NOMEM, status, "out of memory");
    }
    boinc_fail(err, BOINC_E_HTTP, status, "%s: HTTP %ld%s%s%s%s", what, status,
               *reason ? " " : "", reason, *snippet ? ": " : "", snippet);
    free(snippet);
    free(reason);
    return BOINC_E_HTTP;
}

static int post_once(boinc_curl_client *c, const char *url, const char *what,
                     const char *request_xml, const boinc_upload_part *parts,
                     size_t nparts, strbuf *reply, boinc_error *err)
{
    transfer t = { .body = reply, .reason = STRBUF_INIT,
                   .limit = c->opts.max_reply_bytes, .curl = c->curl };
    upload_fault fault = { 0, NULL };
    strbuf_reset(reply);
    upload_body *body = boinc_upload_body_new(request_xml, parts, nparts, &fault);
    if (body == NULL)
        return boinc_fail(err, BOINC_E_NOMEM, 0, "out of memory");
    struct curl_slist *headers = curl_slist_append(NULL, boinc_upload_body_type(body));
    if (headers == NULL) {
        boinc_upload_body_free(body);
        return boinc_fail(err, BOINC_E_NOMEM, 0, "out of memory");
    }
    CURLcode rc = setup_handle(c, url, &t);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, headers);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE,
                              (curl_off_t)boinc_upload_body_size(body));
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_READFUNCTION, boinc_upload_body_read);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_READDATA, body);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_SEEKFUNCTION, boinc_upload_body_seek);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_SEEKDATA, body);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &t);
    if (rc == CURLE_OK) {
        /* From here on the request may have reached the server: whatever
         * goes wrong later (reading, buffering, parsing the reply) leaves
         * its outcome unknown, never "not acted". */
        err->reached = 1;
        rc = curl_easy_perform(c->curl);
    }
    if (rc == CURLE_OK && testfault("reply_nomem", what))
        t.nomem = 1;        /* test: memory ran out buffering the reply */
    long status = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    int code;
    if (t.nomem)
        code = boinc_fail(err, BOINC_E_NOMEM, status, "out of memory");
    else if (t.too_big)
        code = boinc_fail(err, BOINC_E_PARSE, status,
                          "%s: reply larger than the limit of %lld bytes "
                          "(--max-reply-bytes)", what, t.limit);
    else if (fault.failed)      /* the body was cut short: nothing stored */
        code = boinc_fail(err, BOINC_E_IO, 0, "%s: %s", what,
                          fault.msg ? fault.msg : "an input file could not be read");
    else if (rc == CURLE_READ_ERROR && nparts > 0)
        code = boinc_fail(err, BOINC_E_IO, 0,
                          "%s: an input file could not be read while "
                          "uploading", what);
    else if (rc != CURLE_OK)
        code = curl_failure(c, rc, what, err);
    else if (status != 200)
        code = http_failure(status, &t, what, err);
    else
        code = BOINC_OK;
    /* Detach the body and headers before freeing them: the handle
     * outlives this call. */
    curl_easy_setopt(c->curl, CURLOPT_READDATA, (void *)NULL);
    curl_easy_setopt(c->curl, CURLOPT_SEEKDATA, (void *)NULL);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl_slist_free_all(headers);
    boinc_upload_body_free(body);
    free(fault.msg);
    strbuf_free(&t.reason);
    return code;
}

/* Run attempt() until it succeeds, fails for good, or the retry budget of
 * a safe request is spent. */
typedef int (*attempt_fn)(void *ctx, boinc_error *err);

static int with_retries(boinc_curl_client *c, boinc_retry_policy policy,
                        const char *what, attempt_fn attempt, void *ctx,
                        boinc_error *err)
{
    long start = now_ms();
    /* The budget counts back-off as designed, not as slept: under the
     * test clock (pause_ms) the same number of attempts is made. */
    long slept_real = 0, slept_designed = 0;
    unsigned tries = 0;
    for (;;) {
        int rc = attempt(ctx, err);
        tries++;
        /* Before anything logs it: a hostile server may echo secrets. */
        boinc_scrub_project(err, c->secret_auth, c->secret_url);
        if (rc == BOINC_OK || policy != BOINC_RETRY ||
            !boinc_is_retryable(rc, err->http_status))
            return rc;
        double jitter = (double)rand_r(&c->rand_state) / (double)RAND_MAX;
        long delay = boinc_backoff_ms(tries - 1, jitter);
        long spent = now_ms() - start - slept_real + slept_designed;
        if (spent + delay > c->opts.retry_budget_ms) {
            if (tries > 1 && err->msg != NULL) {
                char *msg = err->msg;
                err->msg = NULL;
                boinc_fail(err, (boinc_code)rc, err->http_status,
                           "%s (gave up after %u attempts)", msg, tries);
                free(msg);
            }
            return rc;
        }
        log_info("%s failed (%s), retrying in %ld ms", what,
                 err->msg ? err->msg : boinc_code_name((boinc_code)rc), delay);
        long before = now_ms();
        pause_ms(delay);
        slept_real += now_ms() - before;
        slept_designed += delay;
    }
}

typedef struct {
    boinc_curl_client *c;
    const char *url;
    const char *what;
    const char *xml;
    const boinc_upload_part *parts;
    size_t nparts;
    strbuf *reply;
} post_ctx;

static int post_attempt(void *arg, boinc_error *err)
{
    post_ctx *p = arg;
    return post_once(p->c, p->url, p->what, p->xml, p->parts, p->nparts,
                     p->reply, err);
}

int boinc_http_post(boinc_curl_client *c, const char *project_url,
                    const char *script, const char *rpc,
                    const char *request_xml, const boinc_upload_part *parts,
                    size_t nparts, boinc_retry_policy policy, strbuf *reply,
                    boinc_error *err)
{
    int rc;
    strbuf url = STRBUF_INIT;
    if (strbuf_printf(&url, "%s%s", project_url, script) != 0)
        return boinc_fail(err, BOINC_E_NOMEM, 0, "out of memory");
    /* The request body (which holds the authenticator) is never logged;
     * the URL only without the password it may carry (issue 10 #11). */
    char *shown = log_redact_url(strbuf_str(&url));
    log_debug("%s: POST %s", rpc, shown ? shown : "(url hidden)");
    free(shown);
    post_ctx ctx = { c, strbuf_str(&url), rpc, request_xml, parts, nparts,
                     reply };
    rc = with_retries(c, policy, rpc, post_attempt, &ctx, err);
    strbuf_free(&url);
    return rc;
}

/* ---- get_output.php ------------------------------------------------------- */

static int reset_fd(int fd)
{
    if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) < 0)
        return -1;
    return 0;
}

typedef struct {
    boinc_curl_client *c;
    const char *url;
    int fd;
    long long *nbytes;
} get_ctx;

static int get_verdict(boinc_curl_client *c, CURLcode rc, transfer *t,
                       boinc_error *err)
{
    static const char what[] = "get_output";
    long status = 0;
    char *ctype = NULL;
    curl_off_t expected = -1;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(c->curl, CURLINFO_CONTENT_TYPE, &ctype);
    curl_easy_getinfo(c->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected);
    if (t->nomem)
        return boinc_fail(err, BOINC_E_NOMEM, status, "out of memory");
    if (t->too_big)
        return boinc_fail(err, BOINC_E_IO, status,
                          "%s: output file larger than the limit of %lld "
                          "bytes (--max-output-bytes / --max-fetch-bytes / "
                          "the template's max_nbytes)",
                          what, t->limit);
    if (t->io_errno != 0)
        return boinc_fail(err, BOINC_E_IO, status,
                          "%s: cannot write the output file: %s", what,
                          strerror(t->io_errno));
    if (rc == CURLE_PARTIAL_FILE)
        return boinc_fail(err, BOINC_E_TRANSPORT, status,
                          "%s: body shorter than Content-Length "
                          "(%lld of %lld bytes)", what, t->written,
                          (long long)expected);
    if (rc != CURLE_OK)
        return curl_failure(c, rc, what, err);
    if (status != 200)
        return http_failure(status, t, what, err);
    if (!t->decided)        /* empty body: decide from the headers */
        t->is_file = boinc_output_is_file(ctype);
    if (!t->is_file)
        return boinc_output_error(status, ctype, strbuf_str(t->body),
                                  t->body->len, err);
    if (expected >= 0 && (long long)expected != t->written)
        return boinc_fail(err, BOINC_E_TRANSPORT, status,
                          "%s: got %lld bytes, Content-Length said %lld",
                          what, t->written, (long long)expected);
    return BOINC_OK;
}

static int get_attempt(void *arg, boinc_error *err)
{
    get_ctx *g = arg;
    boinc_curl_client *c = g->c;
    strbuf errbody = STRBUF_INIT;
    transfer t = { .body = &errbody, .reason = STRBUF_INIT, .curl = c->curl,
                   .fd = g->fd, .limit = download_limit(c) };
    int code;
    if (reset_fd(g->fd) != 0) {
        code = boinc_fail(err, BOINC_E_IO, 0,
                          "get_output: cannot truncate the output file: %s",
                          strerror(errno));
    } else {
        CURLcode rc = setup_handle(c, g->url, &t);
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_download);
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &t);
        if (rc == CURLE_OK)
            rc = curl_easy_perform(c->curl);
        code = get_verdict(c, rc, &t, err);
    }
    *g->nbytes = code == BOINC_OK ? t.written : 0;
    /* Never leave an error page or a partial file looking like output. */
    if (code != BOINC_OK && code != BOINC_E_IO)
        reset_fd(g->fd);
    strbuf_free(&errbody);
    strbuf_free(&t.reason);
    return code;
}

int boinc_http_get_to_fd(boinc_curl_client *c, const char *url, int fd,
                         long long *nbytes, boinc_error *err)
{
    char *shown = log_redact_url(url);
    log_debug("get_output: GET %s", shown ? shown : "(url hidden)");
    free(shown);
    get_ctx ctx = { c, url, fd, nbytes };
    int rc = with_retries(c, BOINC_RETRY, "get_output", get_attempt, &ctx,
                          err);
    if (rc != BOINC_OK)
        reset_fd(fd);
    return rc;
}
