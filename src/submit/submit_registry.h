/*
 * submit_registry.h - the submits running in this process, so that a
 * re-issued BOINC_SUBMIT of a batch that is still being submitted waits
 * for the running one (the "owner") and shares its outcome instead of
 * starting a second run.  Waits can be bounded: a submit is answered by
 * its deadline (--submit-deadline, doc/commands.md) while the run goes on.
 *
 * Below it, the file claims: which input files of which project a
 * submit's file phase is working on.
 */
#ifndef BOINC_GAHP_SUBMIT_REGISTRY_H
#define BOINC_GAHP_SUBMIT_REGISTRY_H

#include "exec/exec.h"

#include <time.h>
#include <stddef.h>

typedef struct active_submit active_submit;
/* One server's running submits (exec_shared.submits: one per server, so
 * two servers in a process, or unit tests, never see each other's). */
typedef struct submit_registry submit_registry;

/* An empty registry; NULL when out of memory. */
submit_registry *submit_registry_new(void);
/* Free it (no submit may still be registered). */
void submit_registry_free(submit_registry *reg);

/* What submit_registry_enter() / submit_registry_wait() found. */
typedef enum {
    SUBMIT_OWNER,           /* the caller runs the submit; *owner is set */
    SUBMIT_ATTACHED,        /* another run finished; *result is its outcome
                               (code EXEC_OK: the batch was submitted) */
    SUBMIT_OWNER_NO_RESULT, /* another run finished without a result (it ran
                               out of memory forming one): the caller must
                               look at the journal, never assume success */
    SUBMIT_STILL_RUNNING,   /* the run had not finished at `until` */
    SUBMIT_NOMEM
} submit_entry;

/*
 * Register the caller as the owner of (project, name), or wait until the
 * running owner leaves (or `until` passes; NULL = no limit) and copy its
 * outcome into *result (the caller clears it).
 */
submit_entry submit_registry_enter(submit_registry *reg, long long project_id,
                                   const char *name, const struct timespec *until,
                                   active_submit **owner, exec_err *result);

/* One more reference to the entry (for a submit_registry_wait() to come,
 * which drops it), taken before the owner's run moves to another thread. */
void submit_registry_ref(active_submit *a);

/* Wait (until `until`, NULL = no limit) for a's run to leave; drops the
 * reference submit_registry_ref() took.  SUBMIT_ATTACHED with *result,
 * SUBMIT_OWNER_NO_RESULT, SUBMIT_STILL_RUNNING or SUBMIT_NOMEM. */
submit_entry submit_registry_wait(active_submit *a, const struct timespec *until,
                                  exec_err *result);

/* The owner is done; its outcome (NULL: none) is copied for waiters. */
void submit_registry_leave(active_submit *owner, const exec_err *result);

/* ==== file claims =======================================================
 *
 * Which input files of which project a submit's file
 * phase is working on.
 *
 * Two submits that both find a new input absent would both upload it, and
 * a real server fails the second upload.  So a file phase first claims
 * the physical names of its batch's files for its project, and waits only
 * while another running file phase holds one of THEM.  The registry's lock
 * is held for the bookkeeping alone, never across a request: a slow project
 * never delays another project's submit, and two batches of one project
 * with no new input in common upload in parallel.
 *
 * A claim is all or nothing (the names are taken at once, when none is
 * held by another claim), so two phases never wait for each other.  A
 * waiting phase is woken whenever a claim is released.
 *
 *   file_claims_acquire(fc, project_id, names, n)  wait, then hold every name
 *   file_claims_release(claim)                 let the waiting go on
 */

typedef struct file_claim file_claim;
/* One server's registry of claims (exec_shared.claims). */
typedef struct file_claims file_claims;

/* An empty registry; NULL when out of memory. */
file_claims *file_claims_new(void);
/* Free it (no claim may be held). */
void file_claims_free(file_claims *fc);

/* Block until no other claim of project_id holds any of names[0..n), then
 * claim them all.  NULL only when memory ran out (nothing is held). */
file_claim *file_claims_acquire(file_claims *fc, long long project_id,
                                const char *const *names, size_t n);

/* Release a claim (NULL is a no-op). */
void file_claims_release(file_claim *claim);

#endif
