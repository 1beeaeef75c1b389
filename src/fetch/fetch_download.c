/*
 * fetch_download.c - BOINC_FETCH_OUTPUT's downloads (see fetch_download.h).
 *
 * Files are never written under their final name until complete: every
 * download goes to a temp file next to its destination (outputs.h) and is
 * renamed into place only when ALL selected files have downloaded, so a
 * failed fetch leaves no new or half file behind and can simply be
 * retried.
 */
#include "fetch/fetch_download.h"

#include "fetch/fetch_select.h"
#include "base/log.h"
#include "fetch/outputs.h"
#include "base/strbuf.h"
#include "base/testpoint.h"

#include <stdlib.h>

static void pending_abort(pending_output *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        outputs_abort_temp(p[i].fd, p[i].tmp);
        p[i].fd = -1;
        p[i].tmp = NULL;
    }
}

static void pending_free(pending_output *p, size_t n)
{
    pending_abort(p, n);
    for (size_t i = 0; i < n; i++)
        free(p[i].dest);
    free(p);
}

/* The failed get_output of name as *e; clears err. */
static int fail_get_output(exec_err *e, const char *name, int file_num,
                           boinc_error *err)
{
    strbuf step = STRBUF_INIT;
    int rc = strbuf_printf(&step, "get_output of %s (file %d)", name, file_num) == 0
                 ? fetch_step_fail_rpc(e, step.data, err)
                 : exec_err_nomem(e);
    boinc_error_clear(err);
    strbuf_free(&step);
    return rc;
}

long long fetch_output_max_nbytes(const boinc_templates *t, size_t file_num)
{
    return t->output_max_nbytes != NULL && file_num < t->n_outputs
               ? t->output_max_nbytes[file_num] : 0;
}

int fetch_download_temp(fetch_ctx *fc, pending_output *p, const char *name,
                        exec_err *e)
{
    char *errmsg = NULL;
    if (outputs_open_temp(p->dest, &p->fd, &p->tmp, &errmsg) != 0) {
        p->fd = -1;
        p->tmp = NULL;
        return fetch_step_fail_local(e, "saving output failed", errmsg);
    }
    boinc_error err = { 0 };
    long long nbytes = 0;
    /* What is left of the fetch's total bounds this file (issue 10 #3);
     * the per-file limit is the client's own. */
    long long left = fc->ctx->config->max_fetch_bytes - fc->fetched;
    if (left <= 0)
        return fetch_step_failf(e, EXEC_E_REFUSED,
                           "get_output of %s failed: the fetch already reached "
                           "--max-fetch-bytes (%lld bytes)", name,
                           (long long)fc->ctx->config->max_fetch_bytes);
    /* The app declared how big this output may be: a server sending more
     * is not sending that output (issue 29 #7), whatever our own limits. */
    long long limit = p->max_nbytes > 0 && p->max_nbytes < left ? p->max_nbytes : left;
    boinc_client_set_download_limit(fc->ctx->client, limit);
    if (boinc_get_output_file(fc->ctx->client, &fc->project, fc->f->job,
                              p->file_num, p->fd, &nbytes, &err) != BOINC_OK)
        return fail_get_output(e, name, p->file_num, &err);
    log_debug("fetch_output: job %s: %s: %lld bytes", fc->f->job, name, nbytes);
    fc->fetched += nbytes;
    return 0;
}

/* Refuse the whole fetch when one output name cannot be a file name:
 * nothing is written if one is refused. */
static int check_names(const fetch_ctx *fc, const boinc_templates *t,
                       exec_err *e)
{
    for (size_t i = 0; i < t->n_outputs; i++) {
        const char *name = t->output_names[i];
        if (name == NULL || !outputs_name_is_safe(name))
            return fetch_step_failf(e, EXEC_E_REFUSED,
                               "fetch_output failed: unsafe output name from "
                               "server: %s", name != NULL ? name : "(none)");
    }
    return fetch_select_check_hidden(fc->f, t->output_names, t->n_outputs,
                              "output name from server", e);
}

/* Download every selected output into p[0..*np) (names already checked). */
static int download_selected(fetch_ctx *fc, const boinc_templates *t,
                             pending_output *p, size_t *np, exec_err *e)
{
    for (size_t i = 0; i < t->n_outputs; i++) {
        const char *name = t->output_names[i];
        if (!fetch_select_wanted(fc->f, name))
            continue;
        pending_output *pf = &p[(*np)++];
        pf->file_num = (int)i;
        pf->fd = -1;
        pf->max_nbytes = fetch_output_max_nbytes(t, i);
        if ((pf->dest = fetch_select_destination(fc->f, name, e)) == NULL ||
            fetch_download_temp(fc, pf, name, e) != 0)
            return -1;
    }
    return 0;
}

/* Every file is complete: rename them into place. */
static int commit_all(pending_output *p, size_t np, exec_err *e)
{
    for (size_t i = 0; i < np; i++) {
        char *errmsg = NULL;
        int rc = outputs_commit_temp(p[i].fd, p[i].tmp, p[i].dest, &errmsg);
        p[i].fd = -1;
        p[i].tmp = NULL;
        if (rc != 0)
            return fetch_step_fail_local(e, "saving output failed", errmsg);
        testpoint("fetch.renamed");
    }
    return 0;
}

int fetch_download_plain(fetch_ctx *fc, const boinc_templates *t, exec_err *e)
{
    fetch_select_log_skipped(fc->f, t->output_names, t->n_outputs, "an output");
    /* One open temp file per selected output until all are complete
     * (BOINC apps have a handful of outputs, fixed by the template). */
    pending_output *p = calloc(t->n_outputs ? t->n_outputs : 1, sizeof *p);
    if (p == NULL)
        return exec_err_nomem(e);
    size_t np = 0;
    int rc = check_names(fc, t, e);
    if (rc == 0)
        rc = download_selected(fc, t, p, &np, e);
    if (rc == 0) {
        testpoint("fetch.downloaded");
        rc = commit_all(p, np, e);
    }
    pending_free(p, np);
    return rc;
}
