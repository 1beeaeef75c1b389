/*
 * fetch_download.c - BOINC_FETCH_OUTPUT's downloads (see fetch_download.h).
 *
 * Files are never written under their final name until complete: every
 * download goes to a temp file next to its destination (outputs.h) and is
 * renamed into place only when ALL selected files have downloaded, so a
 * failed fetch leaves no new or half file behind and can simply be
 * retried.
 *
 * At the end, the zip rule: a job whose only output is a .zip archive
 * delivers the archive's members.
 */
#include "fetch/fetch_download.h"

#include "fetch/fetch_step.h"
#include "base/log.h"
#include "fetch/outputs.h"
#include "base/strbuf.h"
#include "base/testpoint.h"
#include "base/files.h"

#include <stdlib.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ==== zip rule ==========================================================
 *
 * BOINC_FETCH_OUTPUT's zip rule (see fetch_download.h): the
 * archive is downloaded and unpacked in a private directory
 * <iwd>/.boinc_gahp.zip.XXXXXX, so no member is ever seen under a final
 * name until it is complete; each selected member is then renamed into
 * place (copied through a temp file across file systems).
 */

int fetch_zip_applies(const boinc_templates *t)
{
    if (t->n_outputs != 1 || t->output_names[0] == NULL)
        return 0;
    size_t n = strlen(t->output_names[0]);
    return n > 4 && strcasecmp(t->output_names[0] + n - 4, ".zip") == 0;
}

/* Unlink every entry of a directory without subdirectories, then the
 * directory itself.  Best effort: this is clean-up after the real work. */
static void remove_flat_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        int dfd = dirfd(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (unlinkat(dfd, e->d_name, 0) != 0 && errno != ENOENT)
                log_warn("fetch_output: cannot remove %s/%s: %s", dir,
                         e->d_name, strerror(errno));
        }
        closedir(d);
    }
    if (rmdir(dir) != 0 && errno != ENOENT)
        log_warn("fetch_output: cannot remove directory %s: %s", dir,
                 strerror(errno));
}

/* *errmsg = "<what> <path>: <strerror(errno)>" (stays NULL on ENOMEM). */
static void errno_message(char **errmsg, const char *what, const char *path)
{
    const char *reason = strerror(errno);
    strbuf m = STRBUF_INIT;
    if (strbuf_printf(&m, "%s %s: %s", what, path, reason) == 0)
        *errmsg = strbuf_detach(&m);
    strbuf_free(&m);
}

/* Copy src to dest through a temp file next to dest (rename across file
 * systems).  0 or -1 with *errmsg. */
static int copy_into_place(const char *src, const char *dest, char **errmsg)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        errno_message(errmsg, "cannot read unpacked member", src);
        return -1;
    }
    int fd = -1;
    char *tmp = NULL;
    if (outputs_open_temp(dest, &fd, &tmp, errmsg) != 0) {
        close(in);
        return -1;
    }
    char buf[65536];            /* copy chunk, not a size limit */
    for (;;) {
        ssize_t got = read(in, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got == 0)
            break;
        if (got < 0 || files_write_all(fd, buf, (size_t)got) != 0) {
            errno_message(errmsg, "cannot write output file", dest);
            close(in);
            outputs_abort_temp(fd, tmp);
            return -1;
        }
    }
    close(in);
    return outputs_commit_temp(fd, tmp, dest, errmsg);
}

/* Move an unpacked member (complete, in the private directory) to dest.
 * rename() is atomic; across file systems it falls back to a copy through
 * a temp file, so dest is never half written either way.  outputs_place
 * never replaces a device, FIFO or socket (EEXIST). */
static int place_member(const char *src, const char *dest, char **errmsg)
{
    if (outputs_place(src, dest) == 0) {
        /* the rename is durable only with both its directories (issue 29
         * #4: the explorer lost members whose fetch had delivered NULL) */
        outputs_sync_parent(dest);
        outputs_sync_parent(src);
        return 0;
    }
    if (errno == EXDEV)
        return copy_into_place(src, dest, errmsg);
    strbuf m = STRBUF_INIT;
    if (strbuf_printf(&m, "cannot create output file %s: %s", dest,
                      errno == EEXIST ? "it exists and is not a regular file"
                                      : strerror(errno)) == 0)
        *errmsg = strbuf_detach(&m);
    strbuf_free(&m);
    return -1;
}

/* Make <iwd>/.boinc_gahp.zip.XXXXXX (mode 0700) and its "members" subdir;
 * *made counts the directories created (for the clean-up). */
static int make_private_dir(const fetch_ctx *fc, strbuf *dir, strbuf *members,
                            int *made, exec_err *e)
{
    char *base = files_resolve(fc->f->iwd, ".boinc_gahp.zip.XXXXXX");
    if (base == NULL)
        return errno == ENOMEM ? exec_err_nomem(e)
                               : fetch_step_failf(e, EXEC_E_REFUSED,
                                             "fetch_output failed: bad iwd %s",
                                             fc->f->iwd);
    int rc = strbuf_puts(dir, base);
    free(base);
    if (rc != 0)
        return exec_err_nomem(e);
    if (mkdtemp(dir->data) == NULL)
        return fetch_step_failf(e, EXEC_E_LOCAL, "fetch_output failed: cannot create "
                           "temporary directory in %s: %s", fc->f->iwd,
                           strerror(errno));
    *made = 1;
    if (strbuf_printf(members, "%s/members", dir->data) != 0)
        return exec_err_nomem(e);
    if (mkdir(members->data, 0700) != 0)
        return fetch_step_failf(e, EXEC_E_LOCAL, "fetch_output failed: cannot create "
                           "temporary directory %s: %s", members->data,
                           strerror(errno));
    *made = 2;
    return 0;
}

/* Place the selected members.  0, or -1 with *e set. */
static int place_members(fetch_ctx *fc, const char *members_dir,
                         char *const *names, size_t n, exec_err *e)
{
    fetch_select_log_skipped(fc->f, names, n, "a member of the output archive");
    if (fetch_select_check_hidden(fc->f, names, n, "archive member", e) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!fetch_select_wanted(fc->f, names[i]))
            continue;
        char *dest = fetch_select_destination(fc->f, names[i], e);
        if (dest == NULL)
            return -1;
        strbuf src = STRBUF_INIT;
        char *errmsg = NULL;
        int rc = 0;
        if (strbuf_printf(&src, "%s/%s", members_dir, names[i]) != 0)
            rc = exec_err_nomem(e);
        else if (place_member(src.data, dest, &errmsg) != 0)
            rc = fetch_step_fail_local(e, "saving output failed", errmsg);
        free(dest);
        strbuf_free(&src);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Zip bomb guard (issue 10 #3): the members may add up to at most
 * --max-unzip-bytes and to at most --max-unzip-ratio times the archive's
 * own size (fc->fetched: the archive is the fetch's only download). */
static long long unzip_limit(const fetch_ctx *fc)
{
    const gahp_config *cfg = fc->ctx->config;
    long long limit = cfg->max_unzip_bytes;
    long long archive = fc->fetched > 0 ? fc->fetched : 1;
    if (archive <= limit / cfg->max_unzip_ratio)
        limit = archive * cfg->max_unzip_ratio;
    return limit;
}

/* Download the archive into the private directory and unpack it there. */
static int download_and_unpack(fetch_ctx *fc, const char *zip_name,
                               long long max_nbytes, const char *dir,
                               const char *members_dir, char ***names,
                               size_t *n, exec_err *e)
{
    strbuf archive = STRBUF_INIT;
    if (strbuf_printf(&archive, "%s/%s", dir, zip_name) != 0) {
        strbuf_free(&archive);
        return exec_err_nomem(e);
    }
    pending_output pf = { 0, archive.data, -1, NULL, max_nbytes };
    int rc = fetch_download_temp(fc, &pf, zip_name, e);
    if (rc == 0) {
        char *errmsg = NULL;
        rc = outputs_commit_temp(pf.fd, pf.tmp, archive.data, &errmsg);
        pf.fd = -1;
        pf.tmp = NULL;
        if (rc != 0)
            rc = fetch_step_fail_local(e, "saving output failed", errmsg);
    }
    outputs_abort_temp(pf.fd, pf.tmp);
    if (rc == 0) {
        char *errmsg = NULL;
        if (outputs_unzip(archive.data, members_dir, unzip_limit(fc),
                          names, n, &errmsg) != 0)
            rc = fetch_step_fail_local(e, "unpacking output failed", errmsg);
    }
    strbuf_free(&archive);
    return rc;
}

int fetch_zip_output(fetch_ctx *fc, const char *zip_name, long long max_nbytes,
                     exec_err *e)
{
    if (!outputs_name_is_safe(zip_name))
        return fetch_step_failf(e, EXEC_E_REFUSED, "fetch_output failed: unsafe "
                           "output name from server: %s", zip_name);
    /* SOME without specs asks for nothing: do not even download. */
    if (!fc->f->all && fc->f->nspecs == 0)
        return 0;
    strbuf dir = STRBUF_INIT, members = STRBUF_INIT;
    int made = 0;
    char **names = NULL;
    size_t n = 0;
    int rc = make_private_dir(fc, &dir, &members, &made, e);
    if (rc == 0)
        rc = download_and_unpack(fc, zip_name, max_nbytes, dir.data,
                                 members.data, &names, &n, e);
    if (rc == 0)
        rc = place_members(fc, members.data, names, n, e);
    outputs_free_names(names, n);
    /* The archive and every member not moved out go with the directory. */
    if (made >= 2)
        remove_flat_dir(members.data);
    if (made >= 1)
        remove_flat_dir(dir.data);
    strbuf_free(&dir);
    strbuf_free(&members);
    return rc;
}
