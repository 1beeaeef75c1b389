/*
 * batch_state.h - the states of a BOINC_SUBMIT, in the order a submit
 * goes through them.  The journal stores the number (batches.state, and
 * batches.resume_state for a failed submit: the state to resume from), so
 * the values are part of the journal format: never renumber, only append
 * (migrations/0003_submit_states.sql maps the old step names).
 *
 * A *_SENT state says "the request was announced and maybe sent, its
 * outcome is not recorded": it is resolved by asking the server with a
 * request that is safe to repeat before anything is sent again.
 */
#ifndef BOINC_GAHP_BATCH_STATE_H
#define BOINC_GAHP_BATCH_STATE_H

typedef enum {
    BATCH_NEW = 0,          /* row created, inputs not yet hashed */
    BATCH_HASHED = 1,       /* input files recorded (batch_files) */
    BATCH_CREATE_SENT = 2,  /* create_batch announced */
    BATCH_CREATED = 3,      /* server batch id known */
    BATCH_FILES_KNOWN = 4,  /* every input queried: present or absent */
    BATCH_UPLOADED = 5,     /* every absent input uploaded */
    BATCH_SUBMIT_SENT = 6,  /* submit_batch announced */
    BATCH_SUBMITTED = 7,    /* jobs created (final) */
    BATCH_FAILED = 8,       /* last attempt failed; resume_state says where
                               a re-issue resumes */
    BATCH_STATE_COUNT
} batch_state;

/* The audit name of a state ("create_sent", ...); "?" when out of range. */
const char *batch_state_name(batch_state s);

#endif
