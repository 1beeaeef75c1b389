/*
 * batch_state.c - names of the submit states (for logs; the audit view
 * in migrations/0003_submit_states.sql spells the same names).
 */
#include "journal/batch_state.h"

const char *batch_state_name(batch_state s)
{
    static const char *const names[BATCH_STATE_COUNT] = {
        "new", "hashed", "create_sent", "created", "files_known",
        "uploaded", "submit_sent", "submitted", "failed",
    };
    return (unsigned)s < BATCH_STATE_COUNT ? names[s] : "?";
}
