/*
 * db.c - the emulator's SQLite state: schema, open/close and tiny helpers.
 *
 * One connection shared by all threads, serialised by G.lock (callers hold
 * emu_lock()).  Durability is traded for speed (synchronous=OFF): this is a
 * test fixture; a clean shutdown still leaves a consistent file, and a
 * restart on the same --state-dir continues with the same state.
 */
#include "emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);\n"
    /* submit: 1 = may submit (user_submit row), 0 = no submit access */
    "CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY, name TEXT,"
    "  authenticator TEXT UNIQUE, submit INTEGER);\n"
    "CREATE TABLE IF NOT EXISTS batches (id INTEGER PRIMARY KEY, user_id INTEGER,"
    "  name TEXT, app TEXT, state INTEGER, create_time REAL, expire_time REAL,"
    "  completion_time REAL DEFAULT 0, retired INTEGER DEFAULT 0);\n"
    "CREATE INDEX IF NOT EXISTS batches_name ON batches(name);\n"
    "CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, name TEXT UNIQUE,"
    "  batch_id INTEGER, app TEXT, command_line TEXT, delay_bound REAL,"
    "  min_quorum INTEGER, target_nresults INTEGER, max_error_results INTEGER,"
    "  max_total_results INTEGER, max_success_results INTEGER,"
    "  error_mask INTEGER DEFAULT 0, canonical_resultid INTEGER DEFAULT 0,"
    "  assimilate_state INTEGER DEFAULT 0, need_validate INTEGER DEFAULT 0,"
    "  transition_time REAL, mod_time INTEGER, create_time REAL,"
    "  ninstances INTEGER DEFAULT 0);\n"
    "CREATE INDEX IF NOT EXISTS jobs_batch ON jobs(batch_id);\n"
    "CREATE INDEX IF NOT EXISTS jobs_tt ON jobs(transition_time);\n"
    "CREATE INDEX IF NOT EXISTS jobs_nv ON jobs(need_validate);\n"
    "CREATE INDEX IF NOT EXISTS jobs_as ON jobs(assimilate_state);\n"
    "CREATE TABLE IF NOT EXISTS job_inputs (job_id INTEGER, idx INTEGER,"
    "  phys_name TEXT, PRIMARY KEY(job_id, idx));\n"
    /* run_state: 0 nothing to run, 1 waiting for the app to run, 2 ran,
     * 3 running (claimed), 4 reported */
    "CREATE TABLE IF NOT EXISTS instances (id INTEGER PRIMARY KEY,"
    "  job_id INTEGER, name TEXT UNIQUE, seq INTEGER, server_state INTEGER,"
    "  outcome INTEGER DEFAULT 0, validate_state INTEGER DEFAULT 0,"
    "  host INTEGER DEFAULT -1, behaviour INTEGER DEFAULT 0,"
    "  run_state INTEGER DEFAULT 0, exit_status INTEGER DEFAULT 0,"
    "  elapsed REAL DEFAULT 0, cpu REAL DEFAULT 0, stderr_out TEXT,"
    "  sent_time REAL DEFAULT 0, report_deadline REAL DEFAULT 0,"
    "  report_time REAL DEFAULT 1e18, received_time REAL DEFAULT 0,"
    "  output_sig TEXT);\n"
    /* (job_id, server_state): without it the planner (no ANALYZE) picks
     * the server_state index for per-job queries and scans every over
     * instance of the project */
    "CREATE INDEX IF NOT EXISTS inst_job_ss ON instances(job_id, server_state);\n"
    "CREATE INDEX IF NOT EXISTS inst_ss ON instances(server_state);\n"
    "CREATE INDEX IF NOT EXISTS inst_run ON instances(run_state, report_time);\n"
    "CREATE INDEX IF NOT EXISTS jobs_batch_as ON jobs(batch_id, assimilate_state);\n"
    "CREATE TABLE IF NOT EXISTS instance_outputs (instance_id INTEGER,"
    "  idx INTEGER, file_name TEXT, PRIMARY KEY(instance_id, idx));\n"
    /* job_file rows: the physical files staged through job_file.php */
    "CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, name TEXT UNIQUE,"
    "  nbytes INTEGER, create_time REAL);\n"
    "CREATE TABLE IF NOT EXISTS batch_file_assoc (file_id INTEGER,"
    "  batch_id INTEGER, UNIQUE(file_id, batch_id));\n"
    "CREATE TABLE IF NOT EXISTS uploads (name TEXT PRIMARY KEY, times INTEGER);\n"
    /* seq -1: every instance of the job */
    "CREATE TABLE IF NOT EXISTS behaviours (job_name TEXT, seq INTEGER,"
    "  behaviour INTEGER, PRIMARY KEY(job_name, seq));\n";

int db_exec(const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(G.db, sql, NULL, NULL, &err) != SQLITE_OK) {
        log_error("boinc_emu: SQL error: %s (in: %.80s)", err ? err : "?", sql);
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

sqlite3_stmt *db_prep(const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(G.db, sql, -1, &st, NULL) != SQLITE_OK) {
        log_error("boinc_emu: SQL prepare failed: %s (in: %.80s)",
                  sqlite3_errmsg(G.db), sql);
        abort();    /* a bad statement is a programming error */
    }
    return st;
}

/* Statements of the per-file and per-job hot paths (job_file.php's
 * look-ups and inserts, submit_batch's name check) are prepared once and
 * kept: preparing one per file cost a tenth of the emulator's time in a
 * 10,000-file upload.  Keyed by the SQL literal's address; callers hold
 * emu_lock() and sqlite3_reset() the statement when done, never finalize
 * it.  db_close() finalizes them. */
enum { STMT_CACHE_MAX = 32 };
static struct { const char *sql; sqlite3_stmt *st; } stmt_cache[STMT_CACHE_MAX];

sqlite3_stmt *db_prep_kept(const char *sql)
{
    int i;
    for (i = 0; i < STMT_CACHE_MAX && stmt_cache[i].sql != NULL; i++) {
        if (stmt_cache[i].sql == sql) {
            sqlite3_reset(stmt_cache[i].st);
            sqlite3_clear_bindings(stmt_cache[i].st);
            return stmt_cache[i].st;
        }
    }
    if (i == STMT_CACHE_MAX)
        abort();    /* more kept statements than slots: a programming error */
    stmt_cache[i].sql = sql;
    stmt_cache[i].st = db_prep(sql);
    return stmt_cache[i].st;
}

static void stmt_cache_clear(void)
{
    for (int i = 0; i < STMT_CACHE_MAX && stmt_cache[i].sql != NULL; i++) {
        sqlite3_finalize(stmt_cache[i].st);
        stmt_cache[i].sql = NULL;
        stmt_cache[i].st = NULL;
    }
}

/* Step a statement that returns no rows; a failure is logged (the
 * emulator carries on: a test will see the missing effect). */
void db_run(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        log_error("boinc_emu: SQL step failed: %s (in: %.80s)", sqlite3_errmsg(G.db),
                  sqlite3_sql(st) ? sqlite3_sql(st) : "?");
}

/* Run a query with one optional integer parameter; first column or dflt. */
long long db_int(const char *sql, long long id, long long dflt)
{
    sqlite3_stmt *st = db_prep(sql);
    if (sqlite3_bind_parameter_count(st) > 0)
        sqlite3_bind_int64(st, 1, id);
    long long v = dflt;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int meta_get(const char *key, char **value)
{
    sqlite3_stmt *st = db_prep("SELECT value FROM meta WHERE key = ?");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *value = xstrdup((const char *)sqlite3_column_text(st, 0));
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

int meta_set(const char *key, const char *value)
{
    sqlite3_stmt *st = db_prep("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

void db_begin(void)
{
    db_exec("BEGIN");
}

void db_commit(void)
{
    db_exec("COMMIT");
}

static int add_user(const char *name, int submit)
{
    char auth[33];
    if (random_hex(auth, 32) != 0)
        return -1;
    sqlite3_stmt *st = db_prep("INSERT INTO users(name, authenticator, submit) VALUES(?, ?, ?)");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, auth, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, submit);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

int db_open(void)
{
    if (sqlite3_open_v2(G.db_path, &G.db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                        NULL) != SQLITE_OK) {
        log_error("boinc_emu: cannot open %s: %s", G.db_path,
                  G.db ? sqlite3_errmsg(G.db) : "out of memory");
        return -1;
    }
    sqlite3_busy_timeout(G.db, 5000);
    /* a 128 MB page cache: a 10,000-job resubmit costs the emulator
     * about 5 % less CPU than with the default 2 MB */
    if (db_exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-131072;") != 0 ||
        db_exec(schema_sql) != 0)
        return -1;
    if (db_int("SELECT COUNT(*) FROM users", 0, 0) == 0) {
        /* user 1 submits; user 2 has no submit access; user 3 is a second
         * normal submitter (for "not owner" errors). */
        if (add_user("emu_user", 1) != 0 || add_user("nosubmit_user", 0) != 0 ||
            add_user("other_user", 1) != 0) {
            log_error("boinc_emu: cannot create users");
            return -1;
        }
    }
    char *v = NULL;
    if (meta_get("vnow", &v) == 0) {
        if (parse_double(v, &G.vnow) != 0)
            G.vnow = 0;
        free(v);
    }
    if (G.vnow <= 0) {
        /* The virtual clock starts at the real time of the first start,
         * half past a whole second, so that server_time has a fraction
         * like a real server's (1795251833.5). */
        G.vnow = (double)(long long)wall_now() + 0.5;
        char buf[64];
        snprintf(buf, sizeof buf, "%.6f", G.vnow);
        meta_set("vnow", buf);
    }
    return 0;
}

void db_close(void)
{
    if (G.db) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.6f", G.vnow);
        meta_set("vnow", buf);
        stmt_cache_clear();
        sqlite3_close(G.db);
        G.db = NULL;
    }
}
