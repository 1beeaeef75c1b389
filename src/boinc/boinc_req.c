/*
 * boinc_req.c - builds the XML request bodies of the BOINC web RPCs (form
 * field `request`) and the get_output.php URL.
 *
 * Layout follows the real-server captures; every value that comes from the
 * caller is XML-escaped (BOINC's own client library does not escape, which
 * breaks on names or arguments containing & < >).
 */
#include "boinc/boinc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append value XML-escaped: runs of plain characters in one copy (a
 * 10,000-job submit_batch is 20,000 names; a printf or an append per
 * character was a tenth of the submit's CPU). */
static int put_escaped(strbuf *sb, const char *value)
{
    const char *run = value;
    for (const char *p = value;; p++) {
        const char *rep = NULL;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        case '\0': return strbuf_append(sb, run, (size_t)(p - run));
        default: continue;
        }
        if (strbuf_append(sb, run, (size_t)(p - run)) != 0 || strbuf_puts(sb, rep) != 0)
            return -1;
        run = p + 1;
    }
}

/* Append "<tag>escaped value</tag>\n". */
static int put_elem(strbuf *sb, const char *tag, const char *value)
{
    size_t tlen = strlen(tag);
    if (strbuf_putc(sb, '<') != 0 || strbuf_append(sb, tag, tlen) != 0 ||
        strbuf_putc(sb, '>') != 0 || put_escaped(sb, value != NULL ? value : "") != 0 ||
        strbuf_append(sb, "</", 2) != 0 || strbuf_append(sb, tag, tlen) != 0 ||
        strbuf_append(sb, ">\n", 2) != 0)
        return -1;
    return 0;
}

static int put_double(strbuf *sb, const char *tag, double v)
{
    return strbuf_printf(sb, "<%s>%.6f</%s>\n", tag, v, tag);
}

static int open_req(strbuf *sb, const char *rpc, const char *auth)
{
    if (strbuf_printf(sb, "<%s>\n", rpc) != 0)
        return -1;
    return put_elem(sb, "authenticator", auth);
}

static int close_req(strbuf *sb, const char *rpc)
{
    return strbuf_printf(sb, "</%s>\n", rpc);
}

int boinc_req_ping(strbuf *sb)
{
    /* Exactly what the capture shows: ping needs no authenticator. */
    return strbuf_puts(sb, "<ping> </ping>\n");
}

int boinc_req_get_templates(strbuf *sb, const char *auth, const char *key,
                            const char *value)
{
    if (open_req(sb, "get_templates", auth) != 0 ||
        put_elem(sb, key, value) != 0)
        return -1;
    return close_req(sb, "get_templates");
}

int boinc_req_create_batch(strbuf *sb, const char *auth, const char *batch,
                           const char *app, double expire_time)
{
    if (open_req(sb, "create_batch", auth) != 0 ||
        put_elem(sb, "batch_name", batch) != 0 ||
        put_elem(sb, "app_name", app) != 0 ||
        put_double(sb, "expire_time", expire_time > 0 ? expire_time : 0) != 0)
        return -1;
    return close_req(sb, "create_batch");
}

/* "Unset" parameters (<= 0) are sent as 0, which the server reads as
 * "use the app's template value". */
static double or_zero(double v)
{
    return v > 0 ? v : 0;
}

static int put_job_params(strbuf *sb, const gahp_job_params *p)
{
    gahp_job_params zero = { 0, 0, 0, 0, 0, 0 };
    if (p == NULL)
        p = &zero;
    if (strbuf_printf(sb, "<app_version_num>%ld</app_version_num>\n",
                      p->app_version_num > 0 ? p->app_version_num : 0) != 0 ||
        strbuf_puts(sb, "<job_params>\n") != 0 ||
        put_double(sb, "rsc_disk_bound", or_zero(p->rsc_disk_bound)) != 0 ||
        put_double(sb, "rsc_fpops_est", or_zero(p->rsc_fpops_est)) != 0 ||
        put_double(sb, "rsc_fpops_bound", or_zero(p->rsc_fpops_bound)) != 0 ||
        put_double(sb, "rsc_memory_bound", or_zero(p->rsc_memory_bound)) != 0 ||
        put_double(sb, "delay_bound", or_zero(p->delay_bound)) != 0 ||
        strbuf_puts(sb, "</job_params>\n") != 0)
        return -1;
    return 0;
}

static int put_job(strbuf *sb, const boinc_job_spec *job)
{
    if (strbuf_puts(sb, "<job>\n") != 0 || put_elem(sb, "name", job->name) != 0)
        return -1;
    if (job->command_line != NULL && job->command_line[0] != '\0' &&
        put_elem(sb, "command_line", job->command_line) != 0)
        return -1;
    for (size_t i = 0; i < job->n_inputs; i++) {
        if (strbuf_puts(sb, "<input_file>\n<mode>local_staged</mode>\n") != 0 ||
            put_elem(sb, "source", job->phys_names[i]) != 0 ||
            strbuf_puts(sb, "</input_file>\n") != 0)
            return -1;
    }
    return strbuf_puts(sb, "</job>\n");
}

int boinc_req_submit_batch(strbuf *sb, const char *auth, long batch_id,
                           const char *app, const gahp_job_params *params,
                           const boinc_job_spec *jobs, size_t njobs)
{
    if (open_req(sb, "submit_batch", auth) != 0 ||
        strbuf_puts(sb, "<batch>\n") != 0 ||
        strbuf_printf(sb, "<batch_id>%ld</batch_id>\n",
                      batch_id > 0 ? batch_id : 0) != 0 ||
        put_elem(sb, "app_name", app) != 0 || put_job_params(sb, params) != 0)
        return -1;
    for (size_t i = 0; i < njobs; i++)
        if (put_job(sb, &jobs[i]) != 0)
            return -1;
    if (strbuf_puts(sb, "</batch>\n") != 0)
        return -1;
    return close_req(sb, "submit_batch");
}

int boinc_req_query_batch2(strbuf *sb, const char *auth,
                           const char *min_mod_time,
                           const char *const *batches, size_t n)
{
    /* min_mod_time is the server's own server_time string, passed back
     * verbatim (reformatting it could lose precision or move it). */
    const char *mmt = min_mod_time != NULL && *min_mod_time != '\0'
                          ? min_mod_time : "0";
    if (open_req(sb, "query_batch2", auth) != 0 ||
        put_elem(sb, "min_mod_time", mmt) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (put_elem(sb, "batch_name", batches[i]) != 0)
            return -1;
    return close_req(sb, "query_batch2");
}

int boinc_req_query_completed_job(strbuf *sb, const char *auth,
                                  const char *job)
{
    if (open_req(sb, "query_completed_job", auth) != 0 ||
        put_elem(sb, "job_name", job) != 0)
        return -1;
    return close_req(sb, "query_completed_job");
}

int boinc_req_abort_jobs(strbuf *sb, const char *auth,
                         const char *const *jobs, size_t n)
{
    if (open_req(sb, "abort_jobs", auth) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (put_elem(sb, "job_name", jobs[i]) != 0)
            return -1;
    return close_req(sb, "abort_jobs");
}

int boinc_req_retire_batch(strbuf *sb, const char *auth, const char *batch)
{
    if (open_req(sb, "retire_batch", auth) != 0 ||
        put_elem(sb, "batch_name", batch) != 0)
        return -1;
    return close_req(sb, "retire_batch");
}

int boinc_req_set_expire_time(strbuf *sb, const char *auth,
                              const char *batch, double expire_time)
{
    if (open_req(sb, "set_expire_time", auth) != 0 ||
        put_elem(sb, "batch_name", batch) != 0 ||
        put_double(sb, "expire_time", expire_time > 0 ? expire_time : 0) != 0)
        return -1;
    return close_req(sb, "set_expire_time");
}

int boinc_req_query_batches(strbuf *sb, const char *auth)
{
    if (open_req(sb, "query_batches", auth) != 0)
        return -1;
    return close_req(sb, "query_batches");
}

int boinc_req_query_batch_jobs(strbuf *sb, const char *auth, long batch_id)
{
    if (open_req(sb, "query_batch", auth) != 0 ||
        strbuf_printf(sb, "<batch_id>%ld</batch_id>\n", batch_id) != 0 ||
        strbuf_puts(sb, "<get_job_details>1</get_job_details>\n") != 0)
        return -1;
    return close_req(sb, "query_batch");
}

int boinc_req_file_list(strbuf *sb, const char *rpc, const char *auth,
                        long batch_id, const char *const *names, size_t n)
{
    if (open_req(sb, rpc, auth) != 0)
        return -1;
    if (batch_id > 0 &&
        strbuf_printf(sb, "<batch_id>%ld</batch_id>\n", batch_id) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (put_elem(sb, "phys_name", names[i]) != 0)
            return -1;
    return close_req(sb, rpc);
}

static int put_query_value(strbuf *sb, const char *value,
                           boinc_url_escape_fn escape, void *ctx)
{
    char *esc = escape(value, ctx);
    if (esc == NULL)
        return -1;
    int rc = strbuf_puts(sb, esc);
    free(esc);
    return rc;
}

int boinc_output_url(strbuf *sb, const char *project_url, const char *auth,
                     const char *job, int file_num,
                     boinc_url_escape_fn escape, void *ctx)
{
    if (strbuf_puts(sb, project_url) != 0 ||
        strbuf_puts(sb, "get_output.php?cmd=workunit_file&auth_str=") != 0 ||
        put_query_value(sb, auth, escape, ctx) != 0 ||
        strbuf_puts(sb, "&wu_name=") != 0 ||
        put_query_value(sb, job, escape, ctx) != 0 ||
        strbuf_printf(sb, "&file_num=%d", file_num) != 0)
        return -1;
    return 0;
}
