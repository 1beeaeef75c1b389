/*
 * main.c - start-up and shutdown of the boinc_gahp server.
 *
 *   options -> log -> journal (lock, migrate, prune) -> session row
 *   -> worker pool -> start-up hooks (recovery) -> pruner thread -> banner
 *   -> reader loop
 *   -> QUIT/EOF: stop committer, end session, close journal, join the
 *   thread pool's idle threads, exit.
 */
#include "admin/admin.h"
#include "boinc/boinc.h"
#include "config/config.h"
#include "journal/journal.h"
#include "base/fskind.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/tasks.h"
#include "base/testpoint.h"
#include "server/protocol.h"
#include "server/recovery.h"
#include "server/workers.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

/*
 * Start-up hooks run after the journal and the worker pool exist and
 * BEFORE the reader reads its first line: crash recovery registers here
 * (re-enqueue unfinished work with workers_submit, replay undelivered
 * results with workers_add_result).  A hook returning non-zero aborts
 * start-up.
 */
typedef int (*startup_hook_fn)(journal *j, workers *w, protocol *p,
                               const gahp_config *cfg, long long session_id);
static const startup_hook_fn startup_hooks[] = {
    recovery_start,     /* resume / keep for replay / close earlier runs' work */
    recovery_blah_groups, /* submit the BLAH groups left open */
};

static int run_startup_hooks(journal *j, workers *w, protocol *p,
                             const gahp_config *cfg, long long session_id)
{
    for (size_t i = 0; i < sizeof startup_hooks / sizeof startup_hooks[0]; i++)
        if (startup_hooks[i] != NULL && startup_hooks[i](j, w, p, cfg, session_id) != 0)
            return -1;
    return 0;
}

/*
 * A reason to stop before the banner: under HTCondor every BOINC job of
 * the user is then held "Failed to initialize GAHP", so the reason goes
 * where an operator looks, the log file, and once, in plain words, to
 * stderr (which the grid manager shows only at D_FULLDEBUG).
 */
__attribute__((format(printf, 1, 2)))
static void startup_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("boinc_gahp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    va_start(ap, fmt);
    char *msg = str_vprintf(fmt, ap);
    if (msg != NULL) {
        log_file_msg(LOG_ERROR, "not started: %s", msg);
        free(msg);
    }
    va_end(ap);
}

/* Each line of text (messages config_parse printed into a memory
 * stream) as a start-up error. */
static void startup_errors(const char *text)
{
    while (text != NULL && *text != '\0') {
        const char *nl = strchr(text, '\n');
        size_t n = nl ? (size_t)(nl - text) : strlen(text);
        if (n > 12 && strncmp(text, "boinc_gahp: ", 12) == 0)
            startup_error("%.*s", (int)(n - 12), text + 12);
        else if (n > 0)
            startup_error("%.*s", (int)n, text);
        text += n + (nl != NULL);
    }
}

/*
 * The log, the first of these that can be used (issue 28): log_file when
 * set (alone); the default log named after the journal, beside it; the
 * per-user log in the state directory; stderr.  The last three also tee
 * to stderr.  A file that cannot be used is no reason to stop (that would
 * hold every job): the next one is tried, and the log says why.
 */
static void open_log(const gahp_config *cfg, int quiet)
{
    char *paths[CONFIG_LOG_PATHS];
    config_log_paths(cfg, paths);
    log_level level = quiet ? LOG_INFO : cfg->log_level;
    strbuf skipped = STRBUF_INIT;
    int opened = -1;
    for (int i = 0; i < CONFIG_LOG_PATHS && opened < 0; i++) {
        if (paths[i] == NULL)
            continue;
        /* tee_stderr is read when lines are written: set it before opening */
        log_configure(i > 0 || cfg->log_file == NULL, cfg->log_max_bytes);
        char *why = NULL;
        if (log_open(paths[i], level, &why) == 0)
            opened = i;
        else    /* out of memory only makes the warning shorter */
            (void)strbuf_printf(&skipped, "%scannot use log file %s: %s",
                                skipped.len ? "; " : "", paths[i],
                                why ? why : "out of memory");
        free(why);
    }
    if (opened < 0) {
        log_configure(1, cfg->log_max_bytes);
        log_open(NULL, level, NULL);
    }
    if (skipped.len > 0 || opened < 0)
        log_warn("%s; logging to %s", skipped.len ? skipped.data
                 : "no log file (HOME unset)", opened >= 0 ? paths[opened] : "stderr only");
    strbuf_free(&skipped);
    for (int i = 0; i < CONFIG_LOG_PATHS; i++)
        free(paths[i]);
}

/* Configuration warnings (unknown keys), kept until the log was open. */
static void log_warnings(const char *text)
{
    while (text != NULL && *text != '\0') {
        const char *nl = strchr(text, '\n');
        size_t n = nl ? (size_t)(nl - text) : strlen(text);
        if (n > 0)
            log_warn("configuration: %.*s", (int)n, text);
        text += n + (nl != NULL);
    }
}

static journal *open_journal(const gahp_config *cfg)
{
    journal_options jo = { cfg->journal_path, cfg->sync_full,
                           cfg->busy_timeout_ms, 1 };
    char *err = NULL;
    journal *j = journal_open(&jo, &err);
    if (j == NULL) {
        const char *why = err ? err : "cannot open the journal";
        startup_error("%s%s", strstr(why, "journal") ? "" : "journal: ", why);
        free(err);
        return NULL;
    }
    /* The full prune once before recovery; the pruner thread (started
     * after recovery) then runs it while the server runs. */
    journal_prune_counts pruned;
    if (journal_prune_report(j, cfg->retention_days, &pruned) == 0 &&
        pruned.requests + pruned.batches + pruned.submit_texts > 0)
        log_info("pruned (older than %g days) %lld requests and %lld batches with "
                 "%lld jobs; %lld submit texts dropped", cfg->retention_days,
                 pruned.requests, pruned.batches, pruned.jobs, pruned.submit_texts);
    return j;
}

/* Start-up failure after the options were read: threads may exist, so
 * leave without exit handlers, like the normal shutdown does. */
_Noreturn static void die(int status)
{
    testfault_report();
    log_close();
    _exit(status);
}

/* config_parse with its messages caught, then written as start-up
 * errors (stderr once, and the default log file); the operator's
 * commands (--check-config, journal ...) print them and open no log.
 * Returns the exit status, or -1 to go on. */
static int parse_options(int argc, char **argv, gahp_config *cfg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *msgs = open_memstream(&text, &len);
    int rc = config_parse(argc, argv, cfg, stdout, msgs ? msgs : stderr);
    if (msgs != NULL)
        fclose(msgs);
    int status = rc == CONFIG_OK ? -1 : rc == CONFIG_EXIT_OK ? 0 : 2;
    if (status == 2 && !cfg->check_config && cfg->operand_count == 0) {
        open_log(cfg, 1);
        startup_errors(text);
        log_close();
    } else if (text != NULL) {
        fputs(text, stderr);
    }
    free(text);
    return status;
}

/* Where the journal is, in the log: the grid manager's selection value
 * that named it, and a warning when it is on a network file system (the
 * server still starts: refusing would hold every job of the user). */
static void log_journal_placement(const gahp_config *cfg)
{
    if (cfg->journal_suffix != NULL)
        log_info("started by a condor_gridmanager with a selection value: journal "
                 "and default log carry the suffix %s", cfg->journal_suffix);
    char *dir = config_journal_dir(cfg);
    const char *fs = dir != NULL ? fskind_network_name(dir) : NULL;
    if (fs != NULL)
        log_warn("the journal's directory %s is on a network file system (%s), "
                 "where SQLite's WAL mode is unreliable: put the journal on a "
                 "local disk (doc/operating.md, \"Home directories on NFS\")", dir, fs);
    free(dir);
}

/* Options, the operator's commands, the journal directory, the log.
 * Returns an exit status, or -1 when the server is to start. */
static int prepare(int argc, char **argv, gahp_config *cfg)
{
    int status = parse_options(argc, argv, cfg);
    if (status < 0 && cfg->check_config)
        return admin_check_config(cfg);
    if (status < 0 && cfg->operand_count > 0)
        return admin_journal(cfg);
    if (status >= 0)
        return status;
    /* The log first (it makes its own directory, or falls back), so that
     * a journal directory that cannot be made is reported in it. */
    open_log(cfg, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *msgs = open_memstream(&text, &len);
    int dir_rc = config_make_journal_dir(cfg, msgs ? msgs : stderr);
    if (msgs != NULL)
        fclose(msgs);
    if (dir_rc != 0)
        startup_errors(text);       /* not a bad setting: exit status 1 */
    free(text);
    if (dir_rc != 0) {
        log_close();
        return 1;
    }
    log_warnings(cfg->warnings);
    log_journal_placement(cfg);
    return -1;
}

/* Signals, before any thread starts (every thread inherits the mask). */
static void set_up_signals(void)
{
    /* A vanished client must be an error return from write(), not death. */
    signal(SIGPIPE, SIG_IGN);
    /* SIGTERM and SIGINT go to the reader only (protocol_catch_termination):
     * blocked here, before any thread starts, so every thread inherits it:
     * each is a pool thread (base/tasks.h) made by main or by a thread
     * that inherited it in turn. */
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigaddset(&term, SIGINT);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    /* A file-size limit (ulimit -f) must be EFBIG from write(), an error
     * result for that fetch, not death (issue 29 #7). */
    signal(SIGXFSZ, SIG_IGN);
}

/* After the protocol loop: the exit status (0 after a clean QUIT or EOF,
 * 1 after a stdin/stdout error).  Does not return while a worker is still
 * inside a request. */
static int shut_down(workers *w, journal *j, protocol *p, long long session_id, int run_rc)
{
    /* Prompt shutdown: commit what is finished, never wait for the network. */
    size_t still_running = workers_shutdown(w);
    journal_pruner_stop();
    if (journal_session_end(j, session_id, run_rc == 0) != 0)
        log_warn("could not record the end of session %lld", session_id);
    int status = run_rc == 0 ? 0 : 1;
    if (still_running > 0) {
        /* Workers may still write to the journal: keep it open (and its
         * lock held) until the process ends; _exit because they may be
         * inside libcurl, where exit handlers (curl/openssl cleanup) would
         * be unsafe. */
        testfault_report();
        log_info("boinc_gahp stopped (%s)", run_rc == 0 ? "clean" : "stdout/stdin error");
        log_close();
        _exit(status);
    }
    /* Every task has ended: release everything and return, so that exit
     * handlers - LeakSanitizer's among them - run.  journal_close stops
     * the checkpointer, the last task; then the pool's idle threads are
     * joined (base/tasks.h). */
    journal_close(j);
    tasks_shutdown();
    protocol_free(p);
    boinc_global_cleanup();
    testfault_report();
    log_info("boinc_gahp stopped (%s)", run_rc == 0 ? "clean" : "stdout/stdin error");
    log_close();
    return status;
}

int main(int argc, char **argv)
{
    gahp_config cfg;
    int status = prepare(argc, argv, &cfg);
    if (status >= 0) {
        config_free(&cfg);
        return status;
    }
    set_up_signals();
    if (boinc_global_init() != 0) {
        startup_error("cannot initialise libcurl/libxml2");
        die(1);
    }
    journal *j = open_journal(&cfg);
    if (j == NULL)
        die(1);
    long long session_id = 0;
    if (journal_session_begin(j, GAHP_VERSION_FULL, &session_id) != 0) {
        startup_error("cannot record the session in the journal: %s",
                      journal_errmsg(j));
        die(1);
    }
    protocol *p = protocol_new(STDIN_FILENO, STDOUT_FILENO, &cfg, j, session_id);
    char *err = NULL;
    workers *w = p ? workers_start(&cfg, j, protocol_results_ready, p, &err) : NULL;
    if (w == NULL) {
        startup_error("%s", err ? err : "out of memory");
        die(1);
    }
    protocol_set_workers(p, w);
    workers_set_session(w, session_id);
    if (run_startup_hooks(j, w, p, &cfg, session_id) != 0) {
        startup_error("start-up recovery failed (see the log lines above)");
        die(1);
    }
    if (journal_pruner_start(j, cfg.retention_days, &err) != 0) {
        /* not fatal: the journal then only grows until the next start */
        log_warn("%s", err ? err : "cannot start the journal pruner");
        free(err);
        err = NULL;
    }
    if (cfg.project_url != NULL &&
        protocol_select_project(p, cfg.project_url, cfg.authenticator) != 0) {
        startup_error("bad project_url in the config file");
        die(2);
    }
    log_info("boinc_gahp %s started (session %lld, journal %s, %d workers)",
             GAHP_VERSION_FULL, session_id, cfg.journal_path, cfg.workers);
    log_info("configuration file: %s", cfg.config_file ? cfg.config_file : "none");

    if (protocol_catch_termination() != 0)
        log_warn("cannot catch SIGTERM: it ends the server as a crash would");
    int run_rc = protocol_banner(p) == 0 ? protocol_run(p) : -1;

    status = shut_down(w, j, p, session_id, run_rc);
    config_free(&cfg);
    return status;
}
