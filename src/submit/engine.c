/*
 * engine.c - the submit engine (see engine.h): the legal transitions and
 * their check, the failure convention, the journal-row helpers, the
 * generic step driver and the settle policy; and, at the end, the progress
 * lines the long phases (hashing, uploading) write to the log.
 */
#include "submit/engine.h"

#include "wire/gahp_text.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/testpoint.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

batch_state engine_state(const submit_run *r)
{
    return r->batch.state == BATCH_FAILED ? r->batch.resume_state : r->batch.state;
}

/* ---- the legal transitions (engine.h) -------------------------------------- */

/* The state a batch is at (a failed one: its resume state); 0 when the
 * pair is no state a batch can be in. */
static int effective(batch_state state, batch_state resume, batch_state *e)
{
    if (state == BATCH_FAILED) {
        *e = resume;
        return resume >= BATCH_HASHED && resume <= BATCH_SUBMIT_SENT;
    }
    *e = state;
    return (unsigned)state < BATCH_FAILED;
}

int engine_transition_ok(batch_state from, batch_state from_resume, batch_state to,
                         batch_state to_resume)
{
    static const struct { batch_state from, to; } forward[] = {
        { BATCH_HASHED, BATCH_CREATE_SENT },      { BATCH_CREATE_SENT, BATCH_CREATE_SENT },
        { BATCH_CREATE_SENT, BATCH_CREATED },     { BATCH_CREATED, BATCH_FILES_KNOWN },
        { BATCH_FILES_KNOWN, BATCH_FILES_KNOWN }, { BATCH_FILES_KNOWN, BATCH_UPLOADED },
        { BATCH_UPLOADED, BATCH_SUBMIT_SENT },    { BATCH_SUBMIT_SENT, BATCH_SUBMIT_SENT },
        { BATCH_SUBMIT_SENT, BATCH_SUBMITTED },
    };
    /* a request refused or never sent is redone from before it */
    static const struct { batch_state at, resume; } redo[] = {
        { BATCH_CREATE_SENT, BATCH_HASHED },
        { BATCH_FILES_KNOWN, BATCH_CREATED },   /* a stale absence re-queried */
        { BATCH_SUBMIT_SENT, BATCH_UPLOADED },
    };
    batch_state e;
    if (!effective(from, from_resume, &e))
        return 0;
    if (to == BATCH_FAILED) {
        if (e < BATCH_HASHED || e > BATCH_SUBMIT_SENT)
            return 0;
        if (to_resume == e)
            return 1;
        for (size_t i = 0; i < sizeof redo / sizeof redo[0]; i++)
            if (redo[i].at == e && redo[i].resume == to_resume)
                return 1;
        return 0;
    }
    if (from == BATCH_NEW && to == BATCH_HASHED)
        return 1;
    for (size_t i = 0; i < sizeof forward / sizeof forward[0]; i++)
        if (forward[i].from == e && forward[i].to == to)
            return 1;
    return 0;
}

/* "created", "failed(hashed)" */
static void state_text(batch_state state, batch_state resume, char *buf, size_t n)
{
    if (state == BATCH_FAILED)
        snprintf(buf, n, "failed(%s)", batch_state_name(resume));
    else
        snprintf(buf, n, "%s", batch_state_name(state));
}

/*
 * 0 when the batch may go to `to` (to_resume when failed); else a bug:
 * logged, r's error becomes an internal error (why: the failure being
 * recorded, or NULL), nothing is written, -1.
 */
static int check_transition(submit_run *r, batch_state to, batch_state to_resume,
                            const char *why)
{
    if (engine_transition_ok(r->batch.state, r->batch.resume_state, to, to_resume))
        return 0;
    char from_s[48], to_s[48];
    state_text(r->batch.state, r->batch.resume_state, from_s, sizeof from_s);
    state_text(to, to_resume, to_s, sizeof to_s);
    log_error("submit %s: BUG: illegal state transition %s -> %s refused, not journaled%s%s",
              r->s->batch, from_s, to_s, why ? "; the failure was: " : "", why ? why : "");
    engine_failf(r, -1, EXEC_E_INTERNAL, "internal error",
                 "illegal submit state transition %s -> %s", from_s, to_s);
    return -1;
}

/* Journal state failed with the client's error text (when a row exists). */
static int journal_failure(submit_run *r, int resume)
{
    if (r->batch.id > 0 && resume >= 0) {
        if (check_transition(r, BATCH_FAILED, (batch_state)resume,
                             r->error.msg ? r->error.msg : EXEC_NOMEM_MSG) != 0)
            return -1;
        const char *msg = r->error.msg ? r->error.msg : EXEC_NOMEM_MSG;
        char *tok = gahp_escape(msg);
        /* The journal keeps the error exactly as the 9.0 client is given
         * it, and as plain text for everyone else (migration 0019). */
        journal_batch_error je = { tok, msg, exec_err_may_pass(&r->error), r->error.bad_input,
                                   r->error.bad_input_why };
        if (tok != NULL &&
            journal_batch_set_failed(r->ctx->journal, r->batch.id, (batch_state)resume,
                                     &je) == 0) {
            /* what the row now says: a later failure is checked from here */
            engine_row_written(r, BATCH_FAILED, (batch_state)resume, 0, tok);
            tok = NULL;
        }
        free(tok);
    }
    return -1;
}

int engine_fail(submit_run *r, int resume, exec_code code, const char *what,
             const char *detail)
{
    exec_err_set(&r->error, code, what, detail);
    return journal_failure(r, resume);
}

int engine_failf(submit_run *r, int resume, exec_code code, const char *what,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *detail = str_vprintf(fmt, ap);
    va_end(ap);
    if (detail == NULL) {
        exec_err_nomem(&r->error);
        return journal_failure(r, resume);
    }
    int rc = engine_fail(r, resume, code, what, detail);
    free(detail);
    return rc;
}

int engine_fail_input(submit_run *r, int resume, exec_code code, const char *what,
                      const char *detail, const char *path, const char *why)
{
    exec_err_set(&r->error, code, what, detail);
    exec_err_blame(&r->error, path, why);
    return journal_failure(r, resume);
}

int engine_fail_boinc(submit_run *r, int resume, const char *rpc, const boinc_error *err)
{
    exec_err_boinc(&r->error, rpc, err);
    return journal_failure(r, resume);
}

int engine_fail_record_again(submit_run *r, int resume)
{
    return journal_failure(r, resume);
}

int engine_fail_journal(submit_run *r)
{
    return engine_fail(r, -1, EXEC_E_JOURNAL, "journal write failed",
                    journal_errmsg(r->ctx->journal));
}

int engine_fail_nomem(submit_run *r)
{
    return exec_err_nomem(&r->error);
}

int engine_reload(submit_run *r)
{
    int found = 0;
    long long id = r->batch.id;
    char *name = strdup(r->s->batch);
    if (name == NULL)
        return engine_fail_nomem(r);
    journal_batch_free(&r->batch);
    int rc = journal_batch_find(r->ctx->journal, r->req->project_id, name,
                                &r->batch, &found);
    free(name);
    if (rc != 0 || !found) {
        r->batch.id = id;
        return engine_fail_journal(r);
    }
    return 0;
}

void engine_row_written(submit_run *r, batch_state state, batch_state resume,
                        long long server_batch_id, char *error)
{
    journal_batch *b = &r->batch;
    b->state = state;
    /* the journal reads a cleared resume_state as the state itself */
    b->resume_state = state == BATCH_FAILED ? resume : state;
    if (server_batch_id > 0)
        b->server_batch_id = server_batch_id;
    free(b->error);
    b->error = error;
    free(b->error_msg);         /* the run reads the token only */
    b->error_msg = NULL;
    /* A failed row says where to resume, and never "at failed"; past
     * create_batch the server's batch id is known; only a failed row (or
     * a new one whose inputs could not be read) carries an error. */
    assert(state < BATCH_STATE_COUNT && b->resume_state != BATCH_FAILED);
    assert(engine_state(r) < BATCH_CREATED || b->server_batch_id > 0);
    assert(error == NULL || state == BATCH_FAILED || state == BATCH_NEW);
}

int engine_set_state(submit_run *r, batch_state state, long long server_batch_id)
{
    if (check_transition(r, state, BATCH_NEW, NULL) != 0)
        return -1;
    if (journal_batch_set_state(r->ctx->journal, r->batch.id, state, server_batch_id) != 0)
        return engine_fail_journal(r);
    engine_row_written(r, state, state, server_batch_id, NULL);
    return 0;
}

int engine_set_submitted(submit_run *r, const char *const *job_names, size_t n)
{
    if (check_transition(r, BATCH_SUBMITTED, BATCH_NEW, NULL) != 0)
        return -1;
    if (journal_batch_set_submitted(r->ctx->journal, r->batch.id, job_names, n) != 0)
        return engine_fail_journal(r);
    engine_row_written(r, BATCH_SUBMITTED, BATCH_SUBMITTED, 0, NULL);
    return 0;
}

/* ---- the step driver ---------------------------------------------------- */

/* Attempts of a step whose earlier attempt had an unknown outcome. */
#define STEP_ATTEMPTS 3
/* Extra looks before concluding that a lost request had no effect. */
#define SETTLE_LOOKS 2

/* Classify the return code of a sent-once RPC and its error. */
static step_outcome engine_classify(int rc, const boinc_error *err)
{
    if (rc == BOINC_OK)
        return STEP_DONE;
    if (!err->reached)
        return STEP_NOT_SENT;
    /* The server answered with an error: it did not act.  A local file
     * that could not be read mid-upload aborts the request body, so the
     * server cannot have accepted it either. */
    if (rc == BOINC_E_SERVER || rc == BOINC_E_IO)
        return STEP_REFUSED;
    return STEP_UNKNOWN;
}

int engine_settle(submit_run *r, engine_probe_fn probe, void *arg)
{
    for (int look = 0;; look++) {
        int found = probe(r, arg);
        if (found != 0 || look == SETTLE_LOOKS)
            return found;
        pause_ms(1000L * (look + 1));
    }
}

/* Send once and act on the outcome: 0 done, 1 try again, -1 failed. */
static int attempt(submit_run *r, const step_def *d, void *arg, int last)
{
    int announced = d->sent_state != BATCH_NEW ? engine_set_state(r, d->sent_state, 0)
                                               : d->announce(r, arg);
    if (announced != 0)
        return -1;
    testpoint(d->sent_point);
    boinc_error err = { 0 };
    int rc = d->send(r, arg, &err);
    step_outcome o = engine_classify(rc, &err);
    int ret = -1;
    int recovered = 0;
    if (o == STEP_REFUSED && d->recover_refusal != NULL)
        recovered = d->recover_refusal(r, arg, &err);
    if (recovered != 0) {
        ret = recovered > 0 ? 0 : -1;
    } else if (o == STEP_DONE) {
        ret = d->record_done(r, arg);
        if (ret == 0)
            testpoint(d->done_point);
    } else if (o == STEP_NOT_SENT || o == STEP_REFUSED) {
        if (d->unannounce != NULL)
            d->unannounce(r, arg);
        engine_fail_boinc(r, d->resume_refused, d->rpc, &err);
    } else if (last) {
        engine_fail_boinc(r, d->resume_unknown, d->rpc, &err);
    } else {
        log_warn("submit %s: %s outcome unknown (%s); asking the server",
                 r->s->batch, d->rpc, err.msg ? err.msg : boinc_code_name(err.code));
        resolve_result res = d->resolve(r, arg);
        ret = res == RESOLVE_FAILED ? -1 : res == RESOLVE_ACTED ? 0 : 1;
    }
    boinc_error_clear(&err);
    return ret;
}

int engine_step(submit_run *r, const step_def *d, void *arg)
{
    if (d->sent_state != BATCH_NEW && engine_state(r) == d->sent_state) {
        resolve_result res = d->resolve(r, arg);
        if (res != RESOLVE_NOT_ACTED)
            return res == RESOLVE_ACTED ? 0 : -1;
    }
    for (int i = 0; i < STEP_ATTEMPTS; i++) {
        int rc = attempt(r, d, arg, i + 1 == STEP_ATTEMPTS);
        if (rc <= 0)
            return rc;
    }
    return -1;  /* not reached: the last attempt never asks to retry */
}

/* ==== progress lines ====================================================
 *
 * Progress lines of a long submit (engine.h).
 */

/* A real clock: progress is about the time a user waits. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void submit_progress_init(submit_progress *p, const char *batch, const char *phase,
                          size_t files_total, long long bytes_total)
{
    pthread_mutex_init(&p->mu, NULL);
    p->batch = batch;
    p->phase = phase;
    p->files_total = files_total;
    p->bytes_total = bytes_total;
    p->files_done = 0;
    p->bytes_done = 0;
    p->start = p->last = now_s();
    p->files_at_last = 0;
}

void submit_progress_set_total(submit_progress *p, size_t files_total, long long bytes_total)
{
    pthread_mutex_lock(&p->mu);
    p->files_total = files_total;
    p->bytes_total = bytes_total;
    pthread_mutex_unlock(&p->mu);
}

void submit_progress_add(submit_progress *p, size_t files, long long bytes)
{
    pthread_mutex_lock(&p->mu);
    p->files_done += files;
    p->bytes_done += bytes;
    double t = now_s();
    /* The last file of a phase gets no line of its own here: the phase's
     * summary line (or the submit's result) says it ended. */
    int due = p->files_done < p->files_total &&
              (t - p->last >= PROGRESS_INTERVAL_S ||
               p->files_done - p->files_at_last >= PROGRESS_FILES);
    if (due) {
        p->last = t;
        p->files_at_last = p->files_done;
        if (p->bytes_total < 0)     /* not known before the phase (hashing) */
            log_info("submit %s: progress: %s %zu of %zu files, %lld bytes, %.1f s",
                     p->batch, p->phase, p->files_done, p->files_total, p->bytes_done,
                     t - p->start);
        else
            log_info("submit %s: progress: %s %zu of %zu files, %lld of %lld bytes, "
                     "%.1f s", p->batch, p->phase, p->files_done, p->files_total,
                     p->bytes_done, p->bytes_total, t - p->start);
    }
    pthread_mutex_unlock(&p->mu);
}

void submit_progress_destroy(submit_progress *p)
{
    pthread_mutex_destroy(&p->mu);
}
