/*
 * config.h - boinc_gahp's settings, from the command line, the environment,
 * a configuration file and built-in defaults (one option table in config.c).
 */
#ifndef BOINC_GAHP_CONFIG_H
#define BOINC_GAHP_CONFIG_H

#include "base/log.h"

#include <stdio.h>

#define CONFIG_MAX_WORKERS 256

/* A user the configuration is evaluated for (config_user.c). */
typedef struct config_user config_user;

/* A project named in the configuration file (project_url.NAME and
 * authenticator_file.NAME): what a BLAH job's batch_project may name. */
typedef struct config_project {
    char *name;
    char *url;                  /* normalised */
    char *authenticator;
    char *authenticator_file;   /* the file it was read from ("%u" expanded) */
    struct config_project *next;
} config_project;

typedef struct {
    char *journal_path;         /* resolved path (see config_resolve_journal) */
    int workers;                /* worker threads, 1..256 (default 8) */
    char *log_file;             /* NULL = the default file (config_default_log_path)
                                   and stderr */
    long log_max_bytes;         /* rotate the log file at this size (default
                                   10 MiB, 0 = never) */
    log_level log_level;        /* default info (stored through an int *) */
    long http_timeout_s;        /* per HTTP request (default 300) */
    long connect_timeout_s;     /* per connection attempt (default 10) */
    long retry_budget_s;        /* retrying safe requests (default 60) */
    char *ca_file;
    char *ca_path;
    int sync_full;              /* 1 = FULL (default), 0 = NORMAL */
    double retention_days;      /* pruning of delivered rows (default 7) */
    long submit_deadline_s;     /* BOINC_SUBMIT answered by then (default 270, 0 = off) */
    long busy_timeout_ms;       /* wait for another process's journal lock (default 60000) */
    int requeue_undelivered;    /* recovery: answer an earlier run's requests
                                   under their original ids (default 0) */
    long max_reply_bytes;       /* per RPC reply (default 32 MiB) */
    long max_output_bytes;      /* per downloaded output file (default 4 GiB) */
    long max_fetch_bytes;       /* all files of one FETCH_OUTPUT (default 16 GiB) */
    long max_unzip_bytes;       /* members of one zip output (default 16 GiB) */
    long max_unzip_ratio;       /* unpacked bytes per archive byte (default 200) */
    int project_workers;        /* in-flight requests per project; 0 = default
                                   max(1, workers / 2) */
    long upload_chunk_files;    /* files per upload_files request (default 20) */
    long upload_chunk_bytes;    /* bytes per upload_files request (default 8000000) */
    long upload_connections;    /* upload_files requests of one submit in flight (default 3) */
    long batch_expire_s;        /* expire time of a created batch: now + this
                                   (default 21600, the client's 6 h lease) */
    double blah_batch_window_s; /* BLAH: a batch closes after this long without a
                                   new job (default 3) */
    double blah_batch_max_age_s;/* ... or at this age (default 60) */
    long blah_batch_max_jobs;   /* ... or at this many jobs (default 10000) */
    long blah_max_input_bytes;  /* largest input the project takes (0: not known) */
    double blah_status_interval_s; /* a BLAH pass over a project this often
                                   (default 30) ... */
    double blah_status_min_interval_s; /* ... or as often as HTCondor asks
                                   about a job again, down to this (default 5) */
    char *blah_default_app;     /* app when the ad has no Queue, or NULL */
    char *blah_project_name;    /* what BatchProject may say, or NULL */
    config_project *projects;   /* the named projects, NULL = none */
    char *config_file;          /* the file read (named or found), NULL = none */
    char *project_url;          /* pre-selected project (config file), normalised */
    char *authenticator;
    char *authenticator_file;   /* the file authenticator_file named ("%u"
                                   expanded), NULL = none or an inline one */
    int check_config;           /* --check-config: report, do not serve */
    char *check_user;           /* --user NAME (with --check-config only) */
    config_user *user;          /* that user, looked up; NULL = the running
                                   user (whose name "%u" is then) */           /* --check-config: report, do not serve */
    int journal_default;        /* journal_path is the built-in default: its
                                   directory is made by config_make_journal_dir */
    char *warnings;             /* lines for the log once it is open (unknown
                                   configuration keys), NULL = none */
    char **sources;             /* per option-table row: where the value came
                                   from ("default", "--name", a variable,
                                   "FILE:LINE"); NULL = not set */
    char *gridmanager_value;    /* the -A value of the condor_gridmanager
                                   that started us, NULL = none */
    char *journal_suffix;       /* that value as a file-name suffix of the
                                   journal and the default log, NULL = none */
    char **operands;            /* words after the options ("journal status"),
                                   pointing into argv; operand_count of them */
    int operand_count;
} gahp_config;

/* Results of config_parse. */
enum { CONFIG_OK = 0, CONFIG_EXIT_OK = 1, CONFIG_ERROR = 2 };

/*
 * Fill cfg: built-in defaults, then the configuration file (--config, else
 * $BOINC_GAHP_CONFIG, else the default search), then the environment, then
 * argv; last the journal path is resolved (not created).  Messages (usage,
 * errors, each naming the source of a bad value) go to out/err; warnings
 * are kept in cfg->warnings.  The fields set before an error stay in cfg
 * (config_default_log_path uses them); config_free releases them.
 * Returns CONFIG_OK, CONFIG_EXIT_OK (after --help/--version) or
 * CONFIG_ERROR (message already printed; exit with status 2).
 */
int config_parse(int argc, char **argv, gahp_config *cfg, FILE *out, FILE *err);

void config_free(gahp_config *cfg);

/* The named project called name, or NULL. */
const config_project *config_find_project(const gahp_config *cfg, const char *name);

/* Make the journal's directory (mode 0700, as mkdir -p) when missing.  On
 * failure prints a message naming the directory on err and returns -1
 * (exit status 1: not a bad setting). */
int config_make_journal_dir(const gahp_config *cfg, FILE *err);

/* Requests of one project running at once: project_workers, or when it
 * is not set half the workers, at least 1. */
int config_project_workers(const gahp_config *cfg);

/* malloc'd directory of the journal, NULL when none is chosen. */
char *config_journal_dir(const gahp_config *cfg);

/* malloc'd path of the log file when log_file is not set: named after the
 * journal, beside it ("x.db" -> "x.log"); for the default journal, or when
 * config_parse failed before choosing one, config_user_log_path.  NULL
 * when there is none (no HOME). */
char *config_default_log_path(const gahp_config *cfg);
/* malloc'd path of the per-user log in the state directory
 * (~/.local/state/boinc_gahp/boinc_gahp.log, with the grid manager's
 * suffix): the fallback when the default log cannot be used.  NULL
 * without HOME or XDG_STATE_HOME. */
char *config_user_log_path(const gahp_config *cfg);

/* The logs the server tries, in order (doc/operating.md, "Where the logs
 * go"): log_file, the default log, the per-user log; each malloc'd, NULL
 * for one not set, not known or equal to an earlier one. */
#define CONFIG_LOG_PATHS 3
void config_log_paths(const gahp_config *cfg, char *paths[CONFIG_LOG_PATHS]);

/* --check-config: every setting with its effective value and its source,
 * one "key = value  (source)" line each; authenticators print as ***. */
void config_print_effective(const gahp_config *cfg, FILE *out);

/* --example-config: the example configuration file, every key commented
 * out with its default and help (examples/boinc_gahp.conf). */
void config_print_example(FILE *out);

/* --check-config --user NAME: the user's name; whether u may open path
 * for reading (want 4) or writing (want 2), every directory on the way
 * searchable, decided from stat(), the mode bits and the user's groups
 * (no setuid; POSIX ACLs not looked at).  0 yes; -1 no, *why malloc'd
 * (NULL when out of memory). */
const char *config_user_name(const config_user *u);
int config_user_access(const config_user *u, const char *path, unsigned want,
                       char **why);

/* The version banner, "$GahpVersion: ... $", a literal in the binary. */
extern const char GAHP_VERSION_STRING[];
/* "x.y.z (<build identity>)": the sessions row, the start-up log line,
 * --check-config. */
extern const char GAHP_VERSION_FULL[];

#endif
