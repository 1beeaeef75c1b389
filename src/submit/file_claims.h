/*
 * file_claims.h - which input files of which project a submit's file
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
#ifndef BOINC_GAHP_FILE_CLAIMS_H
#define BOINC_GAHP_FILE_CLAIMS_H

#include <stddef.h>

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
