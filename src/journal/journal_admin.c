/*
 * journal_admin.c - the SQL of the operator's commands (journal_admin.h):
 * a read-only connection, status reports, online backup, integrity
 * checks.  Kept apart from the server's statement table (journal.c,
 * journal_internal.h): these statements run once per command, never in a
 * server, and only read.  It shares only the server lock's byte with
 * journal.c.
 */
/* F_OFD_GETLK (Linux >= 3.15) is a GNU extension of <fcntl.h>. */
#define _GNU_SOURCE

#include "journal/journal_admin.h"

#include "journal/batch_state.h"
#include "journal/journal_internal.h"   /* the server lock's byte */
#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct journal_admin {
    sqlite3 *db;
    char *path;
};

/* state_name(n): the audit name of a batch state, for the reports. */
static void sql_state_name(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    sqlite3_result_text(ctx, batch_state_name((batch_state)sqlite3_value_int(argv[0])),
                        -1, SQLITE_STATIC);
}

/* 1 when path exists (any type), 0 when not. */
static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/*
 * "file:PATH" for sqlite3_open_v2 with SQLITE_OPEN_URI: every byte but
 * the unreserved ones and '/' percent-encoded, so that a '?', '#' or '%'
 * in a journal's name stays part of the name; "?immutable=1" when asked.
 */
static char *file_uri(const char *path, int immutable)
{
    static const char hex[] = "0123456789ABCDEF";
    strbuf sb = STRBUF_INIT;
    int rc = strbuf_puts(&sb, "file:");
    for (const unsigned char *p = (const unsigned char *)path; rc == 0 && *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("/-._~", *p) != NULL) {
            char c[2] = { (char)*p, '\0' };
            rc = strbuf_puts(&sb, c);
        } else {
            char c[4] = { '%', hex[*p >> 4], hex[*p & 15], '\0' };
            rc = strbuf_puts(&sb, c);
        }
    }
    if (rc == 0 && immutable)
        rc = strbuf_puts(&sb, "?immutable=1");
    char *uri = rc == 0 ? strbuf_detach(&sb) : NULL;
    strbuf_free(&sb);
    return uri;
}

/*
 * A read-only connection to a WAL journal makes its -wal and -shm files
 * when they are missing (and, unable to checkpoint, leaves them): an
 * operator's command that only reads would leave files the server never
 * made.  So when no server holds the journal and no -wal file is beside
 * it (a server's clean close removes both), everything is in the main
 * file and it is opened immutable: no lock, no -shm, nothing created.
 * Otherwise (a server runs, or a crash left a -wal whose content counts)
 * it is an ordinary read-only connection that shares the server's -wal
 * and -shm; only a -wal left without its -shm then gets a -shm made.
 */
static int open_immutable(const char *path)
{
    char *wal = str_printf("%s-wal", path);
    int immutable = wal != NULL && !file_exists(wal) && jadmin_server_running(path) == 0;
    free(wal);
    return immutable;
}

journal_admin *jadmin_open(const char *path, long busy_timeout_ms, char **err)
{
    struct stat st;
    *err = NULL;
    if (stat(path, &st) != 0) {
        *err = str_printf("journal %s: %s", path, strerror(errno));
        return NULL;
    }
    journal_admin *a = calloc(1, sizeof *a);
    char *uri = a != NULL ? file_uri(path, open_immutable(path)) : NULL;
    if (a == NULL || uri == NULL || (a->path = strdup(path)) == NULL) {
        free(uri);
        free(a);
        *err = str_printf("out of memory");
        return NULL;
    }
    int rc = sqlite3_open_v2(uri, &a->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX |
                             SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(a->db, "state_name", 1,
                                     SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                     sql_state_name, NULL, NULL);
    if (rc != SQLITE_OK) {
        *err = str_printf("cannot open journal %s read-only: %s", path,
                          a->db ? sqlite3_errmsg(a->db) : sqlite3_errstr(rc));
        jadmin_close(a);
        return NULL;
    }
    sqlite3_busy_timeout(a->db, (int)busy_timeout_ms);
    return a;
}

void jadmin_close(journal_admin *a)
{
    if (a == NULL)
        return;
    sqlite3_close(a->db);
    free(a->path);
    free(a);
}

const char *jadmin_errmsg(const journal_admin *a)
{
    return sqlite3_errmsg(a->db);
}

int jadmin_server_running(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* F_OFD_GETLK needs no write access: it only asks whether our write
     * lock on the byte would conflict with someone's. */
    struct flock fl;
    journal_server_lock_byte(&fl);
    int rc = fcntl(fd, F_OFD_GETLK, &fl);
    int e = errno;
    close(fd);
    errno = e;
    return rc != 0 ? -1 : fl.l_type != F_UNLCK;
}

int jadmin_schema_version(journal_admin *a, int *version)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(a->db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *version = sqlite3_column_int(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : -1;
}

int jadmin_last_session(journal_admin *a, jadmin_session *s, int *found)
{
    sqlite3_stmt *st = NULL;
    memset(s, 0, sizeof *s);
    *found = 0;
    int rc = sqlite3_prepare_v2(a->db,
        "SELECT id, pid, started_at, coalesce(ended_at, 0), version"
        " FROM sessions ORDER BY id DESC LIMIT 1", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        s->id = sqlite3_column_int64(st, 0);
        s->pid = sqlite3_column_int64(st, 1);
        s->started_at = sqlite3_column_double(st, 2);
        s->ended_at = sqlite3_column_double(st, 3);
        const unsigned char *v = sqlite3_column_text(st, 4);
        snprintf(s->version, sizeof s->version, "%s", v ? (const char *)v : "?");
        *found = 1;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE || rc == SQLITE_OK ? 0 : -1;
}

/* The reports.  Times are shown in UTC, like the log.  Names and lists are
 * bounded (LIMIT) so that a journal of 100,000 batches prints a page, not
 * a book.  No statement selects an authenticator. */
#define UTC(col) "strftime('%Y-%m-%dT%H:%M:%SZ', " col ", 'unixepoch')"
static const struct {
    const char *title;
    const char *sql;
} reports[JREPORT_COUNT] = {
    [JREPORT_SESSIONS] = { "sessions (the last 5 runs)",
        "SELECT id AS session, pid, version, " UTC("started_at") " AS started,"
        " " UTC("ended_at") " AS ended,"
        " CASE WHEN clean_exit = 1 THEN 'clean' WHEN ended_at IS NULL THEN 'running or crashed'"
        " ELSE 'error' END AS \"exit\", condor_version"
        " FROM sessions ORDER BY id DESC LIMIT 5" },
    [JREPORT_IN_FLIGHT] = { "requests in flight (accepted, not answered)",
        "SELECT command, count(*) AS requests, " UTC("min(accepted_at)") " AS oldest"
        " FROM requests WHERE state IN ('accepted', 'started') AND closed_at IS NULL"
        " GROUP BY command ORDER BY command" },
    [JREPORT_UNDELIVERED] = { "results not yet delivered to the client",
        "SELECT command, count(*) AS results, " UTC("min(completed_at)") " AS oldest"
        " FROM requests WHERE state = 'completed'"
        /* as audit_undelivered: a result replayed to a re-issue, or a
         * submit confirmed by a status query, is answered (issue 28) */
        " AND closed_at IS NULL AND replayed_by IS NULL AND confirmed_in IS NULL"
        " GROUP BY command ORDER BY command" },
    /* A retired batch (BOINC_RETIRE_BATCH), or one whose lease (the
     * expire time set on the server) has passed, is shown as such, not
     * under its submit state (issue 28). */
    [JREPORT_BATCHES] = { "batches by state (up to 10 newest names each)",
        "WITH shown AS (SELECT name, updated_at,"
        "   CASE WHEN retired = 1 THEN 'retired'"
        "        WHEN lease IS NOT NULL AND lease < (julianday('now') - 2440587.5) * 86400.0"
        "             THEN 'expired'"
        "        ELSE state_name(state) END AS state FROM batches)"
        " SELECT state, count(*) AS batches,"
        " (SELECT group_concat(name, ' ') FROM (SELECT name FROM shown b2"
        "   WHERE b2.state = b.state ORDER BY b2.updated_at DESC LIMIT 10)) AS names"
        " FROM shown b GROUP BY state ORDER BY state" },
    /* Upload progress from the batch's input rows: a file is on the server
     * once uploaded by us or found there by query_files ('confirmed');
     * "uploading" counts upload_files requests sent and not yet answered.
     * Each batch's rows are read through the (batch_id, phys_name) index. */
    [JREPORT_SUBMITS] = { "submits in progress (up to 50, oldest first; "
                          "upload: input files and bytes on the server / all)",
        "SELECT b.name AS batch, state_name(b.state) AS state, b.njobs AS jobs,"
        " (SELECT CASE WHEN count(*) = 0 THEN NULL ELSE"
        "   sum(f.state = 'uploaded' OR f.state = 'confirmed') || '/' || count(*)"
        "   || ' files, ' || sum(CASE WHEN f.state = 'uploaded' OR f.state = 'confirmed'"
        "   THEN f.size ELSE 0 END) || '/' || sum(f.size) || ' bytes'"
        "   || CASE WHEN sum(f.state = 'upload_sent') > 0"
        "      THEN ', ' || sum(f.state = 'upload_sent') || ' uploading' ELSE '' END END"
        "  FROM batch_files f WHERE f.batch_id = b.id) AS upload,"
        " p.url AS project, " UTC("b.updated_at") " AS updated"
        " FROM batches b JOIN projects p ON p.id = b.project_id"
        " WHERE b.state NOT IN (7, 8) ORDER BY b.updated_at LIMIT 50" },
    [JREPORT_UPLOAD_LIMITS] = { "learned upload limits",
        "SELECT p.url AS project, u.max_files, u.max_bytes, " UTC("u.learned_at")
        " AS learned, u.reason FROM upload_limits u JOIN projects p ON p.id = u.project_id"
        " ORDER BY p.url" },
    [JREPORT_PROJECT_ERRORS] = { "last error per project",
        "SELECT p.url AS project, " UTC("r.completed_at") " AS at, r.command,"
        " substr(r.result, 1, 300) AS error FROM projects p JOIN requests r"
        " ON r.id = (SELECT max(r2.id) FROM requests r2 WHERE r2.project_id = p.id"
        "   AND r2.result IS NOT NULL AND r2.result NOT LIKE 'NULL%')"
        " ORDER BY p.url" },
    [JREPORT_SIZE] = { "journal size",
        "SELECT page_count * page_size AS bytes, page_count AS pages,"
        " freelist_count AS free_pages"
        " FROM pragma_page_count(), pragma_page_size(), pragma_freelist_count()" },
};

const char *jadmin_report_title(jadmin_report_id id)
{
    return id < JREPORT_COUNT ? reports[id].title : "?";
}

/* Run sql and hand every row to fn; -1 on an SQL error. */
static int each_row(journal_admin *a, const char *sql, jadmin_row_fn fn, void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(a->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return -1;
    int n = sqlite3_column_count(st);
    const char **names = calloc((size_t)n + 1, sizeof *names);
    const char **values = calloc((size_t)n + 1, sizeof *values);
    int out = names && values ? 0 : -1;
    for (int i = 0; out == 0 && i < n; i++)
        names[i] = sqlite3_column_name(st, i);
    while (out == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++)
            values[i] = (const char *)sqlite3_column_text(st, i);
        out = fn(arg, n, names, values);
    }
    if (out == 0 && rc != SQLITE_DONE)
        out = -1;
    free(names);
    free(values);
    sqlite3_finalize(st);
    return out;
}

int jadmin_report(journal_admin *a, jadmin_report_id id, jadmin_row_fn fn, void *arg)
{
    if (id >= JREPORT_COUNT)
        return -1;
    return each_row(a, reports[id].sql, fn, arg);
}

int jadmin_backup(journal_admin *a, const char *dest, char **err)
{
    *err = NULL;
    /* Created here, 0600 and exclusive: the copy holds authenticators, and
     * an existing file (another journal?) is never overwritten. */
    int fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        *err = str_printf("cannot create %s: %s", dest, strerror(errno));
        return -1;
    }
    close(fd);
    sqlite3 *out = NULL;
    int rc = sqlite3_open_v2(dest, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(out, "main", a->db, "main") : NULL;
    if (b != NULL) {
        /* All pages in one step: one read transaction, so one consistent
         * snapshot; in WAL mode it never blocks the server's writers.  A
         * busy source (a checkpoint's instant) is retried briefly. */
        for (int tries = 0; tries < 100; tries++) {
            rc = sqlite3_backup_step(b, -1);
            if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
                break;
            struct timespec ts = { 0, 50 * 1000000L };
            nanosleep(&ts, NULL);
        }
        int fin = sqlite3_backup_finish(b);
        rc = rc == SQLITE_DONE ? fin : rc;
    } else if (rc == SQLITE_OK) {
        rc = sqlite3_errcode(out);
    }
    if (rc != SQLITE_OK) {
        *err = str_printf("backup to %s failed: %s", dest,
                          out ? sqlite3_errmsg(out) : sqlite3_errstr(rc));
        if (*err != NULL && strstr(*err, "not an error") != NULL) {
            free(*err);
            *err = str_printf("backup to %s failed: %s", dest, sqlite3_errstr(rc));
        }
    }
    if (sqlite3_close(out) != SQLITE_OK && rc == SQLITE_OK) {
        *err = str_printf("cannot close %s", dest);
        rc = SQLITE_ERROR;
    }
    if (rc != SQLITE_OK)
        unlink(dest);
    return rc == SQLITE_OK ? 0 : -1;
}

typedef struct {
    jadmin_row_fn fn;
    void *arg;
    long long *problems;
} verify_ctx;

/* integrity_check's one "ok" row is no problem; every other row is. */
static int verify_row(void *arg, int n, const char *const *names, const char *const *values)
{
    verify_ctx *v = arg;
    if (n == 1 && values[0] != NULL && strcmp(values[0], "ok") == 0)
        return 0;
    (*v->problems)++;
    return v->fn(v->arg, n, names, values);
}

int jadmin_verify(journal_admin *a, int quick, jadmin_row_fn fn, void *arg,
                  long long *problems)
{
    static const char *const names[] = { "problem" };
    verify_ctx v = { fn, arg, problems };
    *problems = 0;
    const char *checks[] = {
        quick ? "PRAGMA quick_check" : "PRAGMA integrity_check",
        "PRAGMA foreign_key_check",
    };
    for (size_t i = 0; i < 2; i++) {
        if (each_row(a, checks[i], verify_row, &v) == 0)
            continue;
        /* A file too damaged to run the check on is itself the finding. */
        const char *msg[] = { sqlite3_errmsg(a->db) };
        (*problems)++;
        if (fn(arg, 1, names, msg) != 0)
            return -1;
    }
    return 0;
}
