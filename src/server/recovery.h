/*
 * recovery.h - what a start-up does with the work an earlier run left
 * unanswered (doc/recovery.md).
 */
#ifndef BOINC_GAHP_RECOVERY_H
#define BOINC_GAHP_RECOVERY_H

#include "config/config.h"
#include "journal/journal.h"
#include "server/protocol.h"
#include "server/workers.h"

/*
 * Start-up hook, before the first request line is read:
 *  - unfinished BOINC_SUBMITs of earlier runs are resumed in the background
 *    (their outcome is journaled under their own row, for the re-issue);
 *  - stored results of submit, fetch, abort, retire and lease are kept for
 *    replay to a re-issued identical request (dispatch.c);
 *  - everything else of earlier runs (pings, queries, and unfinished
 *    non-submits) is closed: a re-issue runs fresh.
 * With cfg->requeue_undelivered, instead, every unanswered request is
 * answered under its original request id: stored results are queued for
 * RESULTS and unfinished requests are run again; their ids count as
 * pending in p until delivered.
 */
int recovery_start(journal *j, workers *w, protocol *p,
                   const gahp_config *cfg, long long session_id);

/* After recovery_start: the BLAH groups an earlier run left open (their
 * leader died before closing them) are closed and submitted in the
 * background (blah/blah.h). */
int recovery_blah_groups(journal *j, workers *w, protocol *p,
                         const gahp_config *cfg, long long session_id);

#endif
