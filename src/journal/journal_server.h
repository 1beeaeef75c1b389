/*
 * journal_server.h - what the journal knows about a server beyond single
 * requests: the upload limits learned from its replies (per project), and
 * in which server batch, of which app, a job was submitted (for the
 * failed-job fallback of BOINC_FETCH_OUTPUT and its template cache).  Writes are one short transaction each; every
 * function returns 0, or -1 after logging the SQLite error.
 */
#ifndef BOINC_GAHP_JOURNAL_SERVER_H
#define BOINC_GAHP_JOURNAL_SERVER_H

#include "journal/journal.h"

/* *found = 0 when nothing was learned for the project yet. */
int journal_upload_limits_get(journal *j, long long project_id, long *max_files,
                              long long *max_bytes, int *found);

/* Lower the project's learned limits to (max_files, max_bytes); a limit
 * never rises (the smaller of the stored and the new value is kept). */
int journal_upload_limits_learn(journal *j, long long project_id, long max_files,
                                long long max_bytes, const char *reason, double now);

/* The server batch id of the journaled job (project_id, job) that a
 * BOINC_SUBMIT created; *found = 0 when the journal has no such job. */
int journal_job_server_batch(journal *j, long long project_id, const char *job,
                             long long *server_batch_id, int *found);

/* The app of that same batch (BOINC_FETCH_OUTPUT's template cache key):
 * *app malloc'd and *found = 1, or *found = 0 for a job this journal does
 * not know.  0, or -1 on a journal error or out of memory (*app NULL). */
int journal_job_app(journal *j, long long project_id, const char *job,
                    char **app, int *found);

#endif
