/*
 * fetch_zip.c - BOINC_FETCH_OUTPUT's zip rule (see fetch_zip.h): the
 * archive is downloaded and unpacked in a private directory
 * <iwd>/.boinc_gahp.zip.XXXXXX, so no member is ever seen under a final
 * name until it is complete; each selected member is then renamed into
 * place (copied through a temp file across file systems).
 */
#include "fetch/fetch_zip.h"

#include "fetch/fetch_download.h"
#include "fetch/fetch_select.h"
#include "base/files.h"
#include "base/log.h"
#include "fetch/outputs.h"
#include "base/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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
