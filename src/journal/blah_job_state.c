/*
 * blah_job_state.c - the BLAH job state machine (see blah_job_state.h and
 * doc/blah-core.md, "The BLAH job states"): the transition table, the
 * JobStatus of each state, and the derivation from the journal's columns.
 */
#include "journal/blah_job_state.h"

#include <stddef.h>
#include <string.h>

/* Every legal (state, event) pair with the state it leads to; any pair not
 * listed is illegal.  A pair whose state does not change is a repeat or a
 * race the job already left (a hold or a close of a job cancelled first):
 * accepted, nothing written. */
static const struct {
    blah_job_state from;
    blah_job_event event;
    blah_job_state to;
} table[] = {
    { BJS_NONE, BJE_JOIN, BJS_GATHERING },
    { BJS_GATHERING, BJE_CLOSE, BJS_CLOSED },
    { BJS_GATHERING, BJE_HOLD, BJS_HELD_ALONE },
    { BJS_CLOSED, BJE_SUBMIT_START, BJS_SUBMITTING },
    /* a submit that stopped before its batch row (journal, memory) */
    { BJS_CLOSED, BJE_SUBMIT_TRANSIENT, BJS_SUBMIT_WAIT },
    { BJS_CLOSED, BJE_HOLD, BJS_HELD_ALONE },
    { BJS_SUBMITTING, BJE_SUBMITTED, BJS_SUBMITTED },
    { BJS_SUBMITTING, BJE_SUBMIT_TRANSIENT, BJS_SUBMIT_WAIT },
    { BJS_SUBMITTING, BJE_SUBMIT_BAD_INPUT, BJS_SPLITTING },
    { BJS_SUBMITTING, BJE_SUBMIT_FINAL, BJS_HELD_SUBMIT },
    { BJS_SUBMIT_WAIT, BJE_SUBMIT_START, BJS_SUBMITTING },
    { BJS_SPLITTING, BJE_SPLIT_MOVED, BJS_CLOSED },
    { BJS_SPLITTING, BJE_HOLD, BJS_HELD_ALONE },
    { BJS_SUBMITTED, BJE_SERVER_RUNNING, BJS_RUNNING },
    { BJS_SUBMITTED, BJE_SERVER_ENDED, BJS_ENDED },
    { BJS_RUNNING, BJE_SERVER_ENDED, BJS_ENDED },
    { BJS_ENDED, BJE_FETCH_START, BJS_FETCHING },
    /* a fetch tried again at the next pass notes its start again */
    { BJS_FETCHING, BJE_FETCH_START, BJS_FETCHING },
    { BJS_FETCHING, BJE_FETCH_FAILED, BJS_FETCHING },
    { BJS_FETCHING, BJE_FETCHED, BJS_COMPLETED },
    { BJS_FETCHING, BJE_FETCHED_ERROR, BJS_HELD_FAILED },
    { BJS_HELD_ALONE, BJE_HOLD, BJS_HELD_ALONE },
    { BJS_HELD_ALONE, BJE_CLOSE, BJS_HELD_ALONE },     /* closes without it */
    /* the end was delivered: a late cancel changes nothing */
    { BJS_COMPLETED, BJE_CANCEL, BJS_COMPLETED },
    /* cancel wins a race with the scheduler's close, hold or split */
    { BJS_CANCELLED_OWED, BJE_CLOSE, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_HOLD, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_SPLIT_MOVED, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_CANCEL, BJS_CANCELLED_OWED },
    /* a fetch already running when the cancel came ends as a no-op: its
     * files are in Iwd, the job stays cancelled (a new fetch is refused) */
    { BJS_CANCELLED_OWED, BJE_FETCH_FAILED, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_FETCHED, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_FETCHED_ERROR, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_ABORT_SENT, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_CLOSE, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_HOLD, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_SPLIT_MOVED, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_CANCEL, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_FETCH_FAILED, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_FETCHED, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_FETCHED_ERROR, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_ABORT_SENT, BJS_CANCELLED_SENT },
};

/* A cancel ends every live or held job (condor_rm, condor_hold; a release
 * of a held job is a cancel, then a new submit of its JobDirectory). */
static int cancellable(blah_job_state s)
{
    return s >= BJS_GATHERING && s <= BJS_FETCHING ? 1
         : s == BJS_HELD_ALONE || s == BJS_HELD_FAILED || s == BJS_HELD_SUBMIT;
}

blah_job_state blah_job_next(blah_job_state s, blah_job_event e)
{
    if ((unsigned)s >= BJS_COUNT || (unsigned)e >= BJE_COUNT)
        return BJS_ILLEGAL;
    if (e == BJE_CANCEL && cancellable(s))
        return BJS_CANCELLED_OWED;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].from == s && table[i].event == e)
            return table[i].to;
    return BJS_ILLEGAL;
}

int blah_job_event_by_server(blah_job_event e)
{
    return (unsigned)e < BJE_COUNT && e != BJE_JOIN && e != BJE_CANCEL;
}

int blah_job_status(blah_job_state s)
{
    static const int status[BJS_COUNT] = {
        [BJS_NONE] = 0, [BJS_GATHERING] = 1, [BJS_CLOSED] = 1, [BJS_SUBMITTING] = 1,
        [BJS_SUBMIT_WAIT] = 1, [BJS_SPLITTING] = 1, [BJS_SUBMITTED] = 1,
        /* DONE but not yet in Iwd: it ran, so it is not idle */
        [BJS_RUNNING] = 2, [BJS_ENDED] = 2, [BJS_FETCHING] = 2,
        [BJS_COMPLETED] = 4, [BJS_HELD_ALONE] = 5, [BJS_HELD_FAILED] = 5,
        [BJS_HELD_SUBMIT] = 5, [BJS_CANCELLED_OWED] = 3, [BJS_CANCELLED_SENT] = 3,
    };
    return (unsigned)s < BJS_COUNT ? status[s] : 0;
}

int blah_job_awaits_pass(blah_job_state s)
{
    switch (s) {
    case BJS_SUBMIT_WAIT: case BJS_SPLITTING:       /* pass step 0 */
    case BJS_SUBMITTED: case BJS_RUNNING:           /* the refresh */
    case BJS_ENDED: case BJS_FETCHING:              /* the fetch, tried again */
        return 1;
    default:
        return 0;
    }
}

int blah_job_final(blah_job_state s)
{
    return s == BJS_COMPLETED || s == BJS_CANCELLED_SENT;
}

int blah_job_release_helps(blah_job_state s)
{
    /* a fixed input, or a job run again; a batch the server refused for a
     * reason not the job's own is refused again */
    return s == BJS_HELD_ALONE || s == BJS_HELD_FAILED;
}

const char *blah_job_state_name(blah_job_state s)
{
    static const char *const names[BJS_COUNT] = {
        "none", "gathering", "closed", "submitting", "submit_wait", "splitting",
        "submitted", "running", "ended", "fetching", "completed", "held_alone",
        "held_failed", "held_submit", "cancelled_abort_owed", "cancelled_abort_sent",
    };
    return (unsigned)s < BJS_COUNT ? names[s] : "?";
}

const char *blah_job_event_name(blah_job_event e)
{
    static const char *const names[BJE_COUNT] = {
        "join", "close", "submit_start", "submitted", "submit_transient",
        "submit_bad_input", "submit_final", "split_moved", "hold", "server_running",
        "server_ended", "fetch_start", "fetch_failed", "fetched", "fetched_error",
        "cancel", "abort_sent",
    };
    return (unsigned)e < BJE_COUNT ? names[e] : "?";
}

static int is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

/* A job whose group's batch is submitted (batches.state 7). */
static blah_job_state on_server(const blah_job_facts *f)
{
    if (is(f->boinc_status, "DONE") || is(f->boinc_status, "ERROR"))
        return f->fetch_started ? BJS_FETCHING : BJS_ENDED;
    return is(f->boinc_status, "IN_PROGRESS") ? BJS_RUNNING : BJS_SUBMITTED;
}

blah_job_state blah_job_state_of(const blah_job_facts *f)
{
    if (f->cancelled)
        return f->abort_state == 1 ? BJS_CANCELLED_OWED : BJS_CANCELLED_SENT;
    if (f->held)
        return BJS_HELD_ALONE;
    if (f->fetched)
        return is(f->boinc_status, "ERROR") ? BJS_HELD_FAILED : BJS_COMPLETED;
    if (is(f->group_state, "open"))
        return BJS_GATHERING;
    /* an empty group holds only cancelled or held jobs; a live job in one
     * would be a bug, and answers idle like a closed group's */
    if (f->batch_state < 0)
        return BJS_CLOSED;
    if (f->batch_state == 8)
        return f->batch_may_pass ? BJS_SUBMIT_WAIT
             : f->batch_bad_input ? BJS_SPLITTING : BJS_HELD_SUBMIT;
    if (f->batch_state == 0 && f->batch_bad_input)
        return BJS_SPLITTING;       /* an input that could not even be hashed */
    return f->batch_state == 7 ? on_server(f) : BJS_SUBMITTING;
}
