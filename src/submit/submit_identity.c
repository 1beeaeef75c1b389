/*
 * submit_identity.c - fingerprint of a submit's job set (submit_identity.h).
 *
 * Each job is digested on its own from length-prefixed fields (so no two
 * different jobs share an encoding), the job digests are sorted, and the
 * fingerprint is the MD5 of the batch name, the app, the job count and the
 * sorted digests.  Sorting makes the order of the jobs irrelevant; the
 * trailing fields are simply not part of it.
 */
#include "submit/submit_identity.h"

#include "journal/journal_requests.h"

#include "base/files.h"
#include "wire/gahp_text.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "submit/hash_pool.h"

#include <stdlib.h>
#include <string.h>

/* "<tag><decimal n><end>", as "%s%zu%c" would print it, without printf's
 * cost (a 10,000-job batch has 70,000 of these). */
static int put_count(strbuf *sb, const char *tag, size_t n, char end)
{
    char digits[3 * sizeof n + 1];
    size_t at = sizeof digits;
    digits[--at] = end;
    do {
        digits[--at] = (char)('0' + n % 10);
        n /= 10;
    } while (n > 0);
    if (strbuf_puts(sb, tag) != 0)
        return -1;
    return strbuf_append(sb, digits + at, sizeof digits - at);
}

/* "<length>:<bytes>," - unambiguous whatever the bytes are. */
static int put_field(strbuf *sb, const char *s)
{
    size_t n = strlen(s);
    if (put_count(sb, "", n, ':') != 0 || strbuf_append(sb, s, n) != 0)
        return -1;
    return strbuf_putc(sb, ',');
}

/* The job's encoding is built in sb (reused from job to job) and hashed
 * with md5 (one context for every job of the batch). */
static int job_digest(strbuf *sb, files_md5_stream *md5, const gahp_submit_job *job,
                      char out[SUBMIT_IDENTITY_LEN])
{
    strbuf_reset(sb);
    int rc = put_field(sb, job->name);
    if (rc == 0)
        rc = put_count(sb, "a", job->nargs, ',');
    for (size_t a = 0; rc == 0 && a < job->nargs; a++)
        rc = put_field(sb, job->args[a]);
    if (rc == 0)
        rc = put_count(sb, "i", job->ninputs, ',');
    for (size_t i = 0; rc == 0 && i < job->ninputs; i++) {
        rc = put_field(sb, job->inputs[i].src_path);
        if (rc == 0)
            rc = put_field(sb, job->inputs[i].dst_name);
    }
    if (rc == 0)
        rc = files_md5_stream_update(md5, sb->data ? sb->data : "", sb->len);
    if (rc == 0)
        rc = files_md5_stream_end(md5, out);
    return rc == 0 ? 0 : -1;
}

static int cmp_digest(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The jobs' digests are made in slices on the hash pool (8 ms for 10,000
 * jobs on one thread, before a submit's planning can start); a slice
 * has one MD5 context and one buffer for all its jobs. */
#define IDENTITY_SLICES 8
#define IDENTITY_POOL_MIN 1000

typedef struct {
    const gahp_submit *s;
    char (*digests)[SUBMIT_IDENTITY_LEN];
    size_t nslices;             /* 1 (the calling thread) or IDENTITY_SLICES */
    int rc[IDENTITY_SLICES];
} identity_work;

static void digest_slice(size_t k, void *arg)
{
    identity_work *w = arg;
    size_t n = w->s->njobs;
    size_t lo = n * k / w->nslices, hi = n * (k + 1) / w->nslices;
    files_md5_stream *md5 = files_md5_stream_new();
    strbuf sb = STRBUF_INIT;
    int rc = md5 != NULL ? 0 : -1;
    for (size_t i = lo; rc == 0 && i < hi; i++)
        rc = job_digest(&sb, md5, &w->s->jobs[i], w->digests[i]);
    files_md5_stream_free(md5);
    strbuf_free(&sb);
    w->rc[k] = rc;
}

int submit_identity_of(const gahp_submit *s, char out[SUBMIT_IDENTITY_LEN])
{
    char (*digests)[SUBMIT_IDENTITY_LEN] =
        calloc(s->njobs ? s->njobs : 1, sizeof *digests);
    if (digests == NULL)
        return -1;
    /* below IDENTITY_POOL_MIN jobs no thread is worth starting: one slice,
     * on this thread */
    identity_work w = { s, digests, s->njobs >= IDENTITY_POOL_MIN ? IDENTITY_SLICES : 1, { 0 } };
    hash_pool_run(w.nslices, digest_slice, &w);
    int rc = 0;
    for (size_t k = 0; k < w.nslices; k++)
        rc |= w.rc[k];
    strbuf sb = STRBUF_INIT;
    if (rc == 0)
        qsort(digests, s->njobs, sizeof *digests, cmp_digest);
    if (rc == 0 && (put_field(&sb, s->batch) != 0 || put_field(&sb, s->app) != 0 ||
                    strbuf_printf(&sb, "n%zu,", s->njobs) != 0))
        rc = -1;
    for (size_t i = 0; rc == 0 && i < s->njobs; i++)
        rc = strbuf_append(&sb, digests[i], SUBMIT_IDENTITY_LEN - 1);
    if (rc == 0)
        rc = files_md5_hex_mem(sb.data ? sb.data : "", sb.len, out) == 0 ? 0 : -1;
    strbuf_free(&sb);
    free(digests);
    return rc;
}

gahp_request *submit_identity_parse_args(const char *args_text)
{
    strbuf line = STRBUF_INIT;
    /* The request id is irrelevant here; 1 is always a valid one. */
    if (strbuf_printf(&line, "BOINC_SUBMIT 1%s%s", args_text[0] ? " " : "",
                      args_text) != 0) {
        strbuf_free(&line);
        return NULL;
    }
    gahp_args args = { 0 };
    gahp_request *req = NULL;
    const char *why = NULL;
    if (gahp_tokenize(line.data, line.len, &args) != GAHP_TOK_OK ||
        gahp_request_parse(GAHP_CMD_SUBMIT, gahp_parse_submit, args.argv, args.argc,
                           &req, &why) != 0 ||
        req->cmd != GAHP_CMD_SUBMIT) {
        gahp_request_free(req);
        req = NULL;
    }
    gahp_args_free(&args);
    strbuf_free(&line);
    return req;
}

int submit_identity_of_args(const char *args_text, char out[SUBMIT_IDENTITY_LEN])
{
    gahp_request *req = submit_identity_parse_args(args_text);
    if (req == NULL)
        return -1;
    int rc = submit_identity_of(&req->u.submit, out);
    gahp_request_free(req);
    return rc;
}

/* Fill in b->job_set_md5 of a batch journaled before fingerprints existed. */
static int backfill(journal *j, journal_batch *b)
{
    char *args = NULL;
    char fp[SUBMIT_IDENTITY_LEN];
    if (b->request_id <= 0)
        return 0;
    if (journal_request_args(j, b->request_id, &args) != 0)
        return -1;
    if (args == NULL || submit_identity_of_args(args, fp) != 0) {
        free(args);
        return 0;               /* unknown: the exact text decides */
    }
    free(args);
    char *copy = strdup(fp);
    if (copy == NULL)
        return -1;
    if (journal_batch_set_job_set(j, b->id, fp) != 0) {
        free(copy);
        return -1;
    }
    b->job_set_md5 = copy;
    log_info("batch %s: job-set fingerprint computed for a batch journaled "
             "before fingerprints existed", b->name);
    return 0;
}

int submit_identity_same(journal *j, journal_batch *b, const char *fp,
                         const char *spec_md5, int *same)
{
    *same = 0;
    if (b->job_set_md5 == NULL && backfill(j, b) != 0)
        return -1;
    if (b->job_set_md5 != NULL)
        *same = strcmp(b->job_set_md5, fp) == 0;
    else
        *same = strcmp(b->spec_md5, spec_md5) == 0;
    return 0;
}
