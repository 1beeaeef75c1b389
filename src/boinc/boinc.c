/*
 * boinc.c - the client interface (boinc.h): each public RPC function
 * dispatches to the client's operations table (c->ops), the way Redis's
 * rio calls its back end; plus what every implementation shares: the
 * error helpers and the free functions of the result types.
 *
 * The libcurl implementation is boinc_curl.c (its RPCs) and boinc_http.c
 * (its client object and transport).
 */
#include "boinc/boinc.h"

#include "boinc/boinc_internal.h"

#include <stdlib.h>
#include <string.h>

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
    case BOINC_E_SETUP: return "setup error";
    }
    return "unknown error";
}

/* ---- dispatch -------------------------------------------------------------- */

/* Can the call be handed to the client's operations? */
static int ready(const boinc_client *c, const boinc_error *err)
{
    return c != NULL && err != NULL;
}

/* A call without a client (or without err): a bad argument, nothing sent. */
static int no_client(boinc_error *err)
{
    if (err == NULL)
        return BOINC_E_BADARG;
    boinc_error_clear(err);
    return boinc_fail(err, BOINC_E_BADARG, 0,
                      "missing client, project URL or authenticator");
}

void boinc_client_free(boinc_client *c)
{
    if (c != NULL)
        c->ops->free(c);
}

void boinc_client_set_download_limit(boinc_client *c, long long max_bytes)
{
    if (c != NULL)
        c->ops->set_download_limit(c, max_bytes);
}

int boinc_ping(boinc_client *c, const boinc_project *p, boinc_error *err)
{
    return ready(c, err) ? c->ops->ping(c, p, err) : no_client(err);
}

int boinc_get_templates(boinc_client *c, const boinc_project *p,
                        const char *app_name, boinc_templates *out,
                        boinc_error *err)
{
    return ready(c, err) ? c->ops->get_templates(c, p, app_name, out, err)
                         : no_client(err);
}

int boinc_get_templates_for_job(boinc_client *c, const boinc_project *p,
                                const char *job_name, boinc_templates *out,
                                boinc_error *err)
{
    return ready(c, err) ? c->ops->get_templates_for_job(c, p, job_name, out, err)
                         : no_client(err);
}

int boinc_create_batch(boinc_client *c, const boinc_project *p,
                       const char *batch_name, const char *app_name,
                       double expire_time, long *batch_id, boinc_error *err)
{
    return ready(c, err) ? c->ops->create_batch(c, p, batch_name, app_name,
                                                expire_time, batch_id, err)
                         : no_client(err);
}

int boinc_submit_batch(boinc_client *c, const boinc_project *p,
                       long batch_id, const char *app_name,
                       const gahp_job_params *params,
                       const boinc_job_spec *jobs, size_t njobs,
                       boinc_error *err)
{
    return ready(c, err) ? c->ops->submit_batch(c, p, batch_id, app_name, params,
                                                jobs, njobs, err)
                         : no_client(err);
}

int boinc_query_batch2(boinc_client *c, const boinc_project *p,
                       const char *min_mod_time,
                       const char *const *batch_names, size_t nbatches,
                       boinc_query_result *out, boinc_error *err)
{
    return ready(c, err) ? c->ops->query_batch2(c, p, min_mod_time, batch_names,
                                                nbatches, out, err)
                         : no_client(err);
}

int boinc_query_completed_job(boinc_client *c, const boinc_project *p,
                              const char *job_name, boinc_completed_job *out,
                              boinc_error *err)
{
    return ready(c, err) ? c->ops->query_completed_job(c, p, job_name, out, err)
                         : no_client(err);
}

int boinc_abort_jobs(boinc_client *c, const boinc_project *p,
                     const char *const *job_names, size_t njobs,
                     boinc_error *err)
{
    return ready(c, err) ? c->ops->abort_jobs(c, p, job_names, njobs, err)
                         : no_client(err);
}

int boinc_retire_batch(boinc_client *c, const boinc_project *p,
                       const char *batch_name, boinc_error *err)
{
    return ready(c, err) ? c->ops->retire_batch(c, p, batch_name, err)
                         : no_client(err);
}

int boinc_set_expire_time(boinc_client *c, const boinc_project *p,
                          const char *batch_name, double expire_time,
                          boinc_error *err)
{
    return ready(c, err) ? c->ops->set_expire_time(c, p, batch_name, expire_time, err)
                         : no_client(err);
}

int boinc_query_batches(boinc_client *c, const boinc_project *p,
                        boinc_batch_info **out, size_t *n, boinc_error *err)
{
    return ready(c, err) ? c->ops->query_batches(c, p, out, n, err) : no_client(err);
}

int boinc_query_batch_jobs(boinc_client *c, const boinc_project *p,
                           long batch_id, char ***job_names, size_t *n,
                           boinc_error *err)
{
    return ready(c, err) ? c->ops->query_batch_jobs(c, p, batch_id, job_names, n, err)
                         : no_client(err);
}

int boinc_query_job_detail(boinc_client *c, const boinc_project *p, long batch_id,
                           const char *job_name, boinc_job_detail *out, int *found,
                           boinc_error *err)
{
    return ready(c, err) ? c->ops->query_job_detail(c, p, batch_id, job_name, out,
                                                    found, err)
                         : no_client(err);
}

int boinc_query_files(boinc_client *c, const boinc_project *p, long batch_id,
                      const char *const *phys_names, size_t n,
                      unsigned char *absent, boinc_error *err)
{
    return ready(c, err) ? c->ops->query_files(c, p, batch_id, phys_names, n, absent,
                                               err)
                         : no_client(err);
}

int boinc_upload_files_src(boinc_client *c, const boinc_project *p, long batch_id,
                           const char *const *phys_names, const boinc_upload_src *src,
                           size_t n, boinc_error *err)
{
    return ready(c, err) ? c->ops->upload_files(c, p, batch_id, phys_names, src, n, err)
                         : no_client(err);
}

int boinc_get_output_file(boinc_client *c, const boinc_project *p,
                          const char *job_name, int file_num, int fd,
                          long long *nbytes, boinc_error *err)
{
    return ready(c, err) ? c->ops->get_output_file(c, p, job_name, file_num, fd,
                                                   nbytes, err)
                         : no_client(err);
}

/* ---- results ------------------------------------------------------------------- */

void boinc_templates_free(boinc_templates *t)
{
    if (t == NULL)
        return;
    boinc_names_free(t->input_names, t->n_inputs);
    boinc_names_free(t->output_names, t->n_outputs);
    free(t->output_max_nbytes);
    memset(t, 0, sizeof *t);
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

void boinc_completed_job_free(boinc_completed_job *j)
{
    if (j == NULL)
        return;
    free(j->stderr_out);
    memset(j, 0, sizeof *j);
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

void boinc_names_free(char **names, size_t n)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

