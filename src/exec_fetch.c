/*
 * exec_fetch.c - BOINC_FETCH_OUTPUT: ask the server how a job ended
 * (query_completed_job), download the output files of a finished job
 * (get_templates by job name for the file numbers, get_output per file)
 * into place, unpack a zipped single output, append the job's stderr, and
 * answer "NULL <exit_status> <elapsed> <cpu>" or one error token.
 *
 * Files are never written under their final name until complete: every
 * download goes to a temp file next to its destination (outputs.h) and is
 * renamed into place only when ALL selected files have downloaded, so a
 * failed fetch leaves no new or half file behind and can simply be
 * retried.  doc/commands.md describes every rule and error.
 */
#include "exec_cmds.h"

#include "journal_server.h"
#include "log.h"
#include "outputs.h"
#include "gahp_text.h"
#include "strbuf.h"
#include "testpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Everything one fetch needs, passed between the steps. */
typedef struct {
    exec_ctx *ctx;
    const gahp_fetch_output *f;
    boinc_project project;
    long long fetched;          /* bytes downloaded so far (--max-fetch-bytes) */
} fetch_ctx;

/* ---- small helpers ------------------------------------------------------- */

/*
 * Inside this file every step returns NULL for "done" or an error token.
 * When even the token cannot be allocated the step returns NOMEM_TOKEN, a
 * static marker, so that running out of memory can never look like
 * success; exec_fetch_output turns it into NULL (ENOMEM for the caller).
 */
static char NOMEM_TOKEN[] = "out of memory";

static char *or_nomem(char *tok)
{
    return tok != NULL ? tok : NOMEM_TOKEN;
}

/* One escaped error token from a printf-style message. */
static char *fail_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fail_fmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *raw = str_vprintf(fmt, ap);
    va_end(ap);
    char *tok = raw != NULL ? gahp_escape(raw) : NULL;
    free(raw);
    return or_nomem(tok);
}

/* Error token for a failed local file operation (errmsg from outputs.h,
 * NULL meaning out of memory); frees errmsg. */
static char *fail_local(const char *step, char *errmsg)
{
    if (errmsg == NULL)
        return NOMEM_TOKEN;
    char *tok = exec_error(step, errmsg);
    free(errmsg);
    return or_nomem(tok);
}

/* Error token for a failed RPC; clears err. */
static char *fail_rpc(const char *step, boinc_error *err)
{
    char *tok = exec_boinc_error(step, err);
    boinc_error_clear(err);
    return or_nomem(tok);
}

static int ends_with_zip(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcasecmp(name + n - 4, ".zip") == 0;
}

/* The spec whose <src> is name, or NULL (the first one wins). */
static const gahp_output_spec *find_spec(const gahp_fetch_output *f,
                                         const char *name)
{
    for (size_t i = 0; i < f->nspecs; i++)
        if (strcmp(f->specs[i].src, name) == 0)
            return &f->specs[i];
    return NULL;
}

static int name_in(const char *name, char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] != NULL && strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

/* A spec whose destination is /dev/null asks for the file to be thrown
 * away (HTCondor adds "null /dev/null" for an unset error file). */
static int discarded(const gahp_output_spec *spec)
{
    return strcmp(spec->dst, "/dev/null") == 0;
}

/*
 * Specs that cannot apply are skipped with a log line, never an error:
 * HTCondor's SOME list carries (basename(Out), Out) and (basename(Err),
 * Err) for the job's stdout and stderr, names a BOINC app normally does
 * not produce, and an error result would hold an ordinary job.  Specs
 * whose destination is /dev/null are skipped too (selected() leaves them
 * out).  Every output that exists and is selected must still arrive.
 */
static void log_skipped_specs(const fetch_ctx *fc, char *const *names,
                              size_t n, const char *what)
{
    for (size_t i = 0; i < fc->f->nspecs; i++) {
        const char *src = fc->f->specs[i].src;
        if (discarded(&fc->f->specs[i]))
            log_info("fetch_output: job %s: spec %s -> /dev/null skipped",
                     fc->f->job, src);
        else if (!name_in(src, names, n))
            log_info("fetch_output: job %s: spec for %s skipped: not %s of "
                     "the job", fc->f->job, src, what);
    }
}

/* Where a produced file called name goes: the spec's <dst> when a spec
 * names it, else <iwd>/<name>.  NULL with *tok set on failure. */
static char *destination(const gahp_fetch_output *f, const char *name,
                         char **tok)
{
    const gahp_output_spec *spec = find_spec(f, name);
    const char *path = spec != NULL ? spec->dst : name;
    char *dest = outputs_resolve(f->iwd, path);
    if (dest == NULL)
        *tok = errno == ENOMEM
                   ? NOMEM_TOKEN
                   : fail_fmt("fetch_output failed: bad destination %s for %s",
                              path, name);
    return dest;
}

static int selected(const gahp_fetch_output *f, const char *name)
{
    const gahp_output_spec *spec = find_spec(f, name);
    if (spec != NULL && discarded(spec))
        return 0;
    return f->all || spec != NULL;
}

/*
 * ALL places every produced file under its own name in the iwd, so a
 * server-chosen ".bashrc" or ".ssh" would land among the user's hidden
 * files: in ALL mode a name starting with '.' is refused unless a spec
 * names it (issue 10 #8).  NULL, or the error token.
 */
static char *check_hidden(const gahp_fetch_output *f, char *const *names,
                          size_t n, const char *what)
{
    for (size_t i = 0; f->all && i < n; i++)
        if (names[i] != NULL && names[i][0] == '.' &&
            find_spec(f, names[i]) == NULL)
            return fail_fmt("fetch_output failed: %s %s starts with '.' and "
                            "no file spec names it", what, names[i]);
    return NULL;
}

/* ---- plain outputs: temp files first, then rename them all ------------- */

typedef struct {
    int file_num;
    char *dest;
    int fd;
    char *tmp;
} pending_file;

static void pending_abort(pending_file *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        outputs_abort_temp(p[i].fd, p[i].tmp);
        p[i].fd = -1;
        p[i].tmp = NULL;
    }
}

static void pending_free(pending_file *p, size_t n)
{
    pending_abort(p, n);
    for (size_t i = 0; i < n; i++)
        free(p[i].dest);
    free(p);
}

/* Download output file_num into a new temp file next to dest. */
static char *download_one(fetch_ctx *fc, pending_file *p, const char *name)
{
    char *errmsg = NULL;
    if (outputs_open_temp(p->dest, &p->fd, &p->tmp, &errmsg) != 0) {
        p->fd = -1;
        p->tmp = NULL;
        return fail_local("saving output failed", errmsg);
    }
    boinc_error err = { 0 };
    long long nbytes = 0;
    /* What is left of the fetch's total bounds this file (issue 10 #3);
     * the per-file limit is the client's own. */
    long long left = fc->ctx->config->max_fetch_bytes - fc->fetched;
    boinc_client_set_download_limit(fc->ctx->client, left > 0 ? left : 1);
    if (left <= 0)
        return fail_fmt("get_output of %s failed: the fetch already reached "
                        "--max-fetch-bytes (%lld bytes)", name,
                        (long long)fc->ctx->config->max_fetch_bytes);
    if (boinc_get_output_file(fc->ctx->client, &fc->project, fc->f->job,
                              p->file_num, p->fd, &nbytes, &err) != BOINC_OK) {
        strbuf step = STRBUF_INIT;
        char *tok = NOMEM_TOKEN;
        if (strbuf_printf(&step, "get_output of %s (file %d)", name,
                          p->file_num) == 0)
            tok = fail_rpc(step.data, &err);
        boinc_error_clear(&err);
        strbuf_free(&step);
        return tok;
    }
    log_debug("fetch_output: job %s: %s: %lld bytes", fc->f->job, name, nbytes);
    fc->fetched += nbytes;
    return NULL;
}

/* Every selected output of a job without the zip rule.  NULL on success,
 * else the error token. */
static char *fetch_plain(fetch_ctx *fc, const boinc_templates *t)
{
    log_skipped_specs(fc, t->output_names, t->n_outputs, "an output");
    /* One open temp file per selected output until all are complete
     * (BOINC apps have a handful of outputs, fixed by the template). */
    pending_file *p = calloc(t->n_outputs ? t->n_outputs : 1, sizeof *p);
    if (p == NULL)
        return NOMEM_TOKEN;
    size_t np = 0;
    char *tok = NULL;
    /* Check every name first: nothing is written if one is refused. */
    for (size_t i = 0; tok == NULL && i < t->n_outputs; i++) {
        const char *name = t->output_names[i];
        if (name == NULL || !outputs_name_is_safe(name))
            tok = fail_fmt("fetch_output failed: unsafe output name from "
                           "server: %s", name != NULL ? name : "(none)");
    }
    if (tok == NULL)
        tok = check_hidden(fc->f, t->output_names, t->n_outputs,
                           "output name from server");
    for (size_t i = 0; tok == NULL && i < t->n_outputs; i++) {
        const char *name = t->output_names[i];
        if (!selected(fc->f, name))
            continue;
        pending_file *pf = &p[np++];
        pf->file_num = (int)i;
        pf->fd = -1;
        if ((pf->dest = destination(fc->f, name, &tok)) == NULL)
            break;
        tok = download_one(fc, pf, name);
    }
    if (tok == NULL)
        testpoint("fetch.downloaded");
    /* Every file is complete: rename them into place. */
    for (size_t i = 0; tok == NULL && i < np; i++) {
        char *errmsg = NULL;
        int rc = outputs_commit_temp(p[i].fd, p[i].tmp, p[i].dest, &errmsg);
        p[i].fd = -1;
        p[i].tmp = NULL;
        if (rc != 0)
            tok = fail_local("saving output failed", errmsg);
        else
            testpoint("fetch.renamed");
    }
    pending_free(p, np);
    return tok;
}

/* ---- a zipped single output --------------------------------------------- */

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

/* Copy src to dest through a temp file next to dest (rename across file
 * systems).  0 or -1 with *errmsg. */
static int copy_into_place(const char *src, const char *dest, char **errmsg)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        strbuf m = STRBUF_INIT;
        if (strbuf_printf(&m, "cannot read unpacked member %s: %s", src,
                          strerror(errno)) == 0)
            *errmsg = strbuf_detach(&m);
        strbuf_free(&m);
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
        if (got < 0 || outputs_write_all(fd, buf, (size_t)got) != 0) {
            strbuf m = STRBUF_INIT;
            if (strbuf_printf(&m, "cannot write output file %s: %s", dest,
                              strerror(errno)) == 0)
                *errmsg = strbuf_detach(&m);
            strbuf_free(&m);
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
 * a temp file, so dest is never half written either way. */
static int place_member(const char *src, const char *dest, char **errmsg)
{
    if (outputs_place(src, dest) == 0)
        return 0;
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
static char *make_private_dir(const fetch_ctx *fc, strbuf *dir, strbuf *members,
                              int *made)
{
    char *base = outputs_resolve(fc->f->iwd, ".boinc_gahp.zip.XXXXXX");
    if (base == NULL)
        return errno == ENOMEM ? NOMEM_TOKEN
                               : fail_fmt("fetch_output failed: bad iwd %s",
                                          fc->f->iwd);
    int rc = strbuf_puts(dir, base);
    free(base);
    if (rc != 0)
        return NOMEM_TOKEN;
    if (mkdtemp(dir->data) == NULL)
        return fail_fmt("fetch_output failed: cannot create temporary "
                        "directory in %s: %s", fc->f->iwd, strerror(errno));
    *made = 1;
    if (strbuf_printf(members, "%s/members", dir->data) != 0)
        return NOMEM_TOKEN;
    if (mkdir(members->data, 0700) != 0)
        return fail_fmt("fetch_output failed: cannot create temporary "
                        "directory %s: %s", members->data, strerror(errno));
    *made = 2;
    return NULL;
}

/* Place the selected members; NULL on success, else the error token. */
static char *place_members(fetch_ctx *fc, const char *members_dir,
                           char *const *names, size_t n)
{
    log_skipped_specs(fc, names, n, "a member of the output archive");
    char *bad = check_hidden(fc->f, names, n, "archive member");
    if (bad != NULL)
        return bad;
    for (size_t i = 0; i < n; i++) {
        if (!selected(fc->f, names[i]))
            continue;
        char *tok = NULL;
        char *dest = destination(fc->f, names[i], &tok);
        if (dest == NULL)
            return tok;
        strbuf src = STRBUF_INIT;
        if (strbuf_printf(&src, "%s/%s", members_dir, names[i]) != 0) {
            free(dest);
            strbuf_free(&src);
            return NOMEM_TOKEN;
        }
        char *errmsg = NULL;
        int rc = place_member(src.data, dest, &errmsg);
        free(dest);
        strbuf_free(&src);
        if (rc != 0)
            return fail_local("saving output failed", errmsg);
    }
    return NULL;
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
static char *download_and_unpack(fetch_ctx *fc, const char *zip_name,
                                 const char *dir, const char *members_dir,
                                 char ***names, size_t *n)
{
    strbuf archive = STRBUF_INIT;
    if (strbuf_printf(&archive, "%s/%s", dir, zip_name) != 0)
        return NOMEM_TOKEN;
    pending_file pf = { 0, archive.data, -1, NULL };
    char *tok = download_one(fc, &pf, zip_name);
    if (tok == NULL) {
        char *errmsg = NULL;
        int rc = outputs_commit_temp(pf.fd, pf.tmp, archive.data, &errmsg);
        pf.fd = -1;
        pf.tmp = NULL;
        if (rc != 0)
            tok = fail_local("saving output failed", errmsg);
    }
    outputs_abort_temp(pf.fd, pf.tmp);
    if (tok == NULL) {
        char *errmsg = NULL;
        if (outputs_unzip(archive.data, members_dir, unzip_limit(fc),
                          names, n, &errmsg) != 0)
            tok = fail_local("unpacking output failed", errmsg);
    }
    strbuf_free(&archive);
    return tok;
}

static char *fetch_zip(fetch_ctx *fc, const char *zip_name)
{
    if (!outputs_name_is_safe(zip_name))
        return fail_fmt("fetch_output failed: unsafe output name from "
                        "server: %s", zip_name);
    /* SOME without specs asks for nothing: do not even download. */
    if (!fc->f->all && fc->f->nspecs == 0)
        return NULL;
    strbuf dir = STRBUF_INIT, members = STRBUF_INIT;
    int made = 0;
    char *tok = make_private_dir(fc, &dir, &members, &made);
    char **names = NULL;
    size_t n = 0;
    if (tok == NULL)
        tok = download_and_unpack(fc, zip_name, dir.data, members.data,
                                  &names, &n);
    if (tok == NULL)
        tok = place_members(fc, members.data, names, n);
    outputs_free_names(names, n);
    /* The archive and every member not moved out go with the directory. */
    if (made >= 2)
        remove_flat_dir(members.data);
    if (made >= 1)
        remove_flat_dir(dir.data);
    strbuf_free(&dir);
    strbuf_free(&members);
    return tok;
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
        char *dest = outputs_resolve(f->iwd, f->specs[i].dst);
        char *slash = dest != NULL ? strrchr(dest, '/') : NULL;
        if (slash != NULL) {
            *(slash == dest ? slash + 1 : slash) = '\0';
            cleanup_dir(dest, cutoff);
        }
        free(dest);
    }
}

/* When this process's first fetch began: temps older than that belong to
 * no fetch of this run (a fetch's temps are created after it starts). */
static pthread_once_t epoch_once = PTHREAD_ONCE_INIT;
static struct timespec fetch_epoch;

static void set_fetch_epoch(void)
{
    clock_gettime(CLOCK_REALTIME, &fetch_epoch);
}

/* ---- the command ---------------------------------------------------------- */

static char *append_stderr(const fetch_ctx *fc, const char *text)
{
    if (text == NULL || text[0] == '\0')
        return NULL;
    char *path = outputs_resolve(fc->f->iwd, fc->f->stderr_file);
    if (path == NULL)
        return errno == ENOMEM
                   ? NOMEM_TOKEN
                   : fail_fmt("fetch_output failed: bad stderr file %s",
                              fc->f->stderr_file);
    char *errmsg = NULL;
    int rc = outputs_append_stderr(path, text, &errmsg);
    free(path);
    return rc == 0 ? NULL : fail_local("saving stderr failed", errmsg);
}

/* "NULL <exit_status> <elapsed> <cpu>": times as plain decimals with six
 * digits after the point (what the server sends; never an exponent). */
static char *success_tail(const boinc_completed_job *cj)
{
    double elapsed = cj->has_exit_status ? cj->elapsed_time : 0;
    double cpu = cj->has_exit_status ? cj->cpu_time : 0;
    if (!isfinite(elapsed) || elapsed < 0)
        elapsed = 0;
    if (!isfinite(cpu) || cpu < 0)
        cpu = 0;
    strbuf out = STRBUF_INIT;
    if (strbuf_printf(&out, "NULL %d %.6f %.6f",
                      cj->has_exit_status ? cj->exit_status : 0, elapsed,
                      cpu) != 0) {
        strbuf_free(&out);
        return NOMEM_TOKEN;
    }
    return or_nomem(strbuf_detach(&out));
}

static char *fetch_done(fetch_ctx *fc, const boinc_completed_job *cj)
{
    boinc_templates t;
    memset(&t, 0, sizeof t);
    boinc_error err = { 0 };
    if (boinc_get_templates_for_job(fc->ctx->client, &fc->project, fc->f->job,
                                    &t, &err) != BOINC_OK) {
        boinc_templates_free(&t);
        return fail_rpc("get_templates", &err);
    }
    char *tok;
    /* A job with exactly one output named *.zip delivers its members. */
    if (t.n_outputs == 1 && t.output_names[0] != NULL &&
        ends_with_zip(t.output_names[0]))
        tok = fetch_zip(fc, t.output_names[0]);
    else
        tok = fetch_plain(fc, &t);
    boinc_templates_free(&t);
    if (tok == NULL)
        tok = append_stderr(fc, cj->stderr_out);
    return tok != NULL ? tok : success_tail(cj);
}

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

static char *fetch_failed(fetch_ctx *fc, const boinc_completed_job *cj)
{
    if (cj->has_exit_status) {
        char *tok = append_stderr(fc, cj->stderr_out);
        return tok != NULL ? tok : success_tail(cj);
    }
    strbuf raw = STRBUF_INIT;
    char *tok = NULL;
    if (strbuf_printf(&raw, "job %s failed: ", fc->f->job) == 0 &&
        describe_mask(&raw, cj->error_mask) == 0 &&
        strbuf_puts(&raw, ", no instance reported") == 0)
        tok = gahp_escape(raw.data);
    strbuf_free(&raw);
    return or_nomem(tok);
}

/*
 * A stock server's query_completed_job dies for a job without a canonical
 * instance, but its query_batch with job details still lists the exit
 * status of each failed instance.  The job's batch comes from the journal
 * (the submit recorded it).  Returns the "NULL <exit> 0 0" tail, or NULL
 * when the fallback has nothing to say (the caller keeps its error).
 */
static char *failed_job_fallback(fetch_ctx *fc, long long project_id)
{
    long long batch_id = 0;
    int found = 0;
    if (project_id <= 0 ||
        journal_job_server_batch(fc->ctx->journal, project_id, fc->f->job, &batch_id,
                                 &found) != 0 || !found)
        return NULL;
    boinc_job_detail d;
    boinc_error err = { 0 };
    char *tok = NULL;
    found = 0;
    if (boinc_query_job_detail(fc->ctx->client, &fc->project, (long)batch_id, fc->f->job,
                               &d, &found, &err) == BOINC_OK &&
        found && d.canonical_instance_id == 0 && d.n_exit > 0) {
        /* the latest failed instance; no times nor stderr are available */
        boinc_completed_job cj;
        memset(&cj, 0, sizeof cj);
        cj.has_exit_status = 1;
        cj.exit_status = d.exit_statuses[d.n_exit - 1];
        log_info("fetch %s: query_completed_job failed; exit status %d from query_batch",
                 fc->f->job, cj.exit_status);
        tok = success_tail(&cj);
    } else if (found && d.canonical_instance_id == 0 && d.status != NULL &&
               strcmp(d.status, "error") == 0) {
        tok = fail_fmt("job %s failed: no instance reported an exit status (the "
                       "server's query_completed_job failed)", fc->f->job);
    } else if (found && d.canonical_instance_id == 0 && d.status != NULL &&
               strcmp(d.status, "done") != 0) {
        tok = fail_fmt("job %s is not finished", fc->f->job);
    }
    if (found)
        boinc_job_detail_free(&d);
    boinc_error_clear(&err);
    return tok;
}

char *exec_fetch_output(exec_ctx *ctx, const gahp_request *req)
{
    fetch_ctx fc = { ctx, &req->u.fetch,
                     { req->project_url, req->authenticator }, 0 };
    boinc_completed_job cj;
    memset(&cj, 0, sizeof cj);
    boinc_error err = { 0 };
    char *tok;
    pthread_once(&epoch_once, set_fetch_epoch);
    exec_fetch_cleanup(fc.f, &fetch_epoch);
    if (boinc_query_completed_job(ctx->client, &fc.project, fc.f->job, &cj,
                                  &err) != BOINC_OK) {
        /* Includes a stock server's truncated reply for failed jobs
         * (BOINC_E_PARSE with the server's PHP error text): then the exit
         * status may still come from query_batch. */
        tok = err.code == BOINC_E_PARSE ? failed_job_fallback(&fc, req->project_id) : NULL;
        if (tok == NULL)
            tok = fail_rpc("query_completed_job", &err);
    } else if (cj.canonical_resultid != 0) {
        tok = fetch_done(&fc, &cj);
    } else if (cj.error_mask != 0) {
        tok = fetch_failed(&fc, &cj);
    } else {
        tok = fail_fmt("job %s is not finished", fc.f->job);
    }
    boinc_error_clear(&err);
    boinc_completed_job_free(&cj);
    boinc_client_set_download_limit(ctx->client, 0);
    return tok == NOMEM_TOKEN ? NULL : tok;
}
