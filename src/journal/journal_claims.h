/*
 * journal_claims.h - output path claims (migrations/0016_output_claims.sql,
 * issue 40): no two live jobs may write the same output path.
 *
 * A claim names an absolute, normalised path (the caller normalises:
 * files_normal_path) and the job writing it.  A job may not take a path
 * whose claim belongs to another job that is still live, or was released
 * after `since` (the claiming job's submit time: the two were live at the
 * same time).  Jobs that run one after another reuse a path.
 *
 *   BLAH dialect: journal_blah_join takes the job's claims in the
 *     transaction that accepts it (live until journal_blah_fetched or
 *     journal_blah_cancel releases them).
 *   9.0 dialect (BOINC_SUBMIT carries no outputs): journal_claims_fetch,
 *     before a BOINC_FETCH_OUTPUT writes anything; the claim is released
 *     at once (the fetch is the job's last write), and `since` is the
 *     creation of the job's batch.
 */
#ifndef BOINC_GAHP_JOURNAL_CLAIMS_H
#define BOINC_GAHP_JOURNAL_CLAIMS_H

#include <stddef.h>

#include "journal/journal.h"

/* The claim that stood in the way (malloc'd copies; free with
 * journal_claim_conflict_free). */
typedef struct {
    char *job;
    char *path;
} journal_claim_conflict;

void journal_claim_conflict_free(journal_claim_conflict *c);

/* Inside the caller's write transaction: claim paths[0..n) for job
 * (live = 1: released_at NULL; 0: released at now).  0 = claimed; 1 = a
 * conflict (*c filled; the caller rolls back what was claimed); -1. */
int journal_claims_take(journal *j, const char *job, const char *const *paths, size_t n,
                        double since, double now, int live, journal_claim_conflict *c);

/* The 9.0 fetch's claims, in a transaction of its own: `since` is the
 * creation of the job's newest batch row of project (now when the journal
 * has none).  0, 1 (conflict, nothing claimed) or -1. */
int journal_claims_fetch(journal *j, long long project_id, const char *job,
                         const char *const *paths, size_t n, double now,
                         journal_claim_conflict *c);

/* Inside a write transaction: release the live claims of a BLAH job row. */
int journal_claims_release_blah(journal *j, long long blah_row, double now);

/* Inside a write transaction (retention): released claims older than
 * cutoff; *deleted counts them. */
int journal_claims_prune(journal *j, double cutoff, long long *deleted);

#endif
