/*
 * journal_migrate.c - the journal's schema versions: a new journal created
 * with every migration in one transaction, an older one upgraded a
 * migration at a time after a backup copy, and the refusal of a version
 * this build does not know (newer, or negative: a damaged file).
 *
 * The migration scripts are migrations/NNNN_*.sql, built into the binary
 * (migration_table, MIGRATION_COUNT); doc/journal.md, "Upgrades", is the
 * operator's side of this file.
 */
#include "journal/journal.h"
#include "journal/journal_internal.h"

#include "base/log.h"
#include "migrations.h"
#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* NULL-terminated table emitted next to the .incbin'd migration texts. */
extern const char *const migration_table[];

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

/* One migration script and the version it brings, in one transaction. */
static int apply_migration(journal *j, void *arg)
{
    int n = *(const int *)arg;
    char pragma[64];
    /* built at run time: a PRAGMA takes no bound parameter */
    snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", n);
    if (journal_exec_sql(j, migration_table[n - 1], "migration") != 0 ||
        journal_exec_sql(j, pragma, "migration version") != 0)
        return -1;
    return 0;
}

/*
 * Before a journal is migrated, a copy of it as it is (issue 19): SQLite's
 * online backup API into "<journal>.v<version>.bak" beside it, mode 0600
 * (it holds the authenticators).  An upgrade that goes wrong, or a
 * downgrade, can then go back to it.  A copy that cannot be made stops
 * the migration: the journal stays as it was.
 */
static int backup_before_migration(journal *j, int version, char **err)
{
    char *dest_path = str_printf("%s.v%d.bak", journal_file_path(j), version);
    if (dest_path == NULL) {
        *err = str_printf("out of memory");
        return -1;
    }
    sqlite3 *dest = NULL;
    int rc = -1;
    int fd = open(dest_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || fchmod(fd, 0600) != 0) {
        *err = str_printf("cannot create the backup copy %s: %s", dest_path,
                          strerror(errno));
    } else if (sqlite3_open_v2(dest_path, &dest, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        *err = str_printf("cannot open the backup copy %s: %s", dest_path,
                          dest ? sqlite3_errmsg(dest) : "out of memory");
    } else {
        sqlite3_backup *b = sqlite3_backup_init(dest, "main", journal_db(j), "main");
        int step = b != NULL ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
        int fin = b != NULL ? sqlite3_backup_finish(b) : SQLITE_ERROR;
        if (step != SQLITE_DONE || fin != SQLITE_OK)
            *err = str_printf("cannot copy journal %s to %s before migrating it: %s",
                              journal_file_path(j), dest_path, sqlite3_errmsg(dest));
        else
            rc = 0;
    }
    if (fd >= 0)
        close(fd);
    if (dest != NULL && sqlite3_close(dest) != SQLITE_OK && rc == 0) {
        *err = str_printf("cannot close the backup copy %s", dest_path);
        rc = -1;
    }
    if (rc == 0)
        log_info("journal %s: copied to %s (schema version %d) before migrating it",
                 journal_file_path(j), dest_path, version);
    free(dest_path);
    return rc;
}

/* The message for a journal written by a newer boinc_gahp: which version
 * it is, and the two ways out (doc/journal.md, "Upgrades"). */
static char *newer_journal_message(const char *path, int version)
{
    /* the newest backup copy an upgrade left, if any */
    char *bak = NULL;
    for (int v = MIGRATION_COUNT; v >= 1 && bak == NULL; v--) {
        char *p = str_printf("%s.v%d.bak", path, v);
        if (p != NULL && access(p, F_OK) == 0)
            bak = p;
        else
            free(p);
    }
    char *msg = str_printf(
        "journal %s has schema version %d, but this boinc_gahp knows schema "
        "versions up to %d only: a newer boinc_gahp wrote it.  Install that "
        "newer boinc_gahp again, or stop here and restore the copy made before "
        "the upgrade%s%s%s (doc/journal.md, \"Upgrades\")", path, version,
        MIGRATION_COUNT, bak ? " (" : ", <journal>.v<N>.bak beside it,",
        bak ? bak : "", bak ? ") over the journal" : " over the journal");
    free(bak);
    return msg;
}

/* journal.h: the server's refusal of a schema version, in its words. */
char *journal_version_problem(const char *path, int version)
{
    if (version > MIGRATION_COUNT)
        return newer_journal_message(path, version);
    /* No boinc_gahp writes a negative version: a damaged file (issue 29:
     * flipped bytes made the migration loop index its table out of bounds). */
    if (version < 0)
        return str_printf("journal %s has schema version %d, which no boinc_gahp "
                          "writes: the file is damaged.  Restore it from a backup "
                          "(doc/operating.md) or move it away to start a new one",
                          path, version);
    return NULL;
}

/*
 * Incremental vacuum (issue 19, migration 0009): free pages go back to the
 * file system after each prune (PRAGMA incremental_vacuum).  The mode can
 * only be turned on for an existing database by a VACUUM, which cannot run
 * in a transaction: done once here, after the migrations (a new journal
 * pays a VACUUM of an empty file).  The VACUUM rewrites the file through a
 * temporary copy: it needs as much free space as the journal again.
 */
#define AUTO_VACUUM_INCREMENTAL 2

static int ensure_incremental_vacuum(journal *j, char **err)
{
    sqlite3_stmt *st = NULL;
    int mode = -1;
    if (sqlite3_prepare_v2(journal_db(j), "PRAGMA auto_vacuum", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        mode = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (mode == AUTO_VACUUM_INCREMENTAL)
        return 0;
    double t0 = journal_now();
    if (journal_exec_sql(j, "PRAGMA auto_vacuum=INCREMENTAL; VACUUM;", "vacuum") != 0) {
        *err = str_printf("cannot turn on the incremental vacuum of journal %s "
                          "(a one-time VACUUM, which needs free space as large "
                          "as the journal): %s", journal_file_path(j), journal_errmsg(j));
        return -1;
    }
    log_info("journal %s: incremental vacuum turned on (one-time VACUUM, %.2f s)",
             journal_file_path(j), journal_now() - t0);
    return 0;
}

/* Every migration, in order, in the caller's transaction. */
static int apply_every_migration(journal *j, void *arg)
{
    (void)arg;
    for (int n = 1; n <= MIGRATION_COUNT; n++)
        if (apply_migration(j, &n) != 0)
            return -1;
    return 0;
}

/*
 * A journal of schema version 0: every migration in one transaction, one
 * commit where a journal being upgraded takes one a migration (a new
 * journal's first start was 15 commits and a VACUUM, each with its
 * fdatasyncs).  On a new file connect_db set the incremental vacuum
 * before the first page was written, so the one-time VACUUM after finds
 * it on; a file of version 0 that was not empty gets that VACUUM, as an
 * upgraded journal does.  A crash before the commit leaves version 0,
 * created again at the next start.
 */
static int create_schema(journal *j, char **err)
{
    if (journal_txn(j, apply_every_migration, NULL) != 0) {
        *err = str_printf("cannot create the schema (version %d) of journal %s: %s",
                          MIGRATION_COUNT, journal_file_path(j), journal_errmsg(j));
        return -1;
    }
    log_info("journal %s created with schema version %d", journal_file_path(j), MIGRATION_COUNT);
    return ensure_incremental_vacuum(j, err);
}

/* journal_internal.h: bring an open journal to this build's schema. */
int journal_migrate(journal *j, char **err)
{
    int version;
    if (journal_schema_version(j, &version) != 0) {
        *err = str_printf("cannot read schema version: %s", journal_errmsg(j));
        return -1;
    }
    if (version < 0 || version > MIGRATION_COUNT) {
        *err = journal_version_problem(journal_file_path(j), version);
        return -1;
    }
    if (version == 0)
        return create_schema(j, err);
    if (version < MIGRATION_COUNT && backup_before_migration(j, version, err) != 0)
        return -1;
    for (int n = version + 1; n <= MIGRATION_COUNT; n++) {
        if (journal_txn(j, apply_migration, &n) != 0) {
            *err = str_printf("cannot apply migration %d: %s", n, journal_errmsg(j));
            return -1;
        }
        log_info("journal migrated to schema version %d", n);
    }
    return ensure_incremental_vacuum(j, err);
}
