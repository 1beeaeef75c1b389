/*
 * submit.h - what BOINC_SUBMIT's own module offers its neighbours and
 * tests, in two parts:
 *
 *   identity   what makes two BOINC_SUBMIT requests "the same submit":
 *              the batch name, the app and the SET of jobs (each job's
 *              name, arguments and inputs).  HTCondor's grid manager lists
 *              the jobs of a re-issued submit in another order and takes
 *              the six trailing fields from whichever job comes first, so
 *              neither counts (doc/recovery.md).
 *   deadline   a submit that outlives the wait of the worker answering it
 *              (--submit-deadline) goes on as a task of its own.
 *
 * The command itself (exec_submit) is declared in exec/exec.h.
 */
#ifndef BOINC_GAHP_SUBMIT_H
#define BOINC_GAHP_SUBMIT_H

#include "wire/request.h"
#include "journal/journal_batches.h"
#include "exec/exec.h"
#include <stddef.h>
#include <time.h>

/* Length of the hex fingerprint plus its NUL. */
#define SUBMIT_IDENTITY_LEN 33

/* Fingerprint of s (hex MD5) into out.  0, or -1 on ENOMEM. */
int submit_identity_of(const gahp_submit *s, char out[SUBMIT_IDENTITY_LEN]);

/*
 * Rebuild a BOINC_SUBMIT request from its journaled argument text (the
 * escaped arguments after the request id, as in requests.args).  NULL when
 * the text does not parse or memory ran out.  The caller frees it with
 * gahp_request_free.
 */
gahp_request *submit_identity_parse_args(const char *args_text);

/* Fingerprint of the submit whose journaled argument text is args_text.
 * 0, or -1 when it does not parse or memory ran out. */
int submit_identity_of_args(const char *args_text, char out[SUBMIT_IDENTITY_LEN]);

/*
 * Is the submit s (fingerprint fp, exact-text digest spec_md5) the one the
 * journal recorded in batch b?  Compares job-set fingerprints; a batch
 * journaled before they existed gets its fingerprint computed from its
 * request's arguments and stored (b->job_set_md5 updated); when that
 * request is gone, the exact text digest decides, as before.  *same = 1
 * or 0.  Returns 0, or -1 on a journal error or ENOMEM.
 */
int submit_identity_same(journal *j, journal_batch *b, const char *fp,
                         const char *spec_md5, int *same);

/* ==== the deadline: a submit that outlives its wait =====================
 *
 * Letting a BOINC_SUBMIT outlive the wait of the
 * worker that answers it.  HTCondor gives up on a submit after 300 s
 * (GRIDMANAGER_GAHP_CALL_TIMEOUT) and holds its jobs; a submit still
 * running at --submit-deadline is answered with an error result in time,
 * while it goes on in a thread of its own, with its own BOINC client and
 * journal connection, so that a re-issue binds to it (doc/commands.md).
 */

typedef void (*submit_detached_fn)(exec_ctx *ctx, const gahp_request *req, void *arg);

/*
 * Run fn(own context, req, arg) as a detached task (base/tasks.h).  The context (a
 * new BOINC client and journal connection, the same config and session)
 * is freed and the thread's reference to req released when fn returns;
 * arg is fn's to free.
 * 0, or -1 (nothing started, nothing to free but arg).
 */
int submit_deadline_detach(const exec_ctx *ctx, const gahp_request *req,
                        submit_detached_fn fn, void *arg);

/* The CLOCK_REALTIME instant `seconds` from now (pthread_cond_timedwait). */
void submit_deadline_at(long seconds, struct timespec *at);

#endif
