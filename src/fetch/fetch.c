/*
 * fetch.c - BOINC_FETCH_OUTPUT: ask the server how a job ended
 * (query_completed_job, or on a stock server that cannot say, the job
 * details of query_batch), have a finished job's outputs delivered (the
 * app's templates for the file numbers, from fetch_templates.c; then the
 * downloads below, of plain outputs or of a zipped single output), append
 * the job's stderr, and answer "NULL <exit_status> <elapsed> <cpu>" or one
 * error token.  Also the clean-up of what interrupted fetches left.
 *
 * Every step fills one exec_err (fetch_step.h); the executor turns it into
 * the result tail once.  doc/commands.md describes every rule and error.
 *
 * Files are never written under their final name until complete: every
 * download goes to a temp file next to its destination (outputs.h) and is
 * renamed into place only when ALL selected files have downloaded, so a
 * failed fetch leaves no new or half file behind and can simply be
 * retried.  The zip rule: a job whose only output is a .zip archive
 * delivers the archive's members.
 *
 * In this order: the downloads, the zip rule, the leftovers of interrupted
 * fetches, the command.
 */
#include "exec/exec_cmds.h"

#include "base/files.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/testpoint.h"
#include "fetch/fetch_step.h"
#include "fetch/outputs.h"
#include "exec/output_claims.h"
#include "journal/journal_batches.h"
#include "journal/journal_claims.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- downloads ----------------------------------------------------------- */

/* One output on its way: downloaded into tmp (open as fd) next to dest. */
typedef struct {
    int file_num;               /* the output's number in the template */
    char *dest;
    int fd;                     /* -1 when no temp file is open */
    char *tmp;
    long long max_nbytes;       /* the template's max_nbytes; 0: none */
} pending_output;

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

/* The template's max_nbytes of output file_num (0: none). */
static long long fetch_output_max_nbytes(const boinc_templates *t, size_t file_num)
{
    return t->output_max_nbytes != NULL && file_num < t->n_outputs
               ? t->output_max_nbytes[file_num] : 0;
}

/* Download output p->file_num (called name) into a new temp file next to
 * p->dest, counting it against --max-fetch-bytes and stopping it at
 * p->max_nbytes.  0, or -1 with *e set; either way the caller aborts or
 * commits the temp file. */
static int fetch_download_temp(fetch_ctx *fc, pending_output *p, const char *name,
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

/* Every selected output of a job without the zip rule, put in place only
 * when all have downloaded.  0, or -1 with *e set (nothing new in place
 * unless a rename itself failed). */
static int fetch_download_plain(fetch_ctx *fc, const boinc_templates *t, exec_err *e)
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

/* ---- zip rule ------------------------------------------------------------
 *
 * BOINC_FETCH_OUTPUT's zip rule: a job whose only output is a .zip archive
 * delivers the archive's members, not the archive.  The
 * archive is downloaded and unpacked in a private directory
 * <iwd>/.boinc_gahp.zip.XXXXXX, so no member is ever seen under a final
 * name until it is complete; each selected member is then renamed into
 * place (copied through a temp file across file systems).
 */

/* 1 when the zip rule applies: exactly one output, named *.zip (any case). */
static int fetch_zip_applies(const boinc_templates *t)
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

/* Download the archive zip_name into a private directory in the iwd,
 * unpack it there (within the unzip limits) and move the selected members
 * into place; the directory goes, on success and failure alike.  0, or -1
 * with *e set. */
static int fetch_zip_output(fetch_ctx *fc, const char *zip_name, long long max_nbytes,
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

/* ---- leftovers of interrupted fetches ------------------------------------ */

static void cleanup_dir(const char *dir, const struct timespec *cutoff)
{
    char *errmsg = NULL;
    if (outputs_remove_stale_before(dir, cutoff, &errmsg) < 0) {
        log_warn("fetch_output: %s", errmsg ? errmsg : "out of memory");
        free(errmsg);
    }
}

void exec_fetch_remove_leftovers(const gahp_request *req)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    exec_fetch_cleanup(&req->u.fetch, &now);
}

void exec_fetch_cleanup(const gahp_fetch_output *f,
                        const struct timespec *cutoff)
{
    if (f->iwd != NULL && f->iwd[0] != '\0')
        cleanup_dir(f->iwd, cutoff);
    /* Temps sit next to each destination: also the directories of the
     * specs' <dst>s (a few; the same directory twice is harmless). */
    for (size_t i = 0; i < f->nspecs; i++) {
        char *dest = files_resolve(f->iwd, f->specs[i].dst);
        char *slash = dest != NULL ? strrchr(dest, '/') : NULL;
        if (slash != NULL) {
            *(slash == dest ? slash + 1 : slash) = '\0';
            cleanup_dir(dest, cutoff);
        }
        free(dest);
    }
}

/* Temps older than this belong to no fetch of this run: it is when this
 * process's first fetch began, less a margin.  A file's time comes from
 * the kernel's coarse clock (it can read a few milliseconds BEHIND
 * clock_gettime), so without the margin a fetch running at the same time
 * in the same directory could see another one's brand-new temp as stale
 * and remove it.  Leftovers within the margin are removed by a later run
 * (and at start-up for fetches the journal knows were running). */
#define FETCH_EPOCH_MARGIN_S 10
static pthread_once_t epoch_once = PTHREAD_ONCE_INIT;
static struct timespec fetch_epoch;

static void set_fetch_epoch(void)
{
    clock_gettime(CLOCK_REALTIME, &fetch_epoch);
    fetch_epoch.tv_sec -= FETCH_EPOCH_MARGIN_S;
}

/* ---- a finished job -------------------------------------------------------- */

static int append_stderr(const fetch_ctx *fc, const char *text, exec_err *e)
{
    if (text == NULL || text[0] == '\0')
        return 0;
    char *path = files_resolve(fc->f->iwd, fc->f->stderr_file);
    if (path == NULL)
        return errno == ENOMEM
                   ? exec_err_nomem(e)
                   : fetch_step_failf(e, EXEC_E_REFUSED,
                                 "fetch_output failed: bad stderr file %s",
                                 fc->f->stderr_file);
    char *errmsg = NULL;
    int rc = outputs_append_stderr(path, text, &errmsg);
    free(path);
    return rc == 0 ? 0 : fetch_step_fail_local(e, "saving stderr failed", errmsg);
}

/* A job with exactly one output named *.zip delivers its members. */
static int deliver(fetch_ctx *fc, const boinc_templates *t, exec_err *e)
{
    return fetch_zip_applies(t) ? fetch_zip_output(fc, t->output_names[0],
                                               fetch_output_max_nbytes(t, 0), e)
                                : fetch_download_plain(fc, t, e);
}

/* The outputs of a job with a canonical result, then its stderr.  The
 * templates usually come from the cache (fetch_step.h); a download
 * that fails with cached ones may come from a template changed on the
 * server since, so they are asked for again once, and the outputs
 * downloaded again if the answer differs.  A failed download left
 * nothing in place (the downloads and the zip rule above). */
static int fetch_done(fetch_ctx *fc, long long project_id,
                      const boinc_completed_job *cj, exec_err *e)
{
    fetch_templates ft;
    int rc = fetch_templates_get(fc, project_id, &ft, e);
    if (rc == 0)
        rc = deliver(fc, &ft.t, e);
    if (rc != 0 && (e->code == EXEC_E_RPC || e->code == EXEC_E_UNREACHABLE) && ft.cached &&
        fetch_templates_refresh(fc, &ft) == 1) {
        exec_err_clear(e);
        fc->fetched = 0;        /* the failed attempt's files are gone */
        rc = deliver(fc, &ft.t, e);
    }
    fetch_templates_free(&ft);
    return rc == 0 ? append_stderr(fc, cj->stderr_out, e) : -1;
}

/* ---- a failed job ------------------------------------------------------------ */

/* Names of the error_mask bits (BOINC's WU_ERROR_* values). */
static int describe_mask(strbuf *sb, long mask)
{
    static const struct { long bit; const char *name; } bits[] = {
        { 1, "couldnt_send" }, { 2, "too_many_error_results" },
        { 4, "too_many_success_results" }, { 8, "too_many_total_results" },
        { 16, "cancelled" }, { 32, "no_canonical_result" },
    };
    int first = 1, rc = strbuf_printf(sb, "error mask %ld (", mask);
    for (size_t i = 0; rc == 0 && i < sizeof bits / sizeof bits[0]; i++)
        if (mask & bits[i].bit) {
            rc = strbuf_printf(sb, "%s%s", first ? "" : ", ", bits[i].name);
            first = 0;
        }
    if (rc == 0 && first)
        rc = strbuf_puts(sb, "unknown");
    return rc == 0 ? strbuf_putc(sb, ')') : rc;
}

/* A failed job: its exit status when an instance reported one (then its
 * stderr is appended), else the error naming the error_mask bits. */
static int fetch_failed(fetch_ctx *fc, const boinc_completed_job *cj, exec_err *e)
{
    if (cj->has_exit_status)
        return append_stderr(fc, cj->stderr_out, e);
    strbuf raw = STRBUF_INIT;
    int rc = -1;
    if (strbuf_printf(&raw, "job %s failed: ", fc->f->job) == 0 &&
        describe_mask(&raw, cj->error_mask) == 0 &&
        strbuf_puts(&raw, ", no instance reported") == 0)
        rc = fetch_step_failf(e, EXEC_E_REFUSED, "%s", raw.data);
    else
        rc = exec_err_nomem(e);
    strbuf_free(&raw);
    return rc;
}

/*
 * A stock server's query_completed_job dies for a job without a canonical
 * instance, but its query_batch with job details still lists the exit
 * status of each failed instance.  The job's batch comes from the journal
 * (the submit recorded it).  0 with *cj holding the latest failed
 * instance's exit status (no times, no stderr), -1 with *e set, or 1 when
 * the fallback has nothing to say (the caller keeps its error).
 */
static int failed_job_fallback(fetch_ctx *fc, long long project_id,
                               boinc_completed_job *cj, exec_err *e)
{
    long long batch_id = 0;
    int found = 0;
    if (project_id <= 0 ||
        journal_job_server_batch(fc->ctx->journal, project_id, fc->f->job, &batch_id,
                                 &found) != 0 || !found)
        return 1;
    boinc_job_detail d;
    boinc_error err = { 0 };
    int rc = 1;
    found = 0;
    if (boinc_query_job_detail(fc->ctx->client, &fc->project, (long)batch_id, fc->f->job,
                               &d, &found, &err) == BOINC_OK &&
        found && d.canonical_instance_id == 0 && d.n_exit > 0) {
        boinc_completed_job_free(cj);   /* all zero: no times, no stderr */
        cj->has_exit_status = 1;
        cj->exit_status = d.exit_statuses[d.n_exit - 1];
        log_info("fetch %s: query_completed_job failed; exit status %d from query_batch",
                 fc->f->job, cj->exit_status);
        rc = 0;
    } else if (found && d.canonical_instance_id == 0 && d.status != NULL &&
               strcmp(d.status, "error") == 0) {
        rc = fetch_step_failf(e, EXEC_E_REFUSED, "job %s failed: no instance reported "
                         "an exit status (the server's query_completed_job "
                         "failed)", fc->f->job);
    } else if (found && d.canonical_instance_id == 0 && d.status != NULL &&
               strcmp(d.status, "done") != 0) {
        rc = fetch_step_failf(e, EXEC_E_REFUSED, "job %s is not finished", fc->f->job);
    }
    if (found)
        boinc_job_detail_free(&d);
    boinc_error_clear(&err);
    return rc;
}

/* ---- the command ------------------------------------------------------------- */

/* How the job ended, its outputs and stderr delivered when it has any:
 * 0 with *cj giving the exit status and times, or -1 with *e set. */
static int fetch_job(fetch_ctx *fc, long long project_id,
                     boinc_completed_job *cj, exec_err *e)
{
    boinc_error err = { 0 };
    if (boinc_query_completed_job(fc->ctx->client, &fc->project, fc->f->job,
                                  cj, &err) != BOINC_OK) {
        /* Includes a stock server's truncated reply for failed jobs
         * (BOINC_E_PARSE with the server's PHP error text): then the exit
         * status may still come from query_batch. */
        int rc = err.code == BOINC_E_PARSE
                     ? failed_job_fallback(fc, project_id, cj, e) : 1;
        if (rc == 1)
            rc = fetch_step_fail_rpc(e, "query_completed_job", &err);
        boinc_error_clear(&err);
        return rc;
    }
    if (cj->canonical_resultid != 0)
        return fetch_done(fc, project_id, cj, e);
    if (cj->error_mask != 0)
        return fetch_failed(fc, cj, e);
    return fetch_step_failf(e, EXEC_E_REFUSED, "job %s is not finished", fc->f->job);
}

/* Issue 40: the paths this fetch writes (its specs' destinations and the
 * stderr file; with ALL, outputs under their own names are not known
 * before the fetch), claimed in the journal before anything is written: a
 * path another job writes while this one is live, or two of this job's
 * outputs naming one path, fail the fetch.  0, or -1 with *e. */
static int claim_outputs(exec_ctx *ctx, long long project_id, const gahp_fetch_output *f,
                         exec_err *e)
{
    exec_claims c;
    char *why = NULL;
    int rc = exec_claim_paths(f->iwd, f->stderr_file, f->specs, f->nspecs, &c, &why);
    if (rc != 0) {
        if (rc < 0)
            return exec_err_nomem(e);
        rc = fetch_step_failf(e, EXEC_E_REFUSED, "fetch_output failed: %s", why);
        free(why);
        return rc;
    }
    journal_claim_conflict conflict;
    rc = journal_claims_fetch(ctx->journal, project_id, f->job, (const char *const *)c.paths,
                              c.n, journal_now(), &conflict);
    exec_claims_free(&c);
    if (rc < 0)
        return fetch_step_failf(e, EXEC_E_JOURNAL, "fetch_output failed: %s",
                                journal_errmsg(ctx->journal));
    if (rc == 1) {
        char *msg = exec_claim_refusal(conflict.path, conflict.job);
        log_warn("fetch of job %s refused: %s", f->job, msg != NULL ? msg : EXEC_NOMEM_MSG);
        rc = msg != NULL ? fetch_step_failf(e, EXEC_E_REFUSED, "fetch_output failed: %s; "
                                            "nothing was written", msg)
                         : exec_err_nomem(e);
        free(msg);
        journal_claim_conflict_free(&conflict);
        return rc;
    }
    return 0;
}

/* The core operation (typed in, typed out): how the job ended, its
 * outputs and stderr delivered.  0 with *out, or -1 with *e set. */
int exec_fetch_job(exec_ctx *ctx, const gahp_request *req, exec_fetch_outcome *out,
                   exec_err *e)
{
    fetch_ctx fc = { ctx, &req->u.fetch,
                     { req->project_url, req->authenticator }, 0 };
    boinc_completed_job cj;
    memset(&cj, 0, sizeof cj);
    memset(out, 0, sizeof *out);
    pthread_once(&epoch_once, set_fetch_epoch);
    exec_fetch_cleanup(fc.f, &fetch_epoch);
    int rc = claim_outputs(ctx, req->project_id, fc.f, e);
    if (rc == 0)
        rc = fetch_job(&fc, req->project_id, &cj, e);
    if (rc == 0 && cj.has_exit_status) {
        out->exit_code = cj.exit_status;
        out->elapsed_s = isfinite(cj.elapsed_time) && cj.elapsed_time > 0 ? cj.elapsed_time : 0;
        out->cpu_s = isfinite(cj.cpu_time) && cj.cpu_time > 0 ? cj.cpu_time : 0;
    }
    boinc_completed_job_free(&cj);
    boinc_client_set_download_limit(ctx->client, 0);
    return rc;
}

/* The 9.0 face: "NULL <exit> <elapsed> <cpu>", or one error token. */
char *exec_fetch_output(exec_ctx *ctx, const gahp_request *req)
{
    exec_fetch_outcome o;
    exec_err e = { 0 };
    if (exec_fetch_job(ctx, req, &o, &e) != 0)
        return exec_err_result(&e);     /* out of memory's when it has no message */
    char *tail = str_printf("NULL %ld %.6f %.6f", o.exit_code, o.elapsed_s, o.cpu_s);
    return tail != NULL ? tail : exec_nomem_result();
}
