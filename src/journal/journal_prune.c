/*
 * journal_prune.c - retention (issue 19): what the journal keeps no longer
 * than --retention-days, the one full prune (journal_prune) that start-up,
 * the pruner thread and an operator's "prune now" run, and the pruner
 * thread that runs it while the server runs (a task of the process's
 * pool, base/tasks.h).
 *
 * The statements are in the tables of the files that own their tables
 * (journal_requests.c, journal_batches.c, journal_files.c); this file only
 * orders them: one write transaction for the deletions, then one for the
 * incremental vacuum.  doc/journal.md, "Retention".
 */
#include "journal/journal.h"
#include "journal/journal_internal.h"
#include "journal/journal_blah.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "base/tasks.h"
#include "base/testpoint.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    double cutoff;
    journal_prune_counts *c;
} prune_args;

/* Run id with the cutoff and add the rows it changed to *count. */
static int run_counted(journal *j, jstmt id, double cutoff, long long *count)
{
    if (journal_run(j, id, "d", cutoff) != 0)
        return -1;
    *count += sqlite3_changes(journal_db(j));
    return 0;
}

/* The deletions, children before their parents (foreign keys are on):
 * a batch's queries, files and jobs, the batch, then the requests no
 * batch references any more, then the sessions no request references. */
static int prune_in_txn(journal *j, void *arg)
{
    prune_args *p = arg;
    journal_prune_counts *c = p->c;
    long long queries = 0, md5 = 0;
    if (journal_run(j, JSTMT_REQUESTS_COMPACT_SUBMITS, "") != 0)
        return -1;
    c->submit_texts += sqlite3_changes(journal_db(j));
    /* BLAH jobs and groups first: a group names its internal request */
    if (journal_blah_prune(j, p->cutoff, &c->jobs) != 0 ||
        run_counted(j, JSTMT_QUERIES_PRUNE, p->cutoff, &queries) != 0 ||
        run_counted(j, JSTMT_FILES_PRUNE, p->cutoff, &c->files) != 0 ||
        run_counted(j, JSTMT_JOBS_PRUNE, p->cutoff, &c->jobs) != 0 ||
        run_counted(j, JSTMT_BATCHES_PRUNE, p->cutoff, &c->batches) != 0 ||
        run_counted(j, JSTMT_TRANSIENT_RESULTS_PRUNE, p->cutoff, &queries) != 0 ||
        run_counted(j, JSTMT_REQUESTS_PRUNE, p->cutoff, &c->requests) != 0 ||
        run_counted(j, JSTMT_SESSIONS_PRUNE, p->cutoff, &c->sessions) != 0 ||
        run_counted(j, JSTMT_MD5_PRUNE, p->cutoff, &md5) != 0)
        return -1;
    return 0;
}

/* One integer PRAGMA (the page counts): -1 when it cannot be read. */
static long long pragma_int(journal *j, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(journal_db(j), sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/*
 * Return the free pages to the file system.  PRAGMA incremental_vacuum is
 * a write: it runs in a write transaction of its own (the process-wide
 * mutex), through sqlite3_exec because it steps once per page freed.
 * Kept out of the deletions' transaction so that an accept waits for one
 * of them at a time.
 */
static int vacuum_free_pages(journal *j, long long *freed)
{
    long long before = pragma_int(j, "PRAGMA freelist_count");
    if (before <= 0)
        return 0;
    if (journal_begin(j) != 0)
        return -1;
    char *msg = NULL;
    if (sqlite3_exec(journal_db(j), "PRAGMA incremental_vacuum", NULL, NULL, &msg)
            != SQLITE_OK) {
        journal_refuse(j, "incremental vacuum", msg ? msg : "failed");
        sqlite3_free(msg);
        journal_rollback(j);
        return -1;
    }
    if (journal_commit(j) != 0)
        return -1;
    long long after = pragma_int(j, "PRAGMA freelist_count");
    *freed += after >= 0 && after < before ? before - after : 0;
    return 0;
}

int journal_prune_report(journal *j, double retention_days, journal_prune_counts *counts)
{
    journal_prune_counts local;
    journal_prune_counts *c = counts != NULL ? counts : &local;
    memset(c, 0, sizeof *c);
    /* The test clock shortens the retention as it shortens every pause
     * (src/base/testpoint.h); 1 in production. */
    prune_args p = { journal_now() - retention_days * 86400.0 * test_time_scale(), c };
    if (journal_txn(j, prune_in_txn, &p) != 0)
        return -1;
    return vacuum_free_pages(j, &c->pages_freed);
}

int journal_prune(journal *j, double retention_days, long long *deleted)
{
    journal_prune_counts c;
    int rc = journal_prune_report(j, retention_days, &c);
    if (deleted != NULL)
        *deleted = rc == 0 ? c.requests + c.sessions + c.batches + c.jobs + c.files : 0;
    return rc;
}

/* ---- the pruner thread --------------------------------------------------- */

/* The period: a tenth of the retention, at most an hour, at least a
 * second, then scaled by the test clock (and at least 50 ms for real). */
#define PRUNE_PERIOD_MAX_S 3600.0
#define PRUNE_PERIOD_MIN_S 1.0
#define PRUNE_PERIOD_MIN_REAL_S 0.05
/* Another process's write lock (an auditor's shell) is waited for this
 * long, then the round is skipped: the next one comes soon enough. */
#define PRUNER_LOCK_WAIT_MS 2000

static pthread_mutex_t pruner_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pruner_cv = PTHREAD_COND_INITIALIZER;
static struct {
    task *task;
    int running, stop;          /* stop: under pruner_mu */
    journal *j;
    double retention_days, period_s;
} pruner;

static void log_counts(const journal_prune_counts *c, double days)
{
    if (c->requests + c->sessions + c->batches + c->submit_texts + c->pages_freed == 0)
        return;
    log_info("journal pruned (retention %g days): %lld requests, %lld sessions, "
             "%lld batches with %lld jobs and %lld files; %lld submit texts "
             "dropped; %lld free pages returned", days, c->requests, c->sessions,
             c->batches, c->jobs, c->files, c->submit_texts, c->pages_freed);
}

static void pruner_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pruner_mu);
    while (!pruner.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double at = (double)until.tv_sec + (double)until.tv_nsec / 1e9 + pruner.period_s;
        until.tv_sec = (time_t)at;
        until.tv_nsec = (long)((at - (double)until.tv_sec) * 1e9);
        int rc = 0;
        while (!pruner.stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&pruner_cv, &pruner_mu, &until);
        if (pruner.stop)
            break;
        pthread_mutex_unlock(&pruner_mu);
        journal_prune_counts c;
        if (journal_prune_report(pruner.j, pruner.retention_days, &c) == 0)
            log_counts(&c, pruner.retention_days);
        else
            log_warn("journal prune failed (tried again later): %s",
                     journal_errmsg(pruner.j));
        pthread_mutex_lock(&pruner_mu);
    }
    pthread_mutex_unlock(&pruner_mu);
}

int journal_pruner_start(const journal *primary, double retention_days, char **err)
{
    *err = NULL;
    if (pruner.running) {
        *err = str_printf("the journal pruner is already running");
        return -1;
    }
    journal *j = journal_connect(primary, err);
    if (j == NULL)
        return -1;
    journal_set_lock_wait(j, PRUNER_LOCK_WAIT_MS);
    double period = retention_days * 86400.0 / 10.0;
    if (period > PRUNE_PERIOD_MAX_S)
        period = PRUNE_PERIOD_MAX_S;
    if (period < PRUNE_PERIOD_MIN_S)
        period = PRUNE_PERIOD_MIN_S;
    period *= test_time_scale();
    if (period < PRUNE_PERIOD_MIN_REAL_S)
        period = PRUNE_PERIOD_MIN_REAL_S;
    pruner.j = j;
    pruner.retention_days = retention_days;
    pruner.period_s = period;
    pruner.stop = 0;
    if ((pruner.task = task_start(pruner_main, NULL)) == NULL) {
        *err = str_printf("cannot start the journal pruner: no thread");
        journal_close(j);
        pruner.j = NULL;
        return -1;
    }
    pruner.running = 1;
    log_info("journal pruner: every %.3g s (retention %g days)", period, retention_days);
    return 0;
}

void journal_pruner_stop(void)
{
    if (!pruner.running)
        return;
    pthread_mutex_lock(&pruner_mu);
    pruner.stop = 1;
    pthread_cond_signal(&pruner_cv);
    pthread_mutex_unlock(&pruner_mu);
    task_join(pruner.task);
    pruner.task = NULL;
    journal_close(pruner.j);
    pruner.j = NULL;
    pruner.running = 0;
}
