/*
 * blah.c - BLAH_JOB_SUBMIT: one HTCondor job of grid_resource = batch
 * boinc becomes one BOINC job, exactly once, in a BOINC batch shared with
 * the jobs that arrive close to it (see blah.h).
 *
 * A submit is checked (app, input count, input files, arguments), then
 * joins the open group of its project, app and memory request in one
 * journal transaction, and is answered with its job id at once: the id is
 * ours (<batch name>-<n>, also the BOINC job's name), so it never waits
 * for the server.  The job that opens a group is its leader: its worker
 * waits until no job joined for blah_batch_window seconds (or the group is
 * blah_batch_max_age old, or full), closes the group and submits it as
 * one BOINC batch with the submit engine, through an internal
 * BLAH_GROUP_SUBMIT request journaled like any other: a crash anywhere
 * resumes it from its recorded step, and a group whose leader died before
 * closing it is closed at the next start-up.
 *
 * Exactly once: the live job of a JobDirectory (the grid manager's stable
 * key of an HTCondor job) is answered again to a repeated submit, whatever
 * restarted in between; once BLAH_JOB_CANCEL ended it (condor_rm,
 * condor_hold), a new submit of the same JobDirectory (condor_release)
 * makes a new BOINC job.
 */
#include "blah/blah_internal.h"
#include "blah/blah_asks.h"

#include "exec/exec_cmds.h"
#include "exec/job_args.h"
#include "exec/output_claims.h"
#include "journal/journal_blah.h"
#include "wire/gahp_text.h"
#include "base/log.h"
#include "base/testpoint.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- state ------------------------------------------------------------------ */

struct blah_state *blah_state_new(void)
{
    struct blah_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return NULL;
    }
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        pthread_mutex_destroy(&s->mu);
        free(s);
        return NULL;
    }
    return s;
}

void blah_state_free(struct blah_state *s)
{
    if (s == NULL)
        return;
    for (blah_group *g = s->groups, *n; g != NULL; g = n) {
        n = g->next;
        gahp_request_free(g->lead_req);
        free(g->app);
        free(g->batch);
        free(g);
    }
    for (blah_refresh *r = s->refreshes, *n; r != NULL; r = n) {
        n = r->next;
        blah_asks_free(r->asks);
        free(r);
    }
    for (blah_app *a = s->apps, *n; a != NULL; a = n) {
        n = a->next;
        free(a->app);
        free(a->error);
        free(a);
    }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

double blah_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- result tails and internal requests --------------------------------------- */

static char *fail_tail(const char *msg, const char *rest)
{
    strbuf sb = STRBUF_INIT;
    if (strbuf_puts(&sb, "1 ") != 0 || gahp_escape_append(&sb, msg) != 0 ||
        strbuf_puts(&sb, rest) != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

char *blah_fail(const char *msg)
{
    return fail_tail(msg, "");
}

char *blah_submit_fail(const char *msg)
{
    return fail_tail(msg, " NULL");
}

char *blah_status_fail(const char *msg)
{
    return fail_tail(msg, " 0 NULL");
}

gahp_request *blah_record_request(gahp_command cmd, gahp_parse_fn parse, const char *command,
                                  const char *args_text, const gahp_request *like)
{
    /* request id 1: no client numbered it (internal requests are never
     * answered on the wire) */
    gahp_journal_record rec = { command, 1, args_text, like->project_id, like->project_url,
                                like->authenticator };
    const char *why = NULL;
    gahp_request *req = gahp_request_from_record(cmd, parse, &rec, &why);
    if (req == NULL)
        log_error("BLAH: internal %s request cannot be made: %s", command, why);
    return req;
}

/* ---- checks before a job is accepted ------------------------------------------ */

/* The input count of app's template, from the cache or the server.  0 with
 * *n; 1 with *why (malloc'd) when the server refuses the app; 2 when the
 * server could not be asked (the group's submit checks again). */
static int app_inputs(exec_ctx *ctx, const gahp_request *req, const char *app, size_t *n,
                      char **why)
{
    struct blah_state *st = ctx->shared->blah;
    double now = blah_clock();
    pthread_mutex_lock(&st->mu);
    for (blah_app *a = st->apps; a != NULL; a = a->next) {
        if (a->project_id != req->project_id || strcmp(a->app, app) != 0 ||
            now - a->fetched > BLAH_TEMPLATE_TTL_S)
            continue;
        int rc = a->error != NULL ? 1 : 0;
        *n = a->n_inputs;
        *why = a->error != NULL ? strdup(a->error) : NULL;
        pthread_mutex_unlock(&st->mu);
        return rc == 1 && *why == NULL ? -1 : rc;
    }
    pthread_mutex_unlock(&st->mu);

    boinc_project project = { req->project_url, req->authenticator };
    boinc_templates t = { 0 };
    boinc_error err = { 0 };
    int rc = boinc_get_templates(ctx->client, &project, app, &t, &err);
    if (rc != 0 && err.code != BOINC_E_SERVER) {
        log_warn("BLAH: the template of app %s could not be read (%s); the batch's "
                 "submit checks it", app, err.msg ? err.msg : boinc_code_name(err.code));
        boinc_error_clear(&err);
        return 2;
    }
    blah_app *a = calloc(1, sizeof *a);
    if (a == NULL || (a->app = strdup(app)) == NULL ||
        (rc != 0 && (a->error = str_printf("BOINC app %s (batch_queue) cannot be used: %s",
                                           app, err.msg ? err.msg : "refused")) == NULL)) {
        if (a != NULL)
            free(a->app);
        free(a);
        boinc_templates_free(&t);
        boinc_error_clear(&err);
        return -1;
    }
    a->project_id = req->project_id;
    a->n_inputs = t.n_inputs;
    a->fetched = now;
    boinc_templates_free(&t);
    boinc_error_clear(&err);
    *n = a->n_inputs;
    *why = a->error != NULL ? strdup(a->error) : NULL;
    int result = a->error != NULL ? 1 : 0;
    pthread_mutex_lock(&st->mu);
    a->next = st->apps;
    st->apps = a;
    pthread_mutex_unlock(&st->mu);
    return result == 1 && *why == NULL ? -1 : result;
}

char *blah_input_problem(const char *path, const gahp_config *cfg)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || access(path, R_OK) != 0)
        return str_printf("input file %s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return str_printf("input file %s is not a regular file", path);
    long max = cfg != NULL ? cfg->blah_max_input_bytes : 0;
    if (max > 0 && (long long)sb.st_size > (long long)max)
        return str_printf("input file %s is %lld bytes, more than the BOINC server takes "
                          "(blah_max_input_bytes = %ld in boinc_gahp.conf: its php.ini "
                          "upload_max_filesize)", path, (long long)sb.st_size, max);
    return NULL;
}

/* Each input a readable regular file: NULL, or why not (malloc'd). */
static char *input_problem(const gahp_blah_submit *s, const gahp_config *cfg)
{
    for (size_t i = 0; i < s->ninputs; i++) {
        char *why = blah_input_problem(s->inputs[i], cfg);
        if (why != NULL)
            return why;
    }
    return NULL;
}

/* The argument rule of real servers (exec/job_args.h), with physical
 * names as long as real ones (an MD5 and an extension). */
static int args_problem(const gahp_blah_submit *s, char **why)
{
    static const char phys[] = "0123456789abcdef0123456789abcdef.dat";
    const char **names = calloc(s->ninputs ? s->ninputs : 1, sizeof *names);
    if (names == NULL)
        return -1;
    for (size_t i = 0; i < s->ninputs; i++)
        names[i] = phys;
    char *line = NULL;
    /* its BOINC name is not made yet: the messages say "the job", not
     * "job job" (issue 41) */
    int rc = job_args_command_line_as("job", "the job", (const char *const *)s->args, s->nargs,
                                      names, s->ninputs, &line, why);
    free(line);
    free(names);
    return rc;
}

/* The names batch_project may use, for an error message (malloc'd). */
static char *project_names(const gahp_config *cfg)
{
    strbuf sb = STRBUF_INIT;
    int rc = 0;
    if (cfg != NULL && cfg->blah_project_name != NULL)
        rc = strbuf_puts(&sb, cfg->blah_project_name);
    for (const config_project *pr = cfg ? cfg->projects : NULL; rc == 0 && pr; pr = pr->next)
        rc = strbuf_printf(&sb, "%s%s", sb.len > 0 ? ", " : "", pr->name);
    if (rc == 0 && sb.len == 0)
        rc = strbuf_puts(&sb, "none");
    if (rc != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/*
 * The project the job goes to, into *on (a shallow copy of req): the
 * configured project, or the named one its batch_project gives
 * (project_url.NAME; blah_project_name names the default).  NULL, or why
 * not (malloc'd); "" when memory ran out or the journal failed (logged).
 */
static char *choose_project(exec_ctx *ctx, const gahp_request *req, gahp_request *on)
{
    const gahp_config *cfg = ctx->config;
    const char *name = req->u.blah_submit.project;
    *on = *req;
    if (name == NULL || (cfg != NULL && cfg->blah_project_name != NULL &&
                         strcmp(name, cfg->blah_project_name) == 0))
        return NULL;
    const config_project *pr = cfg != NULL ? config_find_project(cfg, name) : NULL;
    if (pr == NULL) {
        char *names = project_names(cfg);
        char *why = names != NULL
            ? str_printf("batch_project %s names no project of boinc_gahp.conf (it has: %s; "
                         "add project_url.%s and authenticator_file.%s)", name, names, name,
                         name)
            : NULL;
        free(names);
        return why;
    }
    long long id = 0;
    if (journal_project_id(ctx->journal, pr->url, pr->authenticator, &id) != 0) {
        log_error("BLAH: project %s cannot be recorded: %s", name, journal_errmsg(ctx->journal));
        return strdup("");
    }
    on->project_id = id;
    on->project_url = pr->url;
    on->authenticator = pr->authenticator;
    return NULL;
}

/* Why this job cannot be submitted as given (malloc'd), or NULL; *app is
 * the BOINC app. */
static char *refusal(exec_ctx *ctx, const gahp_request *req, const char **app)
{
    const gahp_blah_submit *s = &req->u.blah_submit;
    const gahp_config *cfg = ctx->config;
    *app = s->app != NULL ? s->app : cfg != NULL ? cfg->blah_default_app : NULL;
    if (*app == NULL)
        return strdup("no BOINC app: set batch_queue = <app> in the submit file "
                      "(or blah_default_app in boinc_gahp.conf)");
    char *why = NULL;
    size_t n = 0;
    int rc = app_inputs(ctx, req, *app, &n, &why);
    if (rc == 1)
        return why;
    if (rc == 0 && n != s->ninputs)
        return str_printf("BOINC app %s takes %zu input file%s, the job gives %zu "
                          "(input, then transfer_input_files, in the order of the app's "
                          "input template)", *app, n, n == 1 ? "" : "s", s->ninputs);
    if (rc < 0)
        return strdup(EXEC_NOMEM_MSG);     /* the job's error: refused, not accepted */
    if ((why = input_problem(s, cfg)) != NULL)
        return why;
    rc = args_problem(s, &why);
    if (rc < 0)
        return strdup(EXEC_NOMEM_MSG);
    return rc != 0 ? why : NULL;
}

/* ---- the job's journaled texts ------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

int blah_put_token(strbuf *sb, const char *t)
{
    return (sb->len > 0 && strbuf_putc(sb, ' ') != 0) || gahp_escape_append(sb, t) != 0 ? -1 : 0;
}

/* The job's BOINC_SUBMIT fields after its name: its arguments and inputs. */
static char *job_spec(const gahp_blah_submit *s)
{
    strbuf sb = STRBUF_INIT;
    int rc = strbuf_printf(&sb, "%zu", s->nargs);
    for (size_t i = 0; rc == 0 && i < s->nargs; i++)
        rc = blah_put_token(&sb, s->args[i]);
    if (rc == 0)
        rc = strbuf_printf(&sb, " %zu", s->ninputs);
    for (size_t i = 0; rc == 0 && i < s->ninputs; i++)
        rc = blah_put_token(&sb, s->inputs[i]) || blah_put_token(&sb, base_name(s->inputs[i]));
    if (rc != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* The job's BOINC_FETCH_OUTPUT fields after the job name: Iwd, the BOINC
 * stderr into Err, and TransferOutput (remapped) or every output file;
 * an output named like Out goes to Out, as HTCondor 9.0 asked. */
static char *fetch_args(const gahp_blah_submit *s)
{
    strbuf sb = STRBUF_INIT;
    size_t n = s->noutputs + (s->out != NULL ? 1 : 0);
    int rc = blah_put_token(&sb, s->iwd) || blah_put_token(&sb, s->err != NULL ? s->err : "/dev/null") ||
             strbuf_printf(&sb, " %s %zu", s->outputs_all ? "ALL" : "SOME", n) != 0;
    for (size_t i = 0; rc == 0 && i < s->noutputs; i++)
        rc = blah_put_token(&sb, s->outputs[i].src) || blah_put_token(&sb, s->outputs[i].dst);
    if (rc == 0 && s->out != NULL)
        rc = blah_put_token(&sb, base_name(s->out)) || blah_put_token(&sb, s->out);
    if (rc != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

char *blah_new_batch_name(void)
{
    char hex[17];
    return str_random_hex(hex, 8) == 0 ? str_printf("bgahp_%s", hex) : NULL;
}

/* ---- groups ---------------------------------------------------------------------- */

static blah_group *open_group(struct blah_state *st, long long project_id, const char *app,
                              double memory_mb, long max_jobs)
{
    for (blah_group *g = st->groups; g != NULL; g = g->next)
        if (!g->closing && g->project_id == project_id && strcmp(g->app, app) == 0 &&
            g->memory_mb == memory_mb && g->njobs < max_jobs)
            return g;
    return NULL;
}

static void forget_group(struct blah_state *st, blah_group *g)
{
    for (blah_group **p = &st->groups; *p != NULL; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            break;
        }
    gahp_request_free(g->lead_req);
    free(g->app);
    free(g->batch);
    free(g);
}

typedef struct {
    strbuf *sb;
    size_t n;
} group_text;

static int add_job_text(const char *gahp_id, const char *spec, void *arg)
{
    group_text *t = arg;
    t->n++;
    return blah_add_job_text(t->sb, gahp_id, spec);
}

int blah_add_job_text(strbuf *jobs, const char *gahp_id, const char *spec)
{
    return blah_put_token(jobs, gahp_id) != 0 || strbuf_putc(jobs, ' ') != 0 ||
           strbuf_puts(jobs, spec) != 0 ? -1 : 0;
}

char *blah_group_args_text(const char *batch, const char *app, double memory_mb,
                           const strbuf *jobs, size_t njobs)
{
    strbuf sb = STRBUF_INIT;
    char *out = NULL;
    if (blah_put_token(&sb, batch) == 0 && blah_put_token(&sb, app) == 0 &&
        strbuf_printf(&sb, " %zu", njobs) == 0 &&
        (njobs == 0 || strbuf_putc(&sb, ' ') == 0) &&
        (njobs == 0 || strbuf_append(&sb, jobs->data, jobs->len) == 0)) {
        /* rsc_memory_bound from RequestMemory; the other five unset */
        int rc = memory_mb > 0
            ? strbuf_printf(&sb, " NULL NULL %.0f NULL NULL NULL", memory_mb * 1048576.0)
            : strbuf_puts(&sb, " NULL NULL NULL NULL NULL NULL");
        if (rc == 0)
            out = strbuf_detach(&sb);
    }
    strbuf_free(&sb);
    return out;
}

/* The group's BOINC_SUBMIT argument text from its journaled jobs. */
static char *group_args(journal *j, long long group_id, const char *batch, const char *app,
                        double memory_mb, size_t *njobs)
{
    strbuf jobs = STRBUF_INIT;
    group_text t = { &jobs, 0 };
    char *out = NULL;
    if (journal_blah_group_jobs(j, group_id, add_job_text, &t) == 0)
        out = blah_group_args_text(batch, app, memory_mb, &jobs, t.n);
    strbuf_free(&jobs);
    *njobs = t.n;
    return out;
}

/* Close the group in the journal; its submit request (background), or
 * NULL when it had no job left or something failed (logged). */
static gahp_request *close_group(exec_ctx *ctx, long long group_id, const char *batch,
                                 const char *app, double memory_mb, const gahp_request *like)
{
    size_t n = 0;
    /* a job whose input went away since it was accepted is held alone */
    if (blah_hold_unreadable(ctx, group_id, batch) < 0)
        return NULL;
    char *args = group_args(ctx->journal, group_id, batch, app, memory_mb, &n);
    long long row = 0;
    if (args == NULL ||
        journal_blah_group_close(ctx->journal, group_id, ctx->session_id, BLAH_GROUP_SUBMIT,
                                 args, like->project_id, n, journal_now(), &row) != 0) {
        log_error("BLAH: batch %s cannot be closed: %s", batch,
                  args == NULL ? EXEC_NOMEM_MSG : journal_errmsg(ctx->journal));
        free(args);
        return NULL;
    }
    testpoint("blah.closed");
    gahp_request *req = NULL;
    if (row > 0) {
        req = blah_record_request(GAHP_CMD_SUBMIT, gahp_parse_submit, BLAH_GROUP_SUBMIT,
                                  args, like);
        if (req != NULL) {
            req->journal_id = row;
            req->background = 1;    /* no client waits: no deadline, no RESULTS */
        }
        log_info("BLAH: batch %s of app %s closed with %zu job%s", batch, app, n,
                 n == 1 ? "" : "s");
    } else {
        log_info("BLAH: batch %s closed empty (every job was cancelled)", batch);
    }
    free(args);
    return req;
}

/* The internal request's result as the journal records it: its row is a
 * BOINC_SUBMIT's (the 9.0 form), read by nobody but an auditor. */
static char *group_result_record(int rc, exec_err *e)
{
    return rc == 0 ? strdup("NULL") : exec_err_result(e);
}

void blah_submit_group(exec_ctx *ctx, gahp_request *sreq, const char *batch)
{
    double started = journal_now();
    exec_err e = { 0 };
    int rc = exec_submit_job_set(ctx, sreq, &e);
    testpoint("blah.group_submitted");
    char *plain = rc != 0 && e.msg != NULL ? strdup(e.msg) : NULL;
    char *record = group_result_record(rc, &e);
    journal_completion c = { sreq->journal_id, started, journal_now(),
                             record != NULL ? record : EXEC_NOMEM_RESULT, 0 };
    if (journal_requests_complete(ctx->journal, &c, 1) != 0 ||
        journal_requests_delivered(ctx->journal, &sreq->journal_id, 1, journal_now()) != 0)
        log_error("BLAH: the outcome of batch %s cannot be recorded: %s", batch,
                  journal_errmsg(ctx->journal));
    free(record);
    if (rc == 0)
        log_info("BLAH: batch %s submitted", batch);
    else
        log_warn("BLAH: batch %s not submitted: %s (its jobs wait when the project did not "
                 "answer; a job whose input was refused is held alone, the others go on; "
                 "else they are held)", batch, plain != NULL ? plain : EXEC_NOMEM_MSG);
    free(plain);
    exec_err_clear(&e);
    blah_send_aborts(ctx, sreq);
}

/* When g should close: blah_batch_window after its last join, but no
 * later than blah_batch_max_age after it opened; now when it is full. */
static double close_time(const gahp_config *cfg, const blah_group *g)
{
    double window = cfg != NULL ? cfg->blah_batch_window_s : 3.0;
    double max_age = cfg != NULL ? cfg->blah_batch_max_age_s : 60.0;
    long max_jobs = cfg != NULL ? cfg->blah_batch_max_jobs : 10000;
    if (g->njobs >= max_jobs)
        return 0;
    double close_at = g->last_join + window;
    return g->opened + max_age < close_at ? g->opened + max_age : close_at;
}

double blah_groups_next_close(const struct blah_state *st, const gahp_config *cfg)
{
    double next = INFINITY;
    for (const blah_group *g = st->groups; g != NULL; g = g->next)
        if (g->lead_req != NULL && !g->closing && close_time(cfg, g) < next)
            next = close_time(cfg, g);
    return next;
}

gahp_request *blah_groups_take_due(struct blah_state *st, const gahp_config *cfg, double now)
{
    for (blah_group *g = st->groups; g != NULL; g = g->next)
        if (g->lead_req != NULL && !g->closing && close_time(cfg, g) <= now) {
            gahp_request *r = g->lead_req;
            g->lead_req = NULL;
            g->closing = 1;         /* nobody joins; the worker leads at once */
            return r;
        }
    return NULL;
}

/* The leader: wait until the group should close (unless the group timer
 * found it due already), then close and submit. */
static void lead(exec_ctx *ctx, const gahp_request *like, blah_group *g)
{
    struct blah_state *st = ctx->shared->blah;
    const gahp_config *cfg = ctx->config;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        double close_at = close_time(cfg, g);
        if (g->closing || blah_clock() >= close_at)
            break;
        struct timespec until = { (time_t)close_at,
                                  (long)((close_at - (double)(time_t)close_at) * 1e9) };
        pthread_cond_timedwait(&st->cv, &st->mu, &until);
    }
    g->closing = 1;
    pthread_mutex_unlock(&st->mu);

    gahp_request *sreq = close_group(ctx, g->id, g->batch, g->app, g->memory_mb, like);
    if (sreq != NULL)
        blah_submit_group(ctx, sreq, g->batch);
    gahp_request_free(sreq);
    pthread_mutex_lock(&st->mu);
    forget_group(st, g);
    pthread_mutex_unlock(&st->mu);
}

char *exec_blah_lead(exec_ctx *ctx, const gahp_request *req)
{
    struct blah_state *st = ctx->shared->blah;
    blah_group *g = NULL;
    pthread_mutex_lock(&st->mu);
    for (g = st->groups; g != NULL && g->id != req->u.blah_group; g = g->next)
        ;
    pthread_mutex_unlock(&st->mu);
    if (g == NULL)
        return strdup("1 no\\ such\\ group");
    lead(ctx, req, g);
    return strdup("0 NULL");
}

/* The internal BLAH_GROUP_LEAD of group group_id with like's project,
 * built typed (no text: nothing journals it); NULL when memory ran out. */
static gahp_request *lead_request(long long group_id, const gahp_request *like)
{
    gahp_request *r = gahp_request_new(GAHP_CMD_BLAH_LEAD, 1);
    if (r == NULL)
        return NULL;
    r->u.blah_group = group_id;
    if (gahp_request_set_project(r, like->project_id, like->project_url,
                                 like->authenticator) != 0) {
        gahp_request_free(r);
        return NULL;
    }
    return r;
}

/* Arm group g: the group timer hands its leader to a worker when the
 * group is due (no worker sleeps through a group's window), or lead it
 * here when there is no worker queue (a unit test's context) or no
 * memory for the request. */
static void start_leader(exec_ctx *ctx, const gahp_request *req, blah_group *g)
{
    struct blah_state *st = ctx->shared->blah;
    gahp_request *lreq = ctx->shared->spawn != NULL ? lead_request(g->id, req) : NULL;
    if (lreq == NULL) {
        lead(ctx, req, g);
        return;
    }
    lreq->background = 1;       /* journal_id 0: a task outside the journal */
    if (blah_sched_ensure(ctx) != 0) {
        /* no timer: the worker waits through the window itself */
        ctx->shared->spawn(ctx->shared->spawn_arg, lreq);
        return;
    }
    pthread_mutex_lock(&st->mu);
    g->lead_req = lreq;
    pthread_cond_broadcast(&st->cv);        /* the timer sees a new close time */
    pthread_mutex_unlock(&st->mu);
}

/* ---- BLAH_JOB_SUBMIT -------------------------------------------------------------- */

/* The paths the job's fetch will write (fetch_args: TransferOutput after
 * its remaps, Out, and Err for the BOINC stderr): 0, 1 with *why (two of
 * them are one path), -1. */
static int job_claims(const gahp_blah_submit *s, exec_claims *c, char **why)
{
    size_t n = s->noutputs + (s->out != NULL ? 1 : 0);
    gahp_output_spec *specs = calloc(n + 1, sizeof *specs);
    if (specs == NULL)
        return -1;
    for (size_t i = 0; i < s->noutputs; i++)
        specs[i] = s->outputs[i];
    if (s->out != NULL) {
        specs[s->noutputs].src = (char *)"Out (the job's output)";
        specs[s->noutputs].dst = s->out;
    }
    int rc = exec_claim_paths(s->iwd, s->err, specs, n, c, why);
    free(specs);
    return rc;
}

static char *accepted(const char *gahp_id)
{
    strbuf sb = STRBUF_INIT;
    if (strbuf_puts(&sb, "0 NULL ") != 0 || gahp_escape_append(&sb, gahp_id) != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/*
 * What a job gets before it joins a group: the project it goes to (*on, a
 * shallow copy of req0), its app and the output paths it claims.  1 when
 * *tail is its answer already (a repeat of a live job gets that job's id;
 * a job that cannot run as given is refused; *tail NULL: out of memory);
 * 0 when it goes on to join a group.
 */
static int answer_before_join(exec_ctx *ctx, const gahp_request *req0, gahp_request *on,
                              const char **app, exec_claims *claims, char **tail)
{
    const gahp_blah_submit *s = &req0->u.blah_submit;
    *tail = NULL;
    char *why = choose_project(ctx, req0, on);
    if (why != NULL && why[0] == '\0') {
        free(why);
        *tail = blah_submit_fail(journal_errmsg(ctx->journal));
        return 1;
    }
    if (why == NULL) {
        /* A repeat of a live job gets its id whatever changed since (an
         * input moved away): HTCondor renews its lease on that id. */
        char *live = NULL;
        int found = journal_blah_live_job(ctx->journal, on->project_id, s->job_dir, &live);
        if (found != 0) {
            if (found == 1)
                log_info("BLAH: job %s is already %s: the same job id again", s->job_dir, live);
            *tail = found < 0 ? blah_submit_fail(journal_errmsg(ctx->journal)) : accepted(live);
            free(live);
            return 1;
        }
        why = refusal(ctx, on, app);
    }
    if (why == NULL && job_claims(s, claims, &why) < 0)
        return 1;
    if (why == NULL)
        return 0;
    log_info("BLAH: job %s refused: %s", s->job_dir, why);
    *tail = blah_submit_fail(why);
    free(why);
    return 1;
}

/* A job's joining its group, as journal_blah_join answered it. */
typedef struct {
    journal_blah_join_out out;
    blah_group *g;              /* the group in this process, or NULL (no
                                   memory for a new one: closed at once) */
    blah_group *led;            /* a new group this job opened: its leader
                                   to start */
    char *batch;                /* the batch name of a group it would open */
} joined_group;

/* Under st->mu: this process's record of the group a job just opened
 * (the job's worker starts its leader); NULL when memory ran out. */
static blah_group *remember_new_group(struct blah_state *st, long long group_id,
                                      long long project_id, const char *app,
                                      const char *batch, double memory_mb)
{
    blah_group *led = calloc(1, sizeof *led);
    if (led != NULL && ((led->app = strdup(app)) == NULL ||
                        (led->batch = strdup(batch)) == NULL)) {
        free(led->app);
        free(led);
        led = NULL;
    }
    if (led == NULL)
        return NULL;
    led->id = group_id;
    led->project_id = project_id;
    led->memory_mb = memory_mb;
    led->opened = blah_clock();
    led->next = st->groups;
    st->groups = led;
    return led;
}

/* Under st->mu: the job's row in the journal, in the open group of its
 * project, app and memory request, or in a new one.  0 with *jg; 1 with
 * *tail, the job's answer (refused: a path another live job writes; or
 * the journal failed; *tail NULL: out of memory). */
static int join_group_locked(exec_ctx *ctx, const gahp_request *req, const char *app,
                             const exec_claims *claims, joined_group *jg, char **tail)
{
    const gahp_blah_submit *s = &req->u.blah_submit;
    struct blah_state *st = ctx->shared->blah;
    long max_jobs = ctx->config != NULL ? ctx->config->blah_batch_max_jobs : 10000;
    char *spec = job_spec(s), *fetch = fetch_args(s);
    int rc = spec != NULL && fetch != NULL ? 0 : 1;
    jg->g = rc == 0 ? open_group(st, req->project_id, app, s->memory_mb, max_jobs) : NULL;
    /* a name only for a group this job would open */
    if (rc == 0 && jg->g == NULL && (jg->batch = blah_new_batch_name()) == NULL) {
        *tail = blah_submit_fail("no random batch name: the kernel's random source failed");
        rc = 1;
    }
    if (rc == 0) {
        journal_blah_join_in in = { req->project_id, s->job_dir, app, s->memory_mb,
                                    jg->g != NULL ? jg->g->id : 0, jg->batch, spec, fetch,
                                    (const char *const *)claims->paths, claims->n,
                                    journal_now() };
        if (journal_blah_join(ctx->journal, &in, &jg->out) != 0) {
            *tail = blah_submit_fail(journal_errmsg(ctx->journal));
            rc = 1;
        }
    }
    free(spec);
    free(fetch);
    if (rc == 0 && jg->out.conflict.job != NULL) {
        /* refused: nothing was recorded, no group opened */
        char *msg = exec_claim_refusal(jg->out.conflict.path, jg->out.conflict.job);
        journal_claim_conflict_free(&jg->out.conflict);
        if (msg != NULL) {
            log_warn("BLAH: job %s refused: %s", s->job_dir, msg);
            *tail = blah_submit_fail(msg);
        }
        free(msg);
        rc = 1;
    }
    if (rc == 0 && !jg->out.existing && jg->g == NULL)
        jg->g = jg->led = remember_new_group(st, jg->out.group_id, req->project_id, app,
                                             jg->batch, s->memory_mb);
    if (rc == 0 && !jg->out.existing && jg->g != NULL) {
        jg->g->njobs++;
        jg->g->last_join = blah_clock();
        pthread_cond_broadcast(&st->cv);
    }
    return rc;
}

char *exec_blah_submit(exec_ctx *ctx, const gahp_request *req0)
{
    const gahp_blah_submit *s = &req0->u.blah_submit;
    struct blah_state *st = ctx->shared->blah;
    const char *app = NULL;
    gahp_request on;
    exec_claims claims = { NULL, 0 };
    char *tail = NULL;
    if (answer_before_join(ctx, req0, &on, &app, &claims, &tail) != 0) {
        exec_claims_free(&claims);
        return tail;
    }
    joined_group jg;
    memset(&jg, 0, sizeof jg);
    pthread_mutex_lock(&st->mu);
    int answered = join_group_locked(ctx, &on, app, &claims, &jg, &tail);
    pthread_mutex_unlock(&st->mu);
    exec_claims_free(&claims);
    if (answered) {
        free(jg.batch);
        return tail;
    }
    testpoint("blah.joined");
    if (jg.out.existing)
        log_info("BLAH: job %s is already %s: the same job id again", s->job_dir,
                 jg.out.gahp_id);
    else
        log_info("BLAH: job %s is %s", s->job_dir, jg.out.gahp_id);
    tail = accepted(jg.out.gahp_id);
    if (jg.led != NULL) {
        start_leader(ctx, &on, jg.led);
    } else if (!jg.out.existing && jg.g == NULL) {
        /* no memory for the group in this process: close it at once */
        gahp_request *sreq = close_group(ctx, jg.out.group_id, jg.batch, app, s->memory_mb,
                                         &on);
        if (sreq != NULL)
            blah_submit_group(ctx, sreq, jg.batch);
        gahp_request_free(sreq);
    }
    free(jg.batch);
    free(jg.out.gahp_id);
    return tail;
}

/* ---- start-up ----------------------------------------------------------------------- */

typedef struct {
    journal_blah_group *v;
    size_t n, cap;
} group_list;

static int collect_group(const journal_blah_group *g, void *arg)
{
    group_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        journal_blah_group *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    journal_blah_group c = *g;
    c.url = strdup(g->url);
    c.authenticator = strdup(g->authenticator);
    c.app = strdup(g->app);
    c.batch = strdup(g->batch);
    l->v[l->n++] = c;
    return c.url && c.authenticator && c.app && c.batch ? 0 : -1;
}

int blah_close_open_groups(exec_ctx *ctx, blah_run_fn run, void *arg)
{
    group_list l = { 0 };
    int rc = journal_blah_open_groups(ctx->journal, collect_group, &l);
    int closed = 0;
    for (size_t i = 0; i < l.n; i++) {
        journal_blah_group *g = &l.v[i];
        if (rc == 0) {
            gahp_request like = { 0 };
            like.project_id = g->project_id;
            like.project_url = (char *)g->url;
            like.authenticator = (char *)g->authenticator;
            log_info("BLAH: batch %s was left open by an earlier run: closing it",
                     g->batch);
            gahp_request *sreq = close_group(ctx, g->id, g->batch, g->app, g->memory_mb, &like);
            if (sreq != NULL) {
                run(sreq, arg);
                closed++;
            }
        }
        free((char *)g->url);
        free((char *)g->authenticator);
        free((char *)g->app);
        free((char *)g->batch);
    }
    free(l.v);
    if (rc != 0)
        log_error("BLAH: open batches cannot be read: %s", journal_errmsg(ctx->journal));
    return rc != 0 ? -1 : closed;
}
