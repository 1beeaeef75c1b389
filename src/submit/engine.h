/*
 * engine.h - the submit engine: what one run of a BOINC_SUBMIT carries
 * between its parts (submit.c drives it; submit_inputs.c,
 * submit_batch_steps.c and submit_files.c each do one concern), the one
 * way they record a failure, the state changes it allows, and the one
 * driver for a side-effecting step.  Also the progress lines of a long
 * phase (submit_progress, at the end).
 *
 * Error convention: a part that fails calls engine_fail*() (which keeps ONE
 * error for the client, a code plus a message, and journals state failed
 * with the state to resume from) and returns -1; 0 is success.
 *
 * The step driver (engine_step) runs a side-effecting step (create_batch,
 * query_files with a batch id, upload_files, submit_batch).  Each step is a
 * table entry (step_def): how to announce it in the journal, its RPC, how
 * to record success, its resolver, and the states to resume from.  The
 * driver does, for every step alike:
 *
 *   resolve a pending announcement left by an earlier attempt or run;
 *   announce (journal "sent") -> send ONCE -> classify the outcome:
 *     done       the reply says it happened: record it;
 *     not sent   the request never left (bad argument, no memory before
 *                sending): nothing happened, fail resumable from before;
 *     refused    the server answered with an error: it did not act
 *                (a step may recover from some refusals itself, e.g.
 *                a server limit it can learn and plan around);
 *     unknown    it may have reached the server and no usable reply came
 *                back (transport error, HTTP error, an unparseable reply,
 *                no memory while buffering or parsing it): ask the step's
 *                safe query (its resolver) before anything is sent again.
 *
 * Settle policy (one place, engine_settle): a reply lost to a timeout may
 * belong to a request the server is still working on, so "no effect" is
 * only concluded after asking again after pauses of 1 s, 2 s (scaled by
 * the test clock, testpoint.h).
 *
 * Transitions: every write of batches.state by the engine (engine_set_state,
 * engine_set_submitted, the failure record of engine_fail*) is checked with
 * engine_transition_ok() against the legal graph below; an illegal one is a
 * bug: it is logged, never written, and the submit fails with an internal
 * error (EXEC_E_INTERNAL).
 */
#ifndef BOINC_GAHP_SUBMIT_ENGINE_H
#define BOINC_GAHP_SUBMIT_ENGINE_H

#include "boinc/boinc.h"
#include "exec/exec.h"
#include "journal/journal_batches.h"

#include <stddef.h>
#include <pthread.h>

/* Bounds of the requests a submit sends.  One struct so that a caller can
 * tune them in one place (submit.c: a stock PHP's limits, or the
 * configured ones; submit_files.c lowers the upload bounds further to the
 * limits learned from the project's replies). */
typedef struct {
    size_t query_chunk_files;       /* names per query_files request */
    size_t upload_chunk_files;      /* files per upload_files request */
    long long upload_chunk_bytes;   /* bytes per upload_files request */
    size_t upload_connections;      /* upload_files requests in flight at once */
} submit_limits;

/* Parameters of create_batch (extensible). */
typedef struct {
    double expire_time;             /* absolute; submit.c sets it finite */
} create_batch_params;

typedef struct {
    exec_ctx *ctx;
    const gahp_request *req;
    const gahp_submit *s;
    boinc_project project;
    journal_batch batch;
    submit_limits limits;
    create_batch_params create;
    size_t ninputs;             /* inputs over all jobs */
    char **input_phys;          /* phys name of each input, job order */
    struct input_hold *hold;    /* new inputs' bytes kept from their hash for
                                 * the upload (submit_inputs.h); NULL: none */
    exec_err error;             /* set once failed */
    struct submit_progress *upload_progress;   /* while uploading: for the log
                                                * (shared by the lanes) */
    int jobs_journaled;         /* the job rows were written while submit_batch
                                 * was in flight (submit_batch_steps.c) */
} submit_run;

/* The state the batch is at: a failed batch resumes at its resume_state. */
batch_state engine_state(const submit_run *r);

/* Record a failure (see the convention above).  resume < 0: the journal
 * row is left as it is (a local failure that changed nothing). */
int engine_fail(submit_run *r, int resume, exec_code code, const char *what,
             const char *detail);
int engine_failf(submit_run *r, int resume, exec_code code, const char *what,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same for a failure that is one input's own (the server will not
 * take it): the batch row also names the input and why (exec_err_blame,
 * batches.bad_input), so that the BLAH dialect can hold its job alone. */
int engine_fail_input(submit_run *r, int resume, exec_code code, const char *what,
                      const char *detail, const char *path, const char *why);
/* A failed RPC: "<rpc> failed: <boinc code>: <message>". */
int engine_fail_boinc(submit_run *r, int resume, const char *rpc, const boinc_error *err);
/* Journal r->error again as the batch's failure (several upload lanes
 * failed at once: the journal keeps the one the client is given). */
int engine_fail_record_again(submit_run *r, int resume);
/* A journal write or read failed. */
int engine_fail_journal(submit_run *r);
int engine_fail_nomem(submit_run *r);

/*
 * The run's batch row (r->batch) is read from the journal once, when the
 * run finds or creates it (engine_reload), and from then on kept in step
 * with every write of its state by engine_row_written, the one function
 * that changes it, which asserts the row's invariants; it is never read
 * back after a change (one owner per batch: submit_registry.h).
 */
int engine_reload(submit_run *r);
/* What a journal write just set: state, where a failed row resumes, the
 * server batch id when > 0, and the error text (owned from here; NULL:
 * none). */
void engine_row_written(submit_run *r, batch_state state, batch_state resume,
                        long long server_batch_id, char *error);
/* Set the state (and server batch id when > 0) in the journal and the row. */
int engine_set_state(submit_run *r, batch_state state, long long server_batch_id);
/* Record the created jobs and state submitted (one transaction). */
int engine_set_submitted(submit_run *r, const char *const *job_names, size_t n);

/* ---- the legal transitions ------------------------------------------------ */
/*
 * May a batch at `from` (from_resume: its resume state when from is
 * FAILED) go to `to` (to_resume: the resume state recorded when to is
 * FAILED)?  A failed batch is at its resume state e (engine_state()), so
 * it takes the same forward steps as a batch at e.  With e the effective
 * state of from:
 *
 *   forward:  NEW -> HASHED (the batch's files journaled; only from NEW
 *               itself: journal_batch_files_add does it, in its SQL)
 *             HASHED -> CREATE_SENT -> CREATED        create_batch
 *             CREATE_SENT -> CREATE_SENT              announced again after
 *                                                     the resolver found none
 *             CREATED -> FILES_KNOWN -> UPLOADED      query_files, upload_files
 *             FILES_KNOWN -> FILES_KNOWN              the file phase resumed
 *             UPLOADED -> SUBMIT_SENT -> SUBMITTED    submit_batch
 *             SUBMIT_SENT -> SUBMIT_SENT              announced again
 *   failure:  e -> FAILED(e) for e in HASHED..SUBMIT_SENT (resume where it
 *               failed: an unknown outcome, a failed resolver or safe query,
 *               a refusal of a step that did not advance the state)
 *             CREATE_SENT -> FAILED(HASHED), SUBMIT_SENT -> FAILED(UPLOADED)
 *               (refused or never sent: redo from before the request)
 *             FILES_KNOWN -> FAILED(CREATED): a resumed file phase asks
 *               again about the files an earlier phase found absent (they
 *               may have been uploaded since: submit_files.c); that
 *               query_files failing is redone from before it
 *
 * A failed batch must have a resume state in HASHED..SUBMIT_SENT (the
 * only ones ever written); nothing leaves SUBMITTED.  Source: the steps'
 * tables (resume_refused, resume_unknown), every engine_fail* call (they
 * resume at engine_state() or at the step's own state), doc/recovery.md;
 * checked against the transitions the e2e submit and crash suites make.
 */
int engine_transition_ok(batch_state from, batch_state from_resume, batch_state to,
                         batch_state to_resume);

/* ---- the step driver ---------------------------------------------------- */

typedef enum {
    STEP_DONE,
    STEP_NOT_SENT,
    STEP_REFUSED,
    STEP_UNKNOWN
} step_outcome;

/* What a resolver found. */
typedef enum {
    RESOLVE_FAILED = -1,    /* r's error is set */
    RESOLVE_NOT_ACTED = 0,  /* the server shows no effect: send (again) */
    RESOLVE_ACTED = 1       /* the effect is there and now recorded */
} resolve_result;

typedef struct step_def {
    const char *rpc;            /* RPC name, for messages */
    const char *sent_point;     /* testpoint after the announcement */
    const char *done_point;     /* testpoint after recording success */
    int resume_refused;         /* state to resume from when refused/not sent */
    int resume_unknown;         /* state to resume from when still unknown */
    /* A step of the whole batch is announced by its batch state (data):
     * the driver sets it before sending, and a run that finds the batch
     * at it resolves the earlier attempt first.  0 for the file steps,
     * which announce each chunk themselves (announce). */
    batch_state sent_state;
    int (*announce)(submit_run *r, void *arg);
    int (*send)(submit_run *r, void *arg, boinc_error *err);
    int (*record_done)(submit_run *r, void *arg);
    /* Undo the announcement after a refusal (NULL: nothing to undo). */
    void (*unannounce)(submit_run *r, void *arg);
    resolve_result (*resolve)(submit_run *r, void *arg);
    /* A refusal the step recovers from itself (NULL: none): 0 when err is
     * an ordinary refusal (the step fails), 1 when it was handled (the
     * driver ends the step as done; arg says what happened), -1 when
     * handling it failed (r's error set). */
    int (*recover_refusal)(submit_run *r, void *arg, const boinc_error *err);
} step_def;

/* Run one step to its end: 0 done (or found done), -1 failed. */
int engine_step(submit_run *r, const step_def *d, void *arg);

/*
 * The settle policy: call probe until it reports "found" (1) or the looks
 * are spent (0); -1 when probe failed.  Between looks, pause 1 s, 2 s ...
 */
typedef int (*engine_probe_fn)(submit_run *r, void *arg);
int engine_settle(submit_run *r, engine_probe_fn probe, void *arg);

/* ==== progress lines ====================================================
 *
 * Progress of a long submit in the log: one info line
 * per phase (hashing, uploading) every few seconds or every few thousand
 * files, never one per file, naming the files and bytes done out of the
 * phase's total and the time since it began.  Shared by the threads of a
 * phase (the hash pool, the upload lanes), so it has its own mutex.
 */

/* A line at least this often while a phase goes on ... */
#define PROGRESS_INTERVAL_S 5.0
/* ... and at every this many files done. */
#define PROGRESS_FILES 5000

typedef struct submit_progress {
    pthread_mutex_t mu;
    const char *batch;          /* the submit's batch name (not copied) */
    const char *phase;          /* "hashed", "uploaded" */
    size_t files_total, files_done;
    long long bytes_total, bytes_done;
    double start, last;         /* monotonic seconds */
    size_t files_at_last;       /* files_done at the last line */
} submit_progress;

/* bytes_total < 0: not known (the lines then give the bytes done alone). */
void submit_progress_init(submit_progress *p, const char *batch, const char *phase,
                          size_t files_total, long long bytes_total);

/* Set the totals (before the phase's threads start). */
void submit_progress_set_total(submit_progress *p, size_t files_total, long long bytes_total);

/* files more files (bytes bytes) done; logs a line when one is due. */
void submit_progress_add(submit_progress *p, size_t files, long long bytes);

void submit_progress_destroy(submit_progress *p);

#endif
