/*
 * config.c - command-line options, the optional config file, and the
 * journal path resolution.  Every bad option is a clear message and exit 2.
 */
#include "config.h"

#include "boinc.h"
#include "commands.h"
#include "strbuf.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ident-style literal: `ident build/boinc_gahp` finds it. */
const char GAHP_VERSION_STRING[] =
    "$GahpVersion: 1.0.0 Nov 21 2026 boinc_gahp\\ (persistent\\ BOINC\\ GAHP) $";
const char GAHP_VERSION_NUMBER[] = "1.0.0";

static const char usage_text[] =
    "usage: boinc_gahp [options]\n"
    "A persistent BOINC GAHP server: speaks the GAHP protocol on stdin/stdout.\n"
    "\n"
    "  --journal PATH          journal database (default: $BOINC_GAHP_JOURNAL,\n"
    "                          $XDG_STATE_HOME/boinc_gahp/journal.db or\n"
    "                          $HOME/.local/state/boinc_gahp/journal.db)\n"
    "  --workers N             worker threads, 1..256 (default 8)\n"
    "  --log-file PATH         log to PATH instead of stderr\n"
    "  --log-level LEVEL       error|warn|info|debug (default info)\n"
    "  --http-timeout SECONDS  total time per HTTP request (default 300)\n"
    "  --connect-timeout SECONDS  per connection attempt (default 10)\n"
    "  --retry-budget SECONDS  time spent retrying safe requests (default 60)\n"
    "  --ca-file FILE          CA bundle for https\n"
    "  --ca-path DIR           CA directory for https\n"
    "  --sync full|normal      journal durability (default full)\n"
    "  --retention-days DAYS   keep delivered requests this long (default 7)\n"
    "  --busy-timeout MS       wait for another process's journal lock (default 60000)\n"
    "  --submit-deadline SECONDS  answer a BOINC_SUBMIT still running after this\n"
    "                          long with an error; it continues (default 270, 0 = off)\n"
    "  --requeue-undelivered   at start-up, answer an earlier run's unanswered\n"
    "                          requests under their original request ids\n"
    "  --config FILE           config file pre-selecting a project\n"
    "  --help                  this text\n"
    "  --version               print the version banner\n";

enum {
    OPT_JOURNAL = 256, OPT_WORKERS, OPT_LOG_FILE, OPT_LOG_LEVEL,
    OPT_HTTP_TIMEOUT, OPT_CONNECT_TIMEOUT, OPT_RETRY_BUDGET, OPT_CA_FILE,
    OPT_CA_PATH, OPT_SYNC, OPT_RETENTION, OPT_BUSY, OPT_CONFIG, OPT_HELP,
    OPT_VERSION, OPT_REQUEUE, OPT_SUBMIT_DEADLINE
};

static const struct option long_options[] = {
    { "journal", required_argument, NULL, OPT_JOURNAL },
    { "workers", required_argument, NULL, OPT_WORKERS },
    { "log-file", required_argument, NULL, OPT_LOG_FILE },
    { "log-level", required_argument, NULL, OPT_LOG_LEVEL },
    { "http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT },
    { "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
    { "retry-budget", required_argument, NULL, OPT_RETRY_BUDGET },
    { "ca-file", required_argument, NULL, OPT_CA_FILE },
    { "ca-path", required_argument, NULL, OPT_CA_PATH },
    { "sync", required_argument, NULL, OPT_SYNC },
    { "retention-days", required_argument, NULL, OPT_RETENTION },
    { "busy-timeout", required_argument, NULL, OPT_BUSY },
    { "config", required_argument, NULL, OPT_CONFIG },
    { "requeue-undelivered", no_argument, NULL, OPT_REQUEUE },
    { "submit-deadline", required_argument, NULL, OPT_SUBMIT_DEADLINE },
    { "help", no_argument, NULL, OPT_HELP },
    { "version", no_argument, NULL, OPT_VERSION },
    { NULL, 0, NULL, 0 }
};

static void set_defaults(gahp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->workers = 8;
    cfg->log_level = LOG_INFO;
    cfg->http_timeout_s = 300;
    cfg->connect_timeout_s = 10;
    cfg->retry_budget_s = 60;
    cfg->sync_full = 1;
    cfg->retention_days = 7;
    cfg->busy_timeout_ms = 60000;
    /* HTCondor gives up on a BOINC_SUBMIT after 300 s
     * (GRIDMANAGER_GAHP_CALL_TIMEOUT): answer before that. */
    cfg->submit_deadline_s = 270;
}

void config_free(gahp_config *cfg)
{
    free(cfg->journal_path);
    free(cfg->log_file);
    free(cfg->ca_file);
    free(cfg->ca_path);
    free(cfg->config_file);
    free(cfg->project_url);
    if (cfg->authenticator != NULL)
        memset(cfg->authenticator, 0, strlen(cfg->authenticator));
    free(cfg->authenticator);
    memset(cfg, 0, sizeof *cfg);
}

static int set_string(char **dst, const char *value, const char *opt, FILE *err)
{
    if (*value == '\0') {
        fprintf(err, "boinc_gahp: %s needs a non-empty value\n", opt);
        return -1;
    }
    char *copy = strdup(value);
    if (copy == NULL) {
        fprintf(err, "boinc_gahp: out of memory\n");
        return -1;
    }
    free(*dst);
    *dst = copy;
    return 0;
}

static int set_long(long *dst, const char *value, long min, long max,
                    const char *opt, FILE *err)
{
    if (parse_long_strict(value, min, max, dst) != 0) {
        fprintf(err, "boinc_gahp: %s: '%s' is not an integer in %ld..%ld\n",
                opt, value, min, max);
        return -1;
    }
    return 0;
}

/* mkdir -p with mode 0700 for every missing component. */
static int make_dirs(char *path, FILE *err)
{
    for (char *p = path + 1; ; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            fprintf(err, "boinc_gahp: cannot create directory %s: %s\n",
                    path, strerror(errno));
            *p = saved;
            return -1;
        }
        *p = saved;
        if (saved == '\0')
            return 0;
    }
}

/* --journal, then $BOINC_GAHP_JOURNAL, then the XDG state directory. */
static int resolve_journal(gahp_config *cfg, FILE *err)
{
    if (cfg->journal_path != NULL)
        return 0;
    const char *env = getenv("BOINC_GAHP_JOURNAL");
    if (env != NULL && *env != '\0')
        return set_string(&cfg->journal_path, env, "BOINC_GAHP_JOURNAL", err);
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    strbuf dir = STRBUF_INIT;
    int rc;
    if (xdg != NULL && xdg[0] == '/')
        rc = strbuf_printf(&dir, "%s/boinc_gahp", xdg);
    else if (home != NULL && home[0] == '/')
        rc = strbuf_printf(&dir, "%s/.local/state/boinc_gahp", home);
    else {
        fprintf(err, "boinc_gahp: no journal path: use --journal, or set "
                "BOINC_GAHP_JOURNAL, XDG_STATE_HOME or HOME\n");
        return -1;
    }
    if (rc != 0 || make_dirs(dir.data, err) != 0 ||
        strbuf_puts(&dir, "/journal.db") != 0) {
        strbuf_free(&dir);
        return -1;
    }
    cfg->journal_path = strbuf_detach(&dir);
    return cfg->journal_path ? 0 : -1;
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

/* Read a whole small file (authenticator_file); trailing blanks removed. */
static char *read_secret_file(const char *path, FILE *err)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        fprintf(err, "boinc_gahp: cannot read authenticator_file %s: %s\n",
                path, strerror(errno));
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
        fprintf(err, "boinc_gahp: authenticator_file %s is empty or unreadable\n", path);
    return secret;
}

static int config_file_line(gahp_config *cfg, char *line, const char *path,
                            int lineno, int *has_secret, FILE *err)
{
    char *s = trim(line);
    if (*s == '\0' || *s == '#')
        return 0;
    char *eq = strchr(s, '=');
    if (eq == NULL) {
        fprintf(err, "boinc_gahp: %s:%d: expected key = value\n", path, lineno);
        return -1;
    }
    *eq = '\0';
    char *key = trim(s), *value = trim(eq + 1);
    if (strcmp(key, "project_url") == 0) {
        boinc_error berr = { 0, 0, NULL };
        char *url = boinc_normalize_url(value, &berr);
        if (url == NULL) {
            fprintf(err, "boinc_gahp: %s:%d: bad project_url: %s\n", path,
                    lineno, berr.msg ? berr.msg : "invalid");
            boinc_error_clear(&berr);
            return -1;
        }
        free(cfg->project_url);
        cfg->project_url = url;
    } else if (strcmp(key, "authenticator") == 0) {
        *has_secret = 1;
        if (set_string(&cfg->authenticator, value, "authenticator", err) != 0)
            return -1;
    } else if (strcmp(key, "authenticator_file") == 0) {
        char *secret = read_secret_file(value, err);
        if (secret == NULL)
            return -1;
        free(cfg->authenticator);
        cfg->authenticator = secret;
    } else {
        fprintf(err, "boinc_gahp: %s:%d: unknown key '%s'\n", path, lineno, key);
        return -1;
    }
    return 0;
}

static int read_config_file(gahp_config *cfg, FILE *err)
{
    const char *path = cfg->config_file;
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
    while (rc == 0 && getline(&line, &cap, fp) >= 0)
        rc = config_file_line(cfg, line, path, ++lineno, &has_secret, err);
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
    if (rc == 0 && (cfg->project_url == NULL) != (cfg->authenticator == NULL)) {
        fprintf(err, "boinc_gahp: config file %s must set both project_url and "
                "an authenticator\n", path);
        rc = -1;
    }
    return rc;
}

static int apply_option(gahp_config *cfg, int opt, const char *arg, FILE *err)
{
    long v;
    switch (opt) {
    case OPT_JOURNAL: return set_string(&cfg->journal_path, arg, "--journal", err);
    case OPT_WORKERS:
        if (set_long(&v, arg, 1, CONFIG_MAX_WORKERS, "--workers", err) != 0)
            return -1;
        cfg->workers = (int)v;
        return 0;
    case OPT_LOG_FILE: return set_string(&cfg->log_file, arg, "--log-file", err);
    case OPT_LOG_LEVEL:
        if (log_level_parse(arg, &cfg->log_level) != 0) {
            fprintf(err, "boinc_gahp: --log-level: '%s' is not one of "
                    "error, warn, info, debug\n", arg);
            return -1;
        }
        return 0;
    case OPT_HTTP_TIMEOUT:
        return set_long(&cfg->http_timeout_s, arg, 1, 86400, "--http-timeout", err);
    case OPT_CONNECT_TIMEOUT:
        return set_long(&cfg->connect_timeout_s, arg, 1, 3600, "--connect-timeout", err);
    case OPT_RETRY_BUDGET:
        return set_long(&cfg->retry_budget_s, arg, 0, 86400, "--retry-budget", err);
    case OPT_CA_FILE: return set_string(&cfg->ca_file, arg, "--ca-file", err);
    case OPT_CA_PATH: return set_string(&cfg->ca_path, arg, "--ca-path", err);
    case OPT_SYNC:
        if (strcmp(arg, "full") == 0)
            cfg->sync_full = 1;
        else if (strcmp(arg, "normal") == 0)
            cfg->sync_full = 0;
        else {
            fprintf(err, "boinc_gahp: --sync: '%s' is neither full nor normal\n", arg);
            return -1;
        }
        return 0;
    case OPT_RETENTION:
        if (parse_double_strict(arg, &cfg->retention_days) != 0 ||
            cfg->retention_days < 0 || cfg->retention_days > 36500) {
            fprintf(err, "boinc_gahp: --retention-days: '%s' is not a number "
                    "of days in 0..36500\n", arg);
            return -1;
        }
        return 0;
    case OPT_BUSY:
        return set_long(&cfg->busy_timeout_ms, arg, 0, 600000, "--busy-timeout", err);
    case OPT_CONFIG: return set_string(&cfg->config_file, arg, "--config", err);
    case OPT_REQUEUE:
        cfg->requeue_undelivered = 1;
        return 0;
    case OPT_SUBMIT_DEADLINE:
        return set_long(&cfg->submit_deadline_s, arg, 0, 86400, "--submit-deadline", err);
    default:
        return -1;
    }
}

int config_parse(int argc, char **argv, gahp_config *cfg, FILE *out, FILE *err)
{
    set_defaults(cfg);
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", long_options, NULL)) != -1) {
        if (opt == OPT_HELP) {
            fputs(usage_text, out);
            return CONFIG_EXIT_OK;
        }
        if (opt == OPT_VERSION) {
            fprintf(out, "%s\n", GAHP_VERSION_STRING);
            return CONFIG_EXIT_OK;
        }
        if (opt == '?' || opt == ':') {
            const char *name = argv[optind - 1];
            fprintf(err, "boinc_gahp: %s option: %s\n%s",
                    opt == ':' ? "missing value for" : "unknown", name, usage_text);
            return CONFIG_ERROR;
        }
        if (apply_option(cfg, opt, optarg, err) != 0)
            return CONFIG_ERROR;
    }
    if (optind < argc) {
        fprintf(err, "boinc_gahp: unexpected argument: %s\n", argv[optind]);
        return CONFIG_ERROR;
    }
    if (cfg->config_file != NULL && read_config_file(cfg, err) != 0)
        return CONFIG_ERROR;
    if (resolve_journal(cfg, err) != 0)
        return CONFIG_ERROR;
    return CONFIG_OK;
}
