/*
 * journal_blah.h - the journal of the BLAH dialect (HTCondor 10.0-25.x,
 * grid_resource = batch boinc): tables blah_groups and blah_jobs
 * (migrations/0015_blah.sql; doc/journal.md).
 *
 *   journal_blah_join         a BLAH_JOB_SUBMIT: the job's live row, or a
 *                             new row in a group (a new group if asked)
 *   journal_blah_group_jobs   the jobs a closing group submits
 *   journal_blah_group_close  the group's internal submit request, or empty
 *   journal_blah_job_get      one job with its group, batch and status
 *   journal_blah_cancel       BLAH_JOB_CANCEL: cancelled, abort pending
 *   journal_blah_aborts       jobs whose abort is still to be sent
 *   journal_blah_abort_done
 *   journal_blah_fetched      outputs delivered into Iwd, with the result
 *                             (it and the cancel release the job's output
 *                             claims, journal_claims.h)
 *   journal_blah_live_batches batches with jobs HTCondor still waits for
 *   journal_blah_work_projects projects the BLAH scheduler has work for
 *   journal_blah_retry_groups groups to submit again after an outage
 *   journal_blah_done_unfetched ended jobs whose end is not delivered
 *   journal_blah_open_groups  groups no leader closed (start-up)
 *   journal_blah_hold         one job held alone (an input missing at close)
 *   journal_blah_split_groups groups refused for one job's input
 *   journal_blah_split        its jobs held, the rest a new closed group
 *   journal_blah_prune        retention (journal_prune.c)
 *   journal_blah_job_state    a job's state (journal/blah_job_state.h)
 *
 * Every write that moves a job (close, hold, split, cancel, fetch
 * started, fetched, abort done) reads the job's state in its transaction
 * and refuses an event blah_job_next does not allow: -1, nothing written,
 * journal_errmsg "BLAH job state: illegal transition of job J: S --E-->
 * refused, not journaled".  An allowed event that changes nothing (a
 * repeated cancel, a hold of a job cancelled first) writes nothing: 0.
 */
#ifndef BOINC_GAHP_JOURNAL_BLAH_H
#define BOINC_GAHP_JOURNAL_BLAH_H

#include "journal/journal.h"
#include "journal/journal_claims.h"
#include "journal/blah_job_state.h"

typedef struct {
    long long project_id;
    const char *job_dir;
    const char *app;
    double memory_mb;
    long long group_id;         /* the open group to join, or 0: a new one */
    const char *new_batch;      /* the new group's batch name (group_id 0) */
    const char *spec;           /* the job's BOINC_SUBMIT fields after its name */
    const char *fetch_args;     /* BOINC_FETCH_OUTPUT fields after the job */
    const char *const *claims;  /* the absolute, normalised paths it writes */
    size_t nclaims;
    double now;
} journal_blah_join_in;

typedef struct {
    char *gahp_id;              /* the job's id (malloc'd) */
    int existing;               /* 1: a live job of this JobDirectory */
    long long group_id;         /* the group it joined (0 when existing) */
    journal_claim_conflict conflict;  /* .job set: refused, another live job
                                         writes .path; nothing recorded */
} journal_blah_join_out;

/* The live (not cancelled) job of a JobDirectory: 1 with *gahp_id
 * (malloc'd), 0 when there is none, -1 on error. */
int journal_blah_live_job(journal *j, long long project_id, const char *job_dir,
                          char **gahp_id);

/* One write transaction.  0 (accepted, existing, or refused by a
 * conflict: out->conflict.job set, free it) or -1. */
int journal_blah_join(journal *j, const journal_blah_join_in *in, journal_blah_join_out *out);

/* The uncancelled jobs of a group, in joining order: fn(gahp_id, spec). */
typedef int (*journal_blah_job_fn)(const char *gahp_id, const char *spec, void *arg);
int journal_blah_group_jobs(journal *j, long long group_id, journal_blah_job_fn fn, void *arg);

/* Close an open group: with njobs > 0, insert its internal request
 * (command, client id = group id, args, project) and record it; with 0,
 * the group is empty.  *request_row = 0 when the group was not open.
 * One write transaction. */
int journal_blah_group_close(journal *j, long long group_id, long long session_id,
                             const char *command, const char *args, long long project_id,
                             size_t njobs, double now, long long *request_row);

typedef struct {
    long long row;
    long long group_id;
    long long project_id;
    char *gahp_id;
    char *batch;                /* the group's batch name */
    char *group_state;          /* open, closed, empty */
    char *fetch_args;
    int cancelled;
    int abort_state;
    int fetched;
    char *fetch_result;         /* the plain reason a failure's end is known no
                                   better; NULL otherwise */
    int has_numbers;            /* exit_code, wall_s, cpu_s were journaled */
    long exit_code;             /* as an instance reported them (0 without) */
    double wall_s, cpu_s;
    int batch_state;            /* batches.state, -1 = no batch row yet */
    char *batch_error_msg;      /* batches.error_msg, plain text: NULL = none */
    char *boinc_status;         /* jobs.status, NULL = not known */
    char *project_url;          /* the job's project (secret: never logged) */
    char *authenticator;
    int batch_may_pass;         /* batches.may_pass: a failure that may pass */
    char *held_reason;          /* held alone (blah_jobs.held_reason), or NULL */
    int batch_bad_input;        /* the batch failed for one input's own problem
                                   (batches.bad_input): the scheduler splits it */
    int fetch_started;          /* its fetch into Iwd was noted */
    int held;                   /* held alone (blah_jobs.held_at) */
} journal_blah_job;

/* The job's state (journal/blah_job_state.h), derived from the columns
 * above: what BLAH_JOB_STATUS answers and what every write is checked
 * from agree. */
blah_job_state journal_blah_job_state(const journal_blah_job *job);

/* 0 with *found, or -1. */
int journal_blah_job_get(journal *j, const char *gahp_id, journal_blah_job *out, int *found);
void journal_blah_job_free(journal_blah_job *job);

int journal_blah_cancel(journal *j, long long row, double now);
/* Jobs cancelled whose abort is not sent, in closed groups of project:
 * fn(row, gahp_id, batch, in_batch) with in_batch 1 when the server
 * batch holds the job (a job cancelled before its group closed is not). */
typedef int (*journal_blah_abort_fn)(long long row, const char *gahp_id, const char *batch,
                                     int in_batch, void *arg);
int journal_blah_aborts(journal *j, long long project_id, journal_blah_abort_fn fn, void *arg);
int journal_blah_abort_done(journal *j, long long row);

/* A job's end as it is delivered: the numbers an instance reported, or
 * (has_numbers 0, a job that failed on the project) the plain reason its
 * end is known no better. */
typedef struct {
    int has_numbers;
    long exit_code;
    double wall_s, cpu_s;       /* elapsed and CPU seconds */
    const char *reason;         /* has_numbers 0 only */
} journal_blah_end;
/* The job's end delivered: blah_jobs.exit_code, wall_s, cpu_s, or
 * fetch_result with the reason (the other left NULL). */
int journal_blah_fetched(journal *j, long long row, const journal_blah_end *end, double now);
/* Before a fetch writes into Iwd: what start-up cleans after a crash. */
int journal_blah_fetch_started(journal *j, long long row, double now);
/* Jobs whose fetch started and never finished: fn(gahp_id, fetch_args);
 * fn must not use j. */
int journal_blah_interrupted_fetches(journal *j, journal_blah_job_fn fn, void *arg);

/* Batch names of submitted groups of project with a job neither fetched
 * nor cancelled: fn(batch, its lease (0 = never set)); fn must not use j. */
typedef int (*journal_blah_name_fn)(const char *name, double lease, void *arg);
int journal_blah_live_batches(journal *j, long long project_id, journal_blah_name_fn fn,
                              void *arg);
/* Submitted, not retired batches whose every job was fetched or cancelled
 * (and aborted), and created ones refused for one input whose every job
 * was held or cancelled (the group was split): fn(batch, 0). */
int journal_blah_done_batches(journal *j, long long project_id, journal_blah_name_fn fn,
                              void *arg);

/* Every project the BLAH scheduler has work for (a submitted batch not
 * retired, or an abort owed): fn(project_id, url, authenticator); fn must
 * not use j (the rows are being read). */
typedef int (*journal_blah_project_fn)(long long project_id, const char *url,
                                       const char *authenticator, void *arg);
int journal_blah_work_projects(journal *j, journal_blah_project_fn fn, void *arg);

/* Jobs of project the server reports ended (DONE, or ERROR: failed = 1),
 * neither fetched nor cancelled: fn(row, gahp_id, fetch_args, failed),
 * called after the read ended (fn may use j).  Stops at fn's first
 * non-zero (-1). */
typedef int (*journal_blah_done_fn)(long long row, const char *gahp_id, const char *fetch_args,
                                    int failed, void *arg);
int journal_blah_done_unfetched(journal *j, long long project_id, journal_blah_done_fn fn,
                                void *arg);

/* Closed groups of project whose submit failed with the project not
 * answering, with a job still wanted: fn(group_id, batch, request_row,
 * request_args), called after the read ended (fn may use j).  Stops at
 * fn's first non-zero, which it returns (-1 for a read error). */
typedef int (*journal_blah_retry_fn)(long long group_id, const char *batch,
                                     long long request_row, const char *args, void *arg);
int journal_blah_retry_groups(journal *j, long long project_id, journal_blah_retry_fn fn,
                              void *arg);

/* A group still open (start-up): its project with the authenticator. */
typedef struct {
    long long id, project_id;
    const char *url, *authenticator, *app, *batch;
    double memory_mb;
} journal_blah_group;
/* fn(group) for every open group; fn must not use j (the rows are being
 * read). */
typedef int (*journal_blah_group_fn)(const journal_blah_group *g, void *arg);
int journal_blah_open_groups(journal *j, journal_blah_group_fn fn, void *arg);

/* Hold one job alone (not cancelled, held or fetched) with reason, and
 * release its output paths: one write transaction.  0 (also when there
 * was no such job to hold) or -1. */
int journal_blah_hold(journal *j, const char *gahp_id, const char *reason, double now);

/* A group whose batch was refused for one input (batches.bad_input), to
 * be split: fn(group) for each of project's, called after the read ended
 * (fn may use j); stops at fn's first non-zero (returned; -1 for a read
 * error). */
typedef struct {
    long long id;
    const char *batch, *app;
    double memory_mb;
    const char *bad_input;      /* the local path the server refused */
    const char *why;            /* why, as the job that gave it is told */
} journal_blah_split_group;
typedef int (*journal_blah_split_fn)(const journal_blah_split_group *g, void *arg);
int journal_blah_split_groups(journal *j, long long project_id, journal_blah_split_fn fn,
                              void *arg);

/* Split a group (one write transaction, only while it is still one to
 * split): the jobs held (gahp ids) are held with reason and their output
 * paths released; the jobs moved go to a new group, closed at once, of
 * batch new_batch, whose internal submit request (command, args, project)
 * is inserted.  *request_row: that request, or 0 when no job moved (or the
 * group was split already: *split 0). */
typedef struct {
    long long group_id, session_id, project_id;
    const char *const *held;
    size_t nheld;
    const char *reason;
    const char *const *moved;
    size_t nmoved;
    const char *new_batch, *command, *args;
    double now;
} journal_blah_split_in;
int journal_blah_split(journal *j, const journal_blah_split_in *in, long long *request_row,
                       int *split);

/* Inside a write transaction: jobs fetched or cancelled before cutoff,
 * then closed groups left without jobs; *deleted counts rows. */
int journal_blah_prune(journal *j, double cutoff, long long *deleted);

#endif
