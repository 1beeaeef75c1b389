/*
 * config_paths.c - where the journal and the default log file are: the
 * journal setting with "%u" expanded, or the XDG state directory's default;
 * the suffix of the grid manager's selection value (config/gridmanager.h);
 * the default journal directory, made on demand; the default log file
 * beside the journal.  Part of the config module (config_internal.h).
 */
#include "config/config_internal.h"

#include "base/dirs.h"
#include "config/gridmanager.h"
#include "base/strbuf.h"

#include <errno.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The default state directory: $XDG_STATE_HOME/boinc_gahp or
 * ~/.local/state/boinc_gahp (malloc'd), NULL when neither is absolute. */
static char *state_dir(void)
{
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    strbuf dir = STRBUF_INIT;
    int rc = -1;
    if (xdg != NULL && xdg[0] == '/')
        rc = strbuf_printf(&dir, "%s/boinc_gahp", xdg);
    else if (home != NULL && home[0] == '/')
        rc = strbuf_printf(&dir, "%s/.local/state/boinc_gahp", home);
    char *d = rc == 0 ? strbuf_detach(&dir) : NULL;
    strbuf_free(&dir);
    return d;
}

/* Where the journal setting came from ("--journal", a variable,
 * "FILE:LINE"), NULL for the default. */
static const char *journal_source(const gahp_config *cfg)
{
    for (size_t i = 0; i < option_count; i++)
        if (option_table[i].field == offsetof(gahp_config, journal_path))
            return cfg->sources[i];
    return NULL;
}

/*
 * "%u" in a journal path from a file or the environment is the user's
 * login name, so that one line in the system-wide file gives each user a
 * journal of their own (doc/operating.md, "Home directories on NFS");
 * "%%" is a '%'.  Any other '%' is kept as it is (config_expand_user).
 */
/*
 * Under a grid manager started for one value of GRIDMANAGER_SELECTION_EXPR
 * (config/gridmanager.h), the journal's name gets that value as a suffix,
 * "journal.db" -> "journal.VALUE-HASH.db", so each of the user's grid
 * managers has its own journal and finds it again when it is started
 * anew.  A --journal given on the command line is taken as it is: whoever
 * typed it chose the file.
 */
static int apply_gridmanager_suffix(gahp_config *cfg, FILE *err)
{
    const char *src = journal_source(cfg);
    cfg->gridmanager_value = gridmanager_selection_value();
    if (cfg->gridmanager_value == NULL || (src != NULL && strncmp(src, "--", 2) == 0))
        return 0;
    cfg->journal_suffix = gridmanager_journal_suffix(cfg->gridmanager_value);
    strbuf sb = STRBUF_INIT;
    const char *path = cfg->journal_path;
    size_t len = strlen(path);
    const char *slash = strrchr(path, '/');
    int has_db = len > 3 && strcmp(path + len - 3, ".db") == 0 &&
                 (slash == NULL || slash < path + len - 3);
    size_t stem = has_db ? len - 3 : len;
    int rc = cfg->journal_suffix == NULL ? -1 :
             strbuf_printf(&sb, "%.*s.%s%s", (int)stem, path, cfg->journal_suffix,
                           has_db ? ".db" : "");
    char *out = rc == 0 ? strbuf_detach(&sb) : NULL;
    strbuf_free(&sb);
    if (out == NULL) {
        fprintf(err, "boinc_gahp: out of memory\n");
        return -1;
    }
    free(cfg->journal_path);
    cfg->journal_path = out;
    return 0;
}

/* No journal from any source: the XDG state directory.  Its directory is
 * made later (config_make_journal_dir): failing to make it is no bad
 * setting (exit status 1, not 2). */
static int default_journal(gahp_config *cfg, FILE *err)
{
    char *dir = state_dir();
    if (dir == NULL) {
        fprintf(err, "boinc_gahp: no journal path: use --journal, or set "
                "BOINC_GAHP_JOURNAL, XDG_STATE_HOME or HOME\n");
        return -1;
    }
    strbuf path = STRBUF_INIT;
    int rc = strbuf_printf(&path, "%s/journal.db", dir);
    free(dir);
    cfg->journal_path = rc == 0 ? strbuf_detach(&path) : NULL;
    strbuf_free(&path);
    cfg->journal_default = 1;
    if (cfg->journal_path == NULL)
        fprintf(err, "boinc_gahp: out of memory\n");
    return cfg->journal_path ? 0 : -1;
}

/* The journal: the setting with %u expanded, or the default; then the
 * grid manager's suffix. */
int config_resolve_journal(gahp_config *cfg, FILE *err)
{
    int rc = cfg->journal_path != NULL
             ? config_expand_user(cfg, &cfg->journal_path, 0, "journal", err)
                                       : default_journal(cfg, err);
    return rc == 0 ? apply_gridmanager_suffix(cfg, err) : rc;
}

int config_project_workers(const gahp_config *cfg)
{
    int n = cfg->project_workers > 0 ? cfg->project_workers : cfg->workers / 2;
    return n < 1 ? 1 : n;
}

/* The directory part of path (malloc'd), "/" for "/x". */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash == NULL ? 0 : (size_t)(slash - path);
    char *d = malloc(n + 2);
    if (d == NULL)
        return NULL;
    if (n == 0)
        strcpy(d, slash ? "/" : ".");
    else {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

char *config_journal_dir(const gahp_config *cfg)
{
    return cfg->journal_path != NULL ? dir_of(cfg->journal_path) : NULL;
}

/*
 * The journal's directory, made (0700, with its parents) when missing,
 * whichever journal it is: `journal = /var/lib/boinc_gahp/%u/j.db` then
 * needs no directory per user made by hand.  Failing to make it is no
 * bad setting (exit status 1, not 2).
 */
int config_make_journal_dir(const gahp_config *cfg, FILE *err)
{
    char *dir = dir_of(cfg->journal_path);
    char *failed = NULL;
    int rc = dir != NULL ? dirs_make(dir, &failed) : -1;
    if (rc != 0 && dir != NULL)
        fprintf(err, "boinc_gahp: cannot create the %sjournal directory %s (%s: %s); "
                "set another journal with --journal, BOINC_GAHP_JOURNAL or the "
                "configuration file's journal key\n", cfg->journal_default ? "default " : "",
                dir, failed ? failed : dir, strerror(errno));
    else if (rc != 0)
        fprintf(err, "boinc_gahp: out of memory\n");
    free(failed);
    free(dir);
    return rc;
}

/* The per-user log in the state directory: boinc_gahp.log, or
 * boinc_gahp.SUFFIX.log under a grid manager with a selection value. */
char *config_user_log_path(const gahp_config *cfg)
{
    char *dir = state_dir();
    if (dir == NULL)
        return NULL;
    strbuf sb = STRBUF_INIT;
    int rc = cfg->journal_suffix != NULL
             ? strbuf_printf(&sb, "%s/boinc_gahp.%s.log", dir, cfg->journal_suffix)
             : strbuf_printf(&sb, "%s/boinc_gahp.log", dir);
    char *path = rc == 0 ? strbuf_detach(&sb) : NULL;
    strbuf_free(&sb);
    free(dir);
    return path;
}

/*
 * The default log is named after the journal, beside it: "alice.db" ->
 * "alice.log", so that `journal = /var/lib/boinc_gahp/%u.db` gives each
 * user a log of their own (issue 28: one shared boinc_gahp.log there let
 * the first user lock the others out, or read their lines).  The default
 * journal keeps its log's historic name, boinc_gahp.log, in the user's
 * own state directory.
 */
char *config_default_log_path(const gahp_config *cfg)
{
    if (cfg->journal_path == NULL || cfg->journal_default ||
        strchr(cfg->journal_path, '%') != NULL)     /* %u never expanded */
        return config_user_log_path(cfg);
    const char *path = cfg->journal_path;
    size_t len = strlen(path);
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    size_t stem = strlen(base) > 3 && strcmp(path + len - 3, ".db") == 0 ? len - 3 : len;
    strbuf sb = STRBUF_INIT;
    char *log = strbuf_printf(&sb, "%.*s.log", (int)stem, path) == 0
                ? strbuf_detach(&sb) : NULL;
    strbuf_free(&sb);
    return log;
}

void config_log_paths(const gahp_config *cfg, char *paths[CONFIG_LOG_PATHS])
{
    paths[0] = cfg->log_file != NULL ? strdup(cfg->log_file) : NULL;
    paths[1] = config_default_log_path(cfg);
    paths[2] = config_user_log_path(cfg);
    for (int i = 1; i < CONFIG_LOG_PATHS; i++)
        for (int k = 0; k < i && paths[i] != NULL; k++)
            if (paths[k] != NULL && strcmp(paths[k], paths[i]) == 0) {
                free(paths[i]);
                paths[i] = NULL;
            }
}
