/*
 * blah_isolate.c - per-job isolation in the BLAH dialect (doc/blah-core.md,
 * "Per-job isolation"): a job's own problem holds that job alone, with its
 * reason; the rest of its group goes on.
 *
 * Two places find such a problem:
 *
 *   before any RPC, when a group closes: a job whose input went missing or
 *   unreadable since it was accepted, or grew past a configured
 *   blah_max_input_bytes, is held (blah_hold_unreadable); the group is
 *   submitted without it, in the same batch (a job whose input is too
 *   large when it is submitted is refused then: HTCondor holds it);
 *
 *   after the server refused the group's batch for one input (the submit
 *   engine names it: batches.bad_input, e.g. a file larger than the
 *   server's upload_max_filesize): the scheduler's pass holds the jobs that
 *   give that input and moves the others to a new group, closed at once
 *   with its own batch name and internal submit request, in ONE journal
 *   transaction (journal_blah_split), then submits it.  The refused batch
 *   never reached submit_batch (only failures before it name an input), so
 *   no BOINC job of the moved jobs exists: each is created once, in the new
 *   batch, under its same name.  A crash after the transaction leaves the
 *   new request unfinished, and start-up resumes it like any group's
 *   submit; a crash before it leaves the group to split at the next pass.
 *   A group is split only when its request has ended (no submit of the
 *   refused batch runs, not even one resumed at start-up).
 */
#include "blah/blah_internal.h"

#include "exec/exec_cmds.h"
#include "journal/journal_blah.h"
#include "wire/gahp_text.h"
#include "base/log.h"
#include "base/num.h"
#include "base/testpoint.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- a job's inputs from its spec -------------------------------------------- */

/* Whether fn(path, arg) holds for one of the local inputs of spec (the
 * text blah.c's job_spec wrote: nargs, the arguments, ninputs, then a
 * local path and a name per input): 1 yes, 0 no, -1 when the spec cannot
 * be read (out of memory). */
static int any_input(const char *spec, int (*fn)(const char *path, void *arg), void *arg)
{
    char *copy = strdup(spec);
    gahp_args a = { 0 };
    if (copy == NULL || gahp_tokenize(copy, strlen(copy), &a) != GAHP_TOK_OK) {
        free(copy);
        gahp_args_free(&a);
        return -1;
    }
    long nargs = 0, ninputs = 0;
    int found = 0;
    if (a.argc > 0 && num_parse_long_blanks(a.argv[0], strlen(a.argv[0]), 0, LONG_MAX,
                                            &nargs) == 0 &&
        (size_t)nargs + 1 < a.argc) {
        const char *n = a.argv[nargs + 1];
        if (num_parse_long_blanks(n, strlen(n), 0, LONG_MAX, &ninputs) != 0)
            ninputs = 0;
        for (long i = 0; !found && i < ninputs; i++) {
            size_t at = (size_t)nargs + 2 + 2 * (size_t)i;
            if (at < a.argc)
                found = fn(a.argv[at], arg);
        }
    }
    gahp_args_free(&a);
    free(copy);
    return found;
}

/* The jobs of a group (ids and specs), read before anything is written. */
typedef struct {
    char **ids, **specs;
    size_t n, cap;
} job_list;

static int collect_job(const char *gahp_id, const char *spec, void *arg)
{
    job_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **ids = realloc(l->ids, cap * sizeof *ids);
        if (ids == NULL)
            return -1;
        l->ids = ids;
        char **specs = realloc(l->specs, cap * sizeof *specs);
        if (specs == NULL)
            return -1;
        l->specs = specs;
        l->cap = cap;
    }
    l->ids[l->n] = strdup(gahp_id);
    l->specs[l->n] = strdup(spec);
    l->n++;
    return l->ids[l->n - 1] != NULL && l->specs[l->n - 1] != NULL ? 0 : -1;
}

static void job_list_free(job_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->ids[i]);
        free(l->specs[i]);
    }
    free(l->ids);
    free(l->specs);
    memset(l, 0, sizeof *l);
}

static int read_jobs(exec_ctx *ctx, long long group_id, job_list *l)
{
    memset(l, 0, sizeof *l);
    if (journal_blah_group_jobs(ctx->journal, group_id, collect_job, l) == 0)
        return 0;
    log_error("BLAH: the jobs of group %lld cannot be read: %s", group_id,
              journal_errmsg(ctx->journal));
    job_list_free(l);
    return -1;
}

/* ---- at a group's close: inputs gone since the job was accepted ----------------- */

/* fn of any_input: the first problem of an input, kept in w->why. */
typedef struct {
    const gahp_config *cfg;
    char *why;
} input_check;

static int unreadable(const char *path, void *arg)
{
    input_check *w = arg;
    w->why = blah_input_problem(path, w->cfg);
    return w->why != NULL;
}

int blah_hold_unreadable(exec_ctx *ctx, long long group_id, const char *batch)
{
    job_list l;
    if (read_jobs(ctx, group_id, &l) != 0)
        return -1;
    int held = 0;
    for (size_t i = 0; held >= 0 && i < l.n; i++) {
        input_check w = { ctx->config, NULL };
        if (any_input(l.specs[i], unreadable, &w) <= 0 || w.why == NULL) {
            free(w.why);
            continue;
        }
        char *why = w.why;
        /* the job's own problem: it alone is held, the group goes on */
        char *reason = str_printf("%s when its BOINC batch was made; condor_release "
                                  "submits the job again", why);
        if (reason == NULL ||
            journal_blah_hold(ctx->journal, l.ids[i], reason, journal_now()) != 0) {
            log_error("BLAH: job %s cannot be held: %s", l.ids[i],
                      reason == NULL ? EXEC_NOMEM_MSG : journal_errmsg(ctx->journal));
            held = -1;
        } else {
            log_warn("BLAH: job %s held, batch %s goes on without it: %s", l.ids[i], batch, why);
            held++;
        }
        free(reason);
        free(why);
    }
    job_list_free(&l);
    return held;
}

/* ---- after the server refused a group's batch for one input ------------------- */

static int is_path(const char *path, void *arg)
{
    return strcmp(path, (const char *)arg) == 0;
}

/* The split of one group: who is held, who moves, the new batch. */
typedef struct {
    const char **held, **moved;
    size_t nheld, nmoved;
    strbuf jobs;                /* the moved jobs' BOINC_SUBMIT text */
    char *batch, *args, *reason;
} split_plan;

static void plan_free(split_plan *p)
{
    free(p->held);
    free(p->moved);
    strbuf_free(&p->jobs);
    free(p->batch);
    free(p->args);
    free(p->reason);
}

/* Sort the jobs of l by whether they give the refused input.  No job
 * giving it (its spec no longer names it): every job is held with the
 * reason, as before isolation; nothing is submitted again. */
static int plan_split(const journal_blah_split_group *g, const job_list *l, split_plan *p)
{
    memset(p, 0, sizeof *p);
    p->jobs = (strbuf)STRBUF_INIT;
    p->held = calloc(l->n ? l->n : 1, sizeof *p->held);
    p->moved = calloc(l->n ? l->n : 1, sizeof *p->moved);
    if (p->held == NULL || p->moved == NULL)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        int gives = any_input(l->specs[i], is_path, (void *)g->bad_input);
        if (gives < 0)
            return -1;
        if (gives)
            p->held[p->nheld++] = l->ids[i];
        else if (blah_add_job_text(&p->jobs, l->ids[i], l->specs[i]) == 0)
            p->moved[p->nmoved++] = l->ids[i];
        else
            return -1;
    }
    if (p->nheld == 0) {
        for (size_t i = 0; i < p->nmoved; i++)
            p->held[i] = p->moved[i];
        p->nheld = p->nmoved;
        p->nmoved = 0;
    }
    p->reason = str_printf("%s; condor_release submits the job again", g->why);
    if (p->reason == NULL)
        return -1;
    if (p->nmoved == 0)
        return 0;
    /* a new batch name: the refused batch exists on the server (created,
     * never submitted) and its name is spent */
    p->batch = blah_new_batch_name();
    p->args = p->batch != NULL
        ? blah_group_args_text(p->batch, g->app, g->memory_mb, &p->jobs, p->nmoved) : NULL;
    return p->args != NULL ? 0 : -1;
}

/* Submit the new group of a split (its request journaled as row). */
static void submit_rest(exec_ctx *ctx, const gahp_request *like, const split_plan *p,
                        long long row)
{
    gahp_request *req = blah_record_request(GAHP_CMD_SUBMIT, gahp_parse_submit,
                                            BLAH_GROUP_SUBMIT, p->args, like);
    if (req == NULL)
        return;     /* logged; the request is journaled: start-up resumes it */
    req->journal_id = row;
    req->background = 1;        /* no client waits: no deadline, no RESULTS */
    blah_submit_group(ctx, req, p->batch);
    gahp_request_free(req);
}

/* fn of journal_blah_split_groups: split one group.  Always 0: a group
 * that cannot be split now is tried again at the next pass. */
static int split_one(const journal_blah_split_group *g, void *arg)
{
    const void *const *pair = arg;
    exec_ctx *ctx = (exec_ctx *)pair[0];
    const gahp_request *like = pair[1];
    job_list l;
    if (read_jobs(ctx, g->id, &l) != 0)
        return 0;
    split_plan p;
    long long row = 0;
    int split = 0;
    if (plan_split(g, &l, &p) != 0) {
        log_error("BLAH: batch %s cannot be split: %s", g->batch, EXEC_NOMEM_MSG);
    } else {
        journal_blah_split_in in = { g->id, ctx->session_id, like->project_id,
                                     p.held, p.nheld, p.reason, p.moved, p.nmoved,
                                     p.batch, BLAH_GROUP_SUBMIT, p.args, journal_now() };
        if (journal_blah_split(ctx->journal, &in, &row, &split) != 0)
            log_error("BLAH: batch %s cannot be split: %s", g->batch,
                      journal_errmsg(ctx->journal));
    }
    if (split) {
        testpoint("blah.split");
        log_warn("BLAH: batch %s was refused for input %s: %zu job%s held (%s); %zu job%s "
                 "go%s on as batch %s", g->batch, g->bad_input, p.nheld,
                 p.nheld == 1 ? "" : "s", g->why, p.nmoved, p.nmoved == 1 ? "" : "s",
                 p.nmoved == 1 ? "es" : "", p.batch != NULL ? p.batch : "(none)");
        if (row > 0)
            submit_rest(ctx, like, &p, row);
    }
    plan_free(&p);
    job_list_free(&l);
    return 0;
}

void blah_split_groups(exec_ctx *ctx, const gahp_request *like)
{
    const void *pair[2] = { ctx, like };
    if (journal_blah_split_groups(ctx->journal, like->project_id, split_one, pair) != 0)
        log_error("BLAH: groups to split cannot be read: %s", journal_errmsg(ctx->journal));
}
