/*
 * submit_registry.h - the submits running in this process, so that a
 * re-issued BOINC_SUBMIT of a batch that is still being submitted waits
 * for the running one (the "owner") and shares its outcome instead of
 * starting a second run.
 */
#ifndef BOINC_GAHP_SUBMIT_REGISTRY_H
#define BOINC_GAHP_SUBMIT_REGISTRY_H

typedef struct active_submit active_submit;

/* What submit_registry_enter() found. */
typedef enum {
    SUBMIT_OWNER,           /* the caller runs the submit; *owner is set */
    SUBMIT_ATTACHED,        /* another run finished; *result is its result */
    SUBMIT_OWNER_NO_RESULT, /* another run finished without a result (it ran
                               out of memory forming one): the caller must
                               look at the journal, never assume success */
    SUBMIT_NOMEM
} submit_entry;

/*
 * Register the caller as the owner of (project, name), or wait until the
 * running owner leaves and copy its result into *result (malloc'd).
 */
submit_entry submit_registry_enter(long long project_id, const char *name,
                                   active_submit **owner, char **result);

/* The owner is done; result (may be NULL: none) is copied for waiters. */
void submit_registry_leave(active_submit *owner, const char *result);

#endif
