/*
 * workers.h - the bounded worker pool, the completion committer and the
 * queue of completed results.
 *
 *   reader --workers_submit--> work queue (unbounded list) --> N workers
 *   worker: command_dispatch() --> completion list --> committer thread
 *   committer: ONE transaction for every completion waiting (group commit)
 *              --> results list (completion order) --> notify callback
 *   reader (RESULTS): workers_take_results() --> write, flush --> delivered
 *
 * Each worker owns one boinc_client and one journal connection (see
 * exec.h).  Nothing here writes to stdout.
 */
#ifndef BOINC_GAHP_WORKERS_H
#define BOINC_GAHP_WORKERS_H

#include "exec/exec.h"
#include "wire/request.h"
#include "config/config.h"
#include "journal/journal.h"

#include <stddef.h>

typedef struct workers workers;

/* A completed, committed, undelivered result. */
typedef struct gahp_result {
    struct gahp_result *next;
    long long request_row;      /* requests.id */
    long client_id;
    char *line;                 /* whole result line "<id> <tail>", no LF */
} gahp_result;

/* Called by the committer after it appended results (no lock held). */
typedef void (*workers_notify_fn)(void *arg);

/* Start cfg->workers threads and the committer.  NULL + *err on failure. */
workers *workers_start(const gahp_config *cfg, journal *primary,
                       workers_notify_fn notify, void *notify_arg, char **err);

/* The state the pool's executors share (exec/exec.h), owned by the pool. */
exec_shared *workers_shared(workers *w);

/* Record the current session in every worker's exec_ctx.  Call before the
 * first workers_submit (the queue mutex publishes it to the threads). */
void workers_set_session(workers *w, long long session_id);

/* From now on commit completions through a journal_share() handle on the
 * reader's connection instead of the committer's own (so a completion
 * does not make the reader's next accept re-read its pages).  The reader
 * must from then on use that connection only inside write transactions
 * (journal.h); protocol_run calls this once, after start-up recovery.
 * On failure the committer keeps its own connection (logged). */
void workers_commit_through(workers *w, journal *primary);

/* Queue a journaled request (ownership passes to the pool).  Never blocks
 * on network I/O: it only takes a mutex. */
void workers_submit(workers *w, gahp_request *req);

/* Queue an already committed result (recovery: replay from the journal). */
int workers_add_result(workers *w, long long request_row, long client_id,
                       const char *tail);

/* Detach every result waiting, in completion order; *n gets the count. */
gahp_result *workers_take_results(workers *w, size_t *n);
int workers_has_results(workers *w);
void workers_results_free(gahp_result *r);

/*
 * Stop: idle workers exit, the committer commits what is already finished
 * and exits.  Does NOT wait for workers blocked in network I/O (QUIT must
 * be prompt); their requests stay unfinished in the journal.  Returns the
 * number of workers still executing: 0 = every thread has been joined and
 * the pool freed; otherwise the pool is left alone, and the caller must
 * keep the journal (and its lock) open and leave with _exit, because those
 * workers may still write to the journal until the process ends.
 */
size_t workers_shutdown(workers *w);

#endif
