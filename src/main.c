/*
 * main.c - start-up and shutdown of the boinc_gahp server.
 *
 *   options -> log -> journal (lock, migrate, prune) -> session row
 *   -> worker pool -> start-up hooks (recovery) -> pruner thread -> banner
 *   -> reader loop
 *   -> QUIT/EOF: stop committer, end session, close journal, exit.
 */
#include "boinc/boinc.h"
#include "config/config.h"
#include "journal/journal.h"
#include "base/log.h"
#include "server/protocol.h"
#include "server/recovery.h"
#include "server/workers.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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
};

static int run_startup_hooks(journal *j, workers *w, protocol *p,
                             const gahp_config *cfg, long long session_id)
{
    for (size_t i = 0; i < sizeof startup_hooks / sizeof startup_hooks[0]; i++)
        if (startup_hooks[i] != NULL && startup_hooks[i](j, w, p, cfg, session_id) != 0)
            return -1;
    return 0;
}

static journal *open_journal(const gahp_config *cfg)
{
    journal_options jo = { cfg->journal_path, cfg->sync_full,
                           cfg->busy_timeout_ms, 1 };
    char *err = NULL;
    journal *j = journal_open(&jo, &err);
    if (j == NULL) {
        fprintf(stderr, "boinc_gahp: %s\n", err ? err : "cannot open the journal");
        log_error("%s", err ? err : "cannot open the journal");
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
    log_close();
    _exit(status);
}

int main(int argc, char **argv)
{
    gahp_config cfg;
    int rc = config_parse(argc, argv, &cfg, stdout, stderr);
    if (rc != CONFIG_OK) {
        config_free(&cfg);
        return rc == CONFIG_EXIT_OK ? 0 : 2;
    }
    /* A vanished client must be an error return from write(), not death. */
    signal(SIGPIPE, SIG_IGN);
    if (log_open(cfg.log_file, cfg.log_level) != 0) {
        fprintf(stderr, "boinc_gahp: cannot open log file %s\n", cfg.log_file);
        config_free(&cfg);
        return 2;
    }
    if (boinc_global_init() != 0) {
        fprintf(stderr, "boinc_gahp: cannot initialise libcurl/libxml2\n");
        die(1);
    }
    journal *j = open_journal(&cfg);
    if (j == NULL)
        die(1);
    long long session_id = 0;
    if (journal_session_begin(j, GAHP_VERSION_NUMBER, &session_id) != 0) {
        fprintf(stderr, "boinc_gahp: cannot record the session: %s\n",
                journal_errmsg(j));
        die(1);
    }
    protocol *p = protocol_new(STDIN_FILENO, STDOUT_FILENO, &cfg, j, session_id);
    char *err = NULL;
    workers *w = p ? workers_start(&cfg, j, protocol_results_ready, p, &err) : NULL;
    if (w == NULL) {
        fprintf(stderr, "boinc_gahp: %s\n", err ? err : "out of memory");
        die(1);
    }
    protocol_set_workers(p, w);
    workers_set_session(w, session_id);
    if (run_startup_hooks(j, w, p, &cfg, session_id) != 0) {
        fprintf(stderr, "boinc_gahp: start-up recovery failed\n");
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
        fprintf(stderr, "boinc_gahp: bad project_url in the config file\n");
        die(2);
    }
    log_info("boinc_gahp %s started (session %lld, journal %s, %d workers)",
             GAHP_VERSION_NUMBER, session_id, cfg.journal_path, cfg.workers);
    log_info("configuration file: %s", cfg.config_file ? cfg.config_file : "none");

    int run_rc = protocol_banner(p) == 0 ? protocol_run(p) : -1;

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
        log_info("boinc_gahp stopped (%s)", run_rc == 0 ? "clean" : "stdout/stdin error");
        log_close();
        _exit(status);
    }
    /* Every thread has ended: release everything and return, so that exit
     * handlers - LeakSanitizer's among them - run. */
    journal_close(j);
    protocol_free(p);
    boinc_global_cleanup();
    log_info("boinc_gahp stopped (%s)", run_rc == 0 ? "clean" : "stdout/stdin error");
    log_close();
    config_free(&cfg);
    return status;
}
