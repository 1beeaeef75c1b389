/*
 * main.c - boinc_emu entry point: command line, state directory, start-up
 * line on stdout, clean shutdown on SIGTERM/SIGINT.  "--run-app" makes the
 * same binary act as a project application inside a host's slot.
 */
#include "emu.h"

#include <errno.h>
#include <libxml/parser.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apprunner.h"
#include "base/log.h"

int quirks_set(const char *list);

static void usage(FILE *fp)
{
    fputs("usage: boinc_emu --state-dir DIR [--port N] [--clock manual|real]\n"
          "                 [--config FILE] [--quirks LIST] [--php-limits SPEC] [--hosts N]\n"
          "\n"
          "A stand-in BOINC project for tests and demos, listening on 127.0.0.1.\n"
          "  --state-dir DIR   SQLite state + download/upload/slot dirs (kept across restarts)\n"
          "  --port N          TCP port; 0 (default) picks a free one\n"
          "  --clock manual    virtual time moves only via POST /control/advance|run (default)\n"
          "  --clock real      backend runs continuously in real time (demo)\n"
          "  --config FILE     XML file adding or overriding apps (see doc/emulator.md)\n"
          "  --quirks LIST     comma list of php-warnings, qcj-stock, sql-backslash, or none\n"
          "                    (default: php-warnings,qcj-stock)\n"
          "  --php-limits SPEC stock (default: max_file_uploads=20, post_max_size=8M,\n"
          "                    upload_max_filesize=2M), none, or a comma list NAME=SIZE\n"
          "  --hosts N         simulated volunteer hosts (default 4)\n"
          "  --tls-cert FILE   with --tls-key FILE: also serve the project over https on\n"
          "                    another port of 127.0.0.1 (PEM; \"https_url\" in the JSON line)\n"
          "  --log-level L     error, warn, info (default) or debug; logs go to stderr\n"
          "\n"
          "The first stdout line is JSON: {\"url\", \"authenticator\", \"control\", \"pid\"}.\n"
          "Users: GET <control>users lists all three accounts with their authenticators:\n"
          "  emu_user (submit access; the authenticator printed at start-up),\n"
          "  nosubmit_user (no submit access), other_user (a second submitter).\n"
          "Control API: GET counters|state|users|time, POST advance?seconds=S,\n"
          "  run?max_seconds=S, behaviour?job=J&behaviour=B[&instance=K] or ?default=B,\n"
          "  fault?endpoint=E&kind=K[&count=N|&probability=P][&delay_ms=D][&after=1],\n"
          "  clear_faults, quirks?set=LIST, limits?NAME=N (PHP limits).  See doc/emulator.md.\n", fp);
}

static int make_dirs(const char *state_dir)
{
    G.state_dir = xstrdup(state_dir);
    G.download_dir = xasprintf("%s/download", state_dir);
    G.upload_dir = xasprintf("%s/upload", state_dir);
    G.slot_dir = xasprintf("%s/slots", state_dir);
    G.db_path = xasprintf("%s/emu.sqlite", state_dir);
    G.php_tmp_dir = xasprintf("%s/php_tmp", state_dir);
    if (mkdir_p(state_dir) != 0 || mkdir_p(G.download_dir) != 0 ||
        mkdir_p(G.upload_dir) != 0 || mkdir_p(G.slot_dir) != 0 || mkdir_p(G.php_tmp_dir) != 0) {
        log_error("boinc_emu: cannot create state directories under %s: %s", state_dir, strerror(errno));
        return -1;
    }
    return 0;
}

static int need_value(int argc, char **argv, int i)
{
    if (i + 1 >= argc) {
        log_error("boinc_emu: option %s needs a value (see --help)", argv[i]);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--run-app") == 0)
        return run_app_main(argc, argv);

    const char *state_dir = NULL, *config = NULL, *quirks = "php-warnings,qcj-stock,sql-backslash";
    const char *clock = "manual", *php_limits = NULL, *tls_cert = NULL, *tls_key = NULL;
    long port = 0, hosts = 4;
    log_level level = LOG_INFO;
    log_open(NULL, level, NULL);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (need_value(argc, argv, i) != 0)
            return 2;
        const char *v = argv[++i];
        if (strcmp(o, "--state-dir") == 0) state_dir = v;
        else if (strcmp(o, "--config") == 0) config = v;
        else if (strcmp(o, "--quirks") == 0) quirks = v;
        else if (strcmp(o, "--php-limits") == 0) php_limits = v;
        else if (strcmp(o, "--tls-cert") == 0) tls_cert = v;
        else if (strcmp(o, "--tls-key") == 0) tls_key = v;
        else if (strcmp(o, "--clock") == 0) clock = v;
        else if (strcmp(o, "--port") == 0) {
            if (parse_long(v, &port) != 0 || port < 0 || port > 65535) {
                log_error("boinc_emu: --port must be 0..65535");
                return 2;
            }
        } else if (strcmp(o, "--hosts") == 0) {
            if (parse_long(v, &hosts) != 0 || hosts < 1 || hosts > 10000) {
                log_error("boinc_emu: --hosts must be 1..10000");
                return 2;
            }
        } else if (strcmp(o, "--log-level") == 0) {
            if (log_level_parse(v, &level) != 0) {
                log_error("boinc_emu: bad --log-level %s", v);
                return 2;
            }
            log_open(NULL, level, NULL);
        } else {
            log_error("boinc_emu: unknown option %s (see --help)", o);
            return 2;
        }
    }
    if (state_dir == NULL) {
        log_error("boinc_emu: --state-dir is required (see --help)");
        return 2;
    }
    if (strcmp(clock, "manual") != 0 && strcmp(clock, "real") != 0) {
        log_error("boinc_emu: --clock must be manual or real");
        return 2;
    }
    G.manual_clock = strcmp(clock, "manual") == 0;
    G.nhosts = (int)hosts;
    G.max_tasks_per_host = 1000;
    G.run_seconds = 1;
    G.parallel = 8;
    G.default_behaviour = BEH_SUCCEED;
    pthread_mutex_init(&G.lock, NULL);
    pthread_mutex_init(&G.pass_lock, NULL);
    /* A stock server's PHP limits unless told otherwise (before --config,
     * whose elements override, and --php-limits, which overrides both). */
    php_limits_set("stock");
    if (quirks_set(quirks) != 0) {
        log_error("boinc_emu: --quirks takes php-warnings, qcj-stock, sql-backslash or none");
        return 2;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= sizeof exe - 1) {
        log_error("boinc_emu: cannot find own executable via /proc/self/exe");
        return 1;
    }
    exe[n] = '\0';
    G.self_exe = xstrdup(exe);
    xmlInitParser();
    if (apps_load_defaults() != 0 || (config && apps_load_config(config) != 0))
        return 2;
    if (php_limits != NULL && php_limits_set(php_limits) != 0) {
        log_error("boinc_emu: --php-limits takes stock, none or "
                  "max_file_uploads=N,post_max_size=SIZE,upload_max_filesize=SIZE");
        return 2;
    }
    if (make_dirs(state_dir) != 0)
        return 1;
    /* the app runner is forked while this process is still small */
    if (apprunner_start() != 0)
        log_warn("boinc_emu: no app runner helper (%s); apps are forked directly", strerror(errno));
    if (db_open() != 0)
        return 1;
    /* instances claimed by a run that was interrupted run again */
    db_exec("UPDATE instances SET run_state = 1 WHERE run_state = 3");

    /* SIGTERM/SIGINT are taken with sigwait() by this thread only */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    int bound = 0;
    G.project_url = xstrdup("http://127.0.0.1/emu/");   /* replaced below */
    if (http_start((int)port, &bound) != 0) {
        log_error("boinc_emu: cannot listen on 127.0.0.1:%ld", port);
        return 1;
    }
    free(G.project_url);
    G.project_url = xasprintf("http://127.0.0.1:%d/emu/", bound);
    int tls_bound = 0;
    if ((tls_cert != NULL) != (tls_key != NULL) ||
        (tls_cert != NULL && http_start_tls(tls_cert, tls_key, &tls_bound) != 0)) {
        log_error("boinc_emu: https needs both --tls-cert and --tls-key, readable and matching");
        return 1;
    }
    char *https_url = tls_bound ? xasprintf(", \"https_url\": \"https://127.0.0.1:%d/emu/\"",
                                            tls_bound) : xstrdup("");
    char *auth = NULL;
    sqlite3_stmt *st = db_prep("SELECT authenticator FROM users WHERE id = 1");
    if (sqlite3_step(st) == SQLITE_ROW)
        auth = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    pthread_t clock_thread;
    int have_thread = 0;
    if (!G.manual_clock) {
        if (pthread_create(&clock_thread, NULL, backend_real_clock_thread, NULL) != 0) {
            log_error("boinc_emu: cannot start the real-clock thread");
            return 1;
        }
        have_thread = 1;
    }
    printf("{\"url\": \"%s\", \"authenticator\": \"%s\", \"control\": \"http://127.0.0.1:%d/control/\", "
           "\"pid\": %ld%s}\n", G.project_url, auth ? auth : "", bound, (long)getpid(), https_url);
    fflush(stdout);
    free(auth);
    free(https_url);
    log_info("boinc_emu: listening on 127.0.0.1:%d, state in %s, %s clock", bound, state_dir, clock);

    int sig = 0;
    while (sigwait(&sigs, &sig) != 0)
        ;
    log_info("boinc_emu: signal %d, shutting down", sig);
    G.stopping = 1;
    http_stop();
    if (have_thread)
        pthread_join(clock_thread, NULL);
    pthread_mutex_lock(&G.pass_lock);
    emu_lock();
    db_close();
    emu_unlock();
    pthread_mutex_unlock(&G.pass_lock);
    apprunner_stop();
    xmlCleanupParser();
    return 0;
}
