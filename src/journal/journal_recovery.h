/*
 * journal_recovery.h - the journal side of crash recovery: scanning what
 * earlier runs left unanswered, closing, marking resumed, and taking a
 * stored result for a re-issued request (replay).  See doc/recovery.md.
 */
#ifndef BOINC_GAHP_JOURNAL_RECOVERY_H
#define BOINC_GAHP_JOURNAL_RECOVERY_H

#include <stddef.h>

#include "journal/journal.h"

/*
 * Call cb for every request of a session before session_id that is neither
 * delivered, closed nor replayed (oldest first).  Row fields are valid only
 * during the callback; a non-zero return stops the scan and is returned.
 */
int journal_recovery_scan(journal *j, long long session_id,
                          journal_request_cb cb, void *arg);

/* Close rows (closed_at = now), one transaction. */
int journal_requests_close(journal *j, const long long *rows, size_t n);

/* Record that session_id resumed these rows, one transaction. */
int journal_requests_resumed(journal *j, const long long *rows, size_t n,
                             long long session_id);

/*
 * Replay: among the stored results of earlier sessions for the same
 * command, arguments and project (completed, undelivered, not closed, not
 * answered), take a success if there is one, else the oldest; mark every
 * one of them delivered with replayed_by = new_row, in one transaction,
 * and set *result (malloc'd).  None: *result = NULL.  project_id > 0.
 */
int journal_replay_take(journal *j, const char *command, const char *args,
                        long long project_id, long long session_id,
                        long long new_row, char **result);

/*
 * The re-issue new_row has been answered: every row of an earlier session
 * for the same request that is still unanswered (accepted, running in the
 * background, or completed) gets replayed_by = new_row, so it is never
 * delivered or replayed again.
 */
int journal_supersede(journal *j, const char *command, const char *args,
                      long long project_id, long long session_id, long long new_row);

#endif
