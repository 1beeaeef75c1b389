/*
 * journal_admin.h - the operator's view of a journal (boinc_gahp
 * --check-config and `boinc_gahp journal ...`, src/admin): a READ-ONLY
 * connection of its own, outside the server's statement cache, that is
 * safe while a server runs (WAL: it never blocks the server's writers),
 * the status reports, the online backup and the integrity checks.  The
 * prune is journal_prune() on an ordinary write connection (journal.h).
 */
#ifndef BOINC_GAHP_JOURNAL_ADMIN_H
#define BOINC_GAHP_JOURNAL_ADMIN_H

typedef struct journal_admin journal_admin;

/* Open path read-only (it must exist: never creates it).  NULL with *err
 * a malloc'd message on failure. */
journal_admin *jadmin_open(const char *path, long busy_timeout_ms, char **err);
void jadmin_close(journal_admin *a);
const char *jadmin_errmsg(const journal_admin *a);

/* Does a server hold path's server lock (journal.c, take_server_lock)?
 * 1 yes, 0 no, -1 cannot tell (errno set). */
int jadmin_server_running(const char *path);

int jadmin_schema_version(journal_admin *a, int *version);

/* The newest session row: *found 0 when there is none. */
typedef struct {
    long long id, pid;
    double started_at, ended_at;    /* ended_at 0 = not recorded */
    char version[32];
} jadmin_session;
int jadmin_last_session(journal_admin *a, jadmin_session *s, int *found);

/* Status reports, each one query; the rows are handed over as text
 * (NULL for SQL NULL) with the column names. */
typedef enum {
    JREPORT_SESSIONS,           /* the last few runs */
    JREPORT_IN_FLIGHT,          /* accepted requests not answered, by command */
    JREPORT_UNDELIVERED,        /* results not yet read by RESULTS, by command */
    JREPORT_BATCHES,            /* batches by state, with some names */
    JREPORT_SUBMITS,            /* submits not finished (neither submitted nor failed) */
    JREPORT_UPLOAD_LIMITS,      /* learned upload limits per project */
    JREPORT_PROJECT_ERRORS,     /* the last error result per project */
    JREPORT_SIZE,               /* pages and bytes */
    JREPORT_COUNT
} jadmin_report_id;

typedef int (*jadmin_row_fn)(void *arg, int ncols, const char *const *names,
                             const char *const *values);
const char *jadmin_report_title(jadmin_report_id id);
/* Run one report; fn's non-zero return stops it (and is returned). */
int jadmin_report(journal_admin *a, jadmin_report_id id, jadmin_row_fn fn, void *arg);

/* SQLite's online backup of the whole journal into dest, a file that
 * must not exist (created 0600); a consistent snapshot even while a
 * server writes.  0, or -1 with *err malloc'd (dest then removed). */
int jadmin_backup(journal_admin *a, const char *dest, char **err);

/* PRAGMA integrity_check (quick = quick_check) and foreign_key_check:
 * each problem is handed to fn as one row; *problems counts them.
 * Returns 0 when the checks ran (problems or not), -1 when they could not
 * (a file too damaged to read counts as a problem, not as -1). */
int jadmin_verify(journal_admin *a, int quick, jadmin_row_fn fn, void *arg,
                  long long *problems);

#endif
