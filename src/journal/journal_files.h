/*
 * journal_files.h - the journal's input files: each batch's files and
 * their query/upload state (batch_files, and the query_files
 * announcements of batch_file_queries), the MD5 cache of local input
 * files, and the upload limits learned from each project's replies.  The
 * SQL is journal_files.c.  Every function returns 0, or -1 after logging
 * the SQLite error (a write is rolled back).
 */
#ifndef BOINC_GAHP_JOURNAL_FILES_H
#define BOINC_GAHP_JOURNAL_FILES_H

#include <stddef.h>

#include "base/files.h"
#include "journal/journal.h"

/* batch_files.state values. */
#define BFILE_HASHED       "hashed"
#define BFILE_QUERY_SENT   "query_sent"
#define BFILE_ABSENT       "absent"
#define BFILE_CONFIRMED    "confirmed"
#define BFILE_UPLOAD_SENT  "upload_sent"
#define BFILE_UPLOADED     "uploaded"

/* ---- MD5 cache ---------------------------------------------------------- */
/* The cache entry of each of n absolute paths, in one read transaction
 * with one prepared statement: found[i] = 1, md5s[i] and keys[i]'s size,
 * mtime and inode filled (its path and device untouched: the cache keeps
 * neither apart from the path asked for) where the cache has the path,
 * found[i] = 0 elsewhere.  The caller compares the key with a fresh stat
 * before trusting the digest.  Call outside any transaction of this
 * connection. */
int journal_md5_find(journal *j, const char *const *paths, size_t n,
                     files_stat_key *keys, char (*md5s)[33], unsigned char *found);
/* Store n entries in one transaction. */
int journal_md5_store(journal *j, const files_stat_key *const *keys,
                      const char *const *md5s, size_t n);

/* ---- batch files ---------------------------------------------------------- */
typedef struct {
    char *phys_name;
    char *local_path;
    long long size;
    const char *state;  /* one of the BFILE_* constants, not owned: a big
                           batch's rows do not each carry a copy */
    long long id;       /* its row id (batch_files.id; set by _list, not read by _add):
                           stable for the row's life (migration 0011) */
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
/* Named files and the state they get.  With ids (journal_batch_file.id of
 * the same files, in the same order) the rows are found by id, a run of
 * consecutive ids as one range: cheaper than by name; NULL: by name. */
typedef struct {
    const char *const *names;
    size_t n;
    const char *state;
    const long long *ids;
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

/* ---- learned upload limits ----------------------------------------------- */

/* *found = 0 when nothing was learned for the project yet. */
int journal_upload_limits_get(journal *j, long long project_id, long *max_files,
                              long long *max_bytes, int *found);

/* Lower the project's learned limits to (max_files, max_bytes); a limit
 * never rises (the smaller of the stored and the new value is kept). */
int journal_upload_limits_learn(journal *j, long long project_id, long max_files,
                                long long max_bytes, const char *reason, double now);

#endif
