/*
 * submit_deadline.h - letting a BOINC_SUBMIT outlive the wait of the
 * worker that answers it.  HTCondor gives up on a submit after 300 s
 * (GRIDMANAGER_GAHP_CALL_TIMEOUT) and holds its jobs; a submit still
 * running at --submit-deadline is answered with an error result in time,
 * while it goes on in a thread of its own, with its own BOINC client and
 * journal connection, so that a re-issue binds to it (doc/commands.md).
 */
#ifndef BOINC_GAHP_SUBMIT_DEADLINE_H
#define BOINC_GAHP_SUBMIT_DEADLINE_H

#include "exec/exec.h"

#include <stddef.h>
#include <time.h>

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
