/*
 * journal_requests.h - the journal's requests beyond accepting and
 * completing them (journal.h): what start-up recovery scans, closes and
 * marks resumed, the replay of a stored result to a re-issued request,
 * a request's argument text, and the project's status change number.
 * The SQL is journal_requests.c.  See doc/recovery.md.
 */
#ifndef BOINC_GAHP_JOURNAL_REQUESTS_H
#define BOINC_GAHP_JOURNAL_REQUESTS_H

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

/*
 * The same for a submit matched by its batch's job-set identity rather
 * than its text: earlier_row (the batch's owner request) gets replayed_by =
 * new_row when it is a BOINC_SUBMIT of an earlier session than session_id
 * and still unanswered.  Nothing changes otherwise (0).
 */
int journal_supersede_submit(journal *j, long long earlier_row, long long session_id,
                             long long new_row);

/* The argument text of a request row (malloc'd into *args; NULL when the
 * row does not exist). */
int journal_request_args(journal *j, long long request_row, char **args);

/* The project's last status change number (0 when none or no such project):
 * the jobs of a later journal_jobs_record_statuses get larger ones. */
int journal_project_status_seq(journal *j, long long project_id, long long *seq);

#endif
