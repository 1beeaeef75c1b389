/*
 * journal_jobs.h - the journal's side of the query and management
 * commands (BOINC_QUERY_BATCHES, BOINC_RETIRE_BATCH, BOINC_SET_LEASE):
 * remembering the last job status seen on the server, and which batches
 * were retired or got a lease.
 *
 * Only rows that BOINC_SUBMIT created are touched: a batch is known when
 * batches has a row with that project_id and name; nothing is inserted
 * here.  Every writing function runs its own short write transaction
 * (journal_begin/commit) and returns 0, or -1 after logging the SQLite
 * error (the transaction is rolled back).
 */
#ifndef BOINC_GAHP_JOURNAL_JOBS_H
#define BOINC_GAHP_JOURNAL_JOBS_H

#include "journal/journal.h"

#include <stddef.h>

/* One job line of a status query, as the server sent it. */
typedef struct {
    const char *name;
    const char *status;         /* verbatim: DONE, ERROR, IN_PROGRESS, UNSENT ... */
} journal_job_status;

/* The jobs one query reported for one batch. */
typedef struct {
    const char *batch;          /* batch name */
    size_t njobs;
    const journal_job_status *jobs;
} journal_batch_report;

/*
 * Record the statuses of one query (all its batches) in ONE transaction:
 * jobs.status and jobs.updated_at = now for every existing job row of a
 * known batch whose status differs.  Unknown batches and jobs are skipped.
 * server_time > 0: the reply's server_time, also stored as the batch's
 * status_server_time when the batch has job rows; a reply older than the
 * batch's recorded one (two queries crossing) changes nothing for it.
 * *changed (may be NULL) gets the number of rows updated.
 */
int journal_jobs_record_statuses(journal *j, long long project_id,
                                 const journal_batch_report *reports,
                                 size_t nreports, double server_time,
                                 double now, long long *changed);

/* What the journal knows about a batch for a status query. */
typedef struct {
    long long njobs;            /* job rows (0: unknown batch or not submitted) */
    int has_server_time;        /* status_server_time is set */
    double server_time;         /* last recorded reply's server_time */
    long long client_session;   /* session in which the client took the
                                 * batch as submitted (0: none) */
} journal_batch_poll;

int journal_jobs_poll_state(journal *j, long long project_id, const char *batch,
                            journal_batch_poll *out);

/* Called for every job row of a batch, in insertion order; status NULL =
 * never seen.  The strings live until the callback returns.  A non-zero
 * return stops the walk and is journal_jobs_each's result. */
typedef int (*journal_job_visit_fn)(void *arg, const char *name, const char *status);

/* Visit the job rows of batch (project_id, name) that were not aborted and,
 * when since >= 0, whose status_seq is above since (since < 0: all, in
 * insertion order), with one statement and no copies (a 100,000-job status
 * reply is built straight from the rows).
 * 0 when all were visited (*n = how many), the callback's non-zero value
 * when it stopped the walk, -1 on a journal error. */
int journal_jobs_each(journal *j, long long project_id, const char *batch,
                      long long since, journal_job_visit_fn visit, void *arg, size_t *n);

/* The project's last status change number (0 when none or no such project):
 * the jobs of a later journal_jobs_record_statuses get larger ones. */
int journal_project_status_seq(journal *j, long long project_id, long long *seq);

/* The job (project_id, name) was named by BOINC_ABORT_JOBS: no status
 * query reports it again (HTCondor applies a status to whichever job has
 * that cluster.proc, so a released job would take the aborted copy's
 * ERROR).  No such job is not an error. */
int journal_jobs_mark_aborted(journal *j, long long project_id, const char *job);

/* The client took batch (project_id, name) as submitted in this session:
 * it got the submit's success, or a query group of the batch's jobs. */
int journal_batch_set_client_session(journal *j, long long project_id, const char *batch,
                                     long long session_id);

/* batches.retired = 1 for the batch (project_id, name).  *found (may be
 * NULL) is 1 if the journal knows the batch, else 0. */
int journal_batch_mark_retired(journal *j, long long project_id,
                               const char *batch, double now, int *found);

/* batches.lease = lease for the batch (project_id, name); *found as above. */
int journal_batch_set_lease(journal *j, long long project_id,
                            const char *batch, double lease, double now,
                            int *found);

#endif
