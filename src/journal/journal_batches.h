/*
 * journal_batches.h - the journal's batches and jobs: a submit's batch
 * row and its progress (batch_state.h), the jobs it created, the statuses
 * status queries saw, aborted jobs, retired and leased batches, and in
 * which server batch (of which app) a job was submitted.  The SQL is
 * journal_batches.c.
 *
 * Every progress change of a submit is its own committed transaction,
 * written BEFORE the server call it announces (a "*_sent" state) and
 * after the reply it records, so that a crash at any instant leaves a
 * state that says exactly what is known and what must be asked of the
 * server (doc/recovery.md).  Only rows that BOINC_SUBMIT created are
 * touched by the query and management commands: a batch is known when
 * batches has a row with that project_id and name.  Every function
 * returns 0, or -1 after logging the SQLite error (a write is rolled back).
 */
#ifndef BOINC_GAHP_JOURNAL_BATCHES_H
#define BOINC_GAHP_JOURNAL_BATCHES_H

#include <stddef.h>

#include "journal/journal.h"
#include "journal/batch_state.h"

/* ---- a submit's batch ---------------------------------------------------- */

typedef struct {
    long long id;               /* batches.id */
    long long project_id;
    char *name;
    char *app;
    long long server_batch_id;  /* 0 = not known to be created */
    batch_state state;
    batch_state resume_state;   /* state = BATCH_FAILED: where to resume */
    char *error;                /* NULL unless state = BATCH_FAILED: the 9.0
                                   client's escaped result token */
    char *error_msg;            /* the same as plain text (migration 0019;
                                   NULL on rows journaled before it) */
    char *spec_md5;
    long njobs;
    long long request_id;       /* owning request row, 0 = none */
    char *job_set_md5;          /* submit_identity fingerprint, NULL = not yet known */
} journal_batch;

void journal_batch_free(journal_batch *b);

/* *found = 0 when no batch of that name exists for the project. */
int journal_batch_find(journal *j, long long project_id, const char *name,
                       journal_batch *out, int *found);

int journal_batch_create(journal *j, long long project_id, const char *name,
                         const char *app, long njobs, const char *spec_md5,
                         long long request_id, long long *batch_row);

/* Set the state (clears resume_state/error); server_batch_id > 0 also
 * sets it. */
int journal_batch_set_state(journal *j, long long batch_row, batch_state state,
                            long long server_batch_id);
/* A failed submit attempt as the journal keeps it: error, the 9.0
 * client's result token (escaped, exactly as given), and error_msg, the
 * same message as plain text (migration 0019); may_pass: the failure was
 * the project not answering (batches.may_pass); bad_input and
 * bad_input_why: the one input it was refused for, and why (NULL: none;
 * batches.bad_input, migration 0018). */
typedef struct {
    const char *error;
    const char *error_msg;
    int may_pass;
    const char *bad_input;
    const char *bad_input_why;
} journal_batch_error;

/* state = BATCH_FAILED, to be resumed at resume_state, with *e. */
int journal_batch_set_failed(journal *j, long long batch_row,
                             batch_state resume_state, const journal_batch_error *e);
int journal_batch_set_owner(journal *j, long long batch_row, long long request_id);
/* Record the batch's job-set fingerprint (batches.job_set_md5). */
int journal_batch_set_job_set(journal *j, long long batch_row, const char *job_set_md5);

/* Server batch ids the journal already attributes to some batch row of the
 * project (so crash recovery never adopts another submit's batch). */
int journal_server_batch_known(journal *j, long long project_id,
                               long long server_batch_id, int *known);

/*
 * Record the created jobs and state submitted in one transaction.  Jobs
 * already recorded by journal_jobs_record_early are kept (n may then be 0).
 */
int journal_batch_set_submitted(journal *j, long long batch_row,
                                const char *const *job_names, size_t n);

/*
 * The job rows of a batch whose submit_batch is in flight, written while the
 * server works on it (submit_batch_steps.c) so that its reply finds them
 * journaled.  Until the batch is submitted they are invisible to the
 * commands (a status query, a fetch, an abort see a batch's jobs only once
 * it is submitted); journal_jobs_forget_unsubmitted removes them when the
 * request failed.  One transaction; 0 or -1.
 */
int journal_jobs_record_early(journal *j, long long batch_row,
                              const char *const *job_names, size_t n);
/* Delete the job rows of a batch that is not submitted (a no-op once it is). */
int journal_jobs_forget_unsubmitted(journal *j, long long batch_row);

/* ---- job statuses, aborts, retire and lease ------------------------------ */

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
    long long njobs;            /* 1: it has job rows (0: unknown batch or not submitted) */
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

/* The job (project_id, name) was named by BOINC_ABORT_JOBS: no status
 * query reports it again (HTCondor applies a status to whichever job has
 * that cluster.proc, so a released job would take the aborted copy's
 * ERROR).  No such job is not an error. */
int journal_jobs_mark_aborted(journal *j, long long project_id, const char *job);

/* The client took batch (project_id, name) as submitted in this session:
 * it got the submit's success, or a query group of the batch's jobs.  An
 * earlier run's submit of the batch that is still unanswered is then
 * answered (requests.confirmed_in = session_id): the client knows its
 * outcome without re-issuing it (doc/recovery.md). */
int journal_batch_set_client_session(journal *j, long long project_id, const char *batch,
                                     long long session_id);

/* A submit of the new batch batch_row failed before its inputs were
 * hashed (missing or unreadable input): keep error (the client's error
 * token) on the row, which stays at state new; audit_batches shows it as
 * failed at step 'new'.  Only while the row is at state new.  bad_input
 * and bad_input_why: the input it was, and why (NULL: none;
 * batches.bad_input). */
int journal_batch_note_error(journal *j, long long batch_row, const journal_batch_error *e);

/* batches.retired = 1 for the batch (project_id, name).  *found (may be
 * NULL) is 1 if the journal knows the batch, else 0. */
int journal_batch_mark_retired(journal *j, long long project_id,
                               const char *batch, double now, int *found);

/* batches.lease = lease for the batch (project_id, name); *found as above. */
int journal_batch_set_lease(journal *j, long long project_id,
                            const char *batch, double lease, double now,
                            int *found);

/* The server batch id of the journaled job (project_id, job) that a
 * BOINC_SUBMIT created; *found = 0 when the journal has no such job. */
int journal_job_server_batch(journal *j, long long project_id, const char *job,
                             long long *server_batch_id, int *found);

/* The app of that same batch (BOINC_FETCH_OUTPUT's template cache key):
 * *app malloc'd and *found = 1, or *found = 0 for a job this journal does
 * not know.  0, or -1 on a journal error or out of memory (*app NULL). */
int journal_job_app(journal *j, long long project_id, const char *job,
                    char **app, int *found);

#endif
