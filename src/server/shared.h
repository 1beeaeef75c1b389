/*
 * shared.h - making and freeing one server's exec_shared (exec/exec.h):
 * the submit registry, the file claims and the template cache that the
 * executors of this server share.  The worker pool owns one; a unit test
 * that runs executors makes its own.
 */
#ifndef BOINC_GAHP_SHARED_H
#define BOINC_GAHP_SHARED_H

#include "exec/exec.h"

/* A new shared state with nothing running; NULL when out of memory. */
exec_shared *shared_new(void);

/* Free it: nothing may still use it (no executor, no detached run). */
void shared_free(exec_shared *s);

#endif
