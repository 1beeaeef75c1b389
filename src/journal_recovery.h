/*
 * journal_recovery.h - the journal side of crash recovery: scanning what
 * earlier runs left unanswered, closing, marking resumed, and taking a
 * stored result for a re-issued request (replay).  See doc/recovery.md.
 */
#ifndef BOINC_GAHP_JOURNAL_RECOVERY_H
#define BOINC_GAHP_JOURNAL_RECOVERY_H

#include <stddef.h>

#include "journal.h"

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
 * Replay: find the oldest stored result of an earlier session for the same
 * command, arguments and project (completed, undelivered, not closed, not
 * replayed), optionally only one whose result is exactly only_result.  If
 * found, mark it delivered + replayed_by new_row in one transaction and
 * set *result (malloc'd); else *result = NULL.
 */
int journal_replay_take(journal *j, const char *command, const char *args,
                        long long project_id, long long session_id,
                        long long new_row, const char *only_result,
                        char **result);

#endif
