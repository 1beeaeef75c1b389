/*
 * journal.h - the SQLite journal: the only module that talks SQL.
 *
 * One journal file per server; one live server per journal (an exclusive
 * lock on the database file itself, whatever path leads to it, held for
 * the process lifetime: see take_server_lock in journal.c).  The primary
 * handle (journal_open) belongs to the reader thread; every other thread
 * (the completion committer, each worker) opens its OWN connection with
 * journal_connect() and uses it only from that thread - except that the
 * committer commits through a journal_share() handle on the reader's
 * connection once the reader serves the client (see journal_share).
 * Write transactions of all connections of this process are serialised
 * by one process-wide mutex (taken in journal_begin, released in
 * commit/rollback), so threads never spin in SQLite's busy handler
 * against each other; busy_timeout only matters against other processes
 * (e.g. an auditor's sqlite3 shell).
 * Keep write transactions short: they block every other writer.
 *
 * All functions return 0 on success and -1 on failure; the failure is
 * logged with the SQLite error and journal_errmsg() returns it.
 */
#ifndef BOINC_GAHP_JOURNAL_H
#define BOINC_GAHP_JOURNAL_H

#include <stddef.h>

typedef struct journal journal;

typedef struct {
    const char *path;           /* database file */
    int sync_full;              /* 1 = PRAGMA synchronous=FULL, 0 = NORMAL */
    long busy_timeout_ms;       /* SQLite busy timeout per connection */
    int take_lock;              /* 1 = take the server lock on the file */
} journal_options;

/* Request states, as stored in requests.state (the schema's CHECK also
 * admits 'started', which no version has ever written). */
#define JOURNAL_ACCEPTED  "accepted"
#define JOURNAL_COMPLETED "completed"
#define JOURNAL_DELIVERED "delivered"

/*
 * Open (creating with mode 0600) the journal, take the server lock, set
 * WAL + synchronous, apply pending migrations.  On failure returns NULL and
 * sets *err to a malloc'd message (caller frees).
 */
journal *journal_open(const journal_options *opts, char **err);

/* A further connection to the same journal for another thread. */
journal *journal_connect(const journal *primary, char **err);

/* Close a connection (the primary one also releases the lock). */
void journal_close(journal *j);

const char *journal_errmsg(const journal *j);

/* Current unix time as a double (what every *_at column holds). */
double journal_now(void);

/*
 * Write transactions (BEGIN IMMEDIATE under the process mutex).  Every
 * statement that writes must run inside one: outside, the journal refuses
 * it (an error, logged), so no write escapes the process-wide mutex.
 *
 * journal_txn(j, fn, arg): begin, run fn(j, arg), commit; when fn returns
 * non-zero, roll back and return that value.  -1 when begin or commit
 * failed, or j is already inside a transaction (no nesting).
 */
typedef int (*journal_txn_fn)(journal *j, void *arg);
int journal_txn(journal *j, journal_txn_fn fn, void *arg);
/* The same by hand, for a caller that interleaves its own work (the
 * reader's group commit).  journal_begin waits for a write lock held by
 * ANOTHER process up to the connection's lock wait (journal_set_lock_wait),
 * then fails. */
int journal_begin(journal *j);
/* Lock wait of this connection in ms; -1 = without limit.  Default: the
 * busy timeout (journal_options), except that journal_open waits without
 * limit and leaves the primary connection so, for start-up; the server
 * sets the primary's accept-path limit once it serves the client. */
void journal_set_lock_wait(journal *j, long ms);
int journal_commit(journal *j);
void journal_rollback(journal *j);

/*
 * WAL checkpoints.  SQLite would checkpoint inside the COMMIT that makes
 * the WAL reach 1000 frames, whichever connection that is (the reader's
 * accept commit among them), and the first writer after a complete
 * checkpoint restarts the WAL (an extra fdatasync of its header).  Here
 * such a commit only wakes a checkpointer thread (journal_checkpoint.c;
 * inline when there is none), and every commit reports the WAL size;
 * journal_checkpoint_if_due(j, frames) checkpoints (PASSIVE,
 * on j's own connection, outside any transaction) once the WAL holds
 * `frames` or more.  The completion committer calls it before its commit,
 * so the checkpoint and the WAL restart land on its commit and not on an
 * accept, and the WAL stays small enough that accept commits overwrite
 * blocks the file already has (an appending fdatasync also commits the
 * file system's journal: about twice the time).  Not on a shared handle.
 */
void journal_checkpoint_if_due(journal *j, int frames);

/*
 * A second handle on owner's connection (own prepared statements, lock
 * wait and error text; closing it leaves the connection open).  The
 * completion committer commits through one on the reader's connection, so
 * that the reader's page cache stays valid between accepts (a commit by
 * another connection makes SQLite drop it and re-read the pages).  Two
 * threads may use a connection only one at a time: a handle sharing it,
 * and the owner, may then be used ONLY inside write transactions
 * (journal_begin .. journal_commit/rollback hold the process-wide write
 * mutex), and the owner must be closed last.
 */
journal *journal_share(journal *owner, char **err);

/* Schema version (PRAGMA user_version) and number of embedded migrations. */
int journal_schema_version(journal *j, int *version);
int journal_migration_count(void);
/* Why a server refuses a journal of schema version `version` (negative:
 * damaged; above journal_migration_count(): a newer boinc_gahp wrote it),
 * malloc'd, in the words journal_open uses; NULL for a version it opens
 * (or out of memory).  The operator's commands refuse with it too. */
char *journal_version_problem(const char *path, int version);
/* Text of embedded migration n (1-based), or NULL. */
const char *journal_migration_text(int n);

/* ---- sessions ------------------------------------------------------------ */
int journal_session_begin(journal *j, const char *version, long long *session_id);
int journal_session_set_condor_version(journal *j, long long session_id,
                                       const char *condor_version);
int journal_session_end(journal *j, long long session_id, int clean);

/* ---- projects ------------------------------------------------------------ */
/* Find or insert (url, authenticator): inside the caller's write
 * transaction, or else in one of its own. */
int journal_project_id(journal *j, const char *url, const char *authenticator,
                       long long *project_id);

/* ---- requests ------------------------------------------------------------ */
/* Insert one accepted request (call between journal_begin and commit). */
int journal_request_insert(journal *j, long long session_id, long client_id,
                           const char *command, const char *args_text,
                           long long project_id, double accepted_at,
                           long long *request_row);

typedef struct {
    long long request_row;
    double started_at;
    double completed_at;
    const char *result;         /* result tail after "<id> " */
    int transient;              /* 1: the result is about its moment (ping,
                                 * query): dropped once delivered */
} journal_completion;

/* Record n completions in ONE transaction (group commit). */
int journal_requests_complete(journal *j, const journal_completion *c, size_t n);

/* Mark n delivered rows (one transaction). */
int journal_requests_delivered(journal *j, const long long *rows, size_t n,
                               double delivered_at);

/*
 * Retention (journal_prune.c, doc/journal.md "Retention"): one full prune,
 * journal_prune_report (with the counts) or journal_prune (a total).
 * Older than retention_days (scaled by the test clock): delivered, closed
 * and confirmed requests, ended sessions left without requests, retired
 * and expired batches with their jobs, files and file queries, unused MD5
 * cache rows.  Also: the text of answered submits whose batch stores its
 * job-set identity is replaced by a note; then the free pages go back to
 * the file system (PRAGMA incremental_vacuum).  Never touches unanswered
 * or unfinished work.  counts may be NULL.  0, or -1 (journal_errmsg).
 */
typedef struct {
    long long requests;         /* request rows deleted */
    long long sessions;         /* session rows deleted */
    long long batches;          /* batch rows deleted ... */
    long long jobs;             /* ... with their job rows */
    long long files;            /* ... and batch_files rows */
    long long submit_texts;     /* submit texts replaced by a note */
    long long pages_freed;      /* pages returned by the incremental vacuum */
} journal_prune_counts;

int journal_prune_report(journal *j, double retention_days, journal_prune_counts *counts);

/* The same (the signature operator commands call): *deleted (may be NULL)
 * = rows deleted, requests + sessions + batches + jobs + files. */
int journal_prune(journal *j, double retention_days, long long *deleted);

/*
 * Prune while the server runs (issue 19): a thread with its own connection
 * to primary's file runs journal_prune every tenth of the retention, at
 * least hourly (test clock: BOINC_GAHP_TEST_TIME_SCALE shortens the period
 * as it shortens the retention).  0, or -1 with *err malloc'd.
 * journal_pruner_stop ends it (waits for a prune under way); harmless when
 * it was not started.
 */
int journal_pruner_start(const journal *primary, double retention_days, char **err);
void journal_pruner_stop(void);

/* A request row as recovery reads it (journal_recovery_scan). */
typedef struct {
    long long request_row;
    long long session_id;
    long client_id;
    const char *command;
    const char *args_text;
    long long project_id;
    const char *project_url;        /* NULL when no project */
    const char *authenticator;
    const char *state;
    const char *result;             /* NULL unless completed */
} journal_request_row;

typedef int (*journal_request_cb)(const journal_request_row *row, void *arg);

#endif
