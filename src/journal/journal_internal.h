/*
 * journal_internal.h - what the files of the journal module share
 * (src/journal/); nothing outside it includes this, except unit tests that
 * look at a connection directly.
 *
 * The SQL has one shape (doc/journal.md, "The SQL"):
 *
 *   - every statement has an id (jstmt below) and its text in the
 *     statement table of the file that owns its table: journal.c
 *     (transactions), journal_requests.c (sessions, projects, requests),
 *     journal_batches.c (batches, jobs), journal_files.c (batch_files,
 *     batch_file_queries, file_md5_cache, upload_limits).  A statement
 *     belongs to the table it writes, or that a read selects FROM;
 *   - each connection prepares a statement on its first use
 *     (SQLITE_PREPARE_PERSISTENT) and keeps it until journal_close;
 *   - it is run in one way: journal_run (no rows) or journal_query /
 *     journal_next / journal_reset (rows), with the parameters bound from a
 *     type string that must match the statement's parameter count and
 *     every bind checked;
 *   - a statement that writes is refused (an error, logged) unless the
 *     handle is inside a write transaction: journal_txn (journal.h), or
 *     journal_begin .. journal_commit/rollback.  So every write of the
 *     process holds the process-wide write mutex (journal.h).
 */
#ifndef BOINC_GAHP_JOURNAL_INTERNAL_H
#define BOINC_GAHP_JOURNAL_INTERNAL_H

#include "journal/journal.h"

#include <fcntl.h>
#include <stddef.h>

struct sqlite3;
struct sqlite3_stmt;

typedef enum {
    /* journal.c: transactions and the schema version */
    JSTMT_BEGIN_WRITE,
    JSTMT_BEGIN_READ,
    JSTMT_END_READ,
    JSTMT_COMMIT,
    JSTMT_ROLLBACK,
    JSTMT_USER_VERSION,

    /* journal_requests.c: sessions */
    JSTMT_SESSION_INSERT,
    JSTMT_SESSION_CONDOR_VERSION,
    JSTMT_SESSION_END,
    JSTMT_SESSIONS_PRUNE,
    /* journal_requests.c: projects */
    JSTMT_PROJECT_FIND,
    JSTMT_PROJECT_INSERT,
    JSTMT_PROJECT_PASSWORD,
    JSTMT_PROJECT_STATUS_SEQ,
    JSTMT_PROJECT_STATUS_SEQ_ADVANCE,
    /* journal_requests.c: requests */
    JSTMT_REQUEST_INSERT,
    JSTMT_REQUEST_COMPLETE,
    JSTMT_TRANSIENT_RESULT_STORE,
    JSTMT_TRANSIENT_RESULT_DROP,
    JSTMT_TRANSIENT_RESULTS_PRUNE,
    JSTMT_REQUEST_DELIVERED,
    JSTMT_REQUEST_ARGS,
    JSTMT_REQUESTS_PRUNE,
    JSTMT_RECOVERY_SCAN,
    JSTMT_REQUEST_CLOSE,
    JSTMT_REQUEST_RESUMED,
    JSTMT_REPLAY_FIND,
    JSTMT_REPLAY_MARK,
    JSTMT_SUPERSEDE,
    JSTMT_SUPERSEDE_SUBMIT,
    JSTMT_REQUEST_CONFIRM,
    JSTMT_REQUESTS_COMPACT_SUBMITS,

    /* journal_batches.c: batches */
    JSTMT_BATCH_FIND,
    JSTMT_BATCH_EXISTS,
    JSTMT_BATCH_INSERT,
    JSTMT_BATCH_SET_STATE,
    JSTMT_BATCH_SET_FAILED,
    JSTMT_BATCH_SET_OWNER,
    JSTMT_BATCH_SET_JOB_SET,
    JSTMT_BATCH_HASHED,
    JSTMT_BATCH_SUBMITTED,
    JSTMT_BATCH_SERVER_ID_KNOWN,
    JSTMT_BATCH_SET_SERVER_TIME,
    JSTMT_BATCH_POLL_STATE,
    JSTMT_BATCH_RETIRE,
    JSTMT_BATCH_LEASE,
    JSTMT_BATCH_CLIENT_SESSION,
    JSTMT_BATCH_OF_JOB,
    JSTMT_BATCH_NOTE_ERROR,
    JSTMT_BATCHES_PRUNE,
    /* journal_batches.c: jobs */
    JSTMT_JOB_INSERT,
    JSTMT_JOBS_INSERT8,
    JSTMT_JOBS_FORGET_UNSUBMITTED,
    JSTMT_JOB_ABORTED,
    JSTMT_JOBS_ALL,
    JSTMT_JOBS_CHANGED,
    JSTMT_JOBS_CHANGED_OR_UNCHANGED,
    JSTMT_JOBS_PRUNE,
    /* journal_batches.c: status recording (issue 22) */
    JSTMT_BATCH_STATUS_TARGET,
    JSTMT_BATCH_UNCHANGED_SEQ,
    JSTMT_BATCH_JOB_RANGE,
    JSTMT_JOBS_STATUS_READ,
    JSTMT_JOBS_STATUS_READ_BATCH,
    JSTMT_JOBS_ALL_SORTED,
    JSTMT_JOBS_STATUS_SET,
    JSTMT_JOBS_STATUS_SET_RUN,

    /* journal_files.c: batch_files */
    JSTMT_FILE_INSERT,
    JSTMT_FILES_INSERT8,
    JSTMT_FILES_LIST,
    JSTMT_FILE_STATE,
    JSTMT_FILES_STATE,
    JSTMT_FILES_PRUNE,
    JSTMT_FILES_STATE_RANGE,
    JSTMT_FILES_STATE_IDS,
    /* journal_files.c: batch_file_queries */
    JSTMT_QUERY_INSERT,
    JSTMT_QUERY_ANSWERED,
    JSTMT_QUERIES_FORGET,
    JSTMT_QUERIES_PRUNE,
    /* journal_files.c: file_md5_cache */
    JSTMT_MD5_FIND,
    JSTMT_MD5_STORE,
    JSTMT_MD5_STORE8,
    JSTMT_MD5_PRUNE,
    /* journal_files.c: upload_limits */
    JSTMT_LIMITS_GET,
    JSTMT_LIMITS_LEARN,

    /* journal_blah.c: blah_groups, blah_jobs (the BLAH dialect) */
    JSTMT_BLAH_LIVE_JOB,
    JSTMT_BLAH_GROUP_INSERT,
    JSTMT_BLAH_GROUP_JOIN,
    JSTMT_BLAH_GROUP_SEQ,
    JSTMT_BLAH_JOB_INSERT,
    JSTMT_BLAH_GROUP_JOBS,
    JSTMT_BLAH_GROUP_CLOSE,
    JSTMT_BLAH_GROUP_EMPTY,
    JSTMT_BLAH_JOB_GET,
    JSTMT_BLAH_JOB_GET_ROW,
    JSTMT_BLAH_JOB_CANCEL,
    JSTMT_BLAH_ABORTS_PENDING,
    JSTMT_BLAH_ABORT_DONE,
    JSTMT_BLAH_FETCHED,
    JSTMT_BLAH_FETCHED_NUMBERS,
    JSTMT_BLAH_FETCH_START,
    JSTMT_BLAH_INTERRUPTED_FETCHES,
    JSTMT_BLAH_LIVE_BATCHES,
    JSTMT_BLAH_DONE_BATCHES,
    JSTMT_BLAH_OPEN_GROUPS,
    JSTMT_BLAH_WORK_PROJECTS,
    JSTMT_BLAH_DONE_UNFETCHED,
    JSTMT_BLAH_RETRY_GROUPS,
    JSTMT_BLAH_SPLIT_GROUPS,
    JSTMT_BLAH_SPLIT_CHECK,
    JSTMT_BLAH_JOB_HOLD,
    JSTMT_BLAH_SPLIT_INSERT,
    JSTMT_BLAH_GROUP_SET_REQUEST,
    JSTMT_BLAH_JOB_MOVE,
    JSTMT_BLAH_JOBS_PRUNE,
    JSTMT_BLAH_GROUPS_PRUNE,

    /* journal_claims.c: output_claims (no two live jobs write one path) */
    JSTMT_CLAIM_GET,
    JSTMT_CLAIM_PUT,
    JSTMT_CLAIM_RELEASE_BLAH,
    JSTMT_CLAIM_SINCE,
    JSTMT_CLAIMS_PRUNE,

    JSTMT_COUNT
} jstmt;

/*
 * Retention (journal_prune.c): the batches that go with their jobs, files
 * and queries, ?1 being the cutoff time.  Retired ones whose last change,
 * and expired ones whose lease, is older than the cutoff - unless their
 * submit is still unfinished (a resumed submit running in the background).
 * Failed ones too (state 8, or an error noted at state new) that were never
 * leased, by their last change: HTCondor gives up a failed submit's batch
 * name (a release makes a new batch), so each hold and release of a
 * failing job would leave one for ever; a batch the client took as
 * submitted is leased right after its submit and goes by its lease.
 * The client asks nothing more of such a batch; the server still holds its
 * files, which a later submit's query_files finds again.
 */
#define JOURNAL_PRUNABLE_BATCHES \
    "SELECT b.id FROM batches b WHERE" \
    " ((b.retired = 1 AND b.updated_at < ?1) OR (b.lease IS NOT NULL AND b.lease < ?1)" \
    "  OR (b.lease IS NULL AND (b.state = 8 OR b.error IS NOT NULL) AND b.updated_at < ?1))" \
    " AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = b.request_id" \
    "                 AND r.state = '" JOURNAL_ACCEPTED "')"

/*
 * The server lock follows the database file itself, not its name (issue
 * 10 #2): an open-file-description lock (F_OFD_SETLK) on one byte of the
 * database far past anything SQLite locks (SQLite uses the bytes from
 * 0x40000000 on, PENDING_BYTE).  Every path to the same inode (a hard
 * link, a symlink, a renamed file) finds the same lock, and there is no
 * lock file that could be deleted.  OFD locks, unlike classic fcntl locks,
 * belong to the descriptor, so SQLite opening and closing its own
 * descriptors of the file never drops ours (and ours conflicts with a
 * second server even inside one process).  The kernel releases it when
 * the process dies, SIGKILL included.
 *
 * journal_server_lock_byte fills fl with that byte and a write lock, for
 * journal.c (which takes it) and journal_admin.c (which asks whether a
 * server holds it, F_OFD_GETLK).
 */
void journal_server_lock_byte(struct flock *fl);

/* One entry of a statement table: what names the statement in errors
 * ("<what>: <sqlite error>"), sql is its text. */
typedef struct {
    const char *what;
    const char *sql;
} journal_sql;

/* The statement tables, indexed by jstmt: each file fills the entries of
 * its own tables (designated initializers), the rest stay NULL.  Every id
 * has its text in exactly one table (journal_prepare_all checks). */
extern const journal_sql journal_sql_requests[JSTMT_COUNT];
extern const journal_sql journal_sql_batches[JSTMT_COUNT];
extern const journal_sql journal_sql_files[JSTMT_COUNT];
extern const journal_sql journal_sql_blah[JSTMT_COUNT];
extern const journal_sql journal_sql_claims[JSTMT_COUNT];

/*
 * Run statement id once, for statements that return no row (a row is
 * ignored).  types gives one letter per parameter, in order:
 *   't' text (const char *; NULL binds NULL), 'i' int64 (long long),
 *   'd' double, 'k' a row id (long long): NULL when <= 0.
 * A type string whose length is not the statement's parameter count, a
 * failed bind, and a write outside a write transaction are refused.
 * Returns 0, or -1 with the handle's error set.
 */
int journal_run(journal *j, jstmt id, const char *types, ...);

/* journal_run in a write transaction of its own (journal_txn). */
int journal_run_txn(journal *j, jstmt id, const char *types, ...);

/*
 * Bind statement id as journal_run does and step it: 1 = a row
 * (journal_row's columns are valid), 0 = no row, -1 = error (logged).
 * Always end with journal_reset, which ends the statement's read and
 * releases its bindings; journal_next steps to the next row (same
 * returns).  A statement is not re-entrant: using one that is still
 * stepping (from inside a row callback of the same statement) is refused.
 */
int journal_query(journal *j, jstmt id, const char *types, ...);
int journal_next(journal *j, jstmt id);
struct sqlite3_stmt *journal_row(journal *j, jstmt id);
void journal_reset(journal *j, jstmt id);

/*
 * Run fn(j, arg) inside ONE deferred (read) transaction: one WAL snapshot
 * for many statements.  Not inside a write transaction of j.  Returns 0,
 * or fn's non-zero value, or -1 if BEGIN failed.
 */
int journal_read_txn(journal *j, journal_txn_fn fn, void *arg);

/*
 * journal_txn with SQLite's per-row foreign key checks off: for a
 * transaction that inserts many rows under ONE parent row, which fn checks
 * itself (journal_parent_batch) before inserting.  Returns as journal_txn;
 * -1 also when the checks could not be turned back on.
 */
int journal_bulk_txn(journal *j, journal_txn_fn fn, void *arg);

/* Inside a write transaction: 0 when batch row batch_row exists, else -1
 * (refused: a foreign key journal_bulk_txn does not check). */
int journal_parent_batch(journal *j, long long batch_row);

/* 1 when j is inside a write transaction (journal_begin .. commit). */
int journal_in_txn(const journal *j);

/* Record "<what>: <why>", a reason of ours (out of memory, a refused
 * statement), as the handle's error, log it, return -1. */
int journal_refuse(journal *j, const char *what, const char *why);

/* The raw connection: row counts, rowids, the checkpointer, unit tests. */
struct sqlite3 *journal_db(journal *j);

/* The journal file's path, for messages. */
const char *journal_file_path(const journal *j);

/*
 * sqlite3_exec: only for the SQL that cannot be a cached statement of the
 * tables - a connection's set-up pragmas, the foreign-key switch of
 * journal_bulk_txn, and the migrations (scripts of many statements, plus
 * PRAGMA user_version=N, whose value cannot be a bound parameter).  0, or
 * -1 with the handle's error "<what>: <SQLite's message>" (logged).
 */
int journal_exec_sql(journal *j, const char *sql, const char *what);

/* journal_migrate.c: bring an open journal to this build's schema (a new
 * one created in one transaction, an older one upgraded after a backup
 * copy).  0, or -1 with *err (malloc'd) naming the journal and why. */
int journal_migrate(journal *j, char **err);

/* Prepare every statement of the tables on j: 0, or -1 naming the first
 * that has no text, two texts, or does not compile (a unit test). */
int journal_prepare_all(journal *j);

/* journal_checkpoint.c: WAL checkpoints on a thread of their own. */
void journal_ckpt_attach(struct sqlite3 *db);   /* every connection */
void journal_ckpt_start(const char *path);      /* the server's primary */
void journal_ckpt_stop(void);                   /* before the primary closes */

#endif
