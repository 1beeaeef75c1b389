/*
 * boinc.c - public API of the BOINC RPC client (see boinc.h): argument
 * checks, then request building (boinc_req.c), transport with the retry
 * policy of each RPC (boinc_http.c) and tolerant reply parsing
 * (boinc_xml.c).  Also error helpers, URL normalisation and the free
 * functions of the result types.
 */
#include "boinc/boinc.h"

#include "boinc/boinc_internal.h"
#include "base/url.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SUBMIT_RPC "submit_rpc_handler.php"
#define JOB_FILE "job_file.php"

/* ---- errors -------------------------------------------------------------- */

void boinc_error_clear(boinc_error *err)
{
    if (err == NULL)
        return;
    free(err->msg);
    err->msg = NULL;
    err->code = BOINC_OK;
    err->http_status = 0;
    err->reached = 0;
}

const char *boinc_code_name(boinc_code code)
{
    switch (code) {
    case BOINC_OK: return "ok";
    case BOINC_E_NOMEM: return "out of memory";
    case BOINC_E_BADARG: return "bad argument";
    case BOINC_E_TRANSPORT: return "transport error";
    case BOINC_E_HTTP: return "HTTP error";
    case BOINC_E_PARSE: return "bad reply";
    case BOINC_E_SERVER: return "server error";
    case BOINC_E_IO: return "local I/O error";
    }
    return "unknown error";
}

/* ---- common RPC path ------------------------------------------------------- */

/* Start of every public call: err becomes "no error" (the caller must have
 * initialised it, e.g. = { 0 }, or cleared it). */
static void start(boinc_error *err)
{
    boinc_error_clear(err);
}

static int check_call(boinc_client *c, const boinc_project *p,
                      boinc_error *err)
{
    if (err == NULL)
        return BOINC_E_BADARG;
    if (c == NULL || p == NULL || p->url == NULL || p->authenticator == NULL)
        return boinc_fail(err, BOINC_E_BADARG, 0,
                          "missing client, project URL or authenticator");
    size_t n = strlen(p->url);
    if (!url_is_http(p->url) || n == 0 || p->url[n - 1] != '/')
        return boinc_fail(err, BOINC_E_BADARG, 0,
                          "project URL must be http(s):// and end in '/'");
    return BOINC_OK;
}

static int check_name(const char *name, const char *what, boinc_error *err)
{
    if (name == NULL || *name == '\0')
        return boinc_fail(err, BOINC_E_BADARG, 0, "empty %s", what);
    return BOINC_OK;
}

static int check_names(const char *const *names, size_t n, const char *what,
                       boinc_error *err)
{
    if (n > 0 && names == NULL)
        return boinc_fail(err, BOINC_E_BADARG, 0, "missing %s list", what);
    for (size_t i = 0; i < n; i++)
        if (check_name(names[i], what, err) != BOINC_OK)
            return BOINC_E_BADARG;
    return BOINC_OK;
}

/* The reply parser of one RPC, bound to its output arguments. */
typedef int (*reply_parser)(const char *rpc, const strbuf *body, void *out,
                            boinc_error *err);

/*
 * Send a built request and parse the reply.  built is the result of the
 * boinc_req_* call (-1 = ENOMEM).  The authenticator is scrubbed from any
 * message as a last line of defence.
 */
static int run_rpc(boinc_client *c, const boinc_project *p, const char *script,
                   const char *rpc, int built, strbuf *req,
                   const boinc_upload_part *parts, size_t nparts,
                   boinc_retry_policy policy, reply_parser parse, void *out,
                   boinc_error *err)
{
    strbuf reply = STRBUF_INIT;
    int rc;
    boinc_client_set_secrets(c, p->authenticator, p->url);
    if (built != 0)
        rc = boinc_fail(err, BOINC_E_NOMEM, 0, "out of memory");
    else
        rc = boinc_http_post(c, p->url, script, rpc, strbuf_str(req), parts,
                             nparts, policy, &reply, err);
    if (rc == BOINC_OK)
        rc = parse(rpc, &reply, out, err);
    if (rc == BOINC_OK) {
        boinc_error_clear(err);
    } else {
        /* Transport and parse messages name the RPC; server <error>s keep
         * the server's own text (HTCondor matches "no batch named "). */
        boinc_scrub_project(err, p->authenticator, p->url);
    }
    boinc_client_set_secrets(c, NULL, NULL);
    strbuf_free(&reply);
    strbuf_free(req);
    return rc;
}

static int parse_success(const char *rpc, const strbuf *body, void *out,
                         boinc_error *err)
{
    (void)out;
    return boinc_parse_success(rpc, strbuf_str(body), body->len, err);
}

static int parse_batch_id(const char *rpc, const strbuf *body, void *out,
                          boinc_error *err)
{
    long id = 0;
    int rc = boinc_parse_batch_id(rpc, strbuf_str(body), body->len, &id, err);
    if (rc == BOINC_OK && out != NULL)
        *(long *)out = id;
    return rc;
}

/* ---- submit_rpc_handler.php ----------------------------------------------- */

int boinc_ping(boinc_client *c, const boinc_project *p, boinc_error *err)
{
    start(err);
    int rc = check_call(c, p, err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    return run_rpc(c, p, SUBMIT_RPC, "ping", boinc_req_ping(&req), &req,
                   NULL, 0, BOINC_RETRY, parse_success, NULL, err);
}

static int parse_templates(const char *rpc, const strbuf *body, void *out,
                           boinc_error *err)
{
    (void)rpc;
    return boinc_parse_templates(strbuf_str(body), body->len, out, err);
}

/* get_templates by <app_name> or by <job_name> (key), what the name is. */
static int get_templates_by(boinc_client *c, const boinc_project *p,
                            const char *key, const char *value, const char *what,
                            boinc_templates *out, boinc_error *err)
{
    start(err);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK && out == NULL)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK)
        rc = check_name(value, what, err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_get_templates(&req, p->authenticator, key, value);
    return run_rpc(c, p, SUBMIT_RPC, "get_templates", built, &req, NULL, 0,
                   BOINC_RETRY, parse_templates, out, err);
}

int boinc_get_templates(boinc_client *c, const boinc_project *p,
                        const char *app_name, boinc_templates *out,
                        boinc_error *err)
{
    return get_templates_by(c, p, "app_name", app_name, "app name", out, err);
}

int boinc_get_templates_for_job(boinc_client *c, const boinc_project *p,
                                const char *job_name, boinc_templates *out,
                                boinc_error *err)
{
    return get_templates_by(c, p, "job_name", job_name, "job name", out, err);
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
    start(err);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK)
        rc = check_name(batch_name, "batch name", err);
    if (rc == BOINC_OK)
        rc = check_name(app_name, "app name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_create_batch(&req, p->authenticator, batch_name,
                                       app_name, expire_time);
    /* Never repeated: batch names are not unique, a repeat makes a
     * second batch. */
    return run_rpc(c, p, SUBMIT_RPC, "create_batch", built, &req, NULL, 0,
                   BOINC_ONCE, parse_batch_id, batch_id, err);
}

static int check_jobs(const boinc_job_spec *jobs, size_t njobs,
                      boinc_error *err)
{
    if (njobs > 0 && jobs == NULL)
        return boinc_fail(err, BOINC_E_BADARG, 0, "missing job list");
    for (size_t i = 0; i < njobs; i++) {
        if (check_name(jobs[i].name, "job name", err) != BOINC_OK ||
            check_names(jobs[i].phys_names, jobs[i].n_inputs,
                        "input file name", err) != BOINC_OK)
            return BOINC_E_BADARG;
    }
    return BOINC_OK;
}

int boinc_submit_batch(boinc_client *c, const boinc_project *p,
                       long batch_id, const char *app_name,
                       const boinc_job_params *params,
                       const boinc_job_spec *jobs, size_t njobs,
                       boinc_error *err)
{
    start(err);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK)
        rc = check_name(app_name, "app name", err);
    if (rc == BOINC_OK)
        rc = check_jobs(jobs, njobs, err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_submit_batch(&req, p->authenticator, batch_id,
                                       app_name, params, jobs, njobs);
    /* Never repeated: job names are unique, a repeat of a submit that
     * went through fails with "create_work failed". */
    return run_rpc(c, p, SUBMIT_RPC, "submit_batch", built, &req, NULL, 0,
                   BOINC_ONCE, parse_batch_id, NULL, err);
}

typedef struct {
    size_t nbatches;
    boinc_query_result *out;
} batch2_out;

static int parse_batch2(const char *rpc, const strbuf *body, void *out,
                        boinc_error *err)
{
    (void)rpc;
    batch2_out *b = out;
    return boinc_parse_query_batch2(strbuf_str(body), body->len, b->nbatches,
                                    b->out, err);
}

int boinc_query_batch2(boinc_client *c, const boinc_project *p,
                       const char *min_mod_time,
                       const char *const *batch_names, size_t nbatches,
                       boinc_query_result *out, boinc_error *err)
{
    start(err);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK && out == NULL)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK)
        rc = check_names(batch_names, nbatches, "batch name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_query_batch2(&req, p->authenticator, min_mod_time,
                                       batch_names, nbatches);
    batch2_out b = { nbatches, out };
    return run_rpc(c, p, SUBMIT_RPC, "query_batch2", built, &req, NULL, 0,
                   BOINC_RETRY, parse_batch2, &b, err);
}

void boinc_query_result_free(boinc_query_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; r->batches != NULL && i < r->nbatches; i++) {
        free(r->batches[i].jobs);
        boinc_strpool_free(r->batches[i].strings);
    }
    free(r->batches);
    free(r->server_time);
    memset(r, 0, sizeof *r);
}

static int parse_completed(const char *rpc, const strbuf *body, void *out,
                           boinc_error *err)
{
    (void)rpc;
    return boinc_parse_completed_job(strbuf_str(body), body->len, out, err);
}

int boinc_query_completed_job(boinc_client *c, const boinc_project *p,
                              const char *job_name, boinc_completed_job *out,
                              boinc_error *err)
{
    start(err);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK && out == NULL)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK)
        rc = check_name(job_name, "job name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_query_completed_job(&req, p->authenticator,
                                              job_name);
    return run_rpc(c, p, SUBMIT_RPC, "query_completed_job", built, &req, NULL,
                   0, BOINC_RETRY, parse_completed, out, err);
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
    start(err);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK)
        rc = check_names(job_names, njobs, "job name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_abort_jobs(&req, p->authenticator, job_names, njobs);
    return run_rpc(c, p, SUBMIT_RPC, "abort_jobs", built, &req, NULL, 0,
                   BOINC_RETRY, parse_success, NULL, err);
}

int boinc_retire_batch(boinc_client *c, const boinc_project *p,
                       const char *batch_name, boinc_error *err)
{
    start(err);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK)
        rc = check_name(batch_name, "batch name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_retire_batch(&req, p->authenticator, batch_name);
    return run_rpc(c, p, SUBMIT_RPC, "retire_batch", built, &req, NULL, 0,
                   BOINC_RETRY, parse_success, NULL, err);
}

int boinc_set_expire_time(boinc_client *c, const boinc_project *p,
                          const char *batch_name, double expire_time,
                          boinc_error *err)
{
    start(err);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK)
        rc = check_name(batch_name, "batch name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_set_expire_time(&req, p->authenticator, batch_name,
                                          expire_time);
    return run_rpc(c, p, SUBMIT_RPC, "set_expire_time", built, &req, NULL, 0,
                   BOINC_RETRY, parse_success, NULL, err);
}

typedef struct {
    boinc_batch_info **list;
    size_t *n;
} batches_out;

static int parse_batches(const char *rpc, const strbuf *body, void *out,
                         boinc_error *err)
{
    (void)rpc;
    batches_out *b = out;
    return boinc_parse_query_batches(strbuf_str(body), body->len, b->list,
                                     b->n, err);
}

int boinc_query_batches(boinc_client *c, const boinc_project *p,
                        boinc_batch_info **out, size_t *n, boinc_error *err)
{
    start(err);
    if (out != NULL)
        *out = NULL;
    if (n != NULL)
        *n = 0;
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK && (out == NULL || n == NULL))
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_query_batches(&req, p->authenticator);
    batches_out b = { out, n };
    return run_rpc(c, p, SUBMIT_RPC, "query_batches", built, &req, NULL, 0,
                   BOINC_RETRY, parse_batches, &b, err);
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

typedef struct {
    char ***names;
    size_t *n;
} names_out;

static int parse_batch_jobs(const char *rpc, const strbuf *body, void *out,
                            boinc_error *err)
{
    (void)rpc;
    names_out *o = out;
    return boinc_parse_batch_jobs(strbuf_str(body), body->len, o->names, o->n,
                                  err);
}

int boinc_query_batch_jobs(boinc_client *c, const boinc_project *p,
                           long batch_id, char ***job_names, size_t *n,
                           boinc_error *err)
{
    start(err);
    if (job_names != NULL)
        *job_names = NULL;
    if (n != NULL)
        *n = 0;
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK && (job_names == NULL || n == NULL))
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK && batch_id <= 0)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "bad batch id %ld", batch_id);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_query_batch_jobs(&req, p->authenticator, batch_id);
    names_out o = { job_names, n };
    return run_rpc(c, p, SUBMIT_RPC, "query_batch", built, &req, NULL, 0,
                   BOINC_RETRY, parse_batch_jobs, &o, err);
}

typedef struct {
    const char *job_name;
    boinc_job_detail *detail;
    int *found;
} detail_out;

static int parse_job_detail(const char *rpc, const strbuf *body, void *out,
                            boinc_error *err)
{
    (void)rpc;
    detail_out *o = out;
    return boinc_parse_job_detail(strbuf_str(body), body->len, o->job_name, o->detail,
                                  o->found, err);
}

int boinc_query_job_detail(boinc_client *c, const boinc_project *p, long batch_id,
                           const char *job_name, boinc_job_detail *out, int *found,
                           boinc_error *err)
{
    start(err);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (found != NULL)
        *found = 0;
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK && (out == NULL || found == NULL || job_name == NULL))
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing argument");
    if (rc == BOINC_OK && batch_id <= 0)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "bad batch id %ld", batch_id);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    /* the same request as boinc_query_batch_jobs: by id, with job details */
    int built = boinc_req_query_batch_jobs(&req, p->authenticator, batch_id);
    detail_out o = { job_name, out, found };
    return run_rpc(c, p, SUBMIT_RPC, "query_batch", built, &req, NULL, 0,
                   BOINC_RETRY, parse_job_detail, &o, err);
}

void boinc_names_free(char **names, size_t n)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* ---- job_file.php ---------------------------------------------------------- */

typedef struct {
    size_t n;
    unsigned char *absent;
} absent_out;

static int parse_absent(const char *rpc, const strbuf *body, void *out,
                        boinc_error *err)
{
    (void)rpc;
    absent_out *a = out;
    return boinc_parse_absent_files(strbuf_str(body), body->len, a->n,
                                    a->absent, err);
}

int boinc_query_files(boinc_client *c, const boinc_project *p, long batch_id,
                      const char *const *phys_names, size_t n,
                      unsigned char *absent, boinc_error *err)
{
    start(err);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK && n > 0 && absent == NULL)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK)
        rc = check_names(phys_names, n, "physical file name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_file_list(&req, "query_files", p->authenticator,
                                    batch_id, phys_names, n);
    absent_out a = { n, absent };
    /* With a batch id the server records file-batch associations, and a
     * second identical call is a fatal error there: send it once. */
    return run_rpc(c, p, JOB_FILE, "query_files", built, &req, NULL, 0,
                   batch_id > 0 ? BOINC_ONCE : BOINC_RETRY, parse_absent, &a,
                   err);
}

int boinc_upload_files(boinc_client *c, const boinc_project *p, long batch_id,
                       const char *const *phys_names,
                       const char *const *local_paths, size_t n,
                       boinc_error *err)
{
    start(err);
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK)
        rc = check_names(phys_names, n, "physical file name", err);
    if (rc == BOINC_OK)
        rc = check_names(local_paths, n, "local path", err);
    if (rc != BOINC_OK)
        return rc;
    boinc_upload_part *parts = calloc(n ? n : 1, sizeof *parts);
    char **part_names = calloc(n ? n : 1, sizeof *part_names);
    strbuf req = STRBUF_INIT;
    int built = parts != NULL && part_names != NULL ? 0 : -1;
    for (size_t i = 0; built == 0 && i < n; i++) {
        strbuf name = STRBUF_INIT;
        if (strbuf_printf(&name, "file_%zu", i) != 0 ||
            (part_names[i] = strbuf_detach(&name)) == NULL)
            built = -1;
        strbuf_free(&name);
        if (built == 0) {
            parts[i].part_name = part_names[i];
            parts[i].local_path = local_paths[i];
        }
    }
    if (built == 0)
        built = boinc_req_file_list(&req, "upload_files", p->authenticator,
                                    batch_id, phys_names, n);
    /* Never repeated: re-uploading a file the server already has is a
     * fatal error on real servers. */
    rc = run_rpc(c, p, JOB_FILE, "upload_files", built, &req, parts, n,
                 BOINC_ONCE, parse_success, NULL, err);
    for (size_t i = 0; part_names != NULL && i < n; i++)
        free(part_names[i]);
    free(part_names);
    free(parts);
    return rc;
}

/* ---- get_output.php -------------------------------------------------------- */

int boinc_get_output_file(boinc_client *c, const boinc_project *p,
                          const char *job_name, int file_num, int fd,
                          long long *nbytes, boinc_error *err)
{
    start(err);
    long long ignored = 0;
    if (nbytes == NULL)
        nbytes = &ignored;
    *nbytes = 0;
    int rc = check_call(c, p, err);
    if (rc == BOINC_OK)
        rc = check_name(job_name, "job name", err);
    if (rc == BOINC_OK && (file_num < 0 || fd < 0))
        rc = boinc_fail(err, BOINC_E_BADARG, 0,
                        "bad output file number or descriptor");
    if (rc != BOINC_OK)
        return rc;
    strbuf url = STRBUF_INIT;
    if (boinc_output_url(&url, p->url, p->authenticator, job_name, file_num,
                         boinc_http_escape, c) != 0) {
        strbuf_free(&url);
        return boinc_fail(err, BOINC_E_NOMEM, 0, "out of memory");
    }
    boinc_client_set_secrets(c, p->authenticator, p->url);
    rc = boinc_http_get_to_fd(c, strbuf_str(&url), fd, nbytes, err);
    boinc_client_set_secrets(c, NULL, NULL);
    /* The URL holds the authenticator: wipe it before freeing. */
    if (url.data != NULL)
        memset(url.data, 0, url.len);
    strbuf_free(&url);
    if (rc == BOINC_OK)
        boinc_error_clear(err);
    else
        boinc_scrub_project(err, p->authenticator, p->url);
    return rc;
}
