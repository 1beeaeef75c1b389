/*
 * submit_files.c - query_files and upload_files of a submit (see
 * submit_files.h).  The upload limits (the chunk planning and the
 * recognition of a server's refusals) are in upload_limits.c.
 */
#include "submit/submit_files.h"

#include "submit/submit_registry.h"
#include "submit/submit_inputs.h"

#include "exec/exec_ctx.h"
#include "base/files.h"
#include "journal/journal_files.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "submit/engine.h"
#include "base/testpoint.h"
#include "base/tasks.h"
#include "base/num.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <limits.h>

/* One chunk of files a step works on. */
typedef struct {
    const char *const *names;
    const long long *ids;           /* the files' journal row ids (faster
                                       updates than by name), or NULL */
    const char *const *paths;       /* upload only */
    const long long *sizes;         /* upload only */
    size_t len;
    unsigned char *absent;          /* the server's answer to a query */
    const char *present_state;      /* what a present file becomes */
    int limit_learned;              /* upload only: a smaller chunk was learned */
    struct deferred_done *done;     /* the lane's unjournaled outcome (every
                                       chunk a step sends has one) */
    long long query_id;             /* query only: its journaled announcement */
} file_chunk;

/*
 * The outcome of a lane's last chunk, not journaled yet: it goes into the
 * transaction that announces the lane's next chunk (one commit per chunk),
 * or is written when the lane ends.  A crash in between leaves those files
 * `query_sent` or `upload_sent`, which the batch-less query_files resolves
 * (it associates nothing, so it may be repeated): the write-ahead rule
 * (journaled as sent before the request leaves) is what makes queries and
 * uploads safe, and it holds for every chunk.
 */
struct deferred_done {
    const char *const *names;   /* the round's file list outlives the lane */
    const long long *ids;
    size_t len;
    unsigned char *absent;      /* owned; NULL: every file is present */
    const char *present_state;
    long long query_id;         /* the query announcement it answers, 0: none */
};

/* The split name and id lists of outcome_groups (group_buf_free). */
typedef struct {
    const char **names;
    long long *ids;
} group_buf;

static void group_buf_free(group_buf *b)
{
    free(b->names);
    free(b->ids);
}

/*
 * The journal groups of an outcome: the present files get present_state,
 * the absent ones BFILE_ABSENT; with their row ids when ids is not NULL.
 * *buf owns the split lists (group_buf_free).  Returns the number of
 * groups (1 or 2), -1 out of memory.
 */
static int outcome_groups(const char *const *names, const long long *ids, size_t len,
                          const unsigned char *absent, const char *present_state,
                          journal_file_group g[2], group_buf *buf)
{
    *buf = (group_buf){ NULL, NULL };
    if (absent == NULL) {
        g[0] = (journal_file_group){ names, len, present_state, ids };
        return 1;
    }
    size_t cells = len ? len : 1;
    const char **split = calloc(cells, sizeof *split);
    long long *split_ids = ids != NULL ? calloc(cells, sizeof *split_ids) : NULL;
    if (split == NULL || (ids != NULL && split_ids == NULL)) {
        free(split);
        free(split_ids);
        return -1;
    }
    size_t np = 0;
    for (size_t i = 0; i < len; i++)
        np += !absent[i];
    for (size_t i = 0, pi = 0, ai = np; i < len; i++) {  /* present, then absent */
        size_t at = absent[i] ? ai++ : pi++;
        split[at] = names[i];
        if (ids != NULL)
            split_ids[at] = ids[i];
    }
    g[0] = (journal_file_group){ split, np, present_state, split_ids };
    g[1] = (journal_file_group){ split + np, len - np, BFILE_ABSENT,
                                 split_ids ? split_ids + np : NULL };
    *buf = (group_buf){ split, split_ids };
    return 2;
}

static void deferred_clear(struct deferred_done *d)
{
    free(d->absent);
    d->absent = NULL;
    d->len = 0;
    d->query_id = 0;
}

/* Journal a lane's deferred outcome when it sends no further chunk. */
static int flush_done(submit_run *r, struct deferred_done *d)
{
    if (d->len == 0)
        return 0;
    journal_file_group g[2];
    group_buf buf;
    int ng = outcome_groups(d->names, d->ids, d->len, d->absent, d->present_state, g, &buf);
    int rc = ng < 0 ? engine_fail_nomem(r)
             : journal_batch_files_advance(r->ctx->journal, r->batch.id, g, (size_t)ng,
                                           d->query_id, NULL, 0, NULL) != 0
                 ? engine_fail_journal(r) : 0;
    group_buf_free(&buf);
    deferred_clear(d);
    return rc;
}

/*
 * Journal the chunk as sent, together with the lane's deferred outcome of
 * its previous chunk: one commit.  A query is announced as one row naming
 * its files (journal_batch_files_advance), an upload as a state change of
 * each file.
 */
static int announce_chunk(submit_run *r, file_chunk *c, const char *sent_state)
{
    journal_file_group g[3];
    group_buf buf = { NULL, NULL };
    int ng = 0;
    long long answered = 0;
    struct deferred_done *d = c->done;
    if (d->len > 0) {
        ng = outcome_groups(d->names, d->ids, d->len, d->absent, d->present_state, g, &buf);
        if (ng < 0)
            return engine_fail_nomem(r);
        answered = d->query_id;
    }
    int query = strcmp(sent_state, BFILE_QUERY_SENT) == 0;
    if (!query)
        g[ng++] = (journal_file_group){ c->names, c->len, sent_state, c->ids };
    int rc = journal_batch_files_advance(r->ctx->journal, r->batch.id, g, (size_t)ng, answered,
                                         query ? c->names : NULL, c->len, &c->query_id);
    group_buf_free(&buf);
    if (rc != 0)
        return engine_fail_journal(r);
    deferred_clear(d);
    return 0;
}

/* Keep the chunk's outcome for the lane's next announcement; the
 * deferred outcome takes over the chunk's absent flags. */
static void defer_outcome(file_chunk *c, int with_absent)
{
    struct deferred_done *d = c->done;
    deferred_clear(d);
    d->names = c->names;
    d->ids = c->ids;
    d->len = c->len;
    d->present_state = c->present_state;
    d->query_id = c->query_id;
    if (with_absent) {
        d->absent = c->absent;
        c->absent = NULL;
    }
}

/* Journal a query answer now (one commit): present files get
 * c->present_state, the others absent; the chunk's announcement goes. */
static int record_presence(submit_run *r, const file_chunk *c)
{
    journal_file_group g[2];
    group_buf buf;
    int ng = outcome_groups(c->names, c->ids, c->len, c->absent, c->present_state, g, &buf);
    if (ng < 0)
        return engine_fail_nomem(r);
    int rc = journal_batch_files_advance(r->ctx->journal, r->batch.id, g, (size_t)ng,
                                         c->query_id, NULL, 0, NULL);
    group_buf_free(&buf);
    return rc == 0 ? 0 : engine_fail_journal(r);
}

/* Probe (safe query, no batch id): 1 when the server has every file. */
static int all_present(submit_run *r, void *arg)
{
    file_chunk *c = arg;
    boinc_error err = { 0 };
    if (boinc_query_files(r->ctx->client, &r->project, 0, c->names, c->len, c->absent,
                          &err) != BOINC_OK) {
        engine_fail_boinc(r, (int)engine_state(r), "query_files", &err);
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
    int found = settle ? engine_settle(r, all_present, c) : all_present(r, c);
    if (found < 0)
        return RESOLVE_FAILED;
    return record_presence(r, c) == 0 ? RESOLVE_ACTED : RESOLVE_FAILED;
}

/* Resolve a list of names, chunk by chunk (a crash left them *_sent). */
static int resolve_names(submit_run *r, const char *const *names, const long long *ids,
                         size_t n, const char *present_state)
{
    size_t max = r->limits.query_chunk_files;
    for (size_t start = 0; start < n; start += max) {
        file_chunk c = { .names = names + start, .ids = ids + start,
                         .len = n - start < max ? n - start : max,
                         .present_state = present_state };
        c.absent = calloc(c.len, 1);
        if (c.absent == NULL)
            return engine_fail_nomem(r);
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
    return announce_chunk(r, arg, BFILE_QUERY_SENT);
}

static int query_send(submit_run *r, void *arg, boinc_error *err)
{
    file_chunk *c = arg;
    return boinc_query_files(r->ctx->client, &r->project, r->batch.server_batch_id,
                             c->names, c->len, c->absent, err);
}

static int query_record(submit_run *r, void *arg)
{
    (void)r;
    defer_outcome(arg, 1);
    return 0;
}

/* Refused: nothing was associated; the files are plain 'hashed' again
 * and asked next time. */
static void query_unannounce(submit_run *r, void *arg)
{
    const file_chunk *c = arg;
    journal_batch_files_advance(r->ctx->journal, r->batch.id, NULL, 0, c->query_id, NULL, 0,
                                NULL);
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

/* ---- upload_files -------------------------------------------------------------- */

static int upload_announce(submit_run *r, void *arg)
{
    return announce_chunk(r, arg, BFILE_UPLOAD_SENT);
}

/* Each file's bytes: those kept from its hash when there are (read once),
 * else the file, checked on the way against the size and MD5 it was
 * journaled with (boinc_upload_src): bytes that do not match their name
 * never complete a request. */
static int upload_send(submit_run *r, void *arg, boinc_error *err)
{
    file_chunk *c = arg;
    boinc_upload_src *src = calloc(c->len ? c->len : 1, sizeof *src);
    if (src == NULL) {      /* not sent: the step fails as not acted */
        err->code = BOINC_E_NOMEM;
        return BOINC_E_NOMEM;
    }
    for (size_t i = 0; i < c->len; i++) {
        long long kept_size = 0;
        const void *kept = input_hold_get(r->hold, c->names[i], &kept_size);
        src[i] = (boinc_upload_src){ c->paths[i], kept, kept ? kept_size : c->sizes[i] };
    }
    int rc = boinc_upload_files_src(r->ctx->client, &r->project, r->batch.server_batch_id,
                                    c->names, src, c->len, err);
    free(src);
    return rc;
}

static int upload_record(submit_run *r, void *arg)
{
    const file_chunk *c = arg;
    defer_outcome(arg, 0);          /* the server took every file */
    if (r->upload_progress != NULL) {
        long long bytes = 0;
        for (size_t i = 0; i < c->len; i++)
            bytes += c->sizes[i];
        submit_progress_add(r->upload_progress, c->len, bytes);
    }
    return 0;
}

static void upload_unannounce(submit_run *r, void *arg)
{
    const file_chunk *c = arg;
    journal_batch_files_set_state(r->ctx->journal, r->batch.id, c->names, c->len,
                                  BFILE_ABSENT);
}

/* This project's upload limits: the configured ones (r->limits), lowered
 * to what the server taught earlier (journal_files.h); *learned = whether
 * it taught any (NULL: not wanted). */
static int current_limits(submit_run *r, upload_limits *lim, int *learned)
{
    lim->max_files = (long)r->limits.upload_chunk_files;
    lim->max_bytes = r->limits.upload_chunk_bytes;
    long files = 0;
    long long bytes = 0;
    int found = 0;
    if (journal_upload_limits_get(r->ctx->journal, r->req->project_id, &files, &bytes,
                                  &found) != 0)
        return engine_fail_journal(r);
    if (found && files >= 1 && files < lim->max_files)
        lim->max_files = files;
    if (found && bytes > UPLOAD_REQUEST_OVERHEAD && bytes < lim->max_bytes)
        lim->max_bytes = bytes;
    if (learned != NULL)
        *learned = found;
    return 0;
}

/* One input is larger than the server takes in one request: fail naming
 * it (physical and local name), its size and the php.ini setting. */
static int fail_too_large(submit_run *r, const file_chunk *c, const char *name,
                          upload_limit_kind kind, const boinc_error *err)
{
    size_t big = 0;
    while (name != NULL && big < c->len && strcmp(c->names[big], name) != 0)
        big++;
    if (big == c->len)
        big = 0;    /* the server named no file of this chunk: it held one */
    char *detail = NULL, *why = NULL;
    upload_too_large_texts(c->names[big], c->paths[big], c->sizes[big], err->msg, kind,
                           &detail, &why);
    int rc = detail != NULL && why != NULL
        ? engine_fail_input(r, BATCH_FILES_KNOWN, EXEC_E_RPC, "upload_files", detail,
                            c->paths[big], why)
        : (exec_err_nomem(&r->error), engine_fail_record_again(r, BATCH_FILES_KNOWN));
    free(detail);
    free(why);
    return rc;
}

/* Journal the smaller chunk (before anything is sent again, so a crash
 * cannot forget it); the caller re-plans the files still absent. */
static int learn_limits(submit_run *r, file_chunk *c, const upload_limits *lim,
                        long long chunk_bytes, const boinc_error *err)
{
    const char *why = err->msg ? err->msg : "";
    log_warn("submit %s: server refused a chunk of %zu files (%lld bytes): %s; "
             "chunks from now on: %ld files, %lld bytes", r->s->batch, c->len, chunk_bytes,
             why, lim->max_files, lim->max_bytes);
    if (journal_upload_limits_learn(r->ctx->journal, r->req->project_id, lim->max_files,
                                    lim->max_bytes, why, (double)time(NULL)) != 0)
        return engine_fail_journal(r);
    testpoint("submit.limit_learned");
    c->limit_learned = 1;
    return 1;
}

/* An upload stopped because one input could not be read (gone, or changed
 * since it was hashed): the whole request was aborted, nothing stored.
 * The failure is that input's own (exec_err_blame), so the BLAH dialect
 * holds its job alone.  0 when no input of the chunk is named (an ordinary
 * refusal), else -1 with the failure recorded. */
static int upload_unreadable(submit_run *r, file_chunk *c, const boinc_error *err)
{
    const char *path = upload_unreadable_path(c->paths, c->len, err->msg);
    if (path == NULL)
        return 0;
    upload_unannounce(r, c);
    char *detail = str_printf("%s: %s", boinc_code_name(err->code), err->msg);
    int rc = detail != NULL
        ? engine_fail_input(r, BATCH_FILES_KNOWN, EXEC_E_LOCAL, "upload_files failed", detail,
                            path, err->msg)
        : (exec_err_nomem(&r->error), engine_fail_record_again(r, BATCH_FILES_KNOWN));
    free(detail);
    return rc;
}

/*
 * An upload refused with one of the server's PHP limit errors is a
 * refusal the step recovers from (any other refusal: 0).  PHP threw the
 * request away as a whole (post_max_size, max_file_uploads) or stopped at
 * the file too large (upload_max_filesize): the batch-less query_files
 * shows what the server kept, so nothing is ever uploaded twice.  Then a
 * smaller chunk is learned (1), or a single file is too large: the submit
 * fails naming it (-1).
 */
static int upload_recover_refusal(submit_run *r, void *arg, const boinc_error *err)
{
    file_chunk *c = arg;
    long received = 0;
    char *big_name = NULL;
    if (err->code == BOINC_E_IO && c->paths != NULL)
        return upload_unreadable(r, c, err);
    if (err->code != BOINC_E_SERVER)
        return 0;
    upload_limit_kind kind = upload_limit_classify(err->msg, &received, &big_name);
    if (kind == UPLOAD_LIMIT_NONE)
        return 0;
    int rc = -1;
    upload_limits lim;
    int known = 0;
    if (all_present(r, c) >= 0 && record_presence(r, c) == 0 &&
        current_limits(r, &lim, &known) == 0) {
        long long chunk_bytes = upload_request_bytes(c->sizes, c->len);
        if (!known)     /* the project's first refusal */
            upload_limits_first_refusal(&lim, kind, received);
        if (kind == UPLOAD_LIMIT_FILESIZE ||
            upload_limits_shrink(&lim, kind, c->len, chunk_bytes, received) != 0)
            rc = fail_too_large(r, c, big_name, kind, err);
        else
            rc = learn_limits(r, c, &lim, chunk_bytes, err);
    }
    free(big_name);
    return rc;
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
    .recover_refusal = upload_recover_refusal,
};

/* Names, sizes and local paths of the batch files in one state. */
typedef struct {
    const char **names;
    long long *ids;         /* their journal row ids */
    const char **paths;
    long long *sizes;
    size_t count;
} file_list;

static void file_list_free(file_list *l)
{
    free(l->names);
    free(l->ids);
    free(l->paths);
    free(l->sizes);
    memset(l, 0, sizeof *l);
}

static int files_in_state(const journal_batch_file *f, size_t n, const char *state,
                          file_list *out)
{
    memset(out, 0, sizeof *out);
    out->names = calloc(n ? n : 1, sizeof *out->names);
    out->ids = calloc(n ? n : 1, sizeof *out->ids);
    out->paths = calloc(n ? n : 1, sizeof *out->paths);
    out->sizes = calloc(n ? n : 1, sizeof *out->sizes);
    if (out->names == NULL || out->ids == NULL || out->paths == NULL || out->sizes == NULL) {
        file_list_free(out);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(f[i].state, state) == 0) {
            out->names[out->count] = f[i].phys_name;
            out->ids[out->count] = f[i].id;
            out->paths[out->count] = f[i].local_path;
            out->sizes[out->count] = f[i].size;
            out->count++;
        }
    }
    return 0;
}

/* ---- several chunks in flight ------------------------------------------------ */
/*
 * The chunks of one round of query_files or upload_files are handed out,
 * one at a time, to up to r->limits.upload_connections lanes: the calling
 * worker and helper threads, each with its own curl handle (its
 * connection kept alive from chunk to chunk) and its own journal
 * connection.  Every chunk goes through the same step as before (journaled
 * query_sent / upload_sent before its request leaves, its outcome after),
 * so what a crash leaves is what it left with one chunk in flight, only
 * more chunks at once: each is resolved by the batch-less query_files.
 * Each file is in exactly one chunk, so no file is ever listed twice.
 * After a failure or a learned limit no new chunk is handed out; the
 * chunks in flight finish (or are resolved) and the caller re-plans from
 * the journal.  Queries gain as much as uploads: the server's journaling
 * of one chunk overlaps the web server's work on the next.
 */
typedef struct {
    const step_def *step;   /* query_files_step or upload_files_step */
    const file_list *l;     /* paths and sizes NULL for queries */
    const size_t *starts;
    size_t nchunks;         /* chunks handed out: next .. nchunks - 1 */
    size_t nplanned;        /* entries in starts (0: nchunks) */
    pthread_mutex_t mu;
    size_t next;            /* next chunk to hand out */
    int stop;               /* a chunk failed or taught a limit */
    int learned;            /* a chunk taught a smaller limit */
} chunk_pool;

/* The next chunk to send, or 0 when there is none or the round stops. */
static int take_chunk(chunk_pool *p, size_t *c)
{
    pthread_mutex_lock(&p->mu);
    int got = !p->stop && p->next < p->nchunks;
    if (got)
        *c = p->next++;
    pthread_mutex_unlock(&p->mu);
    return got;
}

/* Send chunks until none is left or the round stops: 0 or -1 (r->error). */
static int lane_run(submit_run *r, chunk_pool *p)
{
    size_t c;
    int rc = 0;
    int upload = p->step == &upload_files_step;
    struct deferred_done done = { NULL, NULL, 0, NULL, NULL, 0 };
    while (rc == 0 && take_chunk(p, &c)) {
        size_t planned = p->nplanned ? p->nplanned : p->nchunks;
        size_t end = c + 1 < planned ? p->starts[c + 1] : p->l->count;
        size_t at = p->starts[c];
        file_chunk ch = { .names = p->l->names + at, .ids = p->l->ids + at,
                          .paths = upload ? p->l->paths + at : NULL,
                          .sizes = upload ? p->l->sizes + at : NULL, .len = end - at,
                          .present_state = upload ? BFILE_UPLOADED : BFILE_CONFIRMED,
                          .done = &done };
        ch.absent = calloc(ch.len, 1);
        rc = ch.absent ? engine_step(r, p->step, &ch) : engine_fail_nomem(r);
        free(ch.absent);
        pthread_mutex_lock(&p->mu);
        if (rc != 0 || ch.limit_learned)
            p->stop = 1;
        if (ch.limit_learned)
            p->learned = 1;
        pthread_mutex_unlock(&p->mu);
    }
    /* Also after a failure: what the server took is journaled. */
    if (flush_done(r, &done) != 0)
        rc = -1;
    return rc;
}

/* A helper lane: a copy of the submit's run on its own client and
 * journal connection (the run's other fields are only read). */
typedef struct {
    chunk_pool *pool;
    submit_run run;
    exec_ctx ctx;
    task *task;             /* NULL: not started */
    int rc;
} chunk_lane;

static void lane_main(void *arg)
{
    chunk_lane *ln = arg;
    ln->rc = lane_run(&ln->run, ln->pool);
}

/* Start a helper lane; 0 when it could not be (the round runs on fewer). */
static int lane_start(submit_run *r, chunk_lane *ln, chunk_pool *p)
{
    char *err = NULL;
    if (exec_ctx_open_like(&ln->ctx, r->ctx, &err) != 0) {
        log_warn("submit %s: one %s connection fewer: %s", r->s->batch, p->step->rpc,
                 err ? err : "out of memory");
        free(err);
        return 0;
    }
    ln->pool = p;
    ln->run = *r;
    ln->run.ctx = &ln->ctx;
    memset(&ln->run.error, 0, sizeof ln->run.error);
    if ((ln->task = task_start(lane_main, ln)) == NULL) {
        log_warn("submit %s: one %s connection fewer: no thread", r->s->batch, p->step->rpc);
        exec_ctx_close(&ln->ctx);
        return 0;
    }
    return 1;
}

/* Join a helper lane; its failure becomes the run's when the run has none. */
static int lane_join(submit_run *r, chunk_lane *ln)
{
    if (ln->task == NULL)
        return 0;
    task_join(ln->task);
    ln->task = NULL;
    exec_ctx_close(&ln->ctx);
    if (ln->rc != 0 && r->error.code == EXEC_OK) {
        r->error = ln->run.error;
        memset(&ln->run.error, 0, sizeof ln->run.error);
    }
    exec_err_clear(&ln->run.error);
    return ln->rc;
}

/* Run the pool's chunks on up to upload_connections lanes. */
static int run_chunks(submit_run *r, chunk_pool *p)
{
    size_t nlanes = r->limits.upload_connections;
    if (nlanes > p->nchunks - p->next)
        nlanes = p->nchunks - p->next;
    if (nlanes < 1 || r->ctx->config == NULL)
        nlanes = 1;
    chunk_lane *lanes = nlanes > 1 ? calloc(nlanes - 1, sizeof *lanes) : NULL;
    if (lanes == NULL)
        nlanes = 1;
    pthread_mutex_init(&p->mu, NULL);
    for (size_t i = 0; i + 1 < nlanes; i++)
        lane_start(r, &lanes[i], p);
    int rc = lane_run(r, p);
    int failed = rc != 0;
    for (size_t i = 0; i + 1 < nlanes; i++)
        if (lane_join(r, &lanes[i]) != 0)
            failed++;
    /* Each failed lane journaled its own error; the client gets r->error,
     * so the journal must say the same (local failures left the row). */
    if (failed > 1 && r->error.code != EXEC_E_JOURNAL && r->error.code != EXEC_E_NOMEM)
        engine_fail_record_again(r, (int)p->step->resume_unknown);
    if (failed)
        rc = -1;
    pthread_mutex_destroy(&p->mu);
    free(lanes);
    return rc;
}

/* *left = the files still absent; when may_upload, upload each of them
 * once, in chunks within this project's limits (an unknown outcome's
 * resolution may leave some absent for the next round; a learned limit
 * ends the round, *learned = 1, and the next one re-plans). */
static int upload_round(submit_run *r, size_t *left, int may_upload, int *learned)
{
    journal_batch_file *f = NULL;
    size_t n = 0;
    file_list l = { 0 };
    size_t *starts = NULL, nchunks = 0, nprobe = 0;
    upload_limits lim;
    int known = 0;
    *left = 0;
    *learned = 0;
    if (current_limits(r, &lim, &known) != 0)
        return -1;
    /* only the absent rows: a resubmit's 10,000 present files are not
     * copied out of the journal again */
    if (journal_batch_files_list(r->ctx->journal, r->batch.id, BFILE_ABSENT, &f, &n) != 0)
        return engine_fail_journal(r);
    int rc = -1;
    if (files_in_state(f, n, BFILE_ABSENT, &l) != 0 ||
        upload_plan_round(l.sizes, l.count, &lim, known, &starts, &nchunks, &nprobe) != 0) {
        engine_fail_nomem(r);
        goto done;
    }
    *left = l.count;
    rc = 0;
    if (r->upload_progress != NULL && r->upload_progress->files_total == 0) {
        long long bytes = 0;
        for (size_t i = 0; i < l.count; i++)
            bytes += l.sizes[i];
        submit_progress_set_total(r->upload_progress, l.count, bytes);
    }
    /* the probe alone (one lane), then the rest on every lane */
    chunk_pool p = { .step = &upload_files_step, .l = &l, .starts = starts,
                     .nchunks = nprobe ? 1 : nchunks, .nplanned = nchunks };
    if (may_upload && nchunks > 0)
        rc = run_chunks(r, &p);
    if (may_upload && rc == 0 && nprobe && !p.stop && nchunks > 1) {
        chunk_pool rest = { .step = &upload_files_step, .l = &l, .starts = starts,
                            .nchunks = nchunks, .nplanned = nchunks, .next = 1 };
        rc = run_chunks(r, &rest);
        p.learned = rest.learned;
    }
    *learned = p.learned;
done:
    free(starts);
    file_list_free(&l);
    journal_batch_files_free(f, n);
    return rc;
}

#define UPLOAD_ROUNDS 3
/* Rounds cut short by a learned limit do not count as rounds: each learned
 * limit is smaller than the last (halvings down to one file per chunk), so
 * these are bounded; the cap only guards against a server that lies. */
#define LEARNED_ROUNDS 64

static int upload_rounds(submit_run *r)
{
    int round = 0, learned_rounds = 0;
    while (round <= UPLOAD_ROUNDS) {
        size_t absent = 0;
        int learned = 0;
        if (upload_round(r, &absent, round < UPLOAD_ROUNDS, &learned) != 0)
            return -1;
        if (absent == 0)
            return 0;
        if (learned && learned_rounds < LEARNED_ROUNDS)
            learned_rounds++;
        else
            round++;
    }
    return engine_fail(r, BATCH_FILES_KNOWN, EXEC_E_RPC, "upload_files",
                    "gave up after repeated unknown outcomes");
}

/* The upload rounds, with progress lines against what was absent at first. */
static int upload_absent(submit_run *r)
{
    submit_progress progress;       /* its totals: the first round's files */
    submit_progress_init(&progress, r->s->batch, "uploaded", 0, 0);
    r->upload_progress = &progress;
    int rc = upload_rounds(r);
    r->upload_progress = NULL;
    submit_progress_destroy(&progress);
    return rc;
}

/* query_files with the batch id for the listed files, chunk by chunk. */
static int query_new_files(submit_run *r, const file_list *l)
{
    size_t max = r->limits.query_chunk_files;
    size_t nchunks = max ? (l->count + max - 1) / max : 0;
    if (nchunks == 0)
        return 0;
    size_t *starts = calloc(nchunks, sizeof *starts);
    if (starts == NULL)
        return engine_fail_nomem(r);
    for (size_t c = 0; c < nchunks; c++)
        starts[c] = c * max;
    chunk_pool p = { .step = &query_files_step, .l = l, .starts = starts, .nchunks = nchunks };
    int rc = run_chunks(r, &p);
    free(starts);
    return rc;
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
            return engine_fail_nomem(r);
        int rc = resolve_names(r, l.names, l.ids, l.count, uncertain[u].present_state);
        size_t resolved = l.count;
        file_list_free(&l);
        if (rc != 0)
            return -1;
        /* the announcements that made them query_sent are answered */
        if (u == 0 && resolved > 0 &&
            journal_batch_file_queries_forget(r->ctx->journal, r->batch.id) != 0)
            return engine_fail_journal(r);
    }
    if (files_in_state(f, n, BFILE_HASHED, &l) != 0)
        return engine_fail_nomem(r);
    int rc = query_new_files(r, &l);
    file_list_free(&l);
    return rc;
}

/* Claim the files this phase may still query or upload (not those the
 * server already has for this batch), so that no other submit of the
 * project works on one of them meanwhile (submit_registry.h). */
static int claim_open_files(submit_run *r, const journal_batch_file *f, size_t n,
                            file_claim **claim)
{
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (names == NULL)
        return engine_fail_nomem(r);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].state, BFILE_CONFIRMED) != 0 && strcmp(f[i].state, BFILE_UPLOADED) != 0)
            names[k++] = f[i].phys_name;
    *claim = file_claims_acquire(r->ctx->shared->claims, r->req->project_id, names, k);
    free(names);
    return *claim != NULL ? 0 : engine_fail_nomem(r);
}

/*
 * Files an earlier phase found absent (a run that crashed or failed before
 * uploading them) may have been uploaded since by another batch of the
 * project, and a second upload is fatal on a real server: the crash-state
 * explorer found exactly that (two batches sharing a new input, a crash
 * after the first one's query).  So they are asked about again, with the
 * batch id, like new files: back to `hashed`.  That query is safe to send
 * for them: an absent file got no association with the batch.  Under this
 * phase's claim, what it learns stays true until it uploads.
 */
static int forget_stale_absence(submit_run *r, journal_batch_file *f, size_t n)
{
    file_list l;
    if (files_in_state(f, n, BFILE_ABSENT, &l) != 0)
        return engine_fail_nomem(r);
    int rc = 0;
    if (l.count > 0 &&
        journal_batch_files_set_state(r->ctx->journal, r->batch.id, l.names, l.count,
                                      BFILE_HASHED) != 0)
        rc = engine_fail_journal(r);
    file_list_free(&l);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (strcmp(f[i].state, BFILE_ABSENT) == 0)
            f[i].state = BFILE_HASHED;
    }
    return rc;
}

int submit_files_phase(submit_run *r)
{
    batch_state st = engine_state(r);
    if (st == BATCH_UPLOADED || st == BATCH_SUBMIT_SENT || st == BATCH_SUBMITTED)
        return 0;
    journal_batch_file *f = NULL;
    size_t n = 0;
    file_claim *claim = NULL;
    int rc = -1;
    if (journal_batch_files_list(r->ctx->journal, r->batch.id, NULL, &f, &n) != 0) {
        engine_fail_journal(r);
        goto out;
    }
    if (claim_open_files(r, f, n, &claim) != 0 || forget_stale_absence(r, f, n) != 0)
        goto out;
    if (learn_presence(r, f, n) != 0 || engine_set_state(r, BATCH_FILES_KNOWN, 0) != 0)
        goto out;
    /* The upload rounds list the absent files themselves: every file's row
     * (names and paths of the whole batch) is not held through them. */
    journal_batch_files_free(f, n);
    f = NULL;
    n = 0;
    if (upload_absent(r) != 0 || engine_set_state(r, BATCH_UPLOADED, 0) != 0)
        goto out;
    rc = 0;
out:
    /* the kept bytes are not needed past the upload: a resume reads again */
    input_hold_free(r->hold);
    r->hold = NULL;
    file_claims_release(claim);
    journal_batch_files_free(f, n);
    return rc;
}
