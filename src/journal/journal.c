/*
 * journal.c - the SQLite journal's connections: open (file modes, the
 * server lock, pragmas; the migrations are journal_migrate.c's), write
 * and read transactions under
 * the process-wide write mutex, and the statement cache with the one way
 * to run a statement (journal_internal.h).
 *
 * The tables' SQL is in journal_requests.c, journal_batches.c and
 * journal_files.c; the WAL checkpoints in journal_checkpoint.c.  See
 * journal.h for the threading rules and doc/journal.md for the data model.
 */
/* F_OFD_SETLK (Linux >= 3.15) is a GNU extension of <fcntl.h>. */
#define _GNU_SOURCE

#include "journal/journal.h"
#include "journal/journal_internal.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "base/testpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Serialises write transactions of all connections of this process. */
static pthread_mutex_t write_mu = PTHREAD_MUTEX_INITIALIZER;

struct journal {
    sqlite3 *db;
    char *path;
    int sync_full;
    long busy_timeout_ms;
    long lock_wait_ms;          /* journal_begin's wait for another process's
                                   write lock; -1 = without limit */
    int lock_fd;                /* -1 unless this handle holds the lock */
    int owns_ckpt;              /* started the checkpointer (journal_checkpoint.c) */
    int in_txn;
    int owns_db;                /* 0: a journal_share handle on another
                                   handle's connection */
    char errmsg[256];
    sqlite3_stmt *stmt[JSTMT_COUNT];    /* prepared on first use, kept */
};

double journal_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *journal_errmsg(const journal *j)
{
    return j->errmsg;
}

struct sqlite3 *journal_db(journal *j)
{
    return j->db;
}

const char *journal_file_path(const journal *j)
{
    return j->path;
}

/* Remember and log a failure of `what`. */
static int fail(journal *j, const char *what)
{
    snprintf(j->errmsg, sizeof j->errmsg, "%s: %s", what,
             j->db ? sqlite3_errmsg(j->db) : "no database");
    log_error("journal %s", j->errmsg);
    return -1;
}

/* A failure that is not SQLite's: a refused statement, a misuse, no memory. */
static int refuse(journal *j, const char *what, const char *why)
{
    snprintf(j->errmsg, sizeof j->errmsg, "%s: %s", what, why);
    log_error("journal %s", j->errmsg);
    return -1;
}

int journal_refuse(journal *j, const char *what, const char *why)
{
    return refuse(j, what, why);
}

/*
 * sqlite3_exec: only for the SQL that cannot be a cached statement of the
 * tables - a connection's set-up pragmas (run once per connection), the
 * foreign-key switch of journal_bulk_txn, and the migrations (scripts of
 * many statements, plus PRAGMA user_version=N, whose value cannot be a
 * bound parameter).
 */
int journal_exec_sql(journal *j, const char *sql, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(j->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(j->errmsg, sizeof j->errmsg, "%s: %s", what,
                 msg ? msg : sqlite3_errmsg(j->db));
        log_error("journal %s", j->errmsg);
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}


/* ---- transactions -------------------------------------------------------- */

/* Each attempt at the write lock waits this long inside SQLite's busy
 * handler while holding write_mu; between attempts write_mu is released so
 * that a connection with a shorter wait (the reader thread's accept
 * commit) is never stuck behind one with a longer wait. */
#define LOCK_SLICE_MS 100
/* Waits longer than this are logged: the operator should know why. */
#define LOCK_LOG_AFTER_S 1.0

void journal_set_lock_wait(journal *j, long ms)
{
    j->lock_wait_ms = ms;
}

static void lock_pause(void)
{
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

static int cached(journal *j, jstmt id, sqlite3_stmt **out);
static const char *what_of(jstmt id);

/* ---- fault injection (tests only) ----------------------------------------- */

/*
 * BOINC_GAHP_TEST_FAULT_AT=step[:N] makes the N-th sqlite3_step of this
 * process (every statement of journal.c's runner, BEGIN and COMMIT
 * included) return an error without running; step.<what>[:N] counts only
 * the statement of that name (journal_sql's what, e.g. "insert request").
 * BOINC_GAHP_TEST_STEP_ERROR picks the code: full (SQLITE_FULL, the
 * default), ioerr (SQLITE_IOERR) or constraint (SQLITE_CONSTRAINT).  The
 * statement has no effect, as when SQLite fails it (issue 29: no test
 * made a write fail inside a transaction).  doc/testing.md has the sweep.
 */
static int injected_code = SQLITE_FULL;
static pthread_once_t inject_once = PTHREAD_ONCE_INIT;

static void inject_setup(void)
{
    const char *v = getenv("BOINC_GAHP_TEST_STEP_ERROR");
    if (v != NULL && strcmp(v, "ioerr") == 0)
        injected_code = SQLITE_IOERR;
    else if (v != NULL && strcmp(v, "constraint") == 0)
        injected_code = SQLITE_CONSTRAINT;
}

/* 0, or the SQLite code this step of id must fail with (j->errmsg set). */
static int injected_step(journal *j, jstmt id)
{
    /* the second test only runs when the first did not count this hit */
    if (!testfault("step", NULL) && !testfault("step", what_of(id)))
        return 0;
    pthread_once(&inject_once, inject_setup);
    snprintf(j->errmsg, sizeof j->errmsg, "%s: %s (injected)", what_of(id),
             sqlite3_errstr(injected_code));
    log_error("journal %s", j->errmsg);
    return injected_code;
}

/* sqlite3_step, or the injected failure. */
static int step_or_fault(journal *j, jstmt id, sqlite3_stmt *st)
{
    int rc = injected_step(j, id);
    return rc != 0 ? rc : sqlite3_step(st);
}

/* Run one of the connection's transaction statements (cached like every
 * statement: the accept path runs BEGIN and COMMIT for every burst, and
 * sqlite3_exec would parse them each time).  Returns the SQLite code. */
static int run_txn_stmt(journal *j, jstmt id)
{
    sqlite3_stmt *st;
    int rc = cached(j, id, &st);
    if (rc != SQLITE_OK)
        return rc;
    rc = step_or_fault(j, id, st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* One BEGIN IMMEDIATE attempt under write_mu: SQLITE_OK (write_mu kept),
 * or the SQLite code (write_mu released). */
static int try_begin(journal *j)
{
    pthread_mutex_lock(&write_mu);
    sqlite3_busy_timeout(j->db, LOCK_SLICE_MS);
    int rc = run_txn_stmt(j, JSTMT_BEGIN_WRITE);
    sqlite3_busy_timeout(j->db, (int)j->busy_timeout_ms);
    if (rc != SQLITE_OK)
        pthread_mutex_unlock(&write_mu);
    return rc;
}

/*
 * Another process (an auditor's sqlite3 shell, a backup) may hold the
 * write lock for a while: retry until lock_wait_ms has passed, logging
 * once why we wait (doc/journal.md, "Locks held by other processes").
 */
int journal_begin(journal *j)
{
    double start = journal_now(), waited = 0;
    int logged = 0, rc;
    while ((rc = try_begin(j)) == SQLITE_BUSY) {
        waited = journal_now() - start;
        if (j->lock_wait_ms >= 0 && waited * 1000 >= (double)j->lock_wait_ms)
            break;
        if (!logged && waited >= LOCK_LOG_AFTER_S) {
            if (j->lock_wait_ms < 0)
                log_warn("journal %s is locked by another process: waiting for "
                         "it without limit", j->path);
            else
                log_warn("journal %s is locked by another process: waiting up "
                         "to %.1f s", j->path, (double)j->lock_wait_ms / 1000);
            logged = 1;
        }
        lock_pause();
    }
    if (rc != SQLITE_OK) {
        snprintf(j->errmsg, sizeof j->errmsg, "begin: %s%s", sqlite3_errstr(rc),
                 rc == SQLITE_BUSY ? " (journal locked by another process)" : "");
        log_error("journal %s", j->errmsg);
        return -1;
    }
    if (logged)
        log_info("journal %s: write lock obtained after %.1f s", j->path,
                 journal_now() - start);
    j->in_txn = 1;
    return 0;
}

/* ROLLBACK; harmless when SQLite already rolled the transaction back. */
static void rollback_now(journal *j)
{
    if (!sqlite3_get_autocommit(j->db))
        run_txn_stmt(j, JSTMT_ROLLBACK);
}

int journal_commit(journal *j)
{
    int rc = 0;
    int src = run_txn_stmt(j, JSTMT_COMMIT);
    if (src != SQLITE_OK) {
        /* an injected failure left no message in the connection */
        rc = sqlite3_errcode(j->db) == src ? fail(j, "commit")
                                          : refuse(j, "commit", sqlite3_errstr(src));
        rollback_now(j);
    }
    j->in_txn = 0;
    pthread_mutex_unlock(&write_mu);
    return rc;
}

void journal_rollback(journal *j)
{
    if (!j->in_txn)
        return;
    rollback_now(j);
    j->in_txn = 0;
    pthread_mutex_unlock(&write_mu);
}

int journal_in_txn(const journal *j)
{
    return j->in_txn;
}

int journal_txn(journal *j, journal_txn_fn fn, void *arg)
{
    /* journal_begin inside a transaction would wait for write_mu, which
     * this thread holds: refuse instead. */
    if (j->in_txn)
        return refuse(j, "begin", "already inside a write transaction");
    if (journal_begin(j) != 0)
        return -1;
    int rc = fn(j, arg);
    if (rc != 0) {
        journal_rollback(j);
        return rc;
    }
    return journal_commit(j);
}

/*
 * SQLite checks a foreign key for every row an INSERT writes (a lookup of
 * the parent row): for the 10,000 jobs or 10,001 files a resubmit inserts
 * under one batch that was about a third of the transaction (jobs 27 ->
 * 20 ms, files 38 -> 26 ms, doc/performance.md).  The caller checks that
 * parent once, inside fn.  The pragma is a no-op inside a transaction, so
 * it is set around it; it is the connection's own (a handle is used by one
 * thread at a time), and it is compiled each time because SQLite applies
 * a flag pragma when it prepares it, not when a cached statement runs.
 * Each switch also expires the connection's prepared statements, which
 * SQLite prepares again at their next use: so this is for transactions
 * whose rows cost far more than that, not for every write.
 */
int journal_bulk_txn(journal *j, journal_txn_fn fn, void *arg)
{
    if (j->in_txn)
        return refuse(j, "begin", "already inside a write transaction");
    if (journal_exec_sql(j, "PRAGMA foreign_keys=OFF", "foreign keys off") != 0)
        return -1;
    int rc = journal_txn(j, fn, arg);
    /* on failure every later transaction of the handle would go unchecked:
     * report it, even when fn's transaction committed */
    if (journal_exec_sql(j, "PRAGMA foreign_keys=ON", "foreign keys on") != 0 && rc == 0)
        rc = -1;
    return rc;
}

/* A read transaction takes no lock of this process: it only pins one WAL
 * snapshot.  Ending it cannot lose anything, but it must end: a COMMIT
 * that fails (an I/O error, the fault sweep's injected one) would leave
 * the connection inside it, and its next BEGIN IMMEDIATE would fail
 * forever; so a failed COMMIT is followed by a ROLLBACK. */
int journal_read_txn(journal *j, journal_txn_fn fn, void *arg)
{
    if (j->in_txn)
        return refuse(j, "read transaction", "inside a write transaction");
    if (run_txn_stmt(j, JSTMT_BEGIN_READ) != SQLITE_OK)
        return fail(j, "begin read");
    int rc = fn(j, arg);
    if (!sqlite3_get_autocommit(j->db) &&
        run_txn_stmt(j, rc == 0 ? JSTMT_END_READ : JSTMT_ROLLBACK) != SQLITE_OK)
        rollback_now(j);
    return rc;
}

/* ---- files, lock, connection --------------------------------------------- */

/* Create the file 0600 if missing and force 0600 if it is wider. */
static int ensure_private_file(const char *path, int must_create, char **err)
{
    int fd = open(path, O_RDWR | O_CLOEXEC | (must_create ? O_CREAT : 0), 0600);
    if (fd < 0) {
        if (!must_create && errno == ENOENT)
            return 0;
        *err = str_printf("cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        *err = str_printf("cannot stat %s: %s", path, strerror(errno));
        rc = -1;
    } else if ((st.st_mode & 077) != 0 && fchmod(fd, 0600) != 0) {
        *err = str_printf("cannot chmod 0600 %s: %s", path, strerror(errno));
        rc = -1;
    }
    close(fd);
    return rc;
}

/* The server lock: journal_internal.h, journal_server_lock_byte. */
void journal_server_lock_byte(struct flock *fl)
{
    memset(fl, 0, sizeof *fl);
    fl->l_type = F_WRLCK;
    fl->l_whence = SEEK_SET;
    fl->l_start = (off_t)1 << 62;
    fl->l_len = 1;
}

static int take_server_lock(journal *j, char **err)
{
    int fd = open(j->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        *err = str_printf("cannot open journal %s: %s", j->path, strerror(errno));
        return -1;
    }
    struct flock fl;
    journal_server_lock_byte(&fl);
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        int e = errno;
        struct stat st;
        int known = fstat(fd, &st) == 0;
        *err = e == EAGAIN || e == EACCES
            ? str_printf("journal %s is in use by another boinc_gahp process "
                         "(the database file, device %llu inode %llu, is "
                         "locked; `boinc_gahp journal status` names its pid)", j->path,
                         known ? (unsigned long long)st.st_dev : 0ULL,
                         known ? (unsigned long long)st.st_ino : 0ULL)
            : str_printf("cannot lock journal %s: %s", j->path, strerror(e));
        close(fd);
        return -1;
    }
    j->lock_fd = fd;
    return 0;
}

/*
 * SQLite's memory statistics (sqlite3_memory_used, which nothing here
 * reads) take a process-wide mutex in every allocation SQLite makes: a
 * lock and an unlock per row's worth of work, across all the threads'
 * connections.  Turned off once, before the process's first connection;
 * SQLite refuses the setting once it is initialised (a unit test that
 * opened a database itself first), which only keeps the statistics.
 */
static pthread_once_t sqlite_setup_once = PTHREAD_ONCE_INIT;

/* Allocation faults (tests only, base/testpoint.h): SQLite's default
 * allocator, with the armed allocation failing as it would when memory
 * runs out (SQLite then answers SQLITE_NOMEM). */
static sqlite3_mem_methods sqlite_default_mem;

static void *sqlite_malloc_or_fault(int n)
{
    return testfault_alloc("sqlite") ? NULL : sqlite_default_mem.xMalloc(n);
}

static void *sqlite_realloc_or_fault(void *p, int n)
{
    return testfault_alloc("sqlite") ? NULL : sqlite_default_mem.xRealloc(p, n);
}

static void sqlite_alloc_faults(void)
{
    sqlite3_mem_methods m;
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_default_mem) != SQLITE_OK)
        return;
    m = sqlite_default_mem;
    m.xMalloc = sqlite_malloc_or_fault;
    m.xRealloc = sqlite_realloc_or_fault;
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) != SQLITE_OK)
        log_warn("journal: SQLite was initialised already; no allocation faults in it");
}

static void sqlite_setup(void)
{
    if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK)
        log_debug("journal: SQLite was initialised already; its memory statistics stay on");
    if (testfault_armed("alloc"))
        sqlite_alloc_faults();
}

/* new_file: the journal has no content yet (journal_file_empty). */
static int connect_db(journal *j, int new_file, char **err)
{
    pthread_once(&sqlite_setup_once, sqlite_setup);
    int rc = sqlite3_open_v2(j->path, &j->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        *err = str_printf("cannot open journal %s: %s", j->path,
                          j->db ? sqlite3_errmsg(j->db) : sqlite3_errstr(rc));
        return -1;
    }
    sqlite3_busy_timeout(j->db, (int)j->busy_timeout_ms);
    /* On an empty file only, and before journal_mode=WAL writes its first
     * page: afterwards the mode changes only by a VACUUM, and on a journal
     * that has it already the pragma is a write (SQLite stores it again). */
    if (new_file && journal_exec_sql(j, "PRAGMA auto_vacuum=INCREMENTAL", "vacuum mode") != 0) {
        *err = str_printf("cannot configure journal %s: %s", j->path, j->errmsg);
        return -1;
    }
    /* temp_store=MEMORY: statement journals (every multi-row statement
     * inside a transaction keeps one) and sorts stay in memory instead of
     * spilling to files in /var/tmp past 64 KiB: a 10,000-job submit
     * wrote 24,000 pages to such files, one syscall each. */
    char *pragmas = str_printf("PRAGMA journal_mode=WAL; PRAGMA synchronous=%s;"
                               " PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;",
                               j->sync_full ? "FULL" : "NORMAL");
    if (pragmas == NULL || journal_exec_sql(j, pragmas, "pragmas") != 0) {
        *err = str_printf("cannot configure journal %s: %s", j->path, j->errmsg);
        free(pragmas);
        return -1;
    }
    free(pragmas);
    journal_ckpt_attach(j->db);
    return 0;
}

/* 1 when the journal has no content yet: its file and any -wal beside it
 * are empty or absent (a crash can leave the whole journal in the -wal). */
static int journal_file_empty(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > 0)
        return 0;
    char *wal = str_printf("%s-wal", path);
    if (wal == NULL)
        return 0;
    int empty = stat(wal, &st) != 0 || st.st_size == 0;
    free(wal);
    return empty;
}

static journal *journal_alloc(const char *path, int sync_full, long busy_ms)
{
    journal *j = calloc(1, sizeof *j);
    if (j == NULL)
        return NULL;
    j->path = strdup(path);
    if (j->path == NULL) {
        free(j);
        return NULL;
    }
    j->sync_full = sync_full;
    j->busy_timeout_ms = busy_ms;
    j->lock_wait_ms = busy_ms;
    j->lock_fd = -1;
    j->owns_db = 1;
    return j;
}

/*
 * Force 0600 on an existing sidecar WITHOUT opening it: closing any file
 * descriptor of the -shm file would drop every POSIX lock this process
 * holds on it, among them SQLite's "dead man switch" shared lock, and an
 * outside connection (an auditor's sqlite3 shell) closing later would then
 * think it was the last one, truncate the -shm file and make this process
 * die of SIGBUS in its mapping.
 */
static int ensure_private_sidecar(const char *path, char **err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        *err = str_printf("cannot stat %s: %s", path, strerror(errno));
        return -1;
    }
    if ((st.st_mode & 077) != 0 && chmod(path, 0600) != 0) {
        *err = str_printf("cannot chmod 0600 %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int fix_sidecar_modes(journal *j, char **err)
{
    static const char *const suffixes[] = { "-wal", "-shm" };
    for (size_t i = 0; i < 2; i++) {
        char *p = str_printf("%s%s", j->path, suffixes[i]);
        if (p == NULL) {
            *err = str_printf("out of memory");
            return -1;
        }
        int rc = ensure_private_sidecar(p, err);
        free(p);
        if (rc != 0)
            return -1;
    }
    return 0;
}

journal *journal_open(const journal_options *opts, char **err)
{
    *err = NULL;
    journal *j = journal_alloc(opts->path, opts->sync_full, opts->busy_timeout_ms);
    if (j == NULL) {
        *err = str_printf("out of memory");
        return NULL;
    }
    /* Start-up waits for another process's lock without limit: the
     * client waits for the banner without a timeout, and an exit here
     * would hold every job of the user.  main() sets the limits of the
     * running server afterwards.  The server lock is on the database file
     * itself, so the file is made (private) before it is locked. */
    j->lock_wait_ms = -1;
    int ok = ensure_private_file(j->path, 1, err) == 0 &&
             (!opts->take_lock || take_server_lock(j, err) == 0);
    if (ok)
        ok = connect_db(j, journal_file_empty(j->path), err) == 0 &&
             fix_sidecar_modes(j, err) == 0 && journal_migrate(j, err) == 0;
    if (!ok) {
        if (*err == NULL)
            *err = str_printf("cannot open journal %s", opts->path);
        journal_close(j);
        return NULL;
    }
    if (opts->take_lock) {
        journal_ckpt_start(j->path);
        j->owns_ckpt = 1;
    }
    return j;
}

journal *journal_connect(const journal *primary, char **err)
{
    *err = NULL;
    journal *j = journal_alloc(primary->path, primary->sync_full,
                               primary->busy_timeout_ms);
    if (j == NULL) {
        *err = str_printf("out of memory");
        return NULL;
    }
    if (connect_db(j, 0, err) != 0) {
        journal_close(j);
        return NULL;
    }
    return j;
}

journal *journal_share(journal *owner, char **err)
{
    *err = NULL;
    journal *j = journal_alloc(owner->path, owner->sync_full, owner->busy_timeout_ms);
    if (j == NULL) {
        *err = str_printf("out of memory");
        return NULL;
    }
    j->db = owner->db;
    j->owns_db = 0;
    return j;
}

void journal_close(journal *j)
{
    if (j == NULL)
        return;
    journal_rollback(j);
    if (j->owns_ckpt)
        journal_ckpt_stop();
    for (size_t i = 0; i < JSTMT_COUNT; i++)
        sqlite3_finalize(j->stmt[i]);
    if (j->owns_db && j->db != NULL && sqlite3_close(j->db) != SQLITE_OK)
        log_warn("journal close: %s", sqlite3_errmsg(j->db));
    if (j->lock_fd >= 0)
        close(j->lock_fd);      /* releases the server lock */
    free(j->path);
    free(j);
}

int journal_schema_version(journal *j, int *version)
{
    int rc = journal_query(j, JSTMT_USER_VERSION, "");
    if (rc == 1)
        *version = sqlite3_column_int(journal_row(j, JSTMT_USER_VERSION), 0);
    journal_reset(j, JSTMT_USER_VERSION);
    if (rc == 0)
        return refuse(j, "user_version", "no row");
    return rc == 1 ? 0 : -1;
}


/* ---- statement cache ----------------------------------------------------- */

/* This file's statements: the transactions and the schema version. */
static const journal_sql sql_core[JSTMT_COUNT] = {
    [JSTMT_BEGIN_WRITE] = { "begin", "BEGIN IMMEDIATE" },
    [JSTMT_BEGIN_READ] = { "begin read", "BEGIN" },
    /* a read transaction's COMMIT, named apart so that a fault can pick it */
    [JSTMT_END_READ] = { "end read", "COMMIT" },
    [JSTMT_COMMIT] = { "commit", "COMMIT" },
    [JSTMT_ROLLBACK] = { "rollback", "ROLLBACK" },
    [JSTMT_USER_VERSION] = { "user_version", "PRAGMA user_version" },
};

static const journal_sql *const sql_tables[] = {
    sql_core, journal_sql_requests, journal_sql_batches, journal_sql_files,
    journal_sql_blah, journal_sql_claims,
};
#define NTABLES (sizeof sql_tables / sizeof sql_tables[0])

/* The entry of id; NULL when no table, or more than one, has its text. */
static const journal_sql *sql_of(jstmt id)
{
    const journal_sql *found = NULL;
    if ((unsigned)id >= JSTMT_COUNT)
        return NULL;
    for (size_t t = 0; t < NTABLES; t++) {
        if (sql_tables[t][id].sql == NULL)
            continue;
        if (found != NULL)
            return NULL;
        found = &sql_tables[t][id];
    }
    return found;
}

static const char *what_of(jstmt id)
{
    const journal_sql *s = sql_of(id);
    return s != NULL ? s->what : "statement";
}

/*
 * The connection's statement id, prepared on its first use and kept
 * (SQLITE_PREPARE_PERSISTENT), reset with its bindings cleared.  Returns
 * the SQLite code (SQLITE_MISUSE for an id without text, SQLITE_BUSY for
 * a statement still stepping: a re-entrant use), with *out NULL on error.
 */
static int cached(journal *j, jstmt id, sqlite3_stmt **out)
{
    *out = NULL;
    if ((unsigned)id >= JSTMT_COUNT)
        return SQLITE_MISUSE;
    sqlite3_stmt *st = j->stmt[id];
    if (st == NULL) {
        const journal_sql *s = sql_of(id);
        if (s == NULL)
            return SQLITE_MISUSE;
        int rc = sqlite3_prepare_v3(j->db, s->sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
        if (rc != SQLITE_OK)
            return rc;
        j->stmt[id] = st;
    } else if (sqlite3_stmt_busy(st)) {
        return SQLITE_BUSY;
    } else {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    *out = st;
    return SQLITE_OK;
}

/* One parameter from ap by its type letter (journal_internal.h). */
static int bind_one(sqlite3_stmt *st, int i, char type, va_list *ap)
{
    switch (type) {
    case 't':
        return sqlite3_bind_text(st, i, va_arg(*ap, const char *), -1, SQLITE_STATIC);
    case 'i':
        return sqlite3_bind_int64(st, i, va_arg(*ap, long long));
    case 'd':
        return sqlite3_bind_double(st, i, va_arg(*ap, double));
    case 'k': {
        long long row = va_arg(*ap, long long);
        return row > 0 ? sqlite3_bind_int64(st, i, row) : sqlite3_bind_null(st, i);
    }
    default:
        return SQLITE_MISUSE;
    }
}

/*
 * Statement id of j ready to step: cached, refused when it writes outside
 * a write transaction, its parameters bound from types (text binds are
 * SQLITE_STATIC: the statement is reset and its bindings cleared before
 * the caller's strings go).  NULL after logging why.
 */
static sqlite3_stmt *bound(journal *j, jstmt id, const char *types, va_list *ap)
{
    sqlite3_stmt *st;
    int rc = cached(j, id, &st);
    if (rc == SQLITE_MISUSE)
        refuse(j, what_of(id), "no statement text, or two (journal_prepare_all)");
    else if (rc == SQLITE_BUSY)
        refuse(j, what_of(id), "statement still in use (re-entered from a row callback?)");
    else if (rc != SQLITE_OK)
        fail(j, what_of(id));
    if (rc != SQLITE_OK)
        return NULL;
    /* The convention of journal.h, kept for good: every write holds the
     * process-wide write mutex, so none waits in SQLite's busy handler
     * for another thread of this process. */
    if (!sqlite3_stmt_readonly(st) && !j->in_txn) {
        refuse(j, what_of(id), "a write outside a write transaction");
        return NULL;
    }
    /* A type string that does not match the statement is a programming
     * error: refuse it rather than bind past the parameters. */
    int nparams = sqlite3_bind_parameter_count(st);
    if ((size_t)nparams != strlen(types)) {
        char why[64];
        snprintf(why, sizeof why, "%zu bind types for %d parameters", strlen(types), nparams);
        refuse(j, what_of(id), why);
        return NULL;
    }
    for (int i = 0; types[i] != '\0'; i++) {
        if (bind_one(st, i + 1, types[i], ap) != SQLITE_OK) {
            fail(j, what_of(id));
            sqlite3_clear_bindings(st);
            return NULL;
        }
    }
    return st;
}

/* Step st: 1 row, 0 done (st reset), -1 error (logged, st reset). */
static int step(journal *j, jstmt id, sqlite3_stmt *st)
{
    int injected = injected_step(j, id);
    int rc = injected != 0 ? injected : sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    /* the message before reset; an injected one is set already */
    int result = rc == SQLITE_DONE ? 0 : injected != 0 ? -1 : fail(j, what_of(id));
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return result;
}

/* Bind, step once, reset: 0, or -1 (logged). */
static int run_v(journal *j, jstmt id, const char *types, va_list *ap)
{
    sqlite3_stmt *st = bound(j, id, types, ap);
    if (st == NULL)
        return -1;
    int rc = step(j, id, st);
    journal_reset(j, id);
    return rc < 0 ? -1 : 0;
}

int journal_run(journal *j, jstmt id, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    int rc = run_v(j, id, types, &ap);
    va_end(ap);
    return rc;
}

/* journal_run_txn: the statement and its arguments, for journal_txn. */
typedef struct {
    jstmt id;
    const char *types;
    va_list ap;
} run_args;

static int run_in_txn(journal *j, void *arg)
{
    run_args *r = arg;
    return run_v(j, r->id, r->types, &r->ap);
}

int journal_run_txn(journal *j, jstmt id, const char *types, ...)
{
    run_args r;
    r.id = id;
    r.types = types;
    va_start(r.ap, types);
    int rc = journal_txn(j, run_in_txn, &r);
    va_end(r.ap);
    return rc;
}

int journal_query(journal *j, jstmt id, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    sqlite3_stmt *st = bound(j, id, types, &ap);
    va_end(ap);
    if (st == NULL)
        return -1;
    return step(j, id, st);
}

int journal_next(journal *j, jstmt id)
{
    if ((unsigned)id >= JSTMT_COUNT || j->stmt[id] == NULL)
        return refuse(j, what_of(id), "stepped before journal_query");
    return step(j, id, j->stmt[id]);
}

sqlite3_stmt *journal_row(journal *j, jstmt id)
{
    return (unsigned)id < JSTMT_COUNT ? j->stmt[id] : NULL;
}

void journal_reset(journal *j, jstmt id)
{
    if ((unsigned)id < JSTMT_COUNT && j->stmt[id] != NULL) {
        sqlite3_reset(j->stmt[id]);
        sqlite3_clear_bindings(j->stmt[id]);
    }
}

int journal_prepare_all(journal *j)
{
    for (int id = 0; id < JSTMT_COUNT; id++) {
        sqlite3_stmt *st;
        int rc = cached(j, (jstmt)id, &st);
        if (rc == SQLITE_OK)
            continue;
        char what[64];
        snprintf(what, sizeof what, "statement %d (%s)", id, what_of((jstmt)id));
        return rc == SQLITE_MISUSE ? refuse(j, what, "no text, or two") : fail(j, what);
    }
    return 0;
}
