/*
 * admin.c - `boinc_gahp --check-config` and `boinc_gahp journal ...`
 * (admin.h).  The SQL is in journal/journal_admin.c; this file decides
 * what to check and prints it.
 */
#include "admin/admin.h"

#include "base/dirs.h"
#include "base/fskind.h"
#include "base/log.h"
#include "journal/journal.h"
#include "journal/journal_admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void print_utc(double t, FILE *out)
{
    char stamp[32];
    struct tm tm;
    time_t s = (time_t)t;
    if (gmtime_r(&s, &tm) != NULL && strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0)
        fputs(stamp, out);
    else
        fprintf(out, "%.0f", t);
}

/* One line of the server's state: running (pid, since), or how the last
 * run ended.  Returns 1 when a server runs, 0 when none, -1 cannot tell. */
static int print_server(journal_admin *a, const char *path, FILE *out)
{
    int running = jadmin_server_running(path);
    jadmin_session s;
    int found = 0;
    if (jadmin_last_session(a, &s, &found) != 0)
        found = 0;
    fputs("server: ", out);
    if (running < 0)
        fprintf(out, "cannot tell (%s)", strerror(errno));
    else if (running && found) {
        fprintf(out, "running, pid %lld, session %lld, version %s, since ", s.pid,
                s.id, s.version);
        print_utc(s.started_at, out);
    } else if (running)
        fputs("running (starting: no session recorded yet)", out);
    else if (found && s.ended_at > 0) {
        fprintf(out, "not running; session %lld (pid %lld) ended ", s.id, s.pid);
        print_utc(s.ended_at, out);
    } else if (found)
        fprintf(out, "not running; session %lld (pid %lld) ended without "
                "recording it (killed or crashed)", s.id, s.pid);
    else
        fputs("not running; no session recorded", out);
    fputc('\n', out);
    return running;
}

/* Opens the journal read-only and compares its schema with the binary's.
 * Returns NULL (message on stderr) when it cannot be used. */
static journal_admin *open_checked(const gahp_config *cfg, int *version)
{
    char *err = NULL;
    journal_admin *a = jadmin_open(cfg->journal_path, cfg->busy_timeout_ms, &err);
    if (a == NULL) {
        fprintf(stderr, "boinc_gahp: %s\n", err ? err : "out of memory");
        free(err);
        return NULL;
    }
    if (jadmin_schema_version(a, version) != 0) {
        fprintf(stderr, "boinc_gahp: journal %s: cannot read its schema version: %s\n",
                cfg->journal_path, jadmin_errmsg(a));
        jadmin_close(a);
        return NULL;
    }
    return a;
}

static void print_schema(int version, FILE *out)
{
    int mine = journal_migration_count();
    fprintf(out, "schema version: %d (this program: %d%s)\n", version, mine,
            version < 0 ? "; DAMAGED: no boinc_gahp writes a negative version"
            : version > mine ? "; the journal is NEWER: a later boinc_gahp wrote it"
            : version < mine ? "; a server would migrate it at start-up" : "");
}

/* A journal the server would refuse (a newer boinc_gahp wrote it, or
 * its version is negative: damaged): its tables may mean what this
 * program does not know, so --check-config, status and verify refuse it
 * too, with the server's words and exit status 1 (issue 28, issue 41).
 * 1 when refused. */
static int refuse_version(const gahp_config *cfg, int version)
{
    char *why = journal_version_problem(cfg->journal_path, version);
    if (why == NULL && version >= 0 && version <= journal_migration_count())
        return 0;
    fprintf(stderr, "boinc_gahp: %s\n", why ? why : "out of memory");
    free(why);
    return 1;
}

/* ---- --check-config ---------------------------------------------------- */

/*
 * --check-config --user NAME (issue 41): root's access() says nothing
 * about NAME, so what NAME's server must open is checked from the mode
 * bits and NAME's groups (config_user_access).  path must let NAME do
 * want (4 read, 2 write); a path that does not exist yet is made by the
 * server, so its nearest existing directory must let NAME write there.
 * 1 (message on stderr) when NAME cannot.
 */
static int user_cannot(const gahp_config *cfg, const char *path, unsigned want,
                       const char *what, const char *consequence)
{
    if (cfg->user == NULL)
        return 0;
    char *p = strdup(path), *why = NULL;
    struct stat st;
    if (p == NULL)
        return 1;
    while (stat(p, &st) != 0 && errno == ENOENT) {
        char *slash = strrchr(p, '/');
        if (slash == NULL || slash == p)
            break;
        *slash = '\0';
        want = 3;                   /* a directory to make things in */
    }
    int rc = config_user_access(cfg->user, p, want, &why) != 0;
    if (rc)
        fprintf(stderr, "boinc_gahp: %s %s: user %s %s: %s\n", what, path,
                config_user_name(cfg->user), consequence, why ? why : "out of memory");
    free(why);
    free(p);
    return rc;
}

/*
 * The log the server would use: the first of config_log_paths that
 * log_open would accept, checked without creating anything.  One it
 * would have to skip is a problem (issue 28: a refused log file meant
 * logging to stderr only, which HTCondor hides).  1 on a problem.
 */
static int check_log(const gahp_config *cfg, FILE *out)
{
    char *paths[CONFIG_LOG_PATHS];
    config_log_paths(cfg, paths);
    int rc = 0, chosen = -1;
    for (int i = 0; i < CONFIG_LOG_PATHS && chosen < 0; i++) {
        if (paths[i] == NULL)
            continue;
        char *why = log_file_problem(paths[i]);
        if (why == NULL)
            chosen = i;
        else
            fprintf(stderr, "boinc_gahp: %s %s cannot be used (%s): the server "
                    "would skip it\n", i == 0 ? "log_file" : "log file", paths[i], why);
        rc |= why != NULL;
        free(why);
    }
    if (chosen >= 0)
        rc |= user_cannot(cfg, paths[chosen], 2, "log file",
                          "cannot use it (the server would skip it for the next one)");
    if (chosen >= 0)
        fprintf(out, "log: %s%s\n", paths[chosen], chosen > 0 ? " and stderr" : "");
    else {
        fputs("log: stderr only\n", out);
        fputs("boinc_gahp: no log file can be used: the server would log to "
              "stderr only (set HOME, or log_file)\n", stderr);
        rc = 1;
    }
    for (int i = 0; i < CONFIG_LOG_PATHS; i++)
        free(paths[i]);
    return rc;
}

/* One file the server must write, if it exists: 1 when it cannot. */
static int check_writable_file(const char *path, const char *suffix)
{
    size_t n = strlen(path) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (p == NULL)
        return 1;
    snprintf(p, n, "%s%s", path, suffix);
    int bad = access(p, F_OK) == 0 && access(p, R_OK | W_OK) != 0;
    if (bad)
        fprintf(stderr, "boinc_gahp: journal file %s is not writable (%s): the "
                "server could not open it\n", p, strerror(errno));
    free(p);
    return bad;
}

/*
 * Where the journal goes: its directory must exist and be writable (the
 * server makes -wal and -shm files there), or be creatable; the journal
 * and its -wal/-shm files, where they exist, writable.  Checked with
 * access(), so for the real user, without creating anything.
 */
static int check_journal_location(const gahp_config *cfg, FILE *out)
{
    char *dir = config_journal_dir(cfg);
    if (dir == NULL)
        return 1;
    struct stat st;
    int rc = 1;
    const char *why = NULL;
    if (stat(dir, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
        if (dirs_creatable(dir) == 0) {
            fprintf(out, "journal directory: %s (missing: a server makes it)\n", dir);
            rc = 0;
        } else
            fprintf(stderr, "boinc_gahp: journal directory %s does not exist and "
                    "cannot be made (%s)\n", dir, strerror(errno));
    } else if (stat(dir, &st) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = strerror(errno);
    else
        rc = 0;
    if (why != NULL)
        fprintf(stderr, "boinc_gahp: journal directory %s is not a writable "
                "directory (%s): the server could not make its journal files there\n",
                dir, why);
    if (rc == 0 && why == NULL)
        rc |= user_cannot(cfg, dir, 3, "journal directory", "cannot start");
    free(dir);
    if (rc == 0)
        rc |= user_cannot(cfg, cfg->journal_path, 6, "journal", "cannot start");
    rc |= check_writable_file(cfg->journal_path, "");
    rc |= check_writable_file(cfg->journal_path, "-wal");
    rc |= check_writable_file(cfg->journal_path, "-shm");
    return rc;
}

/* The journal the server would use: 0 usable (or to be created), 1 not. */
static int check_journal(const gahp_config *cfg, FILE *out)
{
    struct stat st;
    fprintf(out, "journal: %s\n", cfg->journal_path);
    if (stat(cfg->journal_path, &st) != 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "boinc_gahp: journal %s: %s\n", cfg->journal_path,
                    strerror(errno));
            return 1;
        }
        fputs("journal state: does not exist yet (a server creates it)\n", out);
        return 0;
    }
    int version = 0;
    journal_admin *a = open_checked(cfg, &version);
    if (a == NULL)
        return 1;
    print_schema(version, out);
    print_server(a, cfg->journal_path, out);
    jadmin_close(a);
    return refuse_version(cfg, version);
}

/*
 * An authenticator file every local user may read gives the account to
 * each of them.  The server reads it all the same (refusing would hold
 * every job of the site), so it is a problem here only.  1 when one is.
 */
static int check_authenticator_file(const char *name, const char *path)
{
    struct stat st;
    if (path == NULL || stat(path, &st) != 0 || !(st.st_mode & S_IROTH))
        return 0;
    fprintf(stderr, "boinc_gahp: authenticator_file%s%s %s is readable by every local "
            "user (mode %04o): each of them can use the account; make it 0600 per user "
            "(%%u) or 0640 for a trusted group (doc/htcondor.md)\n", name ? "." : "",
            name ? name : "", path, (unsigned)(st.st_mode & 07777));
    return 1;
}

static int check_authenticator_files(const gahp_config *cfg)
{
    int rc = check_authenticator_file(NULL, cfg->authenticator_file);
    for (const config_project *pr = cfg->projects; pr != NULL; pr = pr->next)
        rc |= check_authenticator_file(pr->name, pr->authenticator_file);
    return rc;
}

/* The journal's placement: under which grid manager, and on which kind of
 * file system.  1 when the directory is on a network file system. */
static int check_placement(const gahp_config *cfg, FILE *out)
{
    if (cfg->journal_suffix != NULL)
        fprintf(out, "grid manager: started by a condor_gridmanager with a selection "
                "value: journal and default log carry the suffix %s\n", cfg->journal_suffix);
    char *dir = config_journal_dir(cfg);
    const char *fs = dir != NULL ? fskind_network_name(dir) : NULL;
    if (fs != NULL)
        fprintf(stderr, "boinc_gahp: the journal's directory %s is on a network file "
                "system (%s), where SQLite's WAL mode is unreliable: put the journal "
                "on a local disk (journal = /var/lib/boinc_gahp/%%u.db; "
                "doc/operating.md, \"Home directories on NFS\")\n", dir, fs);
    free(dir);
    return fs != NULL;
}

int admin_check_config(const gahp_config *cfg)
{
    FILE *out = stdout;
    fprintf(out, "version: %s\n", GAHP_VERSION_FULL);
    if (cfg->user != NULL)
        fprintf(out, "checked for user: %s (HOME %s)\n", config_user_name(cfg->user),
                getenv("HOME") ? getenv("HOME") : "unset");
    fprintf(out, "configuration file: %s\n", cfg->config_file ? cfg->config_file : "none");
    if (cfg->warnings != NULL)
        for (const char *p = cfg->warnings; *p != '\0'; ) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            fprintf(out, "warning: %.*s\n", (int)n, p);
            p += n + (nl != NULL);
        }
    config_print_effective(cfg, out);
    int rc = check_authenticator_files(cfg);
    rc |= check_log(cfg, out);
    rc |= check_journal_location(cfg, out);
    rc |= check_journal(cfg, out);
    rc |= check_placement(cfg, out);
    if (cfg->user == NULL && geteuid() == 0)
        fputs("note: checked as root; under HTCondor each user's server runs as that "
              "user: check them with --check-config --user NAME\n", out);
    fputs(rc == 0 ? "configuration OK\n" : "configuration has problems (see above)\n", out);
    return rc;
}

/* ---- journal status ---------------------------------------------------- */

/* One report row: "  name=value ..." (NULL values left out). */
static int print_row(void *arg, int n, const char *const *names, const char *const *values)
{
    FILE *out = arg;
    fputs(" ", out);
    for (int i = 0; i < n; i++)
        if (values[i] != NULL)
            fprintf(out, " %s=%s", names[i], values[i]);
    fputc('\n', out);
    return 0;
}

static void print_file_size(const char *path, const char *suffix, FILE *out)
{
    size_t n = strlen(path) + strlen(suffix) + 1;
    char *p = malloc(n);
    struct stat st;
    if (p == NULL)
        return;
    snprintf(p, n, "%s%s", path, suffix);
    if (stat(p, &st) == 0)
        fprintf(out, "  file %s: %lld bytes\n", p, (long long)st.st_size);
    free(p);
}

static int journal_status(const gahp_config *cfg)
{
    FILE *out = stdout;
    int version = 0;
    journal_admin *a = open_checked(cfg, &version);
    if (a == NULL)
        return 1;
    fprintf(out, "journal: %s\n", cfg->journal_path);
    print_schema(version, out);
    if (refuse_version(cfg, version)) {
        jadmin_close(a);
        return 1;
    }
    print_server(a, cfg->journal_path, out);
    int rc = 0;
    for (int r = 0; r < JREPORT_COUNT; r++) {
        fprintf(out, "%s:\n", jadmin_report_title((jadmin_report_id)r));
        if (jadmin_report(a, (jadmin_report_id)r, print_row, out) != 0) {
            fprintf(stderr, "boinc_gahp: journal status: %s: %s\n",
                    jadmin_report_title((jadmin_report_id)r), jadmin_errmsg(a));
            rc = 1;
        }
    }
    print_file_size(cfg->journal_path, "", out);
    print_file_size(cfg->journal_path, "-wal", out);
    jadmin_close(a);
    return rc;
}

/* ---- backup, verify, prune --------------------------------------------- */

static int journal_backup(const gahp_config *cfg, const char *dest)
{
    int version = 0;
    journal_admin *a = open_checked(cfg, &version);
    if (a == NULL)
        return 1;
    char *err = NULL;
    int rc = jadmin_backup(a, dest, &err);
    jadmin_close(a);
    if (rc != 0) {
        fprintf(stderr, "boinc_gahp: %s\n", err ? err : "backup failed");
        free(err);
        return 1;
    }
    printf("journal %s backed up to %s\n", cfg->journal_path, dest);
    return 0;
}

static int print_problem(void *arg, int n, const char *const *names,
                         const char *const *values)
{
    fputs("problem:", stdout);
    return print_row(arg, n, names, values);
}

static int journal_verify(const gahp_config *cfg)
{
    int version = 0;
    journal_admin *a = open_checked(cfg, &version);
    if (a == NULL)
        return 1;
    if (refuse_version(cfg, version)) {
        jadmin_close(a);
        return 1;
    }
    long long problems = 0;
    int rc = jadmin_verify(a, 0, print_problem, stdout, &problems);
    jadmin_close(a);
    if (rc != 0 || problems > 0) {
        fprintf(stderr, "boinc_gahp: journal %s: %lld problem%s found\n",
                cfg->journal_path, problems, problems == 1 ? "" : "s");
        return 1;
    }
    printf("journal %s: integrity and foreign keys OK (schema version %d)\n",
           cfg->journal_path, version);
    return 0;
}

/* The start-up prune, now.  It writes, so it takes the journal's write
 * lock: beside a running server it waits for the server's transactions
 * (at most busy_timeout) and the server's waits for it likewise. */
static int journal_prune_now(const gahp_config *cfg)
{
    int version = 0;
    journal_admin *a = open_checked(cfg, &version);
    if (a == NULL)
        return 1;
    jadmin_close(a);
    if (version != journal_migration_count()) {
        fprintf(stderr, "boinc_gahp: journal %s has schema version %d, this "
                "program %d: prune only a journal of this version (a server "
                "migrates an older one at start-up)\n", cfg->journal_path,
                version, journal_migration_count());
        return 1;
    }
    journal_options jo = { cfg->journal_path, cfg->sync_full, cfg->busy_timeout_ms, 0 };
    char *err = NULL;
    journal *j = journal_open(&jo, &err);
    if (j == NULL) {
        fprintf(stderr, "boinc_gahp: %s\n", err ? err : "cannot open the journal");
        free(err);
        return 1;
    }
    journal_set_lock_wait(j, cfg->busy_timeout_ms);
    long long deleted = 0;
    int rc = journal_prune(j, cfg->retention_days, &deleted);
    if (rc != 0)
        fprintf(stderr, "boinc_gahp: prune failed: %s\n", journal_errmsg(j));
    else
        printf("pruned %lld rows older than %g days from %s\n", deleted,
               cfg->retention_days, cfg->journal_path);
    journal_close(j);
    return rc == 0 ? 0 : 1;
}

int admin_journal(const gahp_config *cfg)
{
    const char *sub = cfg->operand_count > 1 ? cfg->operands[1] : "";
    int extra = cfg->operand_count - 2;
    if (strcmp(sub, "status") == 0 && extra == 0)
        return journal_status(cfg);
    if (strcmp(sub, "backup") == 0 && extra == 1)
        return journal_backup(cfg, cfg->operands[2]);
    if (strcmp(sub, "verify") == 0 && extra == 0)
        return journal_verify(cfg);
    if (strcmp(sub, "prune") == 0 && extra == 0)
        return journal_prune_now(cfg);
    fprintf(stderr, "boinc_gahp: usage: boinc_gahp [options] journal "
            "status|backup FILE|verify|prune\n");
    return 2;
}
