/*
 * boinc.c - client for a BOINC project's remote job submission web RPCs.
 *
 * STUB STAGE: global init, options, client lifetime, errors, URL
 * normalisation and ping work; the other RPCs answer BOINC_E_BADARG
 * "not implemented" until the full client lands.
 */
#include "boinc.h"

#include "log.h"
#include "strbuf.h"

#include <curl/curl.h>
#include <libxml/parser.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct boinc_client {
    CURL *curl;
    boinc_options opts;
    char *ca_file;
    char *ca_path;
};

static void set_error(boinc_error *err, boinc_code code, long http_status,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void set_error(boinc_error *err, boinc_code code, long http_status,
                      const char *fmt, ...)
{
    if (err == NULL)
        return;
    free(err->msg);
    err->msg = NULL;
    err->code = code;
    err->http_status = http_status;
    strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    int rc = strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    err->msg = rc == 0 ? strbuf_detach(&sb) : NULL;
    strbuf_free(&sb);
}

void boinc_error_clear(boinc_error *err)
{
    if (err == NULL)
        return;
    free(err->msg);
    err->msg = NULL;
    err->code = BOINC_OK;
    err->http_status = 0;
}

const char *boinc_code_name(boinc_code code)
{
    switch (code) {
    case BOINC_OK: return "ok";
    case BOINC_E_NOMEM: return "out of memory";
    case BOINC_E_BADARG: return "bad argument";
    case BOINC_E_TRANSPORT: return "transport error";
    case BOINC_E_HTTP: return "HTTP error";
    case BOINC_E_PARSE: return "parse error";
    case BOINC_E_SERVER: return "server error";
    case BOINC_E_IO: return "I/O error";
    }
    return "unknown error";
}

void boinc_options_default(boinc_options *opts)
{
    opts->connect_timeout_ms = 10000;
    opts->total_timeout_ms = 300000;
    opts->retry_budget_ms = 60000;
    opts->ca_file = NULL;
    opts->ca_path = NULL;
    opts->tls_verify = 1;
}

int boinc_global_init(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return -1;
    xmlInitParser();
    return 0;
}

void boinc_global_cleanup(void)
{
    xmlCleanupParser();
    curl_global_cleanup();
}

static char *dup_or_null(const char *s, int *failed)
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
    boinc_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    if (opts != NULL)
        c->opts = *opts;
    else
        boinc_options_default(&c->opts);
    int failed = 0;
    c->ca_file = dup_or_null(c->opts.ca_file, &failed);
    c->ca_path = dup_or_null(c->opts.ca_path, &failed);
    c->opts.ca_file = c->ca_file;
    c->opts.ca_path = c->ca_path;
    c->curl = curl_easy_init();
    if (failed || c->curl == NULL) {
        boinc_client_free(c);
        return NULL;
    }
    return c;
}

void boinc_client_free(boinc_client *c)
{
    if (c == NULL)
        return;
    if (c->curl != NULL)
        curl_easy_cleanup(c->curl);
    free(c->ca_file);
    free(c->ca_path);
    free(c);
}

char *boinc_normalize_url(const char *url, boinc_error *err)
{
    if (url == NULL || (strncasecmp(url, "http://", 7) != 0 &&
                        strncasecmp(url, "https://", 8) != 0)) {
        set_error(err, BOINC_E_BADARG, 0,
                  "project URL must start with http:// or https://");
        return NULL;
    }
    size_t n = strlen(url);
    size_t scheme = url[4] == ':' ? 7 : 8;
    if (n == scheme) {
        set_error(err, BOINC_E_BADARG, 0, "project URL has no host");
        return NULL;
    }
    int add_slash = url[n - 1] != '/';
    char *out = malloc(n + 2);
    if (out == NULL) {
        set_error(err, BOINC_E_NOMEM, 0, "out of memory");
        return NULL;
    }
    memcpy(out, url, n);
    if (add_slash)
        out[n++] = '/';
    out[n] = '\0';
    return out;
}

static size_t collect_body(char *data, size_t size, size_t nmemb, void *arg)
{
    strbuf *sb = arg;
    size_t n = size * nmemb;
    return strbuf_append(sb, data, n) == 0 ? n : 0;
}

/* Stub transport: one POST, no retries (the full client replaces it). */
static int post_request(boinc_client *c, const char *url, const char *xml,
                        strbuf *body, boinc_error *err)
{
    CURL *h = c->curl;
    curl_easy_reset(h);
    curl_mime *mime = curl_mime_init(h);
    if (mime == NULL) {
        set_error(err, BOINC_E_NOMEM, 0, "out of memory");
        return BOINC_E_NOMEM;
    }
    curl_mimepart *part = curl_mime_addpart(mime);
    if (part == NULL || curl_mime_name(part, "request") != CURLE_OK ||
        curl_mime_data(part, xml, CURL_ZERO_TERMINATED) != CURLE_OK) {
        curl_mime_free(mime);
        set_error(err, BOINC_E_NOMEM, 0, "out of memory");
        return BOINC_E_NOMEM;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->opts.total_timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    CURLcode rc = curl_easy_perform(h);
    curl_mime_free(mime);
    if (rc != CURLE_OK) {
        set_error(err, BOINC_E_TRANSPORT, 0, "%s", curl_easy_strerror(rc));
        return BOINC_E_TRANSPORT;
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        set_error(err, BOINC_E_HTTP, status, "HTTP %ld", status);
        return BOINC_E_HTTP;
    }
    return BOINC_OK;
}

int boinc_ping(boinc_client *c, const boinc_project *p, boinc_error *err)
{
    if (c == NULL || p == NULL || p->url == NULL) {
        set_error(err, BOINC_E_BADARG, 0, "missing client or project");
        return BOINC_E_BADARG;
    }
    strbuf url = STRBUF_INIT;
    strbuf body = STRBUF_INIT;
    if (strbuf_printf(&url, "%ssubmit_rpc_handler.php", p->url) != 0) {
        set_error(err, BOINC_E_NOMEM, 0, "out of memory");
        return BOINC_E_NOMEM;
    }
    int rc = post_request(c, strbuf_str(&url), "<ping> </ping>", &body, err);
    if (rc == BOINC_OK && strstr(strbuf_str(&body), "<success>") == NULL) {
        rc = BOINC_E_PARSE;
        set_error(err, rc, 200, "ping reply without <success>");
    }
    strbuf_free(&url);
    strbuf_free(&body);
    return rc;
}

static int not_implemented(boinc_error *err)
{
    set_error(err, BOINC_E_BADARG, 0, "not implemented");
    return BOINC_E_BADARG;
}

int boinc_get_templates(boinc_client *c, const boinc_project *p,
                        const char *app_name, boinc_templates *out,
                        boinc_error *err)
{
    (void)c; (void)p; (void)app_name;
    if (out != NULL)
        memset(out, 0, sizeof *out);
    return not_implemented(err);
}

void boinc_templates_free(boinc_templates *t)
{
    if (t == NULL)
        return;
    boinc_names_free(t->input_names, t->n_inputs);
    boinc_names_free(t->output_names, t->n_outputs);
    memset(t, 0, sizeof *t);
}

int boinc_create_batch(boinc_client *c, const boinc_project *p,
                       const char *batch_name, const char *app_name,
                       double expire_time, long *batch_id, boinc_error *err)
{
    (void)c; (void)p; (void)batch_name; (void)app_name; (void)expire_time;
    (void)batch_id;
    return not_implemented(err);
}

int boinc_submit_batch(boinc_client *c, const boinc_project *p,
                       long batch_id, const char *app_name,
                       const boinc_job_params *params,
                       const boinc_job_spec *jobs, size_t njobs,
                       boinc_error *err)
{
    (void)c; (void)p; (void)batch_id; (void)app_name; (void)params;
    (void)jobs; (void)njobs;
    return not_implemented(err);
}

int boinc_query_batch2(boinc_client *c, const boinc_project *p,
                       const char *min_mod_time,
                       const char *const *batch_names, size_t nbatches,
                       boinc_query_result *out, boinc_error *err)
{
    (void)c; (void)p; (void)min_mod_time; (void)batch_names; (void)nbatches;
    if (out != NULL)
        memset(out, 0, sizeof *out);
    return not_implemented(err);
}

void boinc_query_result_free(boinc_query_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; r->batches != NULL && i < r->nbatches; i++) {
        for (size_t j = 0; j < r->batches[i].njobs; j++) {
            free(r->batches[i].jobs[j].name);
            free(r->batches[i].jobs[j].status);
        }
        free(r->batches[i].jobs);
    }
    free(r->batches);
    free(r->server_time);
    memset(r, 0, sizeof *r);
}

int boinc_query_completed_job(boinc_client *c, const boinc_project *p,
                              const char *job_name, boinc_completed_job *out,
                              boinc_error *err)
{
    (void)c; (void)p; (void)job_name;
    if (out != NULL)
        memset(out, 0, sizeof *out);
    return not_implemented(err);
}

void boinc_completed_job_free(boinc_completed_job *j)
{
    if (j == NULL)
        return;
    free(j->stderr_out);
    memset(j, 0, sizeof *j);
}

int boinc_abort_jobs(boinc_client *c, const boinc_project *p,
                     const char *const *job_names, size_t njobs,
                     boinc_error *err)
{
    (void)c; (void)p; (void)job_names; (void)njobs;
    return not_implemented(err);
}

int boinc_retire_batch(boinc_client *c, const boinc_project *p,
                       const char *batch_name, boinc_error *err)
{
    (void)c; (void)p; (void)batch_name;
    return not_implemented(err);
}

int boinc_set_expire_time(boinc_client *c, const boinc_project *p,
                          const char *batch_name, double expire_time,
                          boinc_error *err)
{
    (void)c; (void)p; (void)batch_name; (void)expire_time;
    return not_implemented(err);
}

int boinc_query_batches(boinc_client *c, const boinc_project *p,
                        boinc_batch_info **out, size_t *n, boinc_error *err)
{
    (void)c; (void)p;
    if (out != NULL)
        *out = NULL;
    if (n != NULL)
        *n = 0;
    return not_implemented(err);
}

void boinc_batch_info_free(boinc_batch_info *b, size_t n)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        free(b[i].name);
        free(b[i].app_name);
    }
    free(b);
}

int boinc_query_batch_jobs(boinc_client *c, const boinc_project *p,
                           long batch_id, char ***job_names, size_t *n,
                           boinc_error *err)
{
    (void)c; (void)p; (void)batch_id;
    if (job_names != NULL)
        *job_names = NULL;
    if (n != NULL)
        *n = 0;
    return not_implemented(err);
}

void boinc_names_free(char **names, size_t n)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int boinc_query_files(boinc_client *c, const boinc_project *p, long batch_id,
                      const char *const *phys_names, size_t n,
                      unsigned char *absent, boinc_error *err)
{
    (void)c; (void)p; (void)batch_id; (void)phys_names; (void)n; (void)absent;
    return not_implemented(err);
}

int boinc_upload_files(boinc_client *c, const boinc_project *p, long batch_id,
                       const char *const *phys_names,
                       const char *const *local_paths, size_t n,
                       boinc_error *err)
{
    (void)c; (void)p; (void)batch_id; (void)phys_names; (void)local_paths;
    (void)n;
    return not_implemented(err);
}

int boinc_get_output_file(boinc_client *c, const boinc_project *p,
                          const char *job_name, int file_num, int fd,
                          long long *nbytes, boinc_error *err)
{
    (void)c; (void)p; (void)job_name; (void)file_num; (void)fd;
    if (nbytes != NULL)
        *nbytes = 0;
    return not_implemented(err);
}
