/*
 * journal.c - SQLite journal: open/lock/migrate, sessions, projects,
 * requests (write-ahead, group-committed completions, delivery), pruning.
 *
 * The only file (with src/journal_*.c) that contains SQL.  See journal.h
 * for the threading rules and doc/journal.md for the data model.
 */
/* F_OFD_SETLK (Linux >= 3.15) is a GNU extension of <fcntl.h>. */
#define _GNU_SOURCE

#include "journal/journal.h"
#include "journal/journal_internal.h"

#include "base/log.h"
#include "migrations.h"
#include "base/strbuf.h"

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

/* NULL-terminated table emitted next to the .incbin'd migration texts. */
extern const char *const migration_table[];

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
    sqlite3_stmt *st_begin;     /* BEGIN IMMEDIATE / COMMIT / ROLLBACK,
                                   prepared once per connection */
    sqlite3_stmt *st_commit;
    sqlite3_stmt *st_rollback;
    sqlite3_stmt *st_insert_request;
    sqlite3_stmt *st_complete;
    sqlite3_stmt *st_delivered;
    sqlite3_stmt *st_project_find;
    sqlite3_stmt *st_project_insert;
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

const char *journal_path(const journal *j)
{
    return j->path;
}

struct sqlite3 *journal_db(journal *j)
{
    return j->db;
}

int journal_migration_count(void)
{
    return MIGRATION_COUNT;
}

const char *journal_migration_text(int n)
{
    if (n < 1 || n > MIGRATION_COUNT)
        return NULL;
    return migration_table[n - 1];
}

/* Remember and log a failure of `what`. */
static int fail(journal *j, const char *what)
{
    snprintf(j->errmsg, sizeof j->errmsg, "%s: %s", what,
             j->db ? sqlite3_errmsg(j->db) : "no database");
    log_error("journal %s", j->errmsg);
    return -1;
}

static int exec_sql(journal *j, const char *sql, const char *what)
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

/* Run one of the connection's transaction statements (prepared on first
 * use and kept: the accept path runs BEGIN and COMMIT for every burst, and
 * sqlite3_exec would parse them each time).  Returns the SQLite code. */
static int run_txn_stmt(journal *j, sqlite3_stmt **st, const char *sql)
{
    if (*st == NULL) {
        int rc = sqlite3_prepare_v3(j->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
        if (rc != SQLITE_OK)
            return rc;
    }
    int rc = sqlite3_step(*st);
    sqlite3_reset(*st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* One BEGIN IMMEDIATE attempt under write_mu: SQLITE_OK (write_mu kept),
 * or the SQLite code (write_mu released). */
static int try_begin(journal *j)
{
    pthread_mutex_lock(&write_mu);
    sqlite3_busy_timeout(j->db, LOCK_SLICE_MS);
    int rc = run_txn_stmt(j, &j->st_begin, "BEGIN IMMEDIATE");
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
        run_txn_stmt(j, &j->st_rollback, "ROLLBACK");
}

int journal_commit(journal *j)
{
    int rc = 0;
    if (run_txn_stmt(j, &j->st_commit, "COMMIT") != SQLITE_OK) {
        rc = fail(j, "commit");
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
 */
#define JOURNAL_LOCK_OFFSET ((off_t)1 << 62)

static int take_server_lock(journal *j, char **err)
{
    int fd = open(j->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        *err = str_printf("cannot open journal %s: %s", j->path, strerror(errno));
        return -1;
    }
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = JOURNAL_LOCK_OFFSET;
    fl.l_len = 1;
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        int e = errno;
        struct stat st;
        int known = fstat(fd, &st) == 0;
        *err = e == EAGAIN || e == EACCES
            ? str_printf("journal %s is in use by another boinc_gahp process "
                         "(the database file, device %llu inode %llu, is "
                         "locked)", j->path,
                         known ? (unsigned long long)st.st_dev : 0ULL,
                         known ? (unsigned long long)st.st_ino : 0ULL)
            : str_printf("cannot lock journal %s: %s", j->path, strerror(e));
        close(fd);
        return -1;
    }
    j->lock_fd = fd;
    return 0;
}

static int connect_db(journal *j, char **err)
{
    int rc = sqlite3_open_v2(j->path, &j->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        *err = str_printf("cannot open journal %s: %s", j->path,
                          j->db ? sqlite3_errmsg(j->db) : sqlite3_errstr(rc));
        return -1;
    }
    sqlite3_busy_timeout(j->db, (int)j->busy_timeout_ms);
    char *pragmas = str_printf("PRAGMA journal_mode=WAL; PRAGMA synchronous=%s;"
                               " PRAGMA foreign_keys=ON;",
                               j->sync_full ? "FULL" : "NORMAL");
    if (pragmas == NULL || exec_sql(j, pragmas, "pragmas") != 0) {
        *err = str_printf("cannot configure journal %s: %s", j->path, j->errmsg);
        free(pragmas);
        return -1;
    }
    free(pragmas);
    journal_ckpt_attach(j->db);
    return 0;
}

static int apply_migrations(journal *j, char **err)
{
    int version;
    if (journal_schema_version(j, &version) != 0) {
        *err = str_printf("cannot read schema version: %s", j->errmsg);
        return -1;
    }
    if (version > MIGRATION_COUNT) {
        *err = str_printf("journal %s has schema version %d, newer than this "
                          "program (%d)", j->path, version, MIGRATION_COUNT);
        return -1;
    }
    for (int n = version + 1; n <= MIGRATION_COUNT; n++) {
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", n);
        if (journal_begin(j) != 0)
            goto failed;
        if (exec_sql(j, migration_table[n - 1], "migration") != 0 ||
            exec_sql(j, pragma, "migration version") != 0) {
            journal_rollback(j);
            goto failed;
        }
        if (journal_commit(j) != 0)
            goto failed;
        log_info("journal migrated to schema version %d", n);
        continue;
failed:
        *err = str_printf("cannot apply migration %d: %s", n, j->errmsg);
        return -1;
    }
    return 0;
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
    if (ensure_private_file(j->path, 1, err) != 0 ||
        (opts->take_lock && take_server_lock(j, err) != 0) ||
        connect_db(j, err) != 0 || fix_sidecar_modes(j, err) != 0 ||
        apply_migrations(j, err) != 0) {
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
    if (connect_db(j, err) != 0) {
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
    sqlite3_finalize(j->st_begin);
    sqlite3_finalize(j->st_commit);
    sqlite3_finalize(j->st_rollback);
    sqlite3_finalize(j->st_insert_request);
    sqlite3_finalize(j->st_complete);
    sqlite3_finalize(j->st_delivered);
    sqlite3_finalize(j->st_project_find);
    sqlite3_finalize(j->st_project_insert);
    if (j->owns_db && j->db != NULL && sqlite3_close(j->db) != SQLITE_OK)
        log_warn("journal close: %s", sqlite3_errmsg(j->db));
    if (j->lock_fd >= 0)
        close(j->lock_fd);      /* releases the server lock */
    free(j->path);
    free(j);
}

int journal_schema_version(journal *j, int *version)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(j->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return fail(j, "user_version");
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fail(j, "user_version");
    }
    *version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return 0;
}

/* ---- statement helpers --------------------------------------------------- */

static int prepare(journal *j, sqlite3_stmt **st, const char *sql)
{
    if (*st != NULL) {
        sqlite3_reset(*st);
        sqlite3_clear_bindings(*st);
        return 0;
    }
    if (sqlite3_prepare_v3(j->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return fail(j, "prepare");
    return 0;
}

/* Run a statement that returns no rows; resets it afterwards. */
static int step_done(journal *j, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return fail(j, what);
    return 0;
}

/* One-off statement with text/int64/double binds given by a format:
 * 't' text, 'i' int64, 'd' double, 'n' null. */
static int run_once_v(journal *j, const char *sql, const char *what,
                      const char *types, va_list ap)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(j->db, sql, -1, &st, NULL) != SQLITE_OK)
        return fail(j, what);
    /* A type string that does not match the statement is a programming
     * error: refuse it rather than bind past the parameters. */
    int nparams = sqlite3_bind_parameter_count(st);
    if ((size_t)nparams != strlen(types)) {
        sqlite3_finalize(st);
        snprintf(j->errmsg, sizeof j->errmsg, "%s: %zu bind types for %d parameters",
                 what, strlen(types), nparams);
        log_error("journal %s", j->errmsg);
        return -1;
    }
    for (int i = 0; types[i]; i++) {
        switch (types[i]) {
        case 't': sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT); break;
        case 'i': sqlite3_bind_int64(st, i + 1, va_arg(ap, long long)); break;
        case 'd': sqlite3_bind_double(st, i + 1, va_arg(ap, double)); break;
        default: sqlite3_bind_null(st, i + 1); break;
        }
    }
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return fail(j, what);
    return 0;
}

static int run_once(journal *j, const char *sql, const char *what,
                    const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    int rc = run_once_v(j, sql, what, types, ap);
    va_end(ap);
    return rc;
}

/* Shared with src/journal_*.c through journal_internal.h. */
int journal_fail(journal *j, const char *what)
{
    return fail(j, what);
}

int journal_run(journal *j, const char *sql, const char *what, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    int rc = run_once_v(j, sql, what, types, ap);
    va_end(ap);
    return rc;
}

/* ---- sessions ------------------------------------------------------------ */

int journal_session_begin(journal *j, const char *version, long long *session_id)
{
    if (journal_begin(j) != 0)
        return -1;
    if (run_once(j, "INSERT INTO sessions (started_at, pid, version) VALUES (?, ?, ?)",
                 "session insert", "dit", journal_now(), (long long)getpid(), version) != 0) {
        journal_rollback(j);
        return -1;
    }
    *session_id = sqlite3_last_insert_rowid(j->db);
    return journal_commit(j);
}

int journal_session_set_condor_version(journal *j, long long session_id,
                                       const char *condor_version)
{
    if (journal_begin(j) != 0)
        return -1;
    if (run_once(j, "UPDATE sessions SET condor_version = ? WHERE id = ?",
                 "session update", "ti", condor_version, session_id) != 0) {
        journal_rollback(j);
        return -1;
    }
    return journal_commit(j);
}

int journal_session_end(journal *j, long long session_id, int clean)
{
    if (journal_begin(j) != 0)
        return -1;
    if (run_once(j, "UPDATE sessions SET ended_at = ?, clean_exit = ? WHERE id = ?",
                 "session end", "dii", journal_now(), (long long)(clean != 0),
                 session_id) != 0) {
        journal_rollback(j);
        return -1;
    }
    return journal_commit(j);
}

/* ---- projects ------------------------------------------------------------ */

/*
 * A URL's password ("scheme://user:PASS@host/...") is a secret (issue 10
 * #11): split url into the form the views show, with "***" for it, and
 * the password (NULL when there is none).  Both malloc'd; -1 on ENOMEM.
 */
static int split_url_password(const char *url, char **shown, char **password)
{
    *shown = NULL;
    *password = NULL;
    const char *host = strstr(url, "://");
    size_t auth_len = host != NULL ? strcspn(host + 3, "/") : 0;
    const char *at = NULL, *colon = NULL;
    for (size_t i = 0; host != NULL && i < auth_len; i++)
        if (host[3 + i] == '@')
            at = host + 3 + i;      /* the last '@' ends the user info */
    if (at != NULL)
        colon = memchr(host + 3, ':', (size_t)(at - (host + 3)));
    if (colon == NULL || colon + 1 == at) {
        *shown = strdup(url);
        return *shown != NULL ? 0 : -1;
    }
    *password = strndup(colon + 1, (size_t)(at - colon - 1));
    *shown = str_printf("%.*s***%s", (int)(colon + 1 - url), url, at);
    return *shown != NULL && *password != NULL ? 0 : -1;
}

static void free_secret(char *s)
{
    if (s != NULL)
        memset(s, 0, strlen(s));
    free(s);
}

/* Keep the stored password of project id current (it may have changed). */
static int update_url_password(journal *j, long long id, const char *password)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(j->db, "UPDATE projects SET url_password = ?"
                           " WHERE id = ? AND url_password IS NOT ?", -1, &st,
                           NULL) != SQLITE_OK)
        return fail(j, "project password update");
    sqlite3_bind_text(st, 1, password, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    sqlite3_bind_text(st, 3, password, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail(j, "project password update");
}

static int project_find_or_insert(journal *j, const char *url,
                                  const char *password,
                                  const char *authenticator,
                                  long long *project_id)
{
    if (prepare(j, &j->st_project_find,
                "SELECT id FROM projects WHERE url = ? AND authenticator = ?") != 0)
        return -1;
    sqlite3_bind_text(j->st_project_find, 1, url, -1, SQLITE_STATIC);
    sqlite3_bind_text(j->st_project_find, 2, authenticator, -1, SQLITE_STATIC);
    int rc = sqlite3_step(j->st_project_find);
    if (rc == SQLITE_ROW) {
        *project_id = sqlite3_column_int64(j->st_project_find, 0);
        sqlite3_reset(j->st_project_find);
        return update_url_password(j, *project_id, password);
    }
    sqlite3_reset(j->st_project_find);
    if (rc != SQLITE_DONE)
        return fail(j, "project lookup");
    if (prepare(j, &j->st_project_insert,
                "INSERT INTO projects (url, authenticator, first_used_at, url_password)"
                " VALUES (?, ?, ?, ?)") != 0)
        return -1;
    sqlite3_bind_text(j->st_project_insert, 1, url, -1, SQLITE_STATIC);
    sqlite3_bind_text(j->st_project_insert, 2, authenticator, -1, SQLITE_STATIC);
    sqlite3_bind_double(j->st_project_insert, 3, journal_now());
    sqlite3_bind_text(j->st_project_insert, 4, password, -1, SQLITE_STATIC);
    if (step_done(j, j->st_project_insert, "project insert") != 0)
        return -1;
    *project_id = sqlite3_last_insert_rowid(j->db);
    return 0;
}

int journal_project_id(journal *j, const char *url, const char *authenticator,
                       long long *project_id)
{
    char *shown, *password;
    int rc = -1;
    if (split_url_password(url, &shown, &password) == 0)
        rc = project_find_or_insert(j, shown, password, authenticator, project_id);
    else
        snprintf(j->errmsg, sizeof j->errmsg, "project: out of memory");
    free(shown);
    free_secret(password);
    return rc;
}

/* ---- requests ------------------------------------------------------------ */

int journal_request_insert(journal *j, long long session_id, long client_id,
                           const char *command, const char *args_text,
                           long long project_id, double accepted_at,
                           long long *request_row)
{
    if (prepare(j, &j->st_insert_request,
                "INSERT INTO requests (session_id, client_id, command, args,"
                " project_id, state, accepted_at) VALUES (?, ?, ?, ?, ?, '"
                JOURNAL_ACCEPTED "', ?)") != 0)
        return -1;
    sqlite3_stmt *st = j->st_insert_request;
    sqlite3_bind_int64(st, 1, session_id);
    sqlite3_bind_int64(st, 2, client_id);
    sqlite3_bind_text(st, 3, command, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, args_text, -1, SQLITE_STATIC);
    if (project_id > 0)
        sqlite3_bind_int64(st, 5, project_id);
    else
        sqlite3_bind_null(st, 5);
    sqlite3_bind_double(st, 6, accepted_at);
    if (step_done(j, st, "request insert") != 0)
        return -1;
    *request_row = sqlite3_last_insert_rowid(j->db);
    return 0;
}

int journal_requests_complete(journal *j, const journal_completion *c, size_t n)
{
    if (n == 0)
        return 0;
    if (journal_begin(j) != 0)
        return -1;
    if (prepare(j, &j->st_complete,
                "UPDATE requests SET state = '" JOURNAL_COMPLETED "',"
                " started_at = coalesce(started_at, ?), completed_at = ?, result = ?"
                " WHERE id = ?") != 0)
        goto failed;
    for (size_t i = 0; i < n; i++) {
        sqlite3_stmt *st = j->st_complete;
        sqlite3_bind_double(st, 1, c[i].started_at);
        sqlite3_bind_double(st, 2, c[i].completed_at);
        sqlite3_bind_text(st, 3, c[i].result, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, c[i].request_row);
        if (step_done(j, st, "request complete") != 0)
            goto failed;
    }
    return journal_commit(j);
failed:
    journal_rollback(j);
    return -1;
}

static int update_rows(journal *j, sqlite3_stmt **st, const char *sql,
                       const long long *rows, size_t n, double when,
                       const char *what)
{
    if (n == 0)
        return 0;
    if (journal_begin(j) != 0)
        return -1;
    if (prepare(j, st, sql) != 0)
        goto failed;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_double(*st, 1, when);
        sqlite3_bind_int64(*st, 2, rows[i]);
        if (step_done(j, *st, what) != 0)
            goto failed;
    }
    return journal_commit(j);
failed:
    journal_rollback(j);
    return -1;
}

int journal_requests_delivered(journal *j, const long long *rows, size_t n,
                               double delivered_at)
{
    return update_rows(j, &j->st_delivered,
                       "UPDATE requests SET state = '" JOURNAL_DELIVERED "', delivered_at = ?"
                       " WHERE id = ? AND state = '" JOURNAL_COMPLETED "'",
                       rows, n, delivered_at, "request delivered");
}

/* Delivered requests, and requests recovery closed (an earlier run's work
 * that can no longer be answered), older than the retention.  Rows that
 * other rows still reference (a batch's submit, the re-issue a stored
 * result was replayed to) are kept until the referencing row goes: with
 * foreign keys on, deleting them would fail the whole prune.  The NOT IN
 * subqueries are not correlated, so SQLite evaluates each once. */
static const char prune_requests_sql[] =
    "DELETE FROM requests WHERE"
    " ((state = '" JOURNAL_DELIVERED "' AND delivered_at < ?1)"
    "  OR (closed_at IS NOT NULL AND closed_at < ?1))"
    " AND id NOT IN (SELECT request_id FROM batches WHERE request_id IS NOT NULL)"
    " AND id NOT IN (SELECT replayed_by FROM requests WHERE replayed_by IS NOT NULL)";

static const char prune_sessions_sql[] =
    "DELETE FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ?1"
    " AND id NOT IN (SELECT session_id FROM requests)"
    " AND id NOT IN (SELECT resumed_session FROM requests WHERE resumed_session IS NOT NULL)";

int journal_prune(journal *j, double retention_days, long long *deleted)
{
    double cutoff = journal_now() - retention_days * 86400.0;
    *deleted = 0;
    if (journal_begin(j) != 0)
        return -1;
    if (run_once(j, prune_requests_sql, "prune requests", "d", cutoff) != 0)
        goto failed;
    *deleted = sqlite3_changes(j->db);
    if (run_once(j, prune_sessions_sql, "prune sessions", "d", cutoff) != 0)
        goto failed;
    return journal_commit(j);
failed:
    journal_rollback(j);
    return -1;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

int journal_step_request_rows(journal *j, sqlite3_stmt *st, const char *what,
                              journal_request_cb cb, void *arg)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        journal_request_row row = {
            sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
            (long)sqlite3_column_int64(st, 2), col_text(st, 3), col_text(st, 4),
            sqlite3_column_int64(st, 5), col_text(st, 6), col_text(st, 7),
            col_text(st, 8), col_text(st, 9)
        };
        int r = cb(&row, arg);
        if (r != 0) {
            sqlite3_finalize(st);
            return r;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return fail(j, what);
    return 0;
}

int journal_for_each_request(journal *j, const char *state,
                             journal_request_cb cb, void *arg)
{
    sqlite3_stmt *st;
    const char *sql =
        "SELECT " JOURNAL_REQUEST_COLUMNS
        " FROM requests r LEFT JOIN projects p ON p.id = r.project_id"
        " WHERE (?1 IS NULL AND r.state <> '" JOURNAL_DELIVERED "') OR r.state = ?1"
        " ORDER BY r.id";
    if (sqlite3_prepare_v2(j->db, sql, -1, &st, NULL) != SQLITE_OK)
        return fail(j, "request scan");
    if (state != NULL)
        sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    return journal_step_request_rows(j, st, "request scan", cb, arg);
}

int journal_each(journal *j, const char *sql, const char *what, size_t n,
                 journal_bind_fn bind, void *arg)
{
    if (n == 0)
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(j->db, sql, -1, &st, NULL) != SQLITE_OK)
        return fail(j, what);
    for (size_t i = 0; i < n; i++) {
        bind(st, i, arg);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        if (rc != SQLITE_DONE) {
            sqlite3_finalize(st);
            return fail(j, what);
        }
    }
    sqlite3_finalize(st);
    return 0;
}

int journal_run_each(journal *j, const char *sql, const char *what, size_t n,
                     journal_bind_fn bind, void *arg)
{
    if (n == 0)
        return 0;
    if (journal_begin(j) != 0)
        return -1;
    if (journal_each(j, sql, what, n, bind, arg) != 0) {
        journal_rollback(j);
        return -1;
    }
    return journal_commit(j);
}
