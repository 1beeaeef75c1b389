/*
 * config.c - boinc_gahp's settings: ONE option table drives the command
 * line (getopt), --help, the environment variables and the configuration
 * file, so adding a setting is adding one row to option_table.
 *
 * HTCondor starts the GAHP with no arguments, so every setting must also be
 * reachable without them.  Precedence, lowest first:
 *   built-in default < configuration file < environment < command line.
 * The configuration file is --config FILE, else $BOINC_GAHP_CONFIG, else
 * the first that exists of $XDG_CONFIG_HOME/boinc_gahp/boinc_gahp.conf (or
 * ~/.config/boinc_gahp/boinc_gahp.conf) and /etc/boinc_gahp/boinc_gahp.conf.
 * A bad value anywhere is a message naming its source and exit status 2.
 */
#include "config/config_internal.h"

#include "base/num.h"
#include "base/strbuf.h"
#include "base/url.h"
#include "base/version.h"
#include "build_id.h"   /* build/gen, by mk/build_id.sh */

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ident-style literal: `ident boinc_gahp` finds it.  Version and date come
 * from src/base/version.h; the date is the release date, not the build day.
 * The build's identity (git commit, package version or "unknown build")
 * goes inside the name token, after the x.y.z and the date HTCondor parses,
 * so that two different builds never print the same banner. */
#define VERSION_BANNER                                                   \
    "$GahpVersion: " GAHP_VERSION " " GAHP_RELEASE_DATE                  \
    " boinc_gahp\\ (persistent\\ BOINC\\ GAHP,\\ " GAHP_BUILD_ID_ESCAPED ") $"
/* HTCondor reads the banner into a 150-byte buffer (149 characters and
 * the NUL); mk/build_id.sh keeps the identity short enough. */
_Static_assert(sizeof VERSION_BANNER - 1 <= 149, "version banner too long for HTCondor");
const char GAHP_VERSION_STRING[] = VERSION_BANNER;
const char GAHP_VERSION_FULL[] = GAHP_VERSION " (" GAHP_BUILD_ID ")";

static const char *const log_levels[] = { "error", "warn", "info", "debug", NULL };
static const char *const sync_modes[] = { "normal", "full", NULL };

#define F(member) offsetof(gahp_config, member)
#define NO_FIELD 0

/* Adding a setting: one row here (and a field in gahp_config, and its
 * documentation in man/boinc_gahp.1.in and doc/configuration.md - a test
 * fails until both name it).  Keep the columns aligned. */
const option_row option_table[] = {
/*   --name                 environment variable            file key               type            field                       min  max       choices     default metavar    help */
    { "journal",             "BOINC_GAHP_JOURNAL",           "journal",             OT_PATH,        F(journal_path),             0,  0,        NULL,       NULL,   "PATH",    "journal database (default $XDG_STATE_HOME/boinc_gahp/journal.db or ~/.local/state/boinc_gahp/journal.db)" },
    { "workers",             "BOINC_GAHP_WORKERS",           "workers",             OT_INT,         F(workers),                  1,  CONFIG_MAX_WORKERS, NULL, "8", "N",       "worker threads" },
    { "log-file",            "BOINC_GAHP_LOG_FILE",          "log_file",            OT_PATH,        F(log_file),                 0,  0,        NULL,       NULL,   "PATH",    "append log lines to PATH instead of the log named after the journal (beside it) and stderr" },
    { "log-max-bytes",       "BOINC_GAHP_LOG_MAX_BYTES",     "log_max_bytes",       OT_LONG,        F(log_max_bytes),            0,  1125899906842624.0, NULL, "10485760", "BYTES", "rename the log file to PATH.old and start it again at this size (0 = never)" },
    { "log-level",           "BOINC_GAHP_LOG_LEVEL",         "log_level",           OT_CHOICE,      F(log_level),                0,  0,        log_levels, "info", NULL,      "log verbosity" },
    { "http-timeout",        "BOINC_GAHP_HTTP_TIMEOUT",      "http_timeout",        OT_LONG,        F(http_timeout_s),           1,  86400,    NULL,       "300",  "SECONDS", "total time of one HTTP request" },
    { "connect-timeout",     "BOINC_GAHP_CONNECT_TIMEOUT",   "connect_timeout",     OT_LONG,        F(connect_timeout_s),        1,  3600,     NULL,       "10",   "SECONDS", "one connection attempt" },
    { "retry-budget",        "BOINC_GAHP_RETRY_BUDGET",      "retry_budget",        OT_LONG,        F(retry_budget_s),           0,  86400,    NULL,       "60",   "SECONDS", "time spent retrying requests that are safe to repeat" },
    { "ca-file",             "BOINC_GAHP_CA_FILE",           "ca_file",             OT_PATH,        F(ca_file),                  0,  0,        NULL,       NULL,   "FILE",    "CA bundle for https projects (default: the system's)" },
    { "ca-path",             "BOINC_GAHP_CA_PATH",           "ca_path",             OT_PATH,        F(ca_path),                  0,  0,        NULL,       NULL,   "DIR",     "CA directory for https projects (default: the system's)" },
    { "sync",                "BOINC_GAHP_SYNC",              "sync",                OT_CHOICE,      F(sync_full),                0,  0,        sync_modes, "full", NULL,      "journal durability" },
    { "retention-days",      "BOINC_GAHP_RETENTION_DAYS",    "retention_days",      OT_DOUBLE,      F(retention_days),           0,  36500,    NULL,       "7",    "DAYS",    "keep answered requests, and retired or expired batches with their jobs and files, this long; pruned at start-up and while running (every tenth of it, at least hourly)" },
    { "busy-timeout",        "BOINC_GAHP_BUSY_TIMEOUT",      "busy_timeout",        OT_LONG,        F(busy_timeout_ms),          0,  600000,   NULL,       "60000", "MS",     "wait this long for another process's journal lock" },
    { "submit-deadline",     "BOINC_GAHP_SUBMIT_DEADLINE",   "submit_deadline",     OT_LONG,        F(submit_deadline_s),        0,  86400,    NULL,       "270",  "SECONDS", "answer a BOINC_SUBMIT still running after this long with an error; it continues (0 = off)" },
    { "requeue-undelivered", "BOINC_GAHP_REQUEUE_UNDELIVERED", "requeue_undelivered", OT_FLAG,      F(requeue_undelivered),      0,  0,        NULL,       "no",   NULL,      "at start-up, answer an earlier run's unanswered requests under their original ids" },
    /* Limits against hostile servers (issue 10).  Byte counts (long: 64
     * bits on every LP64 target) stop at 2^50 (1 PiB): a limit is never
     * "unlimited".  The reply default equals
     * BOINC_DEFAULT_MAX_REPLY, the output default BOINC_DEFAULT_MAX_DOWNLOAD. */
    { "max-reply-bytes",     "BOINC_GAHP_MAX_REPLY_BYTES",   "max_reply_bytes",     OT_LONG,        F(max_reply_bytes),       4096,  1125899906842624.0, NULL, "33554432",    "BYTES", "largest RPC reply accepted (32 MiB)" },
    { "max-output-bytes",    "BOINC_GAHP_MAX_OUTPUT_BYTES",  "max_output_bytes",    OT_LONG,        F(max_output_bytes),         1,  1125899906842624.0, NULL, "4294967296",  "BYTES", "largest output file downloaded (4 GiB)" },
    { "max-fetch-bytes",     "BOINC_GAHP_MAX_FETCH_BYTES",   "max_fetch_bytes",     OT_LONG,        F(max_fetch_bytes),          1,  1125899906842624.0, NULL, "17179869184", "BYTES", "all files of one FETCH_OUTPUT together (16 GiB)" },
    { "max-unzip-bytes",     "BOINC_GAHP_MAX_UNZIP_BYTES",   "max_unzip_bytes",     OT_LONG,        F(max_unzip_bytes),          1,  1125899906842624.0, NULL, "17179869184", "BYTES", "unpacked size of one zip output (16 GiB)" },
    { "max-unzip-ratio",     "BOINC_GAHP_MAX_UNZIP_RATIO",   "max_unzip_ratio",     OT_LONG,        F(max_unzip_ratio),          1,  1000000,  NULL,       "200",  "N",       "unpacked bytes per byte of a zip output" },
    /* No default row value: 0 means max(1, workers / 2), decided in workers.c. */
    { "project-workers",     "BOINC_GAHP_PROJECT_WORKERS",   "project_workers",     OT_INT,         F(project_workers),          1,  CONFIG_MAX_WORKERS, NULL, NULL, "N",       "requests of one project running at once (default: half the workers, at least 1)" },
    { "upload-chunk-files",  "BOINC_GAHP_UPLOAD_CHUNK_FILES", "upload_chunk_files", OT_LONG,      F(upload_chunk_files),       1,  100000,   NULL,       "2000", "N",       "files per upload_files request (a server with stock PHP limits, max_file_uploads = 20, is learned from its first refusal)" },
    { "upload-chunk-bytes",  "BOINC_GAHP_UPLOAD_CHUNK_BYTES", "upload_chunk_bytes", OT_LONG,      F(upload_chunk_bytes),       65536, 1099511627776.0, NULL, "268435456", "BYTES", "bytes per upload_files request (a stock PHP post_max_size of 8M is learned from the first refusal)" },
    { "upload-connections",  "BOINC_GAHP_UPLOAD_CONNECTIONS", "upload_connections", OT_LONG,      F(upload_connections),       1,  8,        NULL,       "3",    "N",       "query_files or upload_files requests of one submit in flight at once, each on its own kept-alive connection" },
    /* At least a minute, at most ten years: never 0, which means "never expires". */
    { "batch-expire",        "BOINC_GAHP_BATCH_EXPIRE",      "batch_expire",        OT_LONG,        F(batch_expire_s),           60, 315360000, NULL,       "21600", "SECONDS", "expire time of a new batch, from its creation (a failed submit's batch goes then)" },
    /* The BLAH dialect (HTCondor 10.0-25.x, grid_resource = batch boinc;
     * doc/htcondor.md): how BLAH_JOB_SUBMITs gather into BOINC batches, and
     * how often BLAH_JOB_STATUS asks the server. */
    { "blah-batch-window",   "BOINC_GAHP_BLAH_BATCH_WINDOW", "blah_batch_window",   OT_DOUBLE,      F(blah_batch_window_s),      0,  3600,     NULL,       "3",    "SECONDS", "a BOINC batch of BLAH jobs is submitted once no job joined it for this long" },
    { "blah-batch-max-age",  "BOINC_GAHP_BLAH_BATCH_MAX_AGE", "blah_batch_max_age", OT_DOUBLE,      F(blah_batch_max_age_s),     0,  86400,    NULL,       "60",   "SECONDS", "... or once it is this old" },
    { "blah-batch-max-jobs", "BOINC_GAHP_BLAH_BATCH_MAX_JOBS", "blah_batch_max_jobs", OT_LONG,      F(blah_batch_max_jobs),      1,  100000,   NULL,       "10000", "N",      "... or once it has this many jobs" },
    /* 0: the project's limit is not known (the server's refusal does not
     * say it); the refusal then holds the job alone, after the fact. */
    { "blah-max-input-bytes", "BOINC_GAHP_BLAH_MAX_INPUT_BYTES", "blah_max_input_bytes", OT_LONG, F(blah_max_input_bytes), 0, 1125899906842624.0, NULL, "0", "BYTES", "largest input file the project's server takes (its php.ini upload_max_filesize; 0 = not known): a BLAH job with a larger one is refused at once, naming both sizes" },
    { "blah-status-interval", "BOINC_GAHP_BLAH_STATUS_INTERVAL", "blah_status_interval", OT_DOUBLE, F(blah_status_interval_s),   0,  86400,    NULL,       "30",   "SECONDS", "the BLAH scheduler asks the server about each project's jobs (one query per project) this often when HTCondor asks less often" },
    { "blah-status-min-interval", "BOINC_GAHP_BLAH_STATUS_MIN_INTERVAL", "blah_status_min_interval", OT_DOUBLE, F(blah_status_min_interval_s), 0, 86400, NULL,  "5",    "SECONDS", "... and as often as HTCondor asks about one job again (its GRIDMANAGER_JOB_PROBE_INTERVAL), but never more often than this" },
    { "blah-default-app",    "BOINC_GAHP_BLAH_DEFAULT_APP",  "blah_default_app",    OT_STRING,      F(blah_default_app),         0,  0,        NULL,       NULL,   "APP",     "BOINC app of a BLAH job whose submit file sets no batch_queue" },
    { "blah-project-name",   "BOINC_GAHP_BLAH_PROJECT_NAME", "blah_project_name",   OT_STRING,      F(blah_project_name),        0,  0,        NULL,       NULL,   "NAME",    "the name batch_project may give the configured project (unset: batch_project must be unset)" },
    { "config",              "BOINC_GAHP_CONFIG",            NULL,                  OT_CONFIG,      F(config_file),              0,  0,        NULL,       NULL,   "FILE",    "configuration file (default: the first of the FILES below that exists)" },
    { NULL,                  NULL,                           "project_url",         OT_PROJECT_URL, F(project_url),              0,  0,        NULL,       NULL,   "URL",     "project selected before the client's first line" },
    { NULL,                  NULL,                           "authenticator",       OT_SECRET,      F(authenticator),            0,  0,        NULL,       NULL,   "KEY",     "that project's authenticator (the file must then be mode 0600)" },
    { NULL,                  NULL,                           "authenticator_file",  OT_SECRET_FILE, F(authenticator),            0,  0,        NULL,       NULL,   "FILE",    "a file holding that authenticator; %u in its name is the user's name (a file per user, e.g. /etc/boinc_gahp/auth/%u)" },
    { "check-config",        NULL,                           NULL,                  OT_FLAG,        F(check_config),             0,  0,        NULL,       NULL,   NULL,      "check the settings and the journal, print each setting and its source, exit" },
    { "user",                NULL,                           NULL,                  OT_STRING,      F(check_user),               0,  0,        NULL,       NULL,   "NAME",    "with --check-config: check as user NAME would start (%u is NAME, HOME is NAME's home, and NAME must be able to read the configuration and authenticator files); for root, to find the users who cannot start" },
    { "example-config",      NULL,                           NULL,                  OT_EXAMPLE,     NO_FIELD,                    0,  0,        NULL,       NULL,   NULL,      "print an example configuration file (every key, commented out) and exit" },
    { "help",                NULL,                           NULL,                  OT_HELP,        NO_FIELD,                    0,  0,        NULL,       NULL,   NULL,      "this text" },
    { "version",             NULL,                           NULL,                  OT_VERSION,     NO_FIELD,                    0,  0,        NULL,       NULL,   NULL,      "print the version banner" },
};
const size_t option_count = sizeof option_table / sizeof option_table[0];

/* ---- values ----------------------------------------------------------- */

static void *field_of(gahp_config *cfg, const option_row *row)
{
    return (char *)cfg + row->field;
}

static int set_string(char **dst, const char *value, const char *src, FILE *err)
{
    if (*value == '\0') {
        fprintf(err, "boinc_gahp: %s needs a non-empty value\n", src);
        return -1;
    }
    char *copy = strdup(value);
    if (copy == NULL) {
        fprintf(err, "boinc_gahp: out of memory\n");
        return -1;
    }
    if (*dst != NULL)
        memset(*dst, 0, strlen(*dst));  /* may have been a secret */
    free(*dst);
    *dst = copy;
    return 0;
}

/*
 * A file name from any source.  "~" and "~/..." are expanded with $HOME
 * (a shell would have done it on a command line; in a file it is what an
 * admin expects).  A relative name is refused in the environment and the
 * file: the grid manager's working directory is nothing a user chose.
 * On the command line it is made absolute against the working directory,
 * as a user typing it means.  Returns a malloc'd path or NULL (message
 * printed).
 */
static char *expand_path(const char *value, const char *src, FILE *err)
{
    strbuf sb = STRBUF_INIT;
    int rc = 0;
    if (value[0] == '~' && (value[1] == '/' || value[1] == '\0')) {
        const char *home = getenv("HOME");
        if (home == NULL || home[0] != '/') {
            fprintf(err, "boinc_gahp: %s: cannot expand '~' in '%s': HOME is "
                    "not an absolute path\n", src, value);
            return NULL;
        }
        rc = strbuf_printf(&sb, "%s%s", home, value + 1);
    } else if (value[0] == '/') {
        rc = strbuf_puts(&sb, value);
    } else if (strncmp(src, "--", 2) == 0 && value[0] != '~') {
        char *cwd = getcwd(NULL, 0);
        if (cwd == NULL) {
            fprintf(err, "boinc_gahp: %s: cannot resolve '%s': %s\n", src, value,
                    strerror(errno));
            return NULL;
        }
        rc = strbuf_printf(&sb, "%s/%s", cwd, value);
        free(cwd);
    } else {
        fprintf(err, "boinc_gahp: %s: '%s' is not an absolute path (a relative "
                "one would depend on the grid manager's working directory; "
                "'~/' is expanded)\n", src, value);
        return NULL;
    }
    char *path = rc == 0 ? strbuf_detach(&sb) : NULL;
    strbuf_free(&sb);
    if (path == NULL)
        fprintf(err, "boinc_gahp: out of memory\n");
    return path;
}

static int set_path(char **dst, const char *value, const char *src, FILE *err)
{
    if (*value == '\0')
        return set_string(dst, value, src, err);    /* its message */
    char *path = expand_path(value, src, err);
    if (path == NULL)
        return -1;
    free(*dst);
    *dst = path;
    return 0;
}

static int parse_flag(const char *v, int *out)
{
    static const char *const yes[] = { "1", "yes", "true", "on", NULL };
    static const char *const no[] = { "0", "no", "false", "off", NULL };
    for (size_t i = 0; yes[i] != NULL; i++) {
        if (strcasecmp(v, yes[i]) == 0) { *out = 1; return 0; }
        if (strcasecmp(v, no[i]) == 0) { *out = 0; return 0; }
    }
    return -1;
}

static int set_choice(int *dst, const option_row *row, const char *value,
                      const char *src, FILE *err)
{
    for (int i = 0; row->choices[i] != NULL; i++)
        if (strcasecmp(value, row->choices[i]) == 0) {   /* HTCondor admins write TRUE */
            *dst = i;
            return 0;
        }
    fprintf(err, "boinc_gahp: %s: '%s' is not one of", src, value);
    for (int i = 0; row->choices[i] != NULL; i++)
        fprintf(err, "%s %s", i ? "," : "", row->choices[i]);
    fputc('\n', err);
    return -1;
}

static int set_number(gahp_config *cfg, const option_row *row, const char *value,
                      const char *src, FILE *err)
{
    long l;
    double d;
    if (row->type == OT_DOUBLE) {
        if (num_parse_double(value, &d) == 0 && d >= row->min && d <= row->max) {
            *(double *)field_of(cfg, row) = d;
            return 0;
        }
        fprintf(err, "boinc_gahp: %s: '%s' is not a number in %g..%g\n", src,
                value, row->min, row->max);
        return -1;
    }
    if (num_parse_long(value, (long)row->min, (long)row->max, &l) != 0) {
        fprintf(err, "boinc_gahp: %s: '%s' is not an integer in %ld..%ld\n", src,
                value, (long)row->min, (long)row->max);
        return -1;
    }
    if (row->type == OT_INT)
        *(int *)field_of(cfg, row) = (int)l;
    else
        *(long *)field_of(cfg, row) = l;
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
                     s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Read a whole small file (authenticator_file); surrounding blanks removed. */
static char *read_secret_file(const char *path, const char *src, FILE *err)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        fprintf(err, "boinc_gahp: %s: cannot read %s: %s\n", src, path,
                strerror(errno));
        return NULL;
    }
    strbuf sb = STRBUF_INIT;
    char chunk[4096];
    size_t n;
    int bad = 0;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        if (strbuf_append(&sb, chunk, n) != 0)
            bad = 1;
    if (ferror(fp))
        bad = 1;
    fclose(fp);
    char *t = bad ? NULL : trim(sb.data ? sb.data : (char *)"");
    char *secret = (t != NULL && *t != '\0') ? strdup(t) : NULL;
    if (sb.data != NULL)
        memset(sb.data, 0, sb.len);
    strbuf_free(&sb);
    if (secret == NULL)
        fprintf(err, "boinc_gahp: %s: %s is empty or unreadable\n", src, path);
    return secret;
}

/*
 * authenticator_file's value: "~/" expanded, then "%u" (the user's name;
 * /etc/boinc_gahp/auth/%u gives each user a file of their own, issue 41)
 * and "%%"; the file read.  Under --check-config --user the named user
 * must be able to read it too (root can read anything).  The secret
 * (malloc'd) and *path (malloc'd), or NULL (message printed).
 */
static char *read_authenticator_file(const gahp_config *cfg, const char *value,
                                     const char *src, char **path, FILE *err)
{
    *path = NULL;
    char *file = expand_path(value, src, err);
    if (file == NULL || config_expand_user(cfg, &file, 1, src, err) != 0) {
        free(file);
        return NULL;
    }
    char *secret = read_secret_file(file, src, err);
    char *why = NULL;
    if (secret != NULL && cfg->user != NULL &&
        config_user_access(cfg->user, file, 4, &why) != 0) {
        fprintf(err, "boinc_gahp: %s: user %s cannot start: %s\n", src,
                config_user_name(cfg->user), why ? why : "out of memory");
        free(why);
        memset(secret, 0, strlen(secret));
        free(secret);
        secret = NULL;
    }
    if (secret == NULL)
        free(file);
    else
        *path = file;
    return secret;
}

static int set_project_url(char **dst, const char *value, const char *src, FILE *err)
{
    const char *why = NULL;
    char *url = url_normalize(value, &why);
    if (url == NULL) {
        fprintf(err, "boinc_gahp: %s: bad project URL: %s\n", src,
                why != NULL ? why : "out of memory");
        return -1;
    }
    free(*dst);
    *dst = url;
    return 0;
}

/* Store one textual value from any source; src names the source in
 * messages ("--workers", "BOINC_GAHP_WORKERS", "FILE:LINE: workers"). */
static int apply_value(gahp_config *cfg, const option_row *row, const char *value,
                       const char *src, FILE *err)
{
    char **str = field_of(cfg, row);
    switch (row->type) {
    case OT_SECRET:
        if (set_string(str, value, src, err) != 0)
            return -1;
        free(cfg->authenticator_file);      /* not from a file now */
        cfg->authenticator_file = NULL;
        return 0;
    case OT_STRING:
    case OT_CONFIG:
        return set_string(str, value, src, err);
    case OT_PATH:
        return set_path(str, value, src, err);
    case OT_INT:
    case OT_LONG:
    case OT_DOUBLE:
        return set_number(cfg, row, value, src, err);
    case OT_CHOICE:
        return set_choice(field_of(cfg, row), row, value, src, err);
    case OT_FLAG:
        if (parse_flag(value, field_of(cfg, row)) == 0)
            return 0;
        fprintf(err, "boinc_gahp: %s: '%s' is not one of yes, no, true, false, "
                "on, off, 1, 0\n", src, value);
        return -1;
    case OT_PROJECT_URL:
        return set_project_url(str, value, src, err);
    case OT_SECRET_FILE: {
        char *file = NULL;
        char *secret = read_authenticator_file(cfg, value, src, &file, err);
        if (secret == NULL)
            return -1;
        if (*str != NULL)
            memset(*str, 0, strlen(*str));
        free(*str);
        *str = secret;
        free(cfg->authenticator_file);
        cfg->authenticator_file = file;
        return 0;
    }
    case OT_HELP:
    case OT_VERSION:
    case OT_EXAMPLE:
        break;
    }
    return -1;
}

/* Remember where row's value came from, for --check-config. */
static int record_source(gahp_config *cfg, const option_row *row, const char *src)
{
    size_t i = (size_t)(row - option_table);
    char *copy = strdup(src);
    if (copy == NULL)
        return -1;
    free(cfg->sources[i]);
    cfg->sources[i] = copy;
    return 0;
}

/* apply_value, then record_source(label). */
static int apply_from(gahp_config *cfg, const option_row *row, const char *value,
                      const char *src, const char *label, FILE *err)
{
    if (apply_value(cfg, row, value, src, err) != 0)
        return -1;
    if (record_source(cfg, row, label) != 0) {
        fprintf(err, "boinc_gahp: out of memory\n");
        return -1;
    }
    return 0;
}

static int apply_defaults(gahp_config *cfg, FILE *err)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (option_table[i].def != NULL &&
            apply_from(cfg, &option_table[i], option_table[i].def, "default",
                       "default", err) != 0)
            return -1;
    return 0;
}

void config_free(gahp_config *cfg)
{
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const option_row *row = &option_table[i];
        if (row->type != OT_STRING && row->type != OT_PATH && row->type != OT_SECRET &&
            row->type != OT_SECRET_FILE && row->type != OT_CONFIG &&
            row->type != OT_PROJECT_URL)
            continue;
        char **str = field_of(cfg, row);
        if (*str != NULL)
            memset(*str, 0, strlen(*str));  /* scrub secrets */
        free(*str);
        *str = NULL;
    }
    for (config_project *pr = cfg->projects, *next; pr != NULL; pr = next) {
        next = pr->next;
        if (pr->authenticator != NULL)
            memset(pr->authenticator, 0, strlen(pr->authenticator));
        free(pr->authenticator);
        free(pr->authenticator_file);
        free(pr->url);
        free(pr->name);
        free(pr);
    }
    if (cfg->sources != NULL)
        for (size_t i = 0; i < OPTION_COUNT; i++)
            free(cfg->sources[i]);
    free(cfg->sources);
    free(cfg->warnings);
    free(cfg->authenticator_file);
    config_user_free(cfg->user);
    free(cfg->gridmanager_value);
    free(cfg->journal_suffix);
    memset(cfg, 0, sizeof *cfg);
}

/* ---- the command line -------------------------------------------------- */

/* One command-line setting, applied after the file and the environment. */
typedef struct {
    const option_row *row;
    const char *value;
} cli_setting;

static struct option *build_long_options(void)
{
    struct option *opts = calloc(OPTION_COUNT + 1, sizeof *opts);
    if (opts == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const option_row *row = &option_table[i];
        if (row->name == NULL)
            continue;
        int bare = row->type == OT_FLAG || row->type == OT_HELP ||
                   row->type == OT_VERSION || row->type == OT_EXAMPLE;
        opts[n].name = row->name;
        opts[n].has_arg = bare ? no_argument : required_argument;
        opts[n].flag = NULL;
        opts[n].val = 256 + (int)i;
        n++;
    }
    return opts;
}

/* getopt pass: --help/--version act at once; the other options are kept
 * in *settings (in order) to be applied last.  Returns a CONFIG_ code. */
static int scan_command_line(int argc, char **argv, gahp_config *cfg,
                             cli_setting *settings, size_t *count, FILE *out,
                             FILE *err)
{
    struct option *opts = build_long_options();
    if (opts == NULL) {
        fprintf(err, "boinc_gahp: out of memory\n");
        return CONFIG_ERROR;
    }
    int opt, rc = CONFIG_OK;
    optind = 1;
    opterr = 0;
    while (rc == CONFIG_OK &&
           (opt = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (opt == '?' || opt == ':') {
            fprintf(err, "boinc_gahp: %s option: %s (see --help)\n",
                    opt == ':' ? "missing value for" : "unknown", argv[optind - 1]);
            rc = CONFIG_ERROR;
            break;
        }
        const option_row *row = &option_table[opt - 256];
        if (row->type == OT_HELP || row->type == OT_VERSION ||
            row->type == OT_EXAMPLE) {
            if (row->type == OT_HELP)
                config_print_help(out);
            else if (row->type == OT_EXAMPLE)
                config_print_example(out);
            else
                fprintf(out, "%s\n", GAHP_VERSION_STRING);
            rc = CONFIG_EXIT_OK;
            break;
        }
        settings[*count].row = row;
        settings[(*count)++].value = row->type == OT_FLAG ? "yes" : optarg;
    }
    /* Operands: only the operator's "journal ..." (src/admin) takes any. */
    if (rc == CONFIG_OK && optind < argc && strcmp(argv[optind], "journal") != 0) {
        fprintf(err, "boinc_gahp: unexpected argument: %s\n", argv[optind]);
        rc = CONFIG_ERROR;
    }
    if (rc == CONFIG_OK && optind < argc) {
        cfg->operands = argv + optind;
        cfg->operand_count = argc - optind;
    }
    free(opts);
    return rc;
}

static int apply_command_line(gahp_config *cfg, const cli_setting *settings,
                              size_t count, FILE *err)
{
    strbuf src = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < count; i++) {
        strbuf_reset(&src);
        rc = strbuf_printf(&src, "--%s", settings[i].row->name) != 0 ? -1
             : apply_from(cfg, settings[i].row, settings[i].value, src.data,
                          src.data, err);
    }
    strbuf_free(&src);
    return rc;
}

/* ---- the environment --------------------------------------------------- */

/* An empty variable counts as unset (as for BOINC_GAHP_JOURNAL always). */
static const char *env_value(const char *name)
{
    const char *v = name ? getenv(name) : NULL;
    return (v != NULL && *v != '\0') ? v : NULL;
}

static int apply_environment(gahp_config *cfg, FILE *err)
{
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const option_row *row = &option_table[i];
        const char *v = env_value(row->env);
        if (v != NULL && row->type != OT_CONFIG &&
            apply_from(cfg, row, v, row->env, row->env, err) != 0)
            return -1;
    }
    return 0;
}

/* ---- the configuration file -------------------------------------------- */

static const option_row *row_by_key(const char *key)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (option_table[i].key != NULL && strcmp(option_table[i].key, key) == 0)
            return &option_table[i];
    return NULL;
}

const config_project *config_find_project(const gahp_config *cfg, const char *name)
{
    for (const config_project *pr = cfg->projects; pr != NULL; pr = pr->next)
        if (strcmp(pr->name, name) == 0)
            return pr;
    return NULL;
}

/* The named project called name, made if new; NULL on ENOMEM. */
static config_project *named_project(gahp_config *cfg, const char *name)
{
    config_project *pr = (config_project *)config_find_project(cfg, name);
    if (pr != NULL)
        return pr;
    pr = calloc(1, sizeof *pr);
    if (pr == NULL || (pr->name = strdup(name)) == NULL) {
        free(pr);
        return NULL;
    }
    pr->next = cfg->projects;
    cfg->projects = pr;
    return pr;
}

/* project_url.NAME = URL and authenticator_file.NAME = FILE (the BLAH
 * dialect's batch_project names them; doc/htcondor.md).  1 when key is not
 * such a key; 0 done; -1 a bad value (reported). */
static int named_project_line(gahp_config *cfg, const char *key, const char *value,
                              const char *src, FILE *err)
{
    static const char url_key[] = "project_url.", auth_key[] = "authenticator_file.";
    int is_url = strncmp(key, url_key, sizeof url_key - 1) == 0;
    int is_auth = strncmp(key, auth_key, sizeof auth_key - 1) == 0;
    if (!is_url && !is_auth)
        return 1;
    const char *name = key + (is_url ? sizeof url_key : sizeof auth_key) - 1;
    if (*name == '\0') {
        fprintf(err, "boinc_gahp: %s: a project name must follow the dot\n", src);
        return -1;
    }
    config_project *pr = named_project(cfg, name);
    if (pr == NULL) {
        fprintf(err, "boinc_gahp: out of memory\n");
        return -1;
    }
    if (is_url)
        return set_project_url(&pr->url, value, src, err);
    char *file = NULL;
    char *secret = read_authenticator_file(cfg, value, src, &file, err);
    if (secret == NULL)
        return -1;
    if (pr->authenticator != NULL)
        memset(pr->authenticator, 0, strlen(pr->authenticator));
    free(pr->authenticator);
    pr->authenticator = secret;
    free(pr->authenticator_file);
    pr->authenticator_file = file;
    return 0;
}

/* Every named project needs both its URL and its authenticator. */
static int check_named_projects(const gahp_config *cfg, const char *path, FILE *err)
{
    for (const config_project *pr = cfg->projects; pr != NULL; pr = pr->next)
        if (pr->url == NULL || pr->authenticator == NULL) {
            fprintf(err, "boinc_gahp: config file %s: project %s needs both "
                    "project_url.%s and authenticator_file.%s\n", path, pr->name,
                    pr->name, pr->name);
            return -1;
        }
    return 0;
}

/* Keep a warning for the log (opened after the configuration is read). */
static int add_warning(gahp_config *cfg, const char *path, int lineno, const char *key)
{
    strbuf sb = STRBUF_INIT;
    int rc = strbuf_puts(&sb, cfg->warnings ? cfg->warnings : "") != 0 ||
             strbuf_printf(&sb, "%s:%d: unknown key '%s' ignored (see "
                           "boinc_gahp --example-config)\n", path, lineno, key) != 0
             ? -1 : 0;
    if (rc == 0) {
        free(cfg->warnings);
        cfg->warnings = strbuf_detach(&sb);
    }
    strbuf_free(&sb);
    return rc;
}

/* An inline comment starts at a '#' after a blank ("workers = 4  # four");
 * a '#' inside a word (a URL's fragment, a password) is kept. */
static void cut_comment(char *s)
{
    for (char *p = s; *p != '\0'; p++)
        if (*p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
            *p = '\0';
            return;
        }
}

static int config_file_line(gahp_config *cfg, char *line, const char *path,
                            int lineno, int *has_secret, FILE *err)
{
    cut_comment(line);
    char *s = trim(line);
    if (*s == '\0')
        return 0;
    char *eq = strchr(s, '=');
    if (eq == NULL) {
        fprintf(err, "boinc_gahp: %s:%d: expected key = value\n", path, lineno);
        return -1;
    }
    *eq = '\0';
    char *key = trim(s), *value = trim(eq + 1);
    const option_row *row = row_by_key(key);
    if (row == NULL) {
        strbuf where = STRBUF_INIT;
        int named = strbuf_printf(&where, "%s:%d: %s", path, lineno, key) != 0 ? -1
                  : named_project_line(cfg, key, value, where.data, err);
        strbuf_free(&where);
        if (named <= 0)
            return named;
        /* A warning, not an exit: one typo in the system-wide file must not
         * stop every user's GAHP (every BOINC job held).  main() logs it
         * once the log is open. */
        return add_warning(cfg, path, lineno, key);
    }
    if (row->type == OT_SECRET)
        *has_secret = 1;
    strbuf src = STRBUF_INIT, label = STRBUF_INIT;
    int rc = strbuf_printf(&src, "%s:%d: %s", path, lineno, key) != 0 ||
             strbuf_printf(&label, "%s:%d", path, lineno) != 0 ? -1
             : apply_from(cfg, row, value, src.data, label.data, err);
    strbuf_free(&src);
    strbuf_free(&label);
    return rc;
}

static int read_config_file(gahp_config *cfg, const char *path, FILE *err)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        fprintf(err, "boinc_gahp: cannot open config file %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    struct stat st;
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0, has_secret = 0;
    char *why = NULL;
    if (cfg->user != NULL && config_user_access(cfg->user, path, 4, &why) != 0) {
        fprintf(err, "boinc_gahp: config file %s: user %s cannot start: %s\n", path,
                config_user_name(cfg->user), why ? why : "out of memory");
        free(why);
        fclose(fp);
        return -1;
    }
    while (rc == 0 && getline(&line, &cap, fp) >= 0)
        rc = config_file_line(cfg, line, path, ++lineno, &has_secret, err);
    if (rc == 0 && ferror(fp)) {
        fprintf(err, "boinc_gahp: cannot read config file %s\n", path);
        rc = -1;
    }
    if (line != NULL)
        memset(line, 0, cap);
    free(line);
    /* A config file carrying the secret itself must be private. */
    if (rc == 0 && has_secret && fstat(fileno(fp), &st) == 0 && (st.st_mode & 077)) {
        fprintf(err, "boinc_gahp: config file %s holds an authenticator but is "
                "accessible by group/others (chmod 600 it, or use "
                "authenticator_file)\n", path);
        rc = -1;
    }
    fclose(fp);
    if (rc == 0)
        rc = check_named_projects(cfg, path, err);
    if (rc == 0 && (cfg->project_url == NULL) != (cfg->authenticator == NULL)) {
        fprintf(err, "boinc_gahp: config file %s must set both project_url and "
                "an authenticator\n", path);
        rc = -1;
    }
    return rc;
}

/* *found = 1 if path exists (any type: a directory fails later, loudly). */
static int path_exists(const char *path, int *found, FILE *err)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        *found = 1;
        return 0;
    }
    if (errno == ENOENT || errno == ENOTDIR) {
        *found = 0;
        return 0;
    }
    fprintf(err, "boinc_gahp: cannot look at config file %s: %s\n", path,
            strerror(errno));
    return -1;
}

/* The default search when neither --config nor BOINC_GAHP_CONFIG names a
 * file: the per-user file, else the system-wide one; none is fine. */
static int find_default_config(char **path, FILE *err)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    strbuf user = STRBUF_INIT;
    int rc = 0, found = 0;
    if (xdg != NULL && xdg[0] == '/')        /* XDG: relative values are ignored */
        rc = strbuf_printf(&user, "%s/" GAHP_USER_CONFIG, xdg);
    else if (home != NULL && home[0] == '/')
        rc = strbuf_printf(&user, "%s/.config/" GAHP_USER_CONFIG, home);
    if (rc == 0 && user.data != NULL)
        rc = path_exists(user.data, &found, err);
    if (rc == 0 && found) {
        *path = strbuf_detach(&user);
        return *path ? 0 : -1;
    }
    strbuf_free(&user);
    if (rc == 0)
        rc = path_exists(GAHP_SYSTEM_CONFIG, &found, err);
    if (rc == 0 && found && (*path = strdup(GAHP_SYSTEM_CONFIG)) == NULL)
        rc = -1;
    return rc;
}

/* Which file: --config, else $BOINC_GAHP_CONFIG (both must exist), else the
 * default search.  Stores the choice in cfg->config_file (NULL = none). */
static int choose_config_file(gahp_config *cfg, const cli_setting *settings,
                              size_t count, FILE *err)
{
    const char *named = env_value("BOINC_GAHP_CONFIG");
    const char *src = "BOINC_GAHP_CONFIG";
    for (size_t i = 0; i < count; i++)
        if (settings[i].row->type == OT_CONFIG) {
            named = settings[i].value;
            src = "--config";
        }
    if (named != NULL)
        return set_string(&cfg->config_file, named, src, err);
    return find_default_config(&cfg->config_file, err);
}

/* ---- journal path ------------------------------------------------------ */

/* ---- --check-config --user NAME --------------------------------------- */

/*
 * --user NAME (with --check-config only): the configuration as NAME's
 * server would see it.  Looked up before the file is read, since "%u" in
 * it is NAME; HOME becomes NAME's home directory (the default file search,
 * "~/", the default journal and log), and the caller's XDG_CONFIG_HOME and
 * XDG_STATE_HOME are dropped: they are the operator's, not NAME's.  This
 * process only reports, so changing its environment is safe.
 */
static int choose_user(gahp_config *cfg, const cli_setting *settings, size_t count,
                       FILE *err)
{
    const char *name = NULL;
    int check = 0;
    for (size_t i = 0; i < count; i++) {
        if (settings[i].row->field == offsetof(gahp_config, check_user))
            name = settings[i].value;
        if (settings[i].row->field == offsetof(gahp_config, check_config))
            check = 1;
    }
    cfg->check_config = check;      /* an error below must open no log */
    if (name == NULL)
        return 0;
    if (!check) {
        fprintf(err, "boinc_gahp: --user is for --check-config only (a server "
                "runs as the user who starts it)\n");
        return -1;
    }
    cfg->user = config_user_lookup(name, err);
    if (cfg->user == NULL)
        return -1;
    if (setenv("HOME", config_user_home(cfg->user), 1) != 0 ||
        unsetenv("XDG_CONFIG_HOME") != 0 || unsetenv("XDG_STATE_HOME") != 0) {
        fprintf(err, "boinc_gahp: --user %s: cannot set HOME: %s\n", name,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- all together ------------------------------------------------------ */

/*
 * After a bad setting, what main still needs: whether this is an
 * operator's dry run (--check-config writes no log, even when a file
 * line before it failed), and the journal as far as it was set, with %u
 * expanded, so that the reason lands in the log named after it.
 */
static void note_after_error(gahp_config *cfg, const cli_setting *settings,
                             size_t count, FILE *err)
{
    for (size_t i = 0; i < count; i++)
        if (settings[i].row->field == offsetof(gahp_config, check_config))
            cfg->check_config = 1;
    if (cfg->journal_path != NULL && strchr(cfg->journal_path, '%') != NULL)
        config_resolve_journal(cfg, err);
}

int config_parse(int argc, char **argv, gahp_config *cfg, FILE *out, FILE *err)
{
    memset(cfg, 0, sizeof *cfg);
    cli_setting *settings = calloc((size_t)(argc > 0 ? argc : 1), sizeof *settings);
    cfg->sources = calloc(OPTION_COUNT, sizeof *cfg->sources);
    if (settings == NULL || cfg->sources == NULL) {
        free(settings);
        fprintf(err, "boinc_gahp: out of memory\n");
        return CONFIG_ERROR;
    }
    size_t count = 0;
    int rc = scan_command_line(argc, argv, cfg, settings, &count, out, err);
    if (rc == CONFIG_OK && choose_user(cfg, settings, count, err) != 0)
        rc = CONFIG_ERROR;
    if (rc == CONFIG_OK) {
        char *file = NULL;
        int bad = apply_defaults(cfg, err) != 0 ||
                  choose_config_file(cfg, settings, count, err) != 0;
        /* read_config_file must not see the name in cfg as a setting */
        if (!bad && cfg->config_file != NULL && (file = strdup(cfg->config_file)) == NULL)
            bad = 1;
        bad = bad || (file != NULL && read_config_file(cfg, file, err) != 0) ||
              apply_environment(cfg, err) != 0 ||
              apply_command_line(cfg, settings, count, err) != 0 ||
              config_resolve_journal(cfg, err) != 0;
        free(file);
        rc = bad ? CONFIG_ERROR : CONFIG_OK;
        if (bad)
            note_after_error(cfg, settings, count, err);
    }
    free(settings);
    return rc;
}
