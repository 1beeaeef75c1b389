/*
 * exec_query.c - BOINC_QUERY_BATCHES, answered so that HTCondor's grid
 * manager cannot lose a status (issue 8; doc/protocol.md, "Status
 * queries"):
 *
 *  - the server is asked incrementally: min_mod_time is a margin below the
 *    server_time of the last reply recorded for each requested batch (not
 *    the client's value, which it only updates after partial queries), so
 *    a change in the same second as that server_time is not lost;
 *  - every status seen is recorded in the journal (jobs.status);
 *  - the client gets, for every batch whose jobs the journal knows, the
 *    FULL list of its jobs from the journal: never a 0-job group for a
 *    batch that has jobs (the client would resubmit it), and every DONE or
 *    ERROR repeated until the client has read it (its reply loop stops
 *    after the first unconfirmed batch it confirms).  A batch the journal
 *    does not know gets the server's group as is.
 */
#include "exec_cmds.h"

#include "journal_jobs.h"
#include "log.h"
#include "gahp_text.h"
#include "strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Server modification times have one-second resolution (and several web
 * servers may answer): ask again for everything modified since this many
 * seconds before the last recorded server_time.  A repeated status is a
 * no-op for the client. */
#define QUERY_MARGIN_S 5

const char *exec_protocol_status(const char *server_status)
{
    if (strcmp(server_status, "DONE") == 0)
        return "DONE";
    if (strcmp(server_status, "ERROR") == 0)
        return "ERROR";
    /* The GAHP protocol knows only IN_PROGRESS, DONE and ERROR: a job not
     * sent yet (UNSENT) or in a state we do not know is still pending. */
    return "IN_PROGRESS";
}

static int is_known_status(const char *s)
{
    return strcmp(s, "DONE") == 0 || strcmp(s, "ERROR") == 0 ||
           strcmp(s, "IN_PROGRESS") == 0 || strcmp(s, "UNSENT") == 0;
}

/* An empty token would change the token count HTCondor reads. */
static const char *check_reply(const boinc_query_result *r)
{
    if (r->server_time == NULL || r->server_time[0] == '\0')
        return "reply has no server_time";
    for (size_t b = 0; b < r->nbatches; b++)
        for (size_t i = 0; i < r->batches[b].njobs; i++) {
            const boinc_job_status *js = &r->batches[b].jobs[i];
            if (js->name == NULL || js->name[0] == '\0')
                return "reply has a job without a name";
            if (js->status == NULL || js->status[0] == '\0')
                return "reply has a job without a status";
        }
    return NULL;
}

/* " <job> <status>" for one job line. */
static int put_job(strbuf *out, const char *name, const char *status)
{
    if (!is_known_status(status))
        log_warn("query_batch2: job %s has unknown status %s; reported as "
                 "IN_PROGRESS", name, status);
    int rc = strbuf_putc(out, ' ');
    if (rc == 0)
        rc = gahp_escape_append(out, name);
    if (rc == 0)
        rc = strbuf_putc(out, ' ');
    if (rc == 0)     /* puts, not printf: this runs once per job of a reply */
        rc = strbuf_puts(out, exec_protocol_status(status));
    return rc;
}

static int put_server_group(strbuf *out, const boinc_batch_status *bs)
{
    int rc = strbuf_printf(out, " %zu", bs->njobs);
    for (size_t i = 0; rc == 0 && i < bs->njobs; i++)
        rc = put_job(out, bs->jobs[i].name, bs->jobs[i].status);
    return rc;
}

static int cmp_job_ptr(const void *a, const void *b)
{
    const boinc_job_status *x = *(const boinc_job_status *const *)a;
    const boinc_job_status *y = *(const boinc_job_status *const *)b;
    return strcmp(x->name, y->name);
}

/* The server's newest status of job `name` in this reply, or NULL. */
static const char *server_status(const boinc_job_status **index, size_t n,
                                 const char *name)
{
    boinc_job_status key = { 0 };
    const boinc_job_status *kp = &key;
    key.name = (char *)name;
    const boinc_job_status **hit = bsearch(&kp, index, n, sizeof *index, cmp_job_ptr);
    return hit != NULL ? (*hit)->status : NULL;
}

/* What put_journal_row needs: the reply's statuses, sorted by name. */
typedef struct {
    strbuf *out;
    const boinc_job_status **index;
    size_t nindex;
} journal_group;

/* One journal row straight into the reply (journal_job_visit_fn): the
 * server's status in this reply wins over the recorded one. */
static int put_journal_row(void *arg, const char *name, const char *status)
{
    journal_group *g = arg;
    const char *st = server_status(g->index, g->nindex, name);
    if (st == NULL)
        st = status != NULL ? status : "IN_PROGRESS";
    return put_job(g->out, name, st) == 0 ? 0 : 2;
}

/* Put " <n>" in front of the n jobs appended after mark (the count is
 * known only once the rows were walked). */
static int insert_count(strbuf *out, size_t mark, size_t n)
{
    char num[32];
    int len = snprintf(num, sizeof num, " %zu", n);
    if (len < 0 || (size_t)len >= sizeof num || strbuf_reserve(out, (size_t)len) != 0)
        return -1;
    memmove(out->data + mark + len, out->data + mark, out->len - mark + 1);
    memcpy(out->data + mark, num, (size_t)len);
    out->len += (size_t)len;
    return 0;
}

/*
 * The full group of a batch from the journal's job rows, each status
 * overlaid with this reply's (so the answer is right even when recording
 * failed), written straight into out: no copy of the rows.  Returns 0,
 * 1 when the journal cannot serve it (use the server's group; the caller
 * drops what was appended), -1 on ENOMEM.
 */
static int put_journal_group(exec_ctx *ctx, long long project_id,
                             const char *batch, const boinc_batch_status *bs,
                             strbuf *out)
{
    const boinc_job_status **index = calloc(bs->njobs ? bs->njobs : 1, sizeof *index);
    if (index == NULL)
        return -1;
    for (size_t i = 0; i < bs->njobs; i++)
        index[i] = &bs->jobs[i];
    qsort(index, bs->njobs, sizeof *index, cmp_job_ptr);
    journal_group g = { out, index, bs->njobs };
    size_t mark = out->len, n = 0;
    int rc = journal_jobs_each(ctx->journal, project_id, batch, put_journal_row, &g, &n);
    free(index);
    if (rc == 2)
        return -1;
    if (rc != 0 || n == 0)
        return 1;
    return insert_count(out, mark, n) == 0 ? 0 : -1;
}

static char *format_result(exec_ctx *ctx, const gahp_request *req,
                           const journal_batch_poll *poll,
                           const boinc_query_result *r)
{
    strbuf out = STRBUF_INIT;
    int rc = strbuf_puts(&out, "NULL ");
    if (rc == 0)
        rc = gahp_escape_append(&out, r->server_time);
    for (size_t b = 0; rc == 0 && b < r->nbatches; b++) {
        const boinc_batch_status *bs = &r->batches[b];
        size_t mark = out.len;
        rc = poll[b].njobs > 0
                 ? put_journal_group(ctx, req->project_id, req->u.query.batches[b],
                                     bs, &out)
                 : 1;
        if (rc == 1) {
            out.len = mark;     /* drop any partial group */
            if (out.data != NULL)
                out.data[mark] = '\0';
            rc = put_server_group(&out, bs);
        }
    }
    if (rc != 0) {
        strbuf_free(&out);
        return NULL;
    }
    return strbuf_detach(&out);
}

/* Remember the statuses of one reply (for the batches `names`) where the
 * journal knows the batch.  A journal failure is logged, not reported: the
 * answer overlays the reply anyway, and the batch's recorded server_time
 * stays, so the next query asks the server again. */
static void record_statuses(exec_ctx *ctx, long long project_id,
                            const char *const *names, const boinc_query_result *r,
                            double server_time)
{
    if (ctx->journal == NULL || project_id <= 0)
        return;
    size_t total = 0;
    for (size_t b = 0; b < r->nbatches; b++)
        total += r->batches[b].njobs;
    journal_batch_report *reports = calloc(r->nbatches ? r->nbatches : 1,
                                           sizeof *reports);
    journal_job_status *jobs = calloc(total ? total : 1, sizeof *jobs);
    if (reports == NULL || jobs == NULL) {
        log_warn("query_batch2: out of memory recording job statuses");
        free(reports);
        free(jobs);
        return;
    }
    size_t k = 0;
    for (size_t b = 0; b < r->nbatches; b++) {
        reports[b].batch = names[b];
        reports[b].njobs = r->batches[b].njobs;
        reports[b].jobs = &jobs[k];
        for (size_t i = 0; i < r->batches[b].njobs; i++, k++) {
            jobs[k].name = r->batches[b].jobs[i].name;
            jobs[k].status = r->batches[b].jobs[i].status;
        }
    }
    long long changed = 0;
    if (journal_jobs_record_statuses(ctx->journal, project_id, reports,
                                     r->nbatches, server_time, journal_now(),
                                     &changed) != 0)
        log_warn("query_batch2: job statuses not recorded in the journal");
    else
        log_debug("query_batch2: %lld job status change(s) recorded", changed);
    free(reports);
    free(jobs);
}

/* Does the (squashed, maybe cut with " [...]") tail of a server message
 * stand for the batch name? */
static int tail_names(const char *tail, const char *name)
{
    static const char cut[] = " [...]";
    char *sq = boinc_one_line(name);
    if (sq == NULL)
        return 0;
    size_t tl = strlen(tail), cl = sizeof cut - 1;
    int match = strcmp(sq, tail) == 0;
    if (!match && tl > cl && strcmp(tail + tl - cl, cut) == 0)
        match = strlen(sq) > tl - cl && strncmp(sq, tail, tl - cl) == 0;
    free(sq);
    return match;
}

/*
 * HTCondor takes everything after "no batch named " as the batch name and
 * resubmits that batch.  The client module squashes server text to one
 * line (and caps it), which would alter a name with double spaces, a
 * newline, trailing blanks or great length; put back the exact requested
 * name the message stands for.  0, or -1 on ENOMEM (err unchanged).
 */
static int restore_batch_name(boinc_error *err, const gahp_query_batches *q)
{
    static const char marker[] = "no batch named ";
    char *at = err->code == BOINC_E_SERVER && err->msg != NULL
                   ? strstr(err->msg, marker) : NULL;
    if (at == NULL)
        return 0;
    const char *tail = at + sizeof marker - 1;
    const char *exact = NULL;
    for (size_t i = 0; i < q->nbatches; i++)
        if (strcmp(q->batches[i], tail) == 0)
            return 0;                   /* already exact */
    for (size_t i = 0; exact == NULL && i < q->nbatches; i++)
        if (tail_names(tail, q->batches[i]))
            exact = q->batches[i];
    if (exact == NULL)
        return 0;
    strbuf fixed = STRBUF_INIT;
    if (strbuf_append(&fixed, err->msg, (size_t)(tail - err->msg)) != 0 ||
        strbuf_puts(&fixed, exact) != 0) {
        strbuf_free(&fixed);
        return -1;
    }
    char *msg = strbuf_detach(&fixed);
    if (msg == NULL)
        return -1;
    free(err->msg);
    err->msg = msg;
    return 0;
}

/* What the journal knows of each requested batch (njobs 0 = not served
 * from the journal, also when the journal cannot be read). */
static journal_batch_poll *load_poll_states(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_query_batches *q = &req->u.query;
    journal_batch_poll *poll = calloc(q->nbatches ? q->nbatches : 1, sizeof *poll);
    if (poll == NULL || ctx->journal == NULL || req->project_id <= 0)
        return poll;
    for (size_t b = 0; b < q->nbatches; b++)
        if (journal_jobs_poll_state(ctx->journal, req->project_id, q->batches[b],
                                    &poll[b]) != 0)
            memset(&poll[b], 0, sizeof poll[b]);
    return poll;
}

/* A margin below t, whole seconds; 0 (= every job) when t is not > 0. */
static double with_margin(double t)
{
    return t > QUERY_MARGIN_S ? floor(t) - QUERY_MARGIN_S : 0;
}

/* min_mod_time batch b needs: the margin below the journal's last recorded
 * server_time (0 when none), or for a batch the journal does not serve,
 * below the client's value. */
static double batch_min_mod_time(const journal_batch_poll *poll, double client)
{
    if (poll->njobs > 0)
        return with_margin(poll->has_server_time ? poll->server_time : 0);
    return with_margin(client);
}

/*
 * One query_batch2 call for some of the requested batches.  Batches that
 * need every job (never recorded) and batches that need only recent
 * changes go to two calls, so that a new batch does not make the server
 * list every job of every other batch.
 */
typedef struct {
    size_t n;
    const char **names;         /* in request order */
    size_t *pos;                /* index of each in the request */
    double mmt;                 /* 0 = every job */
    boinc_query_result r;
} query_part;

enum { PART_FULL, PART_RECENT, NPARTS };

static void parts_free(query_part *parts)
{
    for (int i = 0; i < NPARTS; i++) {
        free(parts[i].names);
        free(parts[i].pos);
        boinc_query_result_free(&parts[i].r);
    }
}

static int plan_parts(const gahp_query_batches *q, const journal_batch_poll *poll,
                      query_part *parts)
{
    double client = 0;
    if (parse_double_strict(q->min_mod_time, &client) != 0 || !isfinite(client))
        client = 0;
    memset(parts, 0, NPARTS * sizeof *parts);
    for (int i = 0; i < NPARTS; i++) {
        parts[i].names = calloc(q->nbatches ? q->nbatches : 1, sizeof *parts[i].names);
        parts[i].pos = calloc(q->nbatches ? q->nbatches : 1, sizeof *parts[i].pos);
        if (parts[i].names == NULL || parts[i].pos == NULL)
            return -1;
    }
    parts[PART_RECENT].mmt = HUGE_VAL;
    for (size_t b = 0; b < q->nbatches; b++) {
        double t = batch_min_mod_time(&poll[b], client);
        query_part *p = &parts[t > 0 ? PART_RECENT : PART_FULL];
        if (t > 0 && t < p->mmt)
            p->mmt = t;
        p->names[p->n] = q->batches[b];
        p->pos[p->n++] = b;
    }
    return 0;
}

/* Run one part: 0, or -1 with *tail the error token (NULL on ENOMEM). */
static int run_part(exec_ctx *ctx, const boinc_project *project,
                    const gahp_query_batches *q, query_part *p, char **tail)
{
    char mmt[32];
    if (p->mmt > 0)
        snprintf(mmt, sizeof mmt, "%.0f", p->mmt);
    else
        snprintf(mmt, sizeof mmt, "0");
    log_debug("query_batch2: %zu batch(es), min_mod_time %s (client's %s)", p->n, mmt,
              q->min_mod_time);
    boinc_error err = { 0 };
    int rc = 0;
    if (boinc_query_batch2(ctx->client, project, mmt, p->names, p->n, &p->r,
                           &err) != BOINC_OK) {
        /* The server's text stays last, so "no batch named NAME" ends the
         * message as HTCondor requires. */
        *tail = restore_batch_name(&err, q) != 0 ? NULL
                                                  : exec_boinc_error("query_batch2", &err);
        rc = -1;
    } else {
        const char *bad = p->r.nbatches != p->n ? "reply does not answer every batch"
                                                 : check_reply(&p->r);
        if (bad != NULL) {
            *tail = exec_error("query_batch2 failed", bad);
            rc = -1;
        }
    }
    boinc_error_clear(&err);
    return rc;
}

static double time_of(const char *server_time)
{
    double t = 0;
    if (parse_double_strict(server_time, &t) != 0 || !isfinite(t))
        return 0;       /* recorded statuses, but no time: asks all next */
    return t;
}

/*
 * Record each part's statuses with its own server_time, and answer with
 * one group per requested batch, in request order.  The client gets the
 * older of the server times (it only uses it as a later min_mod_time).
 */
static char *answer(exec_ctx *ctx, const gahp_request *req,
                    const journal_batch_poll *poll, query_part *parts)
{
    const gahp_query_batches *q = &req->u.query;
    boinc_query_result merged = { NULL, q->nbatches, NULL };
    merged.batches = calloc(q->nbatches ? q->nbatches : 1, sizeof *merged.batches);
    if (merged.batches == NULL)
        return NULL;
    for (int i = 0; i < NPARTS; i++) {
        query_part *p = &parts[i];
        if (p->r.server_time == NULL)
            continue;
        record_statuses(ctx, req->project_id, p->names, &p->r, time_of(p->r.server_time));
        for (size_t k = 0; k < p->n; k++)
            merged.batches[p->pos[k]] = p->r.batches[k];
        if (merged.server_time == NULL ||
            time_of(p->r.server_time) < time_of(merged.server_time))
            merged.server_time = p->r.server_time;
    }
    char *tail = format_result(ctx, req, poll, &merged);
    free(merged.batches);       /* the groups belong to the parts */
    return tail;
}

char *exec_query_batches(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_query_batches *q = &req->u.query;
    boinc_project project = { req->project_url, req->authenticator };
    query_part parts[NPARTS];
    journal_batch_poll *poll = load_poll_states(ctx, req);
    if (poll == NULL)
        return NULL;
    char *tail = NULL;
    int rc = plan_parts(q, poll, parts);
    /* No batch at all still asks the server once (for its server_time). */
    if (rc == 0 && parts[PART_FULL].n == 0 && parts[PART_RECENT].n == 0)
        rc = run_part(ctx, &project, q, &parts[PART_FULL], &tail);
    for (int i = 0; rc == 0 && i < NPARTS; i++)
        if (parts[i].n > 0)
            rc = run_part(ctx, &project, q, &parts[i], &tail);
    if (rc == 0)
        tail = answer(ctx, req, poll, parts);
    parts_free(parts);
    free(poll);
    return tail;
}
