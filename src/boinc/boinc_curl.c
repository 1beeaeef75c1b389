/*
 * boinc_curl.c - the libcurl implementation of the client interface
 * (boinc.h): for each RPC, argument checks, then request building
 * (boinc_req.c), transport with the RPC's retry policy (boinc_http.c) and
 * tolerant reply parsing (boinc_xml.c).  Its operations table,
 * boinc_curl_ops, is what boinc_client_new() puts in a client.
 */
#include "boinc/boinc_internal.h"
#include "base/files.h"
#include "base/url.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SUBMIT_RPC "submit_rpc_handler.php"
#define JOB_FILE "job_file.php"

/* ---- common RPC path ------------------------------------------------------- */

/* Start of every public call, after its outputs are zeroed: err becomes
 * "no error" (the caller must have initialised it, e.g. = { 0 }, or
 * cleared it), then the client and project are checked. */
static int begin(const boinc_curl_client *c, const boinc_project *p, boinc_error *err)
{
    boinc_error_clear(err);
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

/*
 * Send a built request (built: the boinc_req_* result, -1 = ENOMEM; req is
 * freed) and leave the reply's body in *reply for the caller to parse;
 * rpc_end ends the call.  The project's secrets stay set until then, so
 * that no message of the transfer or the parse can carry them.
 */
static int rpc_post(boinc_curl_client *c, const boinc_project *p, const char *script,
                    const char *rpc, int built, strbuf *req, const boinc_upload_part *parts,
                    size_t nparts, boinc_retry_policy policy, strbuf *reply, boinc_error *err)
{
    boinc_curl_set_secrets(c, p->authenticator, p->url);
    int rc = built != 0 ? boinc_fail(err, BOINC_E_NOMEM, 0, "out of memory")
                        : boinc_http_post(c, p->url, script, rpc, strbuf_str(req), parts,
                                          nparts, policy, reply, err);
    strbuf_free(req);
    return rc;
}

/* End a call with its outcome rc.  Transport and parse messages name the
 * RPC; server <error>s keep the server's own text (HTCondor matches "no
 * batch named "); the authenticator is scrubbed from any message as a
 * last line of defence. */
static int rpc_end(boinc_curl_client *c, const boinc_project *p, int rc, strbuf *reply,
                   boinc_error *err)
{
    if (rc == BOINC_OK)
        boinc_error_clear(err);
    else
        boinc_scrub_project(err, p->authenticator, p->url);
    boinc_curl_set_secrets(c, NULL, NULL);
    strbuf_free(reply);
    return rc;
}

/* An RPC whose reply is <success/>, or a batch id (stored in *id when id
 * is not NULL). */
static int rpc_simple(boinc_curl_client *c, const boinc_project *p, const char *script,
                      const char *rpc, int built, strbuf *req,
                      const boinc_upload_part *parts, size_t nparts,
                      boinc_retry_policy policy, int with_id, long *id, boinc_error *err)
{
    strbuf reply = STRBUF_INIT;
    long got = 0;
    int rc = rpc_post(c, p, script, rpc, built, req, parts, nparts, policy, &reply, err);
    if (rc == BOINC_OK)
        rc = with_id ? boinc_parse_batch_id(rpc, strbuf_str(&reply), reply.len, &got, err)
                     : boinc_parse_success(rpc, strbuf_str(&reply), reply.len, err);
    if (rc == BOINC_OK && id != NULL)
        *id = got;
    return rpc_end(c, p, rc, &reply, err);
}

/* ---- submit_rpc_handler.php ----------------------------------------------- */

static int curl_ping(boinc_client *client, const boinc_project *p, boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    int rc = begin(c, p, err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    return rpc_simple(c, p, SUBMIT_RPC, "ping", boinc_req_ping(&req), &req, NULL, 0,
                      BOINC_RETRY, 0, NULL, err);
}

/* get_templates by <app_name> or by <job_name> (key), what the name is. */
static int get_templates_by(boinc_curl_client *c, const boinc_project *p,
                            const char *key, const char *value, const char *what,
                            boinc_templates *out, boinc_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    int rc = begin(c, p, err);
    if (rc == BOINC_OK && out == NULL)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK)
        rc = check_name(value, what, err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
    rc = rpc_post(c, p, SUBMIT_RPC, "get_templates",
                  boinc_req_get_templates(&req, p->authenticator, key, value), &req, NULL, 0,
                  BOINC_RETRY, &reply, err);
    if (rc == BOINC_OK)
        rc = boinc_parse_templates(strbuf_str(&reply), reply.len, out, err);
    return rpc_end(c, p, rc, &reply, err);
}

static int curl_get_templates(boinc_client *client, const boinc_project *p,
                              const char *app_name, boinc_templates *out,
                              boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    return get_templates_by(c, p, "app_name", app_name, "app name", out, err);
}

static int curl_get_templates_for_job(boinc_client *client, const boinc_project *p,
                                      const char *job_name, boinc_templates *out,
                                      boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    return get_templates_by(c, p, "job_name", job_name, "job name", out, err);
}

static int curl_create_batch(boinc_client *client, const boinc_project *p,
                             const char *batch_name, const char *app_name,
                             double expire_time, long *batch_id, boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    int rc = begin(c, p, err);
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
    return rpc_simple(c, p, SUBMIT_RPC, "create_batch", built, &req, NULL, 0,
                      BOINC_ONCE, 1, batch_id, err);
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

static int curl_submit_batch(boinc_client *client, const boinc_project *p,
                             long batch_id, const char *app_name,
                             const gahp_job_params *params,
                             const boinc_job_spec *jobs, size_t njobs,
                             boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    int rc = begin(c, p, err);
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
     * went through fails with "create_work failed".  The reply carries
     * the batch id, which the caller knows. */
    return rpc_simple(c, p, SUBMIT_RPC, "submit_batch", built, &req, NULL, 0,
                      BOINC_ONCE, 1, NULL, err);
}

static int curl_query_batch2(boinc_client *client, const boinc_project *p,
                             const char *min_mod_time,
                             const char *const *batch_names, size_t nbatches,
                             boinc_query_result *out, boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    int rc = begin(c, p, err);
    if (rc == BOINC_OK && out == NULL)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK)
        rc = check_names(batch_names, nbatches, "batch name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
    int built = boinc_req_query_batch2(&req, p->authenticator, min_mod_time,
                                       batch_names, nbatches);
    rc = rpc_post(c, p, SUBMIT_RPC, "query_batch2", built, &req, NULL, 0, BOINC_RETRY,
                  &reply, err);
    if (rc == BOINC_OK)
        rc = boinc_parse_query_batch2(strbuf_str(&reply), reply.len, nbatches, out, err);
    return rpc_end(c, p, rc, &reply, err);
}

static int curl_query_completed_job(boinc_client *client, const boinc_project *p,
                                    const char *job_name, boinc_completed_job *out,
                                    boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    int rc = begin(c, p, err);
    if (rc == BOINC_OK && out == NULL)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK)
        rc = check_name(job_name, "job name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
    rc = rpc_post(c, p, SUBMIT_RPC, "query_completed_job",
                  boinc_req_query_completed_job(&req, p->authenticator, job_name), &req,
                  NULL, 0, BOINC_RETRY, &reply, err);
    if (rc == BOINC_OK)
        rc = boinc_parse_completed_job(strbuf_str(&reply), reply.len, out, err);
    return rpc_end(c, p, rc, &reply, err);
}

static int curl_abort_jobs(boinc_client *client, const boinc_project *p,
                           const char *const *job_names, size_t njobs,
                           boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    int rc = begin(c, p, err);
    if (rc == BOINC_OK)
        rc = check_names(job_names, njobs, "job name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_abort_jobs(&req, p->authenticator, job_names, njobs);
    return rpc_simple(c, p, SUBMIT_RPC, "abort_jobs", built, &req, NULL, 0,
                      BOINC_RETRY, 0, NULL, err);
}

static int curl_retire_batch(boinc_client *client, const boinc_project *p,
                             const char *batch_name, boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    int rc = begin(c, p, err);
    if (rc == BOINC_OK)
        rc = check_name(batch_name, "batch name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_retire_batch(&req, p->authenticator, batch_name);
    return rpc_simple(c, p, SUBMIT_RPC, "retire_batch", built, &req, NULL, 0,
                      BOINC_RETRY, 0, NULL, err);
}

static int curl_set_expire_time(boinc_client *client, const boinc_project *p,
                                const char *batch_name, double expire_time,
                                boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    int rc = begin(c, p, err);
    if (rc == BOINC_OK)
        rc = check_name(batch_name, "batch name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT;
    int built = boinc_req_set_expire_time(&req, p->authenticator, batch_name,
                                          expire_time);
    return rpc_simple(c, p, SUBMIT_RPC, "set_expire_time", built, &req, NULL, 0,
                      BOINC_RETRY, 0, NULL, err);
}

static int curl_query_batches(boinc_client *client, const boinc_project *p,
                              boinc_batch_info **out, size_t *n, boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    if (out != NULL)
        *out = NULL;
    if (n != NULL)
        *n = 0;
    int rc = begin(c, p, err);
    if (rc == BOINC_OK && (out == NULL || n == NULL))
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
    rc = rpc_post(c, p, SUBMIT_RPC, "query_batches",
                  boinc_req_query_batches(&req, p->authenticator), &req, NULL, 0,
                  BOINC_RETRY, &reply, err);
    if (rc == BOINC_OK)
        rc = boinc_parse_query_batches(strbuf_str(&reply), reply.len, out, n, err);
    return rpc_end(c, p, rc, &reply, err);
}

static int curl_query_batch_jobs(boinc_client *client, const boinc_project *p,
                                 long batch_id, char ***job_names, size_t *n,
                                 boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    if (job_names != NULL)
        *job_names = NULL;
    if (n != NULL)
        *n = 0;
    int rc = begin(c, p, err);
    if (rc == BOINC_OK && (job_names == NULL || n == NULL))
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK && batch_id <= 0)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "bad batch id %ld", batch_id);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
    rc = rpc_post(c, p, SUBMIT_RPC, "query_batch",
                  boinc_req_query_batch_jobs(&req, p->authenticator, batch_id), &req, NULL,
                  0, BOINC_RETRY, &reply, err);
    if (rc == BOINC_OK)
        rc = boinc_parse_batch_jobs(strbuf_str(&reply), reply.len, job_names, n, err);
    return rpc_end(c, p, rc, &reply, err);
}

static int curl_query_job_detail(boinc_client *client, const boinc_project *p, long batch_id,
                                 const char *job_name, boinc_job_detail *out, int *found,
                                 boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (found != NULL)
        *found = 0;
    int rc = begin(c, p, err);
    if (rc == BOINC_OK && (out == NULL || found == NULL || job_name == NULL))
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing argument");
    if (rc == BOINC_OK && batch_id <= 0)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "bad batch id %ld", batch_id);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
    /* the same request as boinc_query_batch_jobs: by id, with job details */
    rc = rpc_post(c, p, SUBMIT_RPC, "query_batch",
                  boinc_req_query_batch_jobs(&req, p->authenticator, batch_id), &req, NULL,
                  0, BOINC_RETRY, &reply, err);
    if (rc == BOINC_OK)
        rc = boinc_parse_job_detail(strbuf_str(&reply), reply.len, job_name, out, found,
                                    err);
    return rpc_end(c, p, rc, &reply, err);
}

/* ---- job_file.php ---------------------------------------------------------- */

static int curl_query_files(boinc_client *client, const boinc_project *p, long batch_id,
                            const char *const *phys_names, size_t n,
                            unsigned char *absent, boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    int rc = begin(c, p, err);
    if (rc == BOINC_OK && n > 0 && absent == NULL)
        rc = boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (rc == BOINC_OK)
        rc = check_names(phys_names, n, "physical file name", err);
    if (rc != BOINC_OK)
        return rc;
    strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
    int built = boinc_req_file_list(&req, "query_files", p->authenticator,
                                    batch_id, phys_names, n);
    /* With a batch id the server records file-batch associations, and a
     * second identical call is a fatal error there: send it once. */
    rc = rpc_post(c, p, JOB_FILE, "query_files", built, &req, NULL, 0,
                  batch_id > 0 ? BOINC_ONCE : BOINC_RETRY, &reply, err);
    if (rc == BOINC_OK)
        rc = boinc_parse_absent_files(strbuf_str(&reply), reply.len, n, absent, err);
    return rpc_end(c, p, rc, &reply, err);
}

static int check_sources(const boinc_upload_src *src, size_t n, boinc_error *err)
{
    if (n > 0 && src == NULL)
        return boinc_fail(err, BOINC_E_BADARG, 0, "missing local path list");
    for (size_t i = 0; i < n; i++)
        if (check_name(src[i].local_path, "local path", err) != BOINC_OK)
            return BOINC_E_BADARG;
        else if (src[i].data != NULL && src[i].size < 0)
            return boinc_fail(err, BOINC_E_BADARG, 0, "kept bytes of %s without a size",
                              src[i].local_path);
    return BOINC_OK;
}

static int curl_upload_files(boinc_client *client, const boinc_project *p, long batch_id,
                             const char *const *phys_names, const boinc_upload_src *src,
                             size_t n, boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    int rc = begin(c, p, err);
    if (rc == BOINC_OK)
        rc = check_names(phys_names, n, "physical file name", err);
    if (rc == BOINC_OK)
        rc = check_sources(src, n, err);
    if (rc != BOINC_OK)
        return rc;
    boinc_upload_part *parts = calloc(n ? n : 1, sizeof *parts);
    if (parts == NULL)
        return boinc_fail(err, BOINC_E_NOMEM, 0, "out of memory");
    /* bytes read back from a hashed file are checked against the MD5
     * that names them; kept bytes are the hashed ones */
    for (size_t i = 0; i < n; i++)
        parts[i] = (boinc_upload_part){
            src[i].local_path, src[i].data, src[i].size,
            src[i].size >= 0 ? boinc_phys_name_md5(phys_names[i]) : NULL };
    rc = boinc_upload_check(parts, n, err);
    strbuf req = STRBUF_INIT;
    int built = rc == BOINC_OK
                    ? boinc_req_file_list(&req, "upload_files", p->authenticator,
                                          batch_id, phys_names, n)
                    : -1;
    /* Never repeated: re-uploading a file the server already has is a
     * fatal error on real servers. */
    if (rc == BOINC_OK)
        rc = rpc_simple(c, p, JOB_FILE, "upload_files", built, &req, parts, n,
                        BOINC_ONCE, 0, NULL, err);
    free(parts);
    return rc;
}

/* ---- get_output.php -------------------------------------------------------- */

static int curl_get_output_file(boinc_client *client, const boinc_project *p,
                                const char *job_name, int file_num, int fd,
                                long long *nbytes, boinc_error *err)
{
    boinc_curl_client *c = boinc_curl_of(client);
    long long ignored = 0;
    if (nbytes == NULL)
        nbytes = &ignored;
    *nbytes = 0;
    int rc = begin(c, p, err);
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
    boinc_curl_set_secrets(c, p->authenticator, p->url);
    rc = boinc_http_get_to_fd(c, strbuf_str(&url), fd, nbytes, err);
    boinc_curl_set_secrets(c, NULL, NULL);
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

/* ---- the operations table ---------------------------------------------------- */

const boinc_client_ops boinc_curl_ops = {
    .name = "libcurl",
    .ping = curl_ping,
    .get_templates = curl_get_templates,
    .get_templates_for_job = curl_get_templates_for_job,
    .create_batch = curl_create_batch,
    .submit_batch = curl_submit_batch,
    .query_batch2 = curl_query_batch2,
    .query_completed_job = curl_query_completed_job,
    .abort_jobs = curl_abort_jobs,
    .retire_batch = curl_retire_batch,
    .set_expire_time = curl_set_expire_time,
    .query_batches = curl_query_batches,
    .query_batch_jobs = curl_query_batch_jobs,
    .query_job_detail = curl_query_job_detail,
    .query_files = curl_query_files,
    .upload_files = curl_upload_files,
    .get_output_file = curl_get_output_file,
    .set_download_limit = boinc_curl_set_download_limit,
    .free = boinc_curl_free,
};
