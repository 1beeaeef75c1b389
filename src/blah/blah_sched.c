/*
 * blah_sched.c - the BLAH scheduler: the background work of the BLAH
 * dialect, so that BLAH_JOB_STATUS and BLAH_JOB_CANCEL answer from the
 * journal alone, at once, whatever the network does (doc/blah-core.md).
 *
 * One task per server, started by the first BLAH command of a run (or at
 * start-up when the journal holds BLAH work), with a context of its own.
 * For each project with BLAH work it makes a pass every
 * blah_status_interval seconds, sooner when a command kicks it, and as
 * often as HTCondor asks about one of its jobs in flight again (the grid
 * manager's GRIDMANAGER_JOB_PROBE_INTERVAL: a job asked again after g
 * seconds wants an answer no older than g), but no more often than
 * blah_status_min_interval (blah_status_asked):
 *
 *   1. one BOINC_QUERY_BATCHES over every live batch (query_batch2 takes
 *      them all in one request); when it fails the project is taken as
 *      unreachable and nothing else is tried: the next pass waits twice
 *      as long as the last one did, from the interval up to
 *      BLAH_BACKOFF_MAX_S, and the first pass that works resets it;
 *   2. leases ending within BLAH_LEASE_MARGIN_S renewed (a BOINC server
 *      retires a batch at its expire time: a longer job would be lost);
 *   3. every abort owed, in one BOINC_ABORT_JOBS (per BLAH_ABORT_CHUNK);
 *   4. each DONE job's outputs fetched into Iwd with the exit code the
 *      server recorded (HTCondor 25.0 takes status 4 as "done" and never
 *      looks for files); a failed fetch is tried again at the next pass;
 *   5. batches none of whose jobs HTCondor waits for any more retired.
 *
 * Beside it, the group timer: a BLAH group's window is a timer, not a
 * sleeping worker; when a group is due the timer hands its leader
 * (BLAH_GROUP_LEAD) to a worker, which closes and submits it at once.
 *
 * Interface (blah.h, blah_internal.h): blah_sched_ensure,
 * blah_send_aborts (a kick), blah_status_asked (the pace),
 * blah_sched_resume (start-up),
 * blah_sched_stop (QUIT), blah_remove_leftovers (start-up).
 */
#include "blah/blah_internal.h"
#include "blah/blah_asks.h"

#include "exec/exec_cmds.h"
#include "exec/exec_ctx.h"
#include "journal/journal_blah.h"
#include "wire/gahp_text.h"
#include "base/log.h"
#include "base/tasks.h"
#include "base/strbuf.h"
#include "base/testpoint.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A lease is renewed when it ends within this, to now + BLAH_LEASE_S
 * (HTCondor 9.0's own rule for its BOINC batches). */
#define BLAH_LEASE_MARGIN_S (4 * 3600.0)
#define BLAH_LEASE_S (6 * 3600.0)
/* The longest wait between two passes over an unreachable project. */
#define BLAH_BACKOFF_MAX_S 300.0
/* The most job names one BOINC_ABORT_JOBS carries. */
#define BLAH_ABORT_CHUNK 1000
/* A kick asks for a pass this long after the last kick of a burst (200
 * cancels a grid manager sends at once become one abort request), but no
 * later than BLAH_KICK_MAX_S after the burst's first. */
#define BLAH_KICK_DELAY_S 0.5
#define BLAH_KICK_MAX_S 5.0
/* The shortest wait between two passes over one project, whatever the
 * interval says (0 is allowed: "as often as it can", in tests). */
#define BLAH_MIN_WAIT_S 0.1

/* The time between two passes over a project; also how often the
 * scheduler looks for new work when none is known (a group submitted by
 * start-up recovery is found that way; a kick finds it sooner). */
static double status_interval(const exec_ctx *ctx)
{
    double s = ctx->config != NULL ? ctx->config->blah_status_interval_s : 30.0;
    return s > BLAH_MIN_WAIT_S ? s : BLAH_MIN_WAIT_S;
}

/* ---- internal requests ------------------------------------------------------------- */

/* The job's BOINC_FETCH_OUTPUT (its journaled fields after the job name)
 * with like's project; NULL on error (logged by blah_record_request). */
static gahp_request *fetch_request(const char *gahp_id, const char *fetch_args,
                                   const gahp_request *like)
{
    strbuf sb = STRBUF_INIT;
    gahp_request *r = NULL;
    if (gahp_escape_append(&sb, gahp_id) == 0 && strbuf_printf(&sb, " %s", fetch_args) == 0)
        r = blah_record_request(GAHP_CMD_FETCH_OUTPUT, gahp_parse_fetch, "BOINC_FETCH_OUTPUT",
                                sb.data, like);
    strbuf_free(&sb);
    return r;
}

/* ---- names of batches -------------------------------------------------------------- */

typedef struct {
    char **names;
    double *leases;
    size_t n, cap;
} name_list;

static int collect_name(const char *name, double lease, void *arg)
{
    name_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->names, cap * sizeof *v);
        if (v == NULL)
            return -1;
        l->names = v;
        double *d = realloc(l->leases, cap * sizeof *d);
        if (d == NULL)
            return -1;
        l->leases = d;
        l->cap = cap;
    }
    if ((l->names[l->n] = strdup(name)) == NULL)
        return -1;
    l->leases[l->n++] = lease;
    return 0;
}

static void names_free(name_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    free(l->leases);
    memset(l, 0, sizeof *l);
}

/* ---- the steps of a pass ------------------------------------------------------------ */

/* 1. One BOINC_QUERY_BATCHES over the live batches: their jobs' statuses
 * land in the journal.  0, or -1 when the project did not answer. */
static int query_batches(exec_ctx *ctx, const gahp_request *like, const name_list *l)
{
    exec_project project = exec_project_of(like);
    exec_err e = { 0 };
    int rc = exec_refresh_batches(ctx, &project, (const char *const *)l->names, l->n, &e);
    if (rc != 0)
        log_warn("BLAH: project %lld: status query of %zu batch%s failed: %s",
                 like->project_id, l->n, l->n == 1 ? "" : "es",
                 e.msg != NULL ? e.msg : EXEC_NOMEM_MSG);
    exec_err_clear(&e);
    return rc;
}

/* 2. */
static void renew_leases(exec_ctx *ctx, const gahp_request *like, const name_list *l)
{
    double now = journal_now();
    for (size_t i = 0; i < l->n; i++) {
        if (l->leases[i] > now + BLAH_LEASE_MARGIN_S)
            continue;
        exec_project project = exec_project_of(like);
        exec_err e = { 0 };
        /* whole seconds, as BOINC_SET_LEASE's face sends them */
        if (exec_set_lease_op(ctx, &project, l->names[i], floor(now + BLAH_LEASE_S), &e) != 0)
            log_warn("BLAH: batch %s: lease not renewed (tried again at the next pass): %s",
                     l->names[i], e.msg != NULL ? e.msg : EXEC_NOMEM_MSG);
        exec_err_clear(&e);
    }
}

/* 3. The aborts owed: collected, then sent in as few requests as the
 * chunk allows. */
typedef struct {
    long long *rows;
    char **ids;
    int *in_batch;
    size_t n, cap;
} abort_list;

static int collect_abort(long long row, const char *gahp_id, const char *batch, int in_batch,
                         void *arg)
{
    (void)batch;
    abort_list *a = arg;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        long long *r = realloc(a->rows, cap * sizeof *r);
        if (r == NULL)
            return -1;
        a->rows = r;
        char **v = realloc(a->ids, cap * sizeof *v);
        if (v == NULL)
            return -1;
        a->ids = v;
        int *b = realloc(a->in_batch, cap * sizeof *b);
        if (b == NULL)
            return -1;
        a->in_batch = b;
        a->cap = cap;
    }
    if ((a->ids[a->n] = strdup(gahp_id)) == NULL)
        return -1;
    a->rows[a->n] = row;
    a->in_batch[a->n++] = in_batch;
    return 0;
}

static void aborts_free(abort_list *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->ids[i]);
    free(a->ids);
    free(a->rows);
    free(a->in_batch);
    memset(a, 0, sizeof *a);
}

/* One abort_jobs for the in-batch jobs of a[from, to); 0 or -1. */
static int abort_chunk(exec_ctx *ctx, const gahp_request *like, const abort_list *a,
                       size_t from, size_t to, size_t *sent)
{
    const char **ids = malloc((to - from) * sizeof *ids);
    if (ids == NULL)
        return -1;
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        if (a->in_batch[i])
            ids[n++] = a->ids[i];
    int rc = 0;
    if (n > 0) {
        exec_project project = exec_project_of(like);
        exec_err e = { 0 };
        rc = exec_abort_jobs_op(ctx, &project, ids, n, &e);
        if (rc != 0)
            log_warn("BLAH: project %lld: abort of %zu job%s failed (sent again at the next "
                     "pass): %s", like->project_id, n, n == 1 ? "" : "s",
                     e.msg != NULL ? e.msg : EXEC_NOMEM_MSG);
        exec_err_clear(&e);
    }
    free(ids);
    if (rc == 0)
        *sent += n;
    return rc;
}

static void send_aborts(exec_ctx *ctx, const gahp_request *like)
{
    abort_list a = { 0 };
    if (journal_blah_aborts(ctx->journal, like->project_id, collect_abort, &a) != 0) {
        log_error("BLAH: pending aborts cannot be read: %s", journal_errmsg(ctx->journal));
        aborts_free(&a);
        return;
    }
    size_t sent = 0;
    for (size_t from = 0; from < a.n; from += BLAH_ABORT_CHUNK) {
        size_t to = a.n - from > BLAH_ABORT_CHUNK ? from + BLAH_ABORT_CHUNK : a.n;
        if (abort_chunk(ctx, like, &a, from, to, &sent) != 0)
            break;
        /* the server has them all: now each is recorded as sent */
        for (size_t i = from; i < to; i++)
            if (journal_blah_abort_done(ctx->journal, a.rows[i]) != 0)
                log_error("BLAH: the abort of job %s cannot be recorded: %s", a.ids[i],
                          journal_errmsg(ctx->journal));
    }
    if (sent > 0)
        log_info("BLAH: project %lld: %zu job%s aborted in one pass", like->project_id, sent,
                 sent == 1 ? "" : "s");
    aborts_free(&a);
}

/* 4. Deliver an ended job into Iwd: a DONE job's outputs and stderr, a
 * failed job's stderr (when an instance reported an exit status), and its
 * end journaled: the exit code and times, or why a failed job's end is
 * known no better.  A failure that may pass (the network, a local file)
 * is tried again at the next pass. */
static void fetch_one(exec_ctx *ctx, const gahp_request *like, long long row,
                      const char *gahp_id, const char *fetch_args, int failed)
{
    /* Noted first, so that a start-up after a crash in the middle removes
     * the temp files this fetch may leave in Iwd (blah_remove_leftovers). */
    if (journal_blah_fetch_started(ctx->journal, row, journal_now()) != 0) {
        log_error("BLAH: job %s: its fetch cannot be noted: %s", gahp_id,
                  journal_errmsg(ctx->journal));
        return;
    }
    gahp_request *freq = fetch_request(gahp_id, fetch_args, like);
    exec_fetch_outcome o;
    exec_err e = { 0 };
    int rc = freq != NULL ? exec_fetch_job(ctx, freq, &o, &e) : exec_err_nomem(&e);
    gahp_request_free(freq);
    testpoint("blah.fetched");
    /* journaled typed: nothing reads a number back from text (issue 39) */
    journal_blah_end end = { rc == 0, 0, 0, 0, NULL };
    if (rc == 0) {
        end.exit_code = o.exit_code;
        end.wall_s = o.elapsed_s;
        end.cpu_s = o.cpu_s;
    } else if (failed && e.code == EXEC_E_REFUSED) {
        end.reason = e.msg;         /* failed, no instance said how: final */
    }
    if (!end.has_numbers && end.reason == NULL) {
        log_warn("BLAH: job %s: %s not delivered (tried again at the next pass): %s", gahp_id,
                 failed ? "its failure" : "its outputs", e.msg ? e.msg : EXEC_NOMEM_MSG);
        exec_err_clear(&e);
        return;
    }
    if (journal_blah_fetched(ctx->journal, row, &end, journal_now()) != 0)
        log_error("BLAH: job %s: its end cannot be recorded: %s", gahp_id,
                  journal_errmsg(ctx->journal));
    else if (failed && end.has_numbers)
        log_info("BLAH: job %s failed on the project (exit code %ld): held", gahp_id,
                 end.exit_code);
    else if (failed)
        log_info("BLAH: job %s failed on the project (%s): held", gahp_id, end.reason);
    else
        log_info("BLAH: job %s done: outputs in its Iwd", gahp_id);
    exec_err_clear(&e);     /* after the journal write: end.reason is e.msg */
}

/* How many fetches of one pass run at once.  A fetch mostly waits for
 * the project (query_completed_job, get_output) and for Iwd's disk, so a
 * few lanes hide the round trips: one at a time, a 1,000-job cluster's
 * fetches took 7-22 s (doc/performance.md, "The 25.0 path at probe rate
 * 1000").  Each lane but the first is a pool thread with a context of
 * its own: a BOINC client and a journal connection belong to one thread. */
#define BLAH_FETCH_LANES 4

typedef struct {
    long long row;
    char *gahp_id, *fetch_args;
    int failed;
} fetch_item;

typedef struct {
    fetch_item *items;
    size_t n, cap;
    atomic_size_t next;         /* the next item a lane takes */
    exec_ctx *ctx;              /* the scheduler's: the other lanes' model */
    const gahp_request *like;
    int nomem;                  /* keep_fetch ran out of memory */
} fetch_work;

/* fn of journal_blah_done_unfetched: one ended job kept for the lanes.
 * Out of memory stops the list (the jobs kept are fetched; the rest wait
 * for the next pass). */
static int keep_fetch(long long row, const char *gahp_id, const char *fetch_args, int failed,
                      void *arg)
{
    fetch_work *w = arg;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        fetch_item *v = realloc(w->items, cap * sizeof *v);
        if (v == NULL)
            return w->nomem = 1;
        w->items = v;
        w->cap = cap;
    }
    fetch_item *it = &w->items[w->n];
    it->row = row;
    it->failed = failed;
    it->gahp_id = strdup(gahp_id);
    it->fetch_args = strdup(fetch_args);
    if (it->gahp_id == NULL || it->fetch_args == NULL) {
        free(it->gahp_id);
        free(it->fetch_args);
        return w->nomem = 1;
    }
    w->n++;
    return 0;
}

/* Take items until none is left, in ctx. */
static void fetch_items(fetch_work *w, exec_ctx *ctx)
{
    for (size_t i; (i = atomic_fetch_add(&w->next, 1)) < w->n;)
        fetch_one(ctx, w->like, w->items[i].row, w->items[i].gahp_id,
                  w->items[i].fetch_args, w->items[i].failed);
}

/* A lane on a pool thread: its own context, or nothing (the other lanes
 * take its share) when none can be had. */
static void fetch_lane(void *arg)
{
    fetch_work *w = arg;
    exec_ctx own;
    char *err = NULL;
    if (exec_ctx_open_like(&own, w->ctx, &err) != 0) {
        log_warn("BLAH: a fetch lane has no context (the others go on): %s",
                 err != NULL ? err : EXEC_NOMEM_MSG);
        free(err);
        return;
    }
    fetch_items(w, &own);
    exec_ctx_close(&own);
}

static void fetch_finished(exec_ctx *ctx, const gahp_request *like)
{
    fetch_work w = { .ctx = ctx, .like = like };
    atomic_init(&w.next, 0);
    int rc = journal_blah_done_unfetched(ctx->journal, like->project_id, keep_fetch, &w);
    if (rc != 0)
        log_error("BLAH: finished jobs cannot be read%s: %s",
                  w.n > 0 ? " (those read are fetched)" : "",
                  w.nomem ? EXEC_NOMEM_MSG : journal_errmsg(ctx->journal));
    task *lanes[BLAH_FETCH_LANES - 1];
    size_t nlanes = 0;
    for (size_t k = 1; k < BLAH_FETCH_LANES && k < w.n; k++)
        if ((lanes[nlanes] = task_start(fetch_lane, &w)) != NULL)
            nlanes++;
    fetch_items(&w, ctx);       /* the scheduler's own lane */
    for (size_t k = 0; k < nlanes; k++)
        task_join(lanes[k]);
    for (size_t i = 0; i < w.n; i++) {
        free(w.items[i].gahp_id);
        free(w.items[i].fetch_args);
    }
    free(w.items);
}

/* 5. */
static void retire_done(exec_ctx *ctx, const gahp_request *like)
{
    name_list l = { 0 };
    if (journal_blah_done_batches(ctx->journal, like->project_id, collect_name, &l) != 0)
        log_error("BLAH: finished batches cannot be read: %s", journal_errmsg(ctx->journal));
    exec_project project = exec_project_of(like);
    for (size_t i = 0; i < l.n; i++) {
        exec_err e = { 0 };
        if (exec_retire_batch_op(ctx, &project, l.names[i], &e) == 0)
            log_info("BLAH: batch %s finished: retired", l.names[i]);
        else
            log_warn("BLAH: batch %s: retire failed (tried again at the next pass): %s",
                     l.names[i], e.msg != NULL ? e.msg : EXEC_NOMEM_MSG);
        exec_err_clear(&e);
    }
    names_free(&l);
}

/* 0. A group whose submit failed with the project not answering, or
 * before anything was sent (journal_blah_retry_groups): its journaled
 * request run again (the submit engine resumes where the last
 * attempt stopped, and never creates the batch twice).  0, or 1 when the
 * project did not answer again (exec_err_may_pass: the pass ends there). */
static int submit_again(long long group_id, const char *batch, long long request_row,
                        const char *args, void *arg)
{
    const void *const *pair = arg;
    exec_ctx *ctx = (exec_ctx *)pair[0];
    const gahp_request *like = pair[1];
    (void)group_id;
    gahp_request *req = blah_record_request(GAHP_CMD_SUBMIT, gahp_parse_submit,
                                            BLAH_GROUP_SUBMIT, args, like);
    if (req == NULL)
        return 0;                   /* logged; tried again at the next pass */
    req->journal_id = request_row;
    req->background = 1;            /* no client waits: no deadline, no RESULTS */
    log_info("BLAH: batch %s: submitted again (last time the project did not answer, or "
             "the submit failed before anything was sent)", batch);
    exec_err e = { 0 };
    int rc = exec_submit_job_set(ctx, req, &e);
    gahp_request_free(req);
    if (rc == 0)
        log_info("BLAH: batch %s submitted", batch);
    else
        log_warn("BLAH: batch %s not submitted: %s", batch, e.msg ? e.msg : EXEC_NOMEM_MSG);
    int unreachable = rc != 0 && exec_err_may_pass(&e);
    exec_err_clear(&e);
    return unreachable ? 1 : 0;
}

/* One pass over like's project.  0, or -1 when the project did not
 * answer (nothing after the query was tried). */
static int project_pass(exec_ctx *ctx, const gahp_request *like)
{
    const void *pair[2] = { ctx, like };
    int again = journal_blah_retry_groups(ctx->journal, like->project_id, submit_again, pair);
    if (again < 0)
        log_error("BLAH: groups to submit again cannot be read: %s",
                  journal_errmsg(ctx->journal));
    if (again > 0)
        return -1;                  /* still unreachable (or refused: then held) */
    /* a batch refused for one job's input: that job held, the rest go on */
    blah_split_groups(ctx, like);
    name_list l = { 0 };
    if (journal_blah_live_batches(ctx->journal, like->project_id, collect_name, &l) != 0)
        log_error("BLAH: live batches cannot be read: %s", journal_errmsg(ctx->journal));
    if (l.n > 0 && query_batches(ctx, like, &l) != 0) {
        names_free(&l);
        return -1;
    }
    if (l.n > 0)
        renew_leases(ctx, like, &l);
    names_free(&l);
    send_aborts(ctx, like);
    fetch_finished(ctx, like);
    retire_done(ctx, like);
    return 0;
}

/* ---- the schedule ----------------------------------------------------------------- */

/* The project's entry (made on first sight, due at once); NULL on ENOMEM.
 * Under st->mu. */
static blah_refresh *due_entry(struct blah_state *st, long long project_id)
{
    for (blah_refresh *r = st->refreshes; r != NULL; r = r->next)
        if (r->project_id == project_id)
            return r;
    blah_refresh *r = calloc(1, sizeof *r);
    if (r != NULL) {
        r->project_id = project_id;
        r->next = st->refreshes;
        st->refreshes = r;
    }
    return r;
}

typedef struct {
    struct blah_state *st;
    exec_ctx *ctx;
    double next;                /* the earliest due time seen */
} pass_state;

/* One project with work: a pass if it is due, then its next due time. */
static int visit_project(long long project_id, const char *url, const char *authenticator,
                         void *arg)
{
    pass_state *ps = arg;
    struct blah_state *st = ps->st;
    double now = blah_clock();
    pthread_mutex_lock(&st->mu);
    blah_refresh *r = due_entry(st, project_id);
    int due = r == NULL || r->due <= now || (r->kick_at > 0 && r->kick_at <= now);
    if (r != NULL && due) {
        r->kick_at = r->first_kick = 0;     /* a kick from now on asks for one more pass */
        r->pass_start = now;                /* a status from now on sees this pass */
    }
    pthread_mutex_unlock(&st->mu);
    if (due) {
        gahp_request like = { 0 };
        like.project_id = project_id;
        like.project_url = (char *)url;
        like.authenticator = (char *)authenticator;
        int rc = project_pass(ps->ctx, &like);
        double interval = status_interval(ps->ctx);
        pthread_mutex_lock(&st->mu);
        if (r != NULL && rc == 0) {
            if (r->backoff > 0)
                log_info("BLAH: project %lld answers again", project_id);
            r->backoff = 0;
            r->due = blah_clock() + interval;
        } else if (r != NULL) {
            double wait = r->backoff > 0 ? r->backoff * 2 : interval;
            r->backoff = fmin(fmax(wait, 1.0), BLAH_BACKOFF_MAX_S);
            r->due = blah_clock() + r->backoff;
            log_warn("BLAH: project %lld unreachable: jobs stay as they are, next try in "
                     "%.0f s", project_id, r->backoff);
        }
        pthread_mutex_unlock(&st->mu);
    }
    pthread_mutex_lock(&st->mu);
    if (r != NULL && r->due < ps->next)
        ps->next = r->due;
    if (r != NULL && r->kick_at > 0 && r->kick_at < ps->next)
        ps->next = r->kick_at;
    pthread_mutex_unlock(&st->mu);
    return 0;
}

/* The projects with work, copied out of the read (a pass writes the
 * journal). */
typedef struct {
    long long *ids;
    char **urls, **auths;
    size_t n, cap;
} project_list;

static int collect_project(long long id, const char *url, const char *auth, void *arg)
{
    project_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        long long *ids = realloc(l->ids, cap * sizeof *ids);
        if (ids == NULL)
            return -1;
        l->ids = ids;
        char **u = realloc(l->urls, cap * sizeof *u);
        if (u == NULL)
            return -1;
        l->urls = u;
        char **a = realloc(l->auths, cap * sizeof *a);
        if (a == NULL)
            return -1;
        l->auths = a;
        l->cap = cap;
    }
    l->ids[l->n] = id;
    l->urls[l->n] = strdup(url);
    l->auths[l->n] = strdup(auth);
    if (l->urls[l->n] == NULL || l->auths[l->n] == NULL) {
        free(l->urls[l->n]);
        free(l->auths[l->n]);
        return -1;
    }
    l->n++;
    return 0;
}

static void projects_free(project_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->urls[i]);
        free(l->auths[i]);
    }
    free(l->ids);
    free(l->urls);
    free(l->auths);
    memset(l, 0, sizeof *l);
}

/* Every project with work once; the time the next pass is due. */
static double scheduler_pass(struct blah_state *st, exec_ctx *ctx)
{
    pass_state ps = { st, ctx, blah_clock() + status_interval(ctx) };
    project_list l = { 0 };
    if (journal_blah_work_projects(ctx->journal, collect_project, &l) != 0) {
        log_error("BLAH: the projects with work cannot be read: %s",
                  journal_errmsg(ctx->journal));
        ps.next = blah_clock() + status_interval(ctx);
    }
    for (size_t i = 0; i < l.n; i++)
        visit_project(l.ids[i], l.urls[i], l.auths[i], &ps);
    projects_free(&l);
    return ps.next;
}

static struct timespec abs_time(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 0;
    return ts;
}

/* The scheduler's task: a pass whenever one is due or kicked, until QUIT. */
static void scheduler_main(void *arg)
{
    struct blah_state *st = arg;
    double next = 0;
    pthread_mutex_lock(&st->mu);
    while (!st->sched_stop) {
        double when = st->sched_wake > 0 && st->sched_wake < next ? st->sched_wake : next;
        if (blah_clock() < when) {
            struct timespec ts = abs_time(when);
            /* the shared cv: a woken group leader checks its own state */
            int rc = pthread_cond_timedwait(&st->cv, &st->mu, &ts);
            if (rc != 0 && rc != ETIMEDOUT)
                log_error("BLAH: scheduler wait: %s", strerror(rc));
            continue;
        }
        st->sched_wake = 0;
        st->sched_busy = 1;
        pthread_mutex_unlock(&st->mu);
        next = scheduler_pass(st, &st->sched_ctx);
        pthread_mutex_lock(&st->mu);
        st->sched_busy = 0;
        pthread_cond_broadcast(&st->cv);
    }
    pthread_mutex_unlock(&st->mu);
}

/* The group timer's task: each armed group handed to a worker when its
 * window ends (blah.c decides when), until QUIT.  It never waits on the
 * network, so a group closes on time whatever the scheduler is doing. */
static void timer_main(void *arg)
{
    struct blah_state *st = arg;
    const gahp_config *cfg = st->sched_ctx.config;
    exec_shared *shared = st->sched_ctx.shared;
    pthread_mutex_lock(&st->mu);
    while (!st->sched_stop) {
        gahp_request *lreq = blah_groups_take_due(st, cfg, blah_clock());
        if (lreq != NULL) {
            pthread_mutex_unlock(&st->mu);
            shared->spawn(shared->spawn_arg, lreq);     /* the queue owns it now */
            pthread_mutex_lock(&st->mu);
            continue;
        }
        /* a join, a new group or QUIT broadcasts cv: the times are read again */
        double until = fmin(blah_groups_next_close(st, cfg), blah_clock() + 60.0);
        struct timespec ts = abs_time(until);
        int rc = pthread_cond_timedwait(&st->cv, &st->mu, &ts);
        if (rc != 0 && rc != ETIMEDOUT)
            log_error("BLAH: group timer wait: %s", strerror(rc));
    }
    pthread_mutex_unlock(&st->mu);
}

int blah_sched_ensure(exec_ctx *ctx)
{
    struct blah_state *st = ctx->shared != NULL ? ctx->shared->blah : NULL;
    if (st == NULL)
        return -1;
    pthread_mutex_lock(&st->mu);
    if (!st->sched_started && !st->sched_stop) {
        char *err = NULL;
        if (exec_ctx_open_like(&st->sched_ctx, ctx, &err) != 0) {
            log_error("BLAH: the scheduler cannot start (tried again at the next BLAH "
                      "command): %s", err ? err : "out of memory");
            free(err);
        } else if ((st->sched_task = task_start(scheduler_main, st)) == NULL) {
            log_error("BLAH: the scheduler cannot start: no thread (tried again at the next "
                      "BLAH command)");
            exec_ctx_close(&st->sched_ctx);
        } else {
            st->sched_started = 1;
            log_debug("BLAH: scheduler started");
            /* the group timer, when there are workers to hand groups to */
            if (ctx->shared->spawn != NULL &&
                (st->timer_task = task_start(timer_main, st)) == NULL)
                log_error("BLAH: the group timer cannot start: no thread (a group's worker "
                          "waits through its window)");
        }
    }
    int ok = st->sched_started && (ctx->shared->spawn == NULL || st->timer_task != NULL);
    pthread_mutex_unlock(&st->mu);
    return ok ? 0 : -1;
}

void blah_send_aborts(exec_ctx *ctx, const gahp_request *like)
{
    struct blah_state *st = ctx->shared != NULL ? ctx->shared->blah : NULL;
    if (st == NULL)
        return;
    blah_sched_ensure(ctx);
    pthread_mutex_lock(&st->mu);
    blah_refresh *r = due_entry(st, like->project_id);
    /* an unreachable project keeps its back-off: a kick does not hammer it */
    if (r != NULL && r->backoff == 0) {
        double now = blah_clock();
        if (r->first_kick == 0)
            r->first_kick = now;
        r->kick_at = fmin(now + BLAH_KICK_DELAY_S, r->first_kick + BLAH_KICK_MAX_S);
        if (st->sched_wake == 0 || r->kick_at < st->sched_wake)
            st->sched_wake = r->kick_at;
        pthread_cond_broadcast(&st->cv);
    }
    pthread_mutex_unlock(&st->mu);
}

void blah_status_asked(exec_ctx *ctx, long long project_id, const char *job_id)
{
    struct blah_state *st = ctx->shared != NULL ? ctx->shared->blah : NULL;
    if (st == NULL)
        return;
    double interval = status_interval(ctx);
    double min_wait = ctx->config != NULL ? ctx->config->blah_status_min_interval_s : 5.0;
    pthread_mutex_lock(&st->mu);
    blah_refresh *r = due_entry(st, project_id);
    if (r != NULL && r->asks == NULL)
        r->asks = blah_asks_new();
    if (r != NULL && r->asks != NULL) {
        double now = blah_clock();
        /* a gap longer than the interval changes nothing: the memory
         * need not be longer */
        double before = blah_asks_note(r->asks, job_id, now, interval);
        /* an unreachable project keeps its back-off; before the first
         * pass there is nothing to bring forward */
        if (before >= 0 && r->backoff == 0 && r->pass_start > 0) {
            double want = r->pass_start + fmax(now - before, fmax(min_wait, BLAH_MIN_WAIT_S));
            if (want < r->due) {
                r->due = want;
                if (st->sched_wake == 0 || want < st->sched_wake)
                    st->sched_wake = want;
                pthread_cond_broadcast(&st->cv);
            }
        }
    }
    pthread_mutex_unlock(&st->mu);
}

int blah_sched_resume(exec_ctx *ctx)
{
    project_list l = { 0 };
    if (journal_blah_work_projects(ctx->journal, collect_project, &l) != 0) {
        log_error("BLAH: the projects with work cannot be read: %s",
                  journal_errmsg(ctx->journal));
        projects_free(&l);
        return -1;
    }
    size_t n = l.n;
    projects_free(&l);
    if (n > 0) {
        log_info("BLAH: %zu project%s with BLAH work from an earlier run: scheduler started",
                 n, n == 1 ? "" : "s");
        blah_sched_ensure(ctx);
    }
    return (int)n;
}

size_t blah_sched_stop(struct blah_state *st)
{
    if (st == NULL)
        return 0;
    pthread_mutex_lock(&st->mu);
    st->sched_stop = 1;
    pthread_cond_broadcast(&st->cv);
    int started = st->sched_started, busy = st->sched_busy;
    st->sched_started = 0;
    task *t = st->sched_task, *timer = st->timer_task;
    st->sched_task = st->timer_task = NULL;
    pthread_mutex_unlock(&st->mu);
    if (!started)
        return 0;
    if (timer != NULL)
        task_join(timer);       /* never in network I/O: it ends at once */
    if (busy) {
        /* In network I/O maybe: not waited for (QUIT is prompt); its
         * context is left to the process's _exit, like a busy worker's. */
        task_detach(t);
        return 1;
    }
    task_join(t);
    exec_ctx_close(&st->sched_ctx);
    return 0;
}

/* ---- start-up ------------------------------------------------------------------- */

typedef struct {
    const gahp_request *like;
    size_t n;
} leftovers;

static int remove_one(const char *gahp_id, const char *fetch_args, void *arg)
{
    leftovers *l = arg;
    gahp_request *r = fetch_request(gahp_id, fetch_args, l->like);
    if (r != NULL) {
        exec_fetch_remove_leftovers(r);
        l->n++;
    }
    gahp_request_free(r);
    return 0;
}

int blah_remove_leftovers(exec_ctx *ctx)
{
    /* The callback only removes files: no journal work under the read. */
    gahp_request like = { 0 };
    like.project_url = "";
    like.authenticator = "";
    leftovers l = { &like, 0 };
    if (journal_blah_interrupted_fetches(ctx->journal, remove_one, &l) != 0) {
        log_error("BLAH: interrupted fetches cannot be read: %s", journal_errmsg(ctx->journal));
        return -1;
    }
    return (int)l.n;
}
