/*
 * blah_job_state.h - the state machine of one BLAH job (HTCondor 10.0-25.x,
 * grid_resource = batch boinc; doc/blah-core.md, "The BLAH job states").
 *
 * A pure module: the states, the events that move a job, the transition
 * table, what each state answers to BLAH_JOB_STATUS, and the derivation of
 * a state from the journal's columns.  journal_blah.c checks every write
 * of a job's state against the table; the matrix test
 * (tests/unit/test_blah_state.c) enumerates it.  Nothing is stored: the
 * state is always derived from the rows, so the values may be renumbered.
 */
#ifndef BOINC_GAHP_BLAH_JOB_STATE_H
#define BOINC_GAHP_BLAH_JOB_STATE_H

typedef enum {
    BJS_NONE = 0,           /* no row yet (before a BLAH_JOB_SUBMIT) */
    BJS_GATHERING,          /* in an open group */
    BJS_CLOSED,             /* group closed, its batch not yet in the journal */
    BJS_SUBMITTING,         /* the submit engine is on its batch */
    BJS_SUBMIT_WAIT,        /* submit failed, may pass: submitted again */
    BJS_SPLITTING,          /* batch refused for one job's input: split */
    BJS_SUBMITTED,          /* on the server, BOINC status unknown or unsent */
    BJS_RUNNING,            /* on the server, IN_PROGRESS */
    BJS_ENDED,              /* server says DONE or ERROR: the fetch is owed */
    BJS_FETCHING,           /* the fetch into Iwd started */
    BJS_COMPLETED,          /* outputs in Iwd (final) */
    BJS_HELD_ALONE,         /* held for its own input; a release helps */
    BJS_HELD_FAILED,        /* failed on the project, its end delivered */
    BJS_HELD_SUBMIT,        /* its batch could not be submitted, for good */
    BJS_CANCELLED_OWED,     /* cancelled, its abort still to send */
    BJS_CANCELLED_SENT,     /* cancelled, abort sent or not needed (final) */
    BJS_COUNT,
    BJS_ILLEGAL = -1        /* blah_job_next: the event is refused */
} blah_job_state;

typedef enum {
    BJE_JOIN = 0,           /* client: BLAH_JOB_SUBMIT */
    BJE_CLOSE,              /* server: the group's window ended */
    BJE_SUBMIT_START,       /* server: the engine made the batch row */
    BJE_SUBMITTED,          /* server: the batch and its jobs are on the server */
    BJE_SUBMIT_TRANSIENT,   /* server: failed, may pass (an outage) */
    BJE_SUBMIT_BAD_INPUT,   /* server: failed for one job's input */
    BJE_SUBMIT_FINAL,       /* server: failed, will not pass */
    BJE_SPLIT_MOVED,        /* server: moved to the split group's new batch */
    BJE_HOLD,               /* server: held for its own input */
    BJE_SERVER_RUNNING,     /* server: the refresh says IN_PROGRESS */
    BJE_SERVER_ENDED,       /* server: the refresh says DONE or ERROR */
    BJE_FETCH_START,        /* server: the fetch into Iwd noted */
    BJE_FETCH_FAILED,       /* server: the fetch failed, tried again */
    BJE_FETCHED,            /* server: the end delivered (DONE) */
    BJE_FETCHED_ERROR,      /* server: the end delivered (ERROR on the project) */
    BJE_CANCEL,             /* client: BLAH_JOB_CANCEL (condor_rm, condor_hold) */
    BJE_ABORT_SENT,         /* server: abort_jobs answered, or none needed */
    BJE_COUNT
} blah_job_event;

/* The state an event leads to; the same state when the event changes
 * nothing (a repeat, or a race the job already left: nothing is written);
 * BJS_ILLEGAL when the event is refused. */
blah_job_state blah_job_next(blah_job_state s, blah_job_event e);

/* 1 when the event is the server's own (the scheduler's timers, submits,
 * refreshes, fetches, aborts), 0 when only the client drives it. */
int blah_job_event_by_server(blah_job_event e);

/* HTCondor's JobStatus a state answers: 1 idle, 2 running, 3 removed,
 * 4 completed, 5 held; 0 for BJS_NONE (an error: unknown job). */
int blah_job_status(blah_job_state s);

/* 1 when the scheduler's next pass over the job's project may change
 * the job's answer (a refresh, a fetch, a submit tried again): HTCondor
 * asking about such a job paces the passes (blah_sched.c). */
int blah_job_awaits_pass(blah_job_state s);

/* 1 for a final state (no event changes it). */
int blah_job_final(blah_job_state s);

/* 1 when a held state's cause may go away with a release (a new submit
 * of the JobDirectory after condor_release). */
int blah_job_release_helps(blah_job_state s);

/* Audit names ("gathering", "cancel", ...); "?" when out of range. */
const char *blah_job_state_name(blah_job_state s);
const char *blah_job_event_name(blah_job_event e);

/* The journal's columns a state is derived from (journal_blah_job_get and
 * the journal's checks read the same ones). */
typedef struct {
    const char *group_state;    /* blah_groups.state: open, closed, empty */
    int batch_state;            /* batches.state, -1 = no batch row */
    int batch_may_pass;
    int batch_bad_input;
    const char *boinc_status;   /* jobs.status, NULL = not known */
    int cancelled, abort_state, held, fetched, fetch_started;
} blah_job_facts;

/* The state, in the order of doc/blah-core.md's "Status from the
 * journal" (cancelled first, then held alone, then fetched, ...). */
blah_job_state blah_job_state_of(const blah_job_facts *f);

#endif
