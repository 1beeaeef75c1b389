/*
 * blah_asks.h - when HTCondor last asked about each BLAH job in flight.
 *
 * The BLAH scheduler paces its passes over a project by the grid
 * manager's own probing (blah_sched.c, blah_status_asked): a job asked
 * again after `gap` seconds tells that HTCondor wants an answer no older
 * than that.  This is the memory it reads: one job id to the time of its
 * last BLAH_JOB_STATUS, kept for at least `memory_s` seconds and at most
 * twice that (two generations: the older is dropped when the newer is
 * memory_s old), so it holds no more than the jobs asked about in the
 * last two memories, whatever the run's length.
 *
 * Not thread-safe: the caller holds its lock (blah_state.mu).
 *
 * Interface:
 *   blah_asks_new, blah_asks_free
 *   blah_asks_note   record an ask; the previous one's time, if remembered
 */
#ifndef BOINC_GAHP_BLAH_ASKS_H
#define BOINC_GAHP_BLAH_ASKS_H

typedef struct blah_asks blah_asks;

/* An empty memory; NULL on ENOMEM. */
blah_asks *blah_asks_new(void);
void blah_asks_free(blah_asks *a);

/* Note that job was asked about at now.  Returns the time of its previous
 * ask when that is remembered, -1 when it is not (first ask, or older
 * than the memory), -2 on ENOMEM (the ask is not noted; the caller goes
 * on without it: pacing is an optimisation). */
double blah_asks_note(blah_asks *a, const char *job, double now, double memory_s);

#endif
