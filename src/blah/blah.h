/*
 * blah.h - the BLAH dialect of the GAHP protocol, which HTCondor 10.0-25.x
 * speak to the GAHP of grid_resource = batch boinc (doc/htcondor.md,
 * doc/commands.md "BLAH commands").  One HTCondor job is one BOINC job;
 * jobs that arrive close together for one project and app gather in a
 * group that becomes one BOINC batch through the ordinary submit engine.
 *
 * Files:
 *   blah.c         the server's BLAH state, BLAH_JOB_SUBMIT and its groups
 *                  (joining, the group's leader closing and submitting it),
 *                  start-up for groups an earlier run left open
 *   blah_status.c  BLAH_JOB_STATUS (answered from the journal, refreshed
 *                  from the server once per interval per project; outputs
 *                  fetched into Iwd before "completed"), BLAH_JOB_CANCEL,
 *                  BLAH_PING
 *   blah_internal.h what the two share
 *
 * The executors themselves are declared in exec/exec_cmds.h with the
 * other commands'.
 */
#ifndef BOINC_GAHP_BLAH_H
#define BOINC_GAHP_BLAH_H

#include "exec/exec.h"

/* Result tails of errors (after "<id> "), escaped; NULL on ENOMEM:
 * "1 <msg>" (cancel, ping), "1 <msg> NULL" (submit), "1 <msg> 0 NULL"
 * (status). */
char *blah_fail(const char *msg);
char *blah_submit_fail(const char *msg);
char *blah_status_fail(const char *msg);

/* The state every BLAH request of one server shares (exec_shared.blah). */
struct blah_state *blah_state_new(void);
void blah_state_free(struct blah_state *s);

/*
 * Start-up, before the banner: every group an earlier run left open (its
 * leader died before closing it) is closed in the journal, and its
 * internal submit request handed to run (the server queues it on its
 * workers, in the background).  ctx is the start-up context (journal,
 * session).  Returns the number of groups closed, or -1 (logged).
 */
typedef void (*blah_run_fn)(gahp_request *req, void *arg);
/* Start-up, before any fetch of this run: the temp files interrupted
 * fetches of BLAH jobs left in their Iwd.  Returns the count of jobs
 * cleaned after, or -1 (logged). */
int blah_remove_leftovers(exec_ctx *ctx);
int blah_close_open_groups(exec_ctx *ctx, blah_run_fn run, void *arg);

#endif
