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
 *   blah_status.c  BLAH_JOB_STATUS and BLAH_JOB_CANCEL (from the journal
 *                  alone, at once), BLAH_PING
 *   blah_sched.c   the scheduler: per project a background pass (query,
 *                  leases, aborts, outputs fetched into Iwd before
 *                  "completed", retirement; a back-off while the project
 *                  is unreachable); start-up clean-up of fetches
 *   blah_isolate.c per-job isolation: a job whose input is gone when its
 *                  group closes, or that the server refused, held alone;
 *                  the rest of a refused group submitted as a new batch
 *   blah_internal.h what they share
 *
 * The executors themselves are declared in exec/exec_cmds.h with the
 * other commands'.
 */
#ifndef BOINC_GAHP_BLAH_H
#define BOINC_GAHP_BLAH_H

#include "exec/exec.h"

#include <stddef.h>

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
/* Start-up, after recovery: start the BLAH scheduler (a context made
 * like ctx's) when the journal holds BLAH work of an earlier run, so that
 * aborts owed are sent and finished jobs fetched even if nobody polls.
 * Returns the number of projects with work, or -1 (logged). */
int blah_sched_resume(exec_ctx *ctx);
/* QUIT: stop the scheduler.  Returns 1 when it was in the middle of a
 * pass (maybe in network I/O): it is not waited for, and counts as a
 * request still running (the caller leaves with _exit); else 0, its task
 * joined and its context closed. */
size_t blah_sched_stop(struct blah_state *s);
int blah_close_open_groups(exec_ctx *ctx, blah_run_fn run, void *arg);

#endif
