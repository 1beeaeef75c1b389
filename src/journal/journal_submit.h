/*
 * journal_submit.h - journal tables behind BOINC_SUBMIT: batches and their
 * submit progress, per-batch input files and their upload state, the jobs
 * created, and the MD5 cache of local input files.
 *
 * Every progress change is its own committed transaction, written BEFORE
 * the server call it announces (a "*_sent" state) and after the reply it
 * records, so that a crash at any instant leaves a state that says exactly
 * what is known and what must be asked of the server.  See doc/recovery.md.
 */
#ifndef BOINC_GAHP_JOURNAL_SUBMIT_H
#define BOINC_GAHP_JOURNAL_SUBMIT_H

#include <stddef.h>

#include "base/files.h"
#include "journal/journal.h"
#include "journal/batch_state.h"

/* batch_files.state values. */
#define BFILE_HASHED       "hashed"
#define BFILE_QUERY_SENT   "query_sent"
#define BFILE_ABSENT       "absent"
#define BFILE_CONFIRMED    "confirmed"
#define BFILE_UPLOAD_SENT  "upload_sent"
#define BFILE_UPLOADED     "uploaded"

typedef struct {
    long long id;               /* batches.id */
    long long project_id;
    char *name;
    char *app;
    long long server_batch_id;  /* 0 = not known to be created */
    batch_state state;
    batch_state resume_state;   /* state = BATCH_FAILED: where to resume */
    char *error;                /* NULL unless state = BATCH_FAILED */
    char *spec_md5;
    long njobs;
    long long request_id;       /* owning request row, 0 = none */
    char *job_set_md5;          /* submit_identity fingerprint, NULL = not yet known */
} journal_batch;

void journal_batch_free(journal_batch *b);

/* *found = 0 when no batch of that name exists for the project. */
int journal_batch_find(journal *j, long long project_id, const char *name,
                       journal_batch *out, int *found);

int journal_batch_create(journal *j, long long project_id, const char *name,
                         const char *app, long njobs, const char *spec_md5,
                         long long request_id, long long *batch_row);

/* Set the state (clears resume_state/error); server_batch_id > 0 also
 * sets it. */
int journal_batch_set_state(journal *j, long long batch_row, batch_state state,
                            long long server_batch_id);
/* state = BATCH_FAILED, to be resumed at resume_state. */
int journal_batch_set_failed(journal *j, long long batch_row,
                             batch_state resume_state, const char *error);
int journal_batch_set_owner(journal *j, long long batch_row, long long request_id);
/* Record the batch's job-set fingerprint (batches.job_set_md5). */
int journal_batch_set_job_set(journal *j, long long batch_row, const char *job_set_md5);
/* The argument text of a request row (malloc'd into *args; NULL when the
 * row does not exist). */
int journal_request_args(journal *j, long long request_row, char **args);

/* Server batch ids the journal already attributes to some batch row of the
 * project (so crash recovery never adopts another submit's batch). */
int journal_server_batch_known(journal *j, long long project_id,
                               long long server_batch_id, int *known);

/* ---- MD5 cache ---------------------------------------------------------- */
/* Look up n keys (path/size/mtime/inode must all match) in one read
 * transaction with one prepared statement: hits[i] = 1 and md5s[i] filled
 * for each key found (call
 * outside any transaction of this connection). */
int journal_md5_lookup_many(journal *j, const files_stat_key *const *keys, size_t n,
                            char (*md5s)[33], unsigned char *hits);
/* Store n entries in one transaction. */
int journal_md5_store(journal *j, const files_stat_key *const *keys,
                      const char *const *md5s, size_t n);

/* ---- batch files ---------------------------------------------------------- */
typedef struct {
    char *phys_name;
    char *local_path;
    long long size;
    char *state;
} journal_batch_file;

/* Insert the files not yet recorded (state hashed), one transaction;
 * a new batch moves to BATCH_HASHED. */
int journal_batch_files_add(journal *j, long long batch_row,
                            const journal_batch_file *files, size_t n);
/* All files of a batch, in insertion order; state NULL for every state.  A
 * 'hashed' file of an unanswered query announcement is 'query_sent'. */
int journal_batch_files_list(journal *j, long long batch_row, const char *state,
                             journal_batch_file **out, size_t *n);
void journal_batch_files_free(journal_batch_file *f, size_t n);
/* Set the state of the named files (one transaction; none: nothing). */
int journal_batch_files_set_state(journal *j, long long batch_row,
                                  const char *const *phys_names, size_t n,
                                  const char *state);
/* Named files and the state they get. */
typedef struct {
    const char *const *names;
    size_t n;
    const char *state;
} journal_file_group;

/*
 * One step of a batch's files, one transaction (a chunk's outcome and the
 * next chunk's announcement share one commit): set the groups' states,
 * delete the query announcement `answered` (0: none), and when names is
 * not NULL announce a query_files of those n files with the batch id
 * (*announced = its id): until it is answered, a 'hashed' file it names
 * lists as 'query_sent' (migration 0007).  Nothing to do: nothing happens.
 */
int journal_batch_files_advance(journal *j, long long batch_row,
                                const journal_file_group *groups, size_t ngroups,
                                long long answered, const char *const *names, size_t n,
                                long long *announced);
/* Delete the batch's query announcements (their files were resolved):
 * inside the caller's write transaction, or else in one of its own. */
int journal_batch_file_queries_forget(journal *j, long long batch_row);

/* Record the created jobs and state submitted in one transaction. */
int journal_batch_set_submitted(journal *j, long long batch_row,
                                const char *const *job_names, size_t n);

#endif
