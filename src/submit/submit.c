/*
 * submit.c - BOINC_SUBMIT: a batch of jobs onto a BOINC project, with
 * content-addressed inputs, journaled state by state so it can be resumed.
 *
 * The submit is a state machine (submit_state.h) driven here:
 *   NEW -> HASHED            plan and hash the inputs (submit_inputs.c)
 *   argument rule            refuse what a real server cannot carry, before
 *                            anything is created (job_args.c)
 *   app check                get_templates (submit_batch_steps.c)
 *   -> CREATE_SENT -> CREATED      create_batch (submit_batch_steps.c)
 *   -> FILES_KNOWN -> UPLOADED     query_files, upload_files (submit_files.c)
 *   -> SUBMIT_SENT -> SUBMITTED    submit_batch (submit_batch_steps.c)
 * Every side-effecting request goes through the one step driver
 * (engine.c): announced in the journal before it is sent, sent
 * once, and an unknown outcome resolved with a safe query before anything
 * is sent again.  So no batch is created twice, no job submitted twice,
 * no file uploaded twice (a real server treats the latter two as fatal).
 *
 * Re-issue binding: a submit whose (project, batch name) the journal knows
 * is answered from the journal when submitted, attached to the running
 * submit when one is in progress in this process (submit_registry.c), and
 * resumed from its recorded state otherwise; a different job set under the
 * same name is refused.  "The same jobs" is the job SET (submit.h):
 * HTCondor re-issues a submit with its jobs in another order and the
 * trailing fields of whichever job comes first.
 *
 * Deadline: HTCondor gives up on a submit after 300 s.  With
 * --submit-deadline the run goes to a thread of its own
 * (submit.h) and the worker answers with its result, or with
 * "submit still running: ..." at the deadline; the run goes on, bound to
 * its batch name, so a re-issue attaches to it or finds its outcome in the
 * journal.
 *
 * The file holds, in this order: the command, the identity of a submit
 * (its fingerprint and the rebuilding of a journaled request) and the
 * deadline's detached task.
 */
#include "exec/exec_cmds.h"

#include "base/files.h"
#include "wire/gahp_text.h"
#include "exec/job_args.h"
#include "journal/journal_batches.h"
#include "journal/journal_requests.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "submit/submit_batch_steps.h"
#include "submit/submit.h"
#include "submit/submit_files.h"
#include "submit/submit_inputs.h"
#include "submit/submit_registry.h"
#include "submit/engine.h"
#include "base/testpoint.h"
#include "exec/exec_ctx.h"
#include "base/tasks.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#include <stdatomic.h>
#endif

/* Request size bounds for job_file.php.  Uploads fit a stock PHP
 * (max_file_uploads = 20, post_max_size = 8M; submit_files.h) unless the
 * configuration says otherwise; submit_files.c lowers them further to
 * what the server taught (journal_files.h).  A query_files request of
 * 2000 names is about 120 KB of XML, far below any PHP limit. */
static const submit_limits default_limits = {
    .query_chunk_files = 2000,
    .upload_chunk_files = UPLOAD_DEFAULT_FILES,
    .upload_chunk_bytes = UPLOAD_DEFAULT_BYTES,
    .upload_connections = 1,
};
/* Expire time of a created batch when no configuration is given: the
 * client's 6 h lease (config.c has the option). */
#define DEFAULT_BATCH_EXPIRE_S 21600

static submit_limits configured_limits(const gahp_config *cfg)
{
    submit_limits lim = default_limits;
    if (cfg != NULL) {
        lim.upload_chunk_files = (size_t)cfg->upload_chunk_files;
        lim.upload_chunk_bytes = cfg->upload_chunk_bytes;
        lim.upload_connections = cfg->upload_connections > 0 ? (size_t)cfg->upload_connections : 1;
    }
    return lim;
}

/* A finite expire time: a batch that a failed submit leaves behind is
 * retired by the server then (the client sets its own lease later). */
static double batch_expire_time(const gahp_config *cfg)
{
    long expire_s = cfg != NULL ? cfg->batch_expire_s : DEFAULT_BATCH_EXPIRE_S;
    return (double)time(NULL) + (double)expire_s;
}

/* ---- the jobs as submit_batch sends them ------------------------------------ */

/*
 * The command line of job i (its inputs' physical names at phys) into
 * *line, by the argument rule of real servers (job_args.h); -1 with r's
 * error set when the job breaks it (an error result naming the job and
 * the argument) or memory ran out.
 */
static int command_line(submit_run *r, size_t i, const char *const *phys, char **line)
{
    const gahp_submit_job *job = &r->s->jobs[i];
    char *why = NULL;
    int rc = job_args_command_line(job->name, (const char *const *)job->args, job->nargs,
                                   phys, job->ninputs, line, &why);
    if (rc < 0)
        return engine_fail_nomem(r);
    if (rc > 0) {
        engine_fail(r, (int)engine_state(r), EXEC_E_REFUSED, "submit refused", why);
        free(why);
        return -1;
    }
    return 0;
}

static void jobs_free(submit_jobs *j)
{
    for (size_t i = 0; j->specs != NULL && i < j->njobs; i++)
        free((char *)j->specs[i].command_line);
    free(j->specs);
    memset(j, 0, sizeof *j);
}

static int build_jobs(submit_run *r, submit_jobs *j)
{
    const gahp_submit *s = r->s;
    memset(j, 0, sizeof *j);
    j->specs = calloc(s->njobs ? s->njobs : 1, sizeof *j->specs);
    if (j->specs == NULL)
        return engine_fail_nomem(r);
    j->njobs = s->njobs;
    size_t k = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        char *line = NULL;
        if (command_line(r, i, (const char *const *)&r->input_phys[k], &line) != 0) {
            jobs_free(j);
            return -1;
        }
        j->specs[i].name = s->jobs[i].name;
        j->specs[i].command_line = line;
        j->specs[i].n_inputs = s->jobs[i].ninputs;
        j->specs[i].phys_names = (const char *const *)&r->input_phys[k];
        k += s->jobs[i].ninputs;
    }
    j->params = &s->params;
    return 0;
}

/* ---- the state machine ------------------------------------------------------- */

/*
 * The inputs could not be hashed (a missing or unreadable file): the
 * failure is journaled like any other (issue 19), so audit_batches shows
 * it.  A new batch has nothing to resume from: its error is noted and it
 * stays new; a batch further on fails at the state it is at.
 */
static int note_hash_failure(submit_run *r)
{
    if (r->batch.id <= 0 || r->error.code != EXEC_E_LOCAL || r->error.msg == NULL)
        return -1;
    if (r->batch.state != BATCH_NEW) {
        batch_state at = engine_state(r);
        return engine_transition_ok(r->batch.state, r->batch.resume_state, BATCH_FAILED, at)
            ? engine_fail_record_again(r, (int)at) : -1;
    }
    char *tok = gahp_escape(r->error.msg);
    journal_batch_error je = { tok, r->error.msg, 0, r->error.bad_input,
                               r->error.bad_input_why };
    if (tok == NULL || journal_batch_note_error(r->ctx->journal, r->batch.id, &je) != 0)
        log_warn("submit %s: could not journal the input failure", r->s->batch);
    free(tok);
    return -1;
}

/* Hand the pages freed by the last phase back to the kernel.  glibc keeps
 * freed memory in the arena of the thread that freed it: the hash pool's
 * threads free the planning's garbage in their own arenas, where the
 * upload lanes never reuse it, and the process's peak RSS then counts it
 * on top of the next phase's memory. */
static void release_free_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static int run_steps(submit_run *r)
{
    size_t nread = 0;
    if (r->s->njobs == 0)
        return engine_fail(r, -1, EXEC_E_REFUSED, "submit refused",
                        "a batch needs at least one job");
    if (engine_state(r) == BATCH_SUBMITTED)
        return 0;
    if (r->batch.state != BATCH_NEW)
        log_info("submit %s: resuming at state %s", r->s->batch,
                 batch_state_name(engine_state(r)));
    /* Hashing is cheap when the cache holds every file (no reads) and gives
     * the per-job physical names, so it runs on every attempt. */
    if (submit_inputs_plan(r, &nread) != 0)
        return note_hash_failure(r);
    log_info("submit %s: %zu inputs, %zu files read for hashing", r->s->batch,
             r->ninputs, nread);
    release_free_memory();
    testpoint("submit.hashed");
    /* Arguments a real server cannot carry are refused before anything is
     * created on the server; the jobs built for that check are the ones
     * submit_batch sends. */
    submit_jobs jobs;
    if (build_jobs(r, &jobs) != 0)
        return -1;
    int rc = -1;
    if ((r->batch.server_batch_id == 0 && submit_batch_steps_check_app(r) != 0) ||
        submit_batch_steps_create(r) != 0 || submit_files_phase(r) != 0)
        goto out;
    /* the upload lanes' lists and bodies are freed in their own arenas:
     * give them back before the submit_batch request is built */
    release_free_memory();
    rc = submit_batch_steps_submit(r, &jobs);
out:
    jobs_free(&jobs);
    return rc;
}

/* ---- binding a request to its journal row ------------------------------------ */

static char *spec_digest(const gahp_request *req, char out[33])
{
    const char *text = req->args_text ? req->args_text : "";
    return files_md5_hex_mem(text, strlen(text), out) == 0 ? out : NULL;
}

static const char different_jobs[] =
    "this batch name was already submitted with different jobs";

/* The outcome at the deadline of a submit whose run goes on. */
static int still_running(const exec_ctx *ctx, exec_err *e)
{
    char *detail = str_printf("not finished after %ld s (the client gives up at "
                              "300 s); it goes on, and a re-issue of this submit "
                              "gets its outcome", ctx->config->submit_deadline_s);
    exec_err_set(e, EXEC_E_REFUSED, "submit still running", detail ? detail : "");
    free(detail);
    return -1;
}

/*
 * A re-issue answered through its batch's job-set identity: the batch's
 * owner request of an earlier run, whose text may differ (HTCondor 9.0
 * re-issues a submit with its jobs in another order), is answered by this
 * one, as command_dispatch's supersede does for the same text: replayed_by
 * (doc/auditing.md, "Replays"), so it is no longer undelivered.
 */
static void supersede_owner(exec_ctx *ctx, const gahp_request *req, long long owner_row)
{
    if (req->background || req->journal_id <= 0 || ctx->session_id <= 0 ||
        owner_row <= 0 || owner_row == req->journal_id)
        return;
    if (journal_supersede_submit(ctx->journal, owner_row, ctx->session_id,
                                 req->journal_id) != 0)
        log_warn("submit %s: could not record that request %ld answers the earlier "
                 "request of its batch: %s", req->u.submit.batch, req->id,
                 journal_errmsg(ctx->journal));
}

/* The outcome of a run that left none, from its batch's row: only a
 * submitted batch is a success; a failed one's plain error (batches.
 * error_msg; a row journaled before it has a plain reason of its own). */
static int outcome_of_row(const journal_batch *b, int found, exec_err *e)
{
    if (found && b->state == BATCH_SUBMITTED)
        return 0;
    if (found && b->error != NULL)
        exec_err_set(e, EXEC_E_REFUSED, b->error_msg != NULL ? b->error_msg
                     : "submit failed: recorded by an earlier boinc_gahp (the journal's "
                       "audit_batches view has its error)", NULL);
    else
        exec_err_set(e, EXEC_E_REFUSED, "submit failed", "the running submit of this batch "
                     "ended without a result");
    return -1;
}

/*
 * A waiter whose owner finished (or was still running at the waiter's
 * deadline): the owner's outcome (moved from *owner) when the job set is
 * the same.  When the owner left no outcome, the journal row decides.
 */
static int attached_outcome(exec_ctx *ctx, const gahp_request *req, const char *fp,
                            const char *digest, submit_entry en, exec_err *owner,
                            exec_err *e)
{
    journal_batch b;
    int found = 0, same = 1, rc = -1;
    if (journal_batch_find(ctx->journal, req->project_id, req->u.submit.batch, &b,
                           &found) != 0) {
        exec_err_clear(owner);
        exec_err_set(e, EXEC_E_REFUSED, "journal write failed", journal_errmsg(ctx->journal));
        return -1;
    }
    if (found && submit_identity_same(ctx->journal, &b, fp, digest, &same) != 0)
        exec_err_set(e, EXEC_E_REFUSED, "journal write failed", journal_errmsg(ctx->journal));
    else if (found && !same)
        exec_err_set(e, EXEC_E_REFUSED, "submit refused", different_jobs);
    else if (en == SUBMIT_STILL_RUNNING)
        still_running(ctx, e);
    else if (en == SUBMIT_OWNER_NO_RESULT)
        rc = outcome_of_row(&b, found, e);
    else if ((rc = owner->code == EXEC_OK ? 0 : -1) != 0) {
        *e = *owner;                    /* moved: the owner's copy is ours */
        memset(owner, 0, sizeof *owner);
    }
    exec_err_clear(owner);
    if (found && same && (rc == 0 || e->msg != NULL))
        supersede_owner(ctx, req, b.request_id);
    if (found)
        journal_batch_free(&b);
    return rc;
}

/* Create or adopt the journal row; 0 or -1 with r's error set. */
static int bind_row(submit_run *r, const char *fp, const char *digest, int found)
{
    exec_ctx *ctx = r->ctx;
    const gahp_request *req = r->req;
    if (!found) {
        long long row = 0;
        if (journal_batch_create(ctx->journal, req->project_id, r->s->batch, r->s->app,
                                 (long)r->s->njobs, digest, req->journal_id, &row) != 0 ||
            journal_batch_set_job_set(ctx->journal, row, fp) != 0)
            return engine_fail_journal(r);
        r->batch.id = row;
        return engine_reload(r);
    }
    if (req->journal_id > 0 && r->batch.request_id != req->journal_id &&
        journal_batch_set_owner(ctx->journal, r->batch.id, req->journal_id) != 0)
        return engine_fail_journal(r);
    return 0;
}

static void run_free(submit_run *r)
{
    for (size_t i = 0; i < r->ninputs; i++)
        free(r->input_phys ? r->input_phys[i] : NULL);
    free(r->input_phys);
    input_hold_free(r->hold);
    journal_batch_free(&r->batch);
    exec_err_clear(&r->error);
}

/* The owner's run: answer from the journal, refuse, or run the steps.
 * 0; -1 with *e; NO_OUTCOME (*e out of memory) when the run failed
 * without saying why (waiters then read the journal). */
#define NO_OUTCOME (-2)
static int run_owned(exec_ctx *ctx, const gahp_request *req, const char *fp,
                     const char *digest, exec_err *e)
{
    submit_run r = { 0 };
    r.ctx = ctx;
    r.req = req;
    r.s = &req->u.submit;
    r.project.url = req->project_url;
    r.project.authenticator = req->authenticator;
    r.limits = configured_limits(ctx->config);
    r.create.expire_time = batch_expire_time(ctx->config);

    int found = 0, same = 1;
    int failed = journal_batch_find(ctx->journal, req->project_id, r.s->batch, &r.batch,
                                    &found) != 0 ||
                 (found && submit_identity_same(ctx->journal, &r.batch, fp, digest, &same) != 0);
    /* The batch's request before bind_row adopts the batch: this re-issue
     * answers it (supersede_owner). */
    long long owner_row = !failed && found && same ? r.batch.request_id : 0;
    int rc = -1;
    if (failed)
        engine_fail_journal(&r);
    else if (found && !same)
        engine_fail(&r, -1, EXEC_E_REFUSED, "submit refused", different_jobs);
    else if (found && r.batch.state == BATCH_SUBMITTED)
        rc = 0;                 /* answered from the journal */
    else if (bind_row(&r, fp, digest, found) == 0 && run_steps(&r) == 0)
        rc = 0;
    if (rc != 0 && r.error.code == EXEC_OK) {
        rc = NO_OUTCOME;        /* a failure that set no error */
        exec_err_nomem(e);
    } else if (rc != 0) {
        *e = r.error;
        memset(&r.error, 0, sizeof r.error);
    }
    if (rc != NO_OUTCOME)
        supersede_owner(ctx, req, owner_row);
    run_free(&r);
    return rc;
}

/* The owner's run, its outcome handed to the registry (and returned). */
static int run_and_leave(exec_ctx *ctx, const gahp_request *req, active_submit *owner,
                         const char *fp, const char *digest, exec_err *e)
{
    int rc = run_owned(ctx, req, fp, digest, e);
    if (testfault("nomem", "submit_result")) {
        exec_err_nomem(e);              /* test: the outcome could not be kept */
        rc = NO_OUTCOME;
    }
    submit_registry_leave(owner, rc == NO_OUTCOME ? NULL : e);
    return rc == 0 ? 0 : -1;
}

/* ---- the deadline (doc/commands.md) ------------------------------------------ */

typedef struct {
    active_submit *owner;
    char fp[SUBMIT_IDENTITY_LEN];
    char digest[33];
} detached_arg;

static void run_detached(exec_ctx *ctx, const gahp_request *req, void *arg)
{
    detached_arg *a = arg;
    exec_err e = { 0 };
    run_and_leave(ctx, req, a->owner, a->fp, a->digest, &e);
    exec_err_clear(&e);
    free(a);
}

/*
 * The owner's run goes to a thread of its own; the worker answers with its
 * outcome, or with an error once `until` passes (the run goes on and stays
 * registered under the batch name: a re-issue attaches to it, or finds its
 * outcome in the journal).  Runs in the worker when no thread can be made.
 */
static int run_with_deadline(exec_ctx *ctx, const gahp_request *req, active_submit *owner,
                             const char *fp, const char *digest,
                             const struct timespec *until, exec_err *e)
{
    detached_arg *a = calloc(1, sizeof *a);
    if (a == NULL)
        return run_and_leave(ctx, req, owner, fp, digest, e);
    a->owner = owner;
    memcpy(a->fp, fp, sizeof a->fp);
    memcpy(a->digest, digest, sizeof a->digest);
    submit_registry_ref(owner);         /* the worker's, for the wait below */
    exec_err outcome = { 0 };
    if (submit_deadline_detach(ctx, req, run_detached, a) != 0) {
        free(a);
        int rc = run_and_leave(ctx, req, owner, fp, digest, e);
        submit_registry_wait(owner, NULL, &outcome);    /* drops the reference */
        exec_err_clear(&outcome);
        return rc;
    }
    submit_entry en = submit_registry_wait(owner, until, &outcome);
    if (en == SUBMIT_NOMEM)
        return exec_err_nomem(e);
    if (en == SUBMIT_ATTACHED) {
        *e = outcome;
        return e->code == EXEC_OK ? 0 : -1;
    }
    if (en == SUBMIT_STILL_RUNNING)
        log_warn("submit %s: still running after %ld s; answering the client, "
                 "the submit goes on", req->u.submit.batch, ctx->config->submit_deadline_s);
    return attached_outcome(ctx, req, fp, digest, en, &outcome, e);
}

/* A success the client reads in this session: it takes the batch as
 * submitted (a status query may then list only changed jobs). */
static void note_client_batch(exec_ctx *ctx, const gahp_request *req)
{
    if (!req->background && ctx->session_id > 0 && req->project_id > 0 &&
        journal_batch_set_client_session(ctx->journal, req->project_id,
                                          req->u.submit.batch, ctx->session_id) != 0)
        log_warn("submit %s: could not record that the client has the batch",
                 req->u.submit.batch);
}

static int submit_outcome(exec_ctx *ctx, const gahp_request *req, exec_err *e)
{
    char digest[33], fp[SUBMIT_IDENTITY_LEN];
    if (spec_digest(req, digest) == NULL || submit_identity_of(&req->u.submit, fp) != 0) {
        exec_err_set(e, EXEC_E_INTERNAL, "submit failed", "cannot digest the request");
        return -1;
    }
    /* Work resumed for the journal only (recovery) has nobody waiting. */
    long deadline = ctx->config != NULL && !req->background
                        ? ctx->config->submit_deadline_s : 0;
    struct timespec until;
    submit_deadline_at(deadline, &until);

    active_submit *owner = NULL;
    exec_err attached = { 0 };
    submit_entry en = submit_registry_enter(ctx->shared->submits, req->project_id,
                                            req->u.submit.batch,
                                            deadline > 0 ? &until : NULL, &owner, &attached);
    if (en == SUBMIT_NOMEM)
        return exec_err_nomem(e);
    if (en != SUBMIT_OWNER)     /* same batch runs or ran in this process */
        return attached_outcome(ctx, req, fp, digest, en, &attached, e);
    if (deadline > 0)
        return run_with_deadline(ctx, req, owner, fp, digest, &until, e);
    return run_and_leave(ctx, req, owner, fp, digest, e);
}

int exec_submit_job_set(exec_ctx *ctx, const gahp_request *req, exec_err *e)
{
    memset(e, 0, sizeof *e);
    int rc = submit_outcome(ctx, req, e);
    if (rc == 0)
        note_client_batch(ctx, req);
    return rc;
}

char *exec_submit(exec_ctx *ctx, const gahp_request *req)
{
    exec_err e = { 0 };
    /* the 9.0 face: "NULL", or the outcome's message as one token */
    return exec_submit_job_set(ctx, req, &e) == 0 ? strdup("NULL") : exec_err_result(&e);
}

/* ==== identity of a submit ==============================================
 *
 * Fingerprint of a submit's job set (submit.h).
 *
 * Each job is digested on its own from length-prefixed fields (so no two
 * different jobs share an encoding), the job digests are sorted, and the
 * fingerprint is the MD5 of the batch name, the app, the job count and the
 * sorted digests.  Sorting makes the order of the jobs irrelevant; the
 * trailing fields are simply not part of it.
 */

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
    /* The request id is irrelevant here; 1 is always a valid one. */
    gahp_journal_record rec = { "BOINC_SUBMIT", 1, args_text, 0, NULL, NULL };
    const char *why = NULL;
    return gahp_request_from_record(GAHP_CMD_SUBMIT, gahp_parse_submit, &rec, &why);
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

/* ==== the deadline: a submit that outlives its wait =====================
 *
 * A submit run as a detached task (submit.h;
 * the task is a thread of the process's pool, base/tasks.h).
 *
 * The thread cannot use the worker's context: a journal connection and a
 * BOINC client belong to one thread.  It gets its own (exec_ctx_open_like:
 * a client from the same source), and a reference to the worker's request
 * (gahp_request_ref): the worker may answer at the deadline and let go of
 * it while the run goes on.
 */

typedef struct {
    exec_ctx ctx;
    gahp_request *req;
    submit_detached_fn fn;
    void *arg;
} detached_run;

static void detached_free(detached_run *d)
{
    exec_ctx_close(&d->ctx);
    gahp_request_free(d->req);
    free(d);
}

static void detached_main(void *p)
{
    detached_run *d = p;
    exec_shared *shared = d->ctx.shared;
    d->fn(&d->ctx, d->req, d->arg);
    detached_free(d);
    /* Last: once the count drops, shutdown may free what the run used (and
     * join this pool thread: tasks_shutdown waits for the return). */
    atomic_fetch_sub(&shared->detached_runs, 1);
}

int submit_deadline_detach(const exec_ctx *ctx, const gahp_request *req,
                        submit_detached_fn fn, void *arg)
{
    detached_run *d = calloc(1, sizeof *d);
    char *err = NULL;
    if (d == NULL)
        return -1;
    d->req = gahp_request_ref(req);     /* the worker may answer and let go first */
    if (exec_ctx_open_like(&d->ctx, ctx, &err) != 0) {
        log_warn("submit %ld: cannot run it in its own thread: %s", req->id,
                 err ? err : "out of memory");
        free(err);
        gahp_request_free(d->req);
        free(d);
        return -1;
    }
    d->fn = fn;
    d->arg = arg;
    atomic_fetch_add(&ctx->shared->detached_runs, 1);
    if (task_start_detached(detached_main, d) != 0) {
        detached_free(d);
        atomic_fetch_sub(&ctx->shared->detached_runs, 1);
        return -1;
    }
    return 0;
}

void submit_deadline_at(long seconds, struct timespec *at)
{
    clock_gettime(CLOCK_REALTIME, at);
    at->tv_sec += seconds;
}
