/*
 * submit_driver.h - the one driver for a side-effecting submit step
 * (create_batch, query_files with a batch id, upload_files, submit_batch).
 *
 * Each step is a table entry (step_def): how to announce it in the
 * journal, its RPC, how to record success, its resolver, and the states
 * to resume from.  The driver does, for every step alike:
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
 * Settle policy (one place, settle_probe): a reply lost to a timeout may
 * belong to a request the server is still working on, so "no effect" is
 * only concluded after asking again after pauses of 1 s, 2 s (scaled by
 * the test clock, testpoint.h).
 */
#ifndef BOINC_GAHP_SUBMIT_DRIVER_H
#define BOINC_GAHP_SUBMIT_DRIVER_H

#include "submit/submit_run.h"

typedef enum {
    STEP_DONE,
    STEP_NOT_SENT,
    STEP_REFUSED,
    STEP_UNKNOWN
} step_outcome;

/* Classify the return code of a sent-once RPC and its error. */
step_outcome step_classify(int rc, const boinc_error *err);

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
    /* Is an earlier announcement unresolved? */
    int (*pending)(submit_run *r, void *arg);
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
int step_run(submit_run *r, const step_def *d, void *arg);

/*
 * The settle policy: call probe until it reports "found" (1) or the looks
 * are spent (0); -1 when probe failed.  Between looks, pause 1 s, 2 s ...
 */
typedef int (*settle_probe_fn)(submit_run *r, void *arg);
int settle_probe(submit_run *r, settle_probe_fn probe, void *arg);

#endif
