/*
 * submit_files.c - query_files and upload_files of a submit (see
 * submit_files.h).
 */
#include "submit_files.h"

#include "files.h"
#include "log.h"
#include "submit_driver.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t file_phase_mu = PTHREAD_MUTEX_INITIALIZER;

/* One chunk of files a step works on. */
typedef struct {
    const char *const *names;
    const char *const *paths;       /* upload only */
    size_t len;
    unsigned char *absent;          /* query only: the server's answer */
    const char *present_state;      /* what a present file becomes */
} file_chunk;

static int set_files(submit_run *r, const file_chunk *c, const char *state)
{
    if (journal_batch_files_set_state(r->ctx->journal, r->batch.id, c->names, c->len,
                                      state) != 0)
        return run_fail_journal(r);
    return 0;
}

/* Journal a query answer: present files get c->present_state, the others
 * absent. */
static int record_presence(submit_run *r, const file_chunk *c)
{
    const char **present = calloc(c->len ? c->len : 1, sizeof *present);
    const char **missing = calloc(c->len ? c->len : 1, sizeof *missing);
    int rc = 0;
    if (present == NULL || missing == NULL) {
        rc = run_fail_nomem(r);
    } else {
        size_t np = 0, nm = 0;
        for (size_t i = 0; i < c->len; i++) {
            if (c->absent[i])
                missing[nm++] = c->names[i];
            else
                present[np++] = c->names[i];
        }
        if (journal_batch_files_set_state(r->ctx->journal, r->batch.id, present, np,
                                          c->present_state) != 0 ||
            journal_batch_files_set_state(r->ctx->journal, r->batch.id, missing, nm,
                                          BFILE_ABSENT) != 0)
            rc = run_fail_journal(r);
    }
    free(present);
    free(missing);
    return rc;
}

/* Probe (safe query, no batch id): 1 when the server has every file. */
static int all_present(submit_run *r, void *arg)
{
    file_chunk *c = arg;
    boinc_error err = { 0 };
    if (boinc_query_files(r->ctx->client, &r->project, 0, c->names, c->len, c->absent,
                          &err) != BOINC_OK) {
        run_fail_boinc(r, (int)run_state(r), "query_files", &err);
        boinc_error_clear(&err);
        return -1;
    }
    for (size_t i = 0; i < c->len; i++)
        if (c->absent[i])
            return 0;
    return 1;
}

/* Resolve one chunk whose outcome is unknown: ask, record.  An upload may
 * still be in progress on the server, so absent files are looked for
 * again (settle policy) before they count as absent. */
static resolve_result resolve_chunk(submit_run *r, file_chunk *c)
{
    int settle = strcmp(c->present_state, BFILE_UPLOADED) == 0;
    int found = settle ? settle_probe(r, all_present, c) : all_present(r, c);
    if (found < 0)
        return RESOLVE_FAILED;
    return record_presence(r, c) == 0 ? RESOLVE_ACTED : RESOLVE_FAILED;
}

/* Resolve a list of names, chunk by chunk (a crash left them *_sent). */
static int resolve_names(submit_run *r, const char *const *names, size_t n,
                         const char *present_state)
{
    size_t max = r->limits.query_chunk_files;
    for (size_t start = 0; start < n; start += max) {
        file_chunk c = { names + start, NULL, n - start < max ? n - start : max,
                         NULL, present_state };
        c.absent = calloc(c.len, 1);
        if (c.absent == NULL)
            return run_fail_nomem(r);
        resolve_result res = resolve_chunk(r, &c);
        free(c.absent);
        if (res == RESOLVE_FAILED)
            return -1;
    }
    return 0;
}

static resolve_result resolve_step(submit_run *r, void *arg)
{
    return resolve_chunk(r, arg);
}

/* ---- query_files with the batch id ------------------------------------------- */

static int query_announce(submit_run *r, void *arg)
{
    return set_files(r, arg, BFILE_QUERY_SENT);
}

static int query_send(submit_run *r, void *arg, boinc_error *err)
{
    file_chunk *c = arg;
    return boinc_query_files(r->ctx->client, &r->project, r->batch.server_batch_id,
                             c->names, c->len, c->absent, err);
}

static int query_record(submit_run *r, void *arg)
{
    return record_presence(r, arg);
}

/* Refused: nothing was associated; ask again next time. */
static void query_unannounce(submit_run *r, void *arg)
{
    const file_chunk *c = arg;
    journal_batch_files_set_state(r->ctx->journal, r->batch.id, c->names, c->len,
                                  BFILE_HASHED);
}

static const step_def query_files_step = {
    .rpc = "query_files",
    .sent_point = "submit.query_sent",
    .done_point = "submit.query_done",
    .resume_refused = BATCH_CREATED,
    .resume_unknown = BATCH_CREATED,
    .announce = query_announce,
    .send = query_send,
    .record_done = query_record,
    .unannounce = query_unannounce,
    .resolve = resolve_step,
};

static int query_new_files(submit_run *r, const char *const *names, size_t n)
{
    size_t max = r->limits.query_chunk_files;
    for (size_t start = 0; start < n; start += max) {
        file_chunk c = { names + start, NULL, n - start < max ? n - start : max,
                         NULL, BFILE_CONFIRMED };
        c.absent = calloc(c.len, 1);
        if (c.absent == NULL)
            return run_fail_nomem(r);
        int rc = step_run(r, &query_files_step, &c);
        free(c.absent);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* ---- upload_files -------------------------------------------------------------- */

static int upload_announce(submit_run *r, void *arg)
{
    return set_files(r, arg, BFILE_UPLOAD_SENT);
}

static int upload_send(submit_run *r, void *arg, boinc_error *err)
{
    file_chunk *c = arg;
    return boinc_upload_files(r->ctx->client, &r->project, r->batch.server_batch_id,
                              c->names, c->paths, c->len, err);
}

static int upload_record(submit_run *r, void *arg)
{
    return set_files(r, arg, BFILE_UPLOADED);
}

static void upload_unannounce(submit_run *r, void *arg)
{
    const file_chunk *c = arg;
    journal_batch_files_set_state(r->ctx->journal, r->batch.id, c->names, c->len,
                                  BFILE_ABSENT);
}

static const step_def upload_files_step = {
    .rpc = "upload_files",
    .sent_point = "submit.upload_sent",
    .done_point = "submit.uploaded",
    .resume_refused = BATCH_FILES_KNOWN,
    .resume_unknown = BATCH_FILES_KNOWN,
    .announce = upload_announce,
    .send = upload_send,
    .record_done = upload_record,
    .unannounce = upload_unannounce,
    .resolve = resolve_step,
};

/* Names, sizes and local paths of the batch files in one state. */
typedef struct {
    const char **names;
    const char **paths;
    long long *sizes;
    size_t count;
} file_list;

static void file_list_free(file_list *l)
{
    free(l->names);
    free(l->paths);
    free(l->sizes);
    memset(l, 0, sizeof *l);
}

static int files_in_state(const journal_batch_file *f, size_t n, const char *state,
                          file_list *out)
{
    memset(out, 0, sizeof *out);
    out->names = calloc(n ? n : 1, sizeof *out->names);
    out->paths = calloc(n ? n : 1, sizeof *out->paths);
    out->sizes = calloc(n ? n : 1, sizeof *out->sizes);
    if (out->names == NULL || out->paths == NULL || out->sizes == NULL) {
        file_list_free(out);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(f[i].state, state) == 0) {
            out->names[out->count] = f[i].phys_name;
            out->paths[out->count] = f[i].local_path;
            out->sizes[out->count] = f[i].size;
            out->count++;
        }
    }
    return 0;
}

/* *left = the files still absent; when may_upload, upload each of them
 * once, in chunks (an unknown outcome's resolution may leave some absent
 * for the next round). */
static int upload_round(submit_run *r, size_t *left, int may_upload)
{
    journal_batch_file *f = NULL;
    size_t n = 0;
    file_list l = { 0 };
    size_t *starts = NULL, nchunks = 0;
    int rc = -1;
    *left = 0;
    if (journal_batch_files_list(r->ctx->journal, r->batch.id, &f, &n) != 0)
        return run_fail_journal(r);
    if (files_in_state(f, n, BFILE_ABSENT, &l) != 0 ||
        files_plan_chunks(l.sizes, l.count, r->limits.upload_chunk_files,
                          r->limits.upload_chunk_bytes, &starts, &nchunks) != 0) {
        run_fail_nomem(r);
        goto done;
    }
    *left = l.count;
    rc = 0;
    for (size_t c = 0; may_upload && c < nchunks && rc == 0; c++) {
        size_t end = c + 1 < nchunks ? starts[c + 1] : l.count;
        file_chunk ch = { l.names + starts[c], l.paths + starts[c], end - starts[c],
                          NULL, BFILE_UPLOADED };
        ch.absent = calloc(ch.len, 1);
        rc = ch.absent ? step_run(r, &upload_files_step, &ch) : run_fail_nomem(r);
        free(ch.absent);
    }
done:
    free(starts);
    file_list_free(&l);
    journal_batch_files_free(f, n);
    return rc;
}

#define UPLOAD_ROUNDS 3

static int upload_absent(submit_run *r)
{
    for (int round = 0; round <= UPLOAD_ROUNDS; round++) {
        size_t absent = 0;
        if (upload_round(r, &absent, round < UPLOAD_ROUNDS) != 0)
            return -1;
        if (absent == 0)
            return 0;
    }
    return run_fail(r, BATCH_FILES_KNOWN, EXEC_E_RPC, "upload_files",
                    "gave up after repeated unknown outcomes");
}

/* Resolve files a crash or lost reply left *_sent, then query new ones. */
static int learn_presence(submit_run *r, const journal_batch_file *f, size_t n)
{
    static const struct { const char *state, *present_state; } uncertain[] = {
        { BFILE_QUERY_SENT, BFILE_CONFIRMED },
        { BFILE_UPLOAD_SENT, BFILE_UPLOADED },
    };
    file_list l;
    for (size_t u = 0; u < 2; u++) {
        if (files_in_state(f, n, uncertain[u].state, &l) != 0)
            return run_fail_nomem(r);
        int rc = resolve_names(r, l.names, l.count, uncertain[u].present_state);
        file_list_free(&l);
        if (rc != 0)
            return -1;
    }
    if (files_in_state(f, n, BFILE_HASHED, &l) != 0)
        return run_fail_nomem(r);
    int rc = query_new_files(r, l.names, l.count);
    file_list_free(&l);
    return rc;
}

int submit_files_phase(submit_run *r)
{
    batch_state st = run_state(r);
    if (st == BATCH_UPLOADED || st == BATCH_SUBMIT_SENT || st == BATCH_SUBMITTED)
        return 0;
    pthread_mutex_lock(&file_phase_mu);
    journal_batch_file *f = NULL;
    size_t n = 0;
    int rc = -1;
    if (journal_batch_files_list(r->ctx->journal, r->batch.id, &f, &n) != 0) {
        run_fail_journal(r);
        goto out;
    }
    if (learn_presence(r, f, n) != 0 || run_set_state(r, BATCH_FILES_KNOWN, 0) != 0 ||
        upload_absent(r) != 0 || run_set_state(r, BATCH_UPLOADED, 0) != 0)
        goto out;
    rc = 0;
out:
    journal_batch_files_free(f, n);
    pthread_mutex_unlock(&file_phase_mu);
    return rc;
}
