/*
 * query.c - BOINC_QUERY_BATCHES, answered so that HTCondor 9.0's grid
 * manager can neither lose a status nor apply one to the wrong job
 * (issues 8 and 18; doc/protocol.md, "Status queries"):
 *
 *  - the server is asked incrementally: min_mod_time is a margin below the
 *    server_time of the last reply recorded for each requested batch (not
 *    the client's value), so a change in the same second as that
 *    server_time is not lost;
 *  - every status change seen is recorded in the journal (jobs.status) with
 *    the project's next change number (jobs.status_seq);
 *  - the client is handed that change number as the reply's server_time,
 *    and gets back, as its next partial query's min_mod_time, exactly the
 *    number it was given: the reply lists, for a batch the client knows as
 *    submitted in this session, only the jobs changed since then (the
 *    client applies a status line to whichever job has that cluster.proc,
 *    whatever the batch: an unchanged old status may belong to a job that
 *    was aborted and released into another batch);
 *  - a job named by BOINC_ABORT_JOBS is never listed again;
 *  - a batch the client may still be unsure of (not submitted or confirmed
 *    in this session) gets the FULL list of its jobs: its client resubmits
 *    a batch whose group is empty, confirms one whose group is not, and
 *    reads nothing after either.  Then the reply hands back the client's
 *    own number, so whatever that early stop dropped is listed again, and
 *    only a non-empty first such group is taken as read;
 *  - a batch the journal does not know gets the server's group as is.
 */
#include "exec/exec_cmds.h"

#include "journal/journal_requests.h"
#include "journal/journal_batches.h"
#include "base/log.h"
#include "base/num.h"
#include "wire/gahp_text.h"
#include "base/strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Server modification times have one-second resolution (and several web
 * servers may answer): ask again for everything modified since this many
 * seconds before the last recorded server_time.  What the client is told
 * does not repeat: only new changes take a new change number. */
#define QUERY_MARGIN_S 5

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

/* The protocol word of a server status and whether the status is one the
 * servers define: DONE and ERROR as they are, everything else (IN_PROGRESS,
 * UNSENT, unknown) IN_PROGRESS, in one pass of comparisons.  (The GAHP
 * protocol knows only IN_PROGRESS, DONE and ERROR: a job not sent yet or in
 * a state we do not know is still pending.) */
static const char *protocol_word(const char *s, int *known)
{
    *known = 1;
    switch (s[0]) {
    case 'D':
        if (strcmp(s, "DONE") == 0)
            return "DONE";
        break;
    case 'E':
        if (strcmp(s, "ERROR") == 0)
            return "ERROR";
        break;
    case 'I':
        if (strcmp(s, "IN_PROGRESS") == 0)
            return "IN_PROGRESS";
        break;
    case 'U':
        if (strcmp(s, "UNSENT") == 0)
            return "IN_PROGRESS";
        break;
    default:
        break;
    }
    *known = 0;
    return "IN_PROGRESS";
}

/* " <job> <status>" for one job line.  Runs once per job of a reply
 * (120,000 times for a 10 x 10,000 query): one reservation, no printf. */
static int put_job(strbuf *out, const char *name, const char *status)
{
    int known;
    const char *word = protocol_word(status, &known);
    if (!known)
        log_warn("query_batch2: job %s has unknown status %s; reported as "
                 "IN_PROGRESS", name, status);
    size_t n = strlen(name), wn = strlen(word);
    if (n > ((size_t)-1 - 2 - wn) / 2 || strbuf_reserve(out, 2 * n + 2 + wn) != 0)
        return -1;
    out->data[out->len++] = ' ';
    if (gahp_escape_append(out, name) != 0)    /* room reserved: no realloc */
        return -1;
    char *d = out->data + out->len;
    *d++ = ' ';
    memcpy(d, word, wn);
    d += wn;
    out->len = (size_t)(d - out->data);
    out->data[out->len] = '\0';
    return 0;
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

/* What put_journal_row needs: the reply's statuses, in the reply's order
 * and (built at the first row found out of that order) sorted by name. */
typedef struct {
    strbuf *out;
    const boinc_batch_status *bs;
    size_t next;                        /* the reply's job expected next */
    const boinc_job_status **index;     /* NULL until needed */
} journal_group;

/* The reply's status of job `name`: the server lists a batch's jobs in
 * the order they were submitted, which is the journal's row order, so the
 * job after the last one found is tried first; only a row out of that
 * order (a partial reply, a job the server did not list) looks it up by
 * name (the sorted index cost a qsort and a bsearch a job: 1,000
 * instructions a job, callgrind).  -1: out of memory. */
static int reply_status(journal_group *g, const char *name, const char **status)
{
    const boinc_batch_status *bs = g->bs;
    *status = NULL;
    if (g->next < bs->njobs && strcmp(bs->jobs[g->next].name, name) == 0) {
        *status = bs->jobs[g->next++].status;
        return 0;
    }
    if (g->index == NULL) {
        g->index = calloc(bs->njobs ? bs->njobs : 1, sizeof *g->index);
        if (g->index == NULL)
            return -1;
        for (size_t i = 0; i < bs->njobs; i++)
            g->index[i] = &bs->jobs[i];
        qsort(g->index, bs->njobs, sizeof *g->index, cmp_job_ptr);
    }
    boinc_job_status key = { 0 };
    const boinc_job_status *kp = &key;
    key.name = (char *)name;
    const boinc_job_status **hit = bsearch(&kp, g->index, bs->njobs, sizeof *g->index,
                                           cmp_job_ptr);
    if (hit != NULL) {
        *status = (*hit)->status;
        g->next = (size_t)(*hit - bs->jobs) + 1;
    }
    return 0;
}

/* One journal row straight into the reply (journal_job_visit_fn): the
 * server's status in this reply wins over the recorded one. */
static int put_journal_row(void *arg, const char *name, const char *status)
{
    journal_group *g = arg;
    const char *st;
    if (reply_status(g, name, &st) != 0)
        return 2;
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
 * The group of a batch from the journal's job rows (since < 0: every job
 * not aborted; else those changed after change number `since`), each
 * status overlaid with this reply's (the newest word on it), written
 * straight into out: no copy of the rows.  *n = jobs listed.  0, or -1
 * (ENOMEM, or the journal could not be read: *journal_failed set).
 */
static int put_journal_group(exec_ctx *ctx, long long project_id,
                             const char *batch, long long since,
                             const boinc_batch_status *bs, strbuf *out, size_t *n,
                             int *journal_failed)
{
    journal_group g = { out, bs, 0, NULL };
    size_t mark = out->len;
    *n = 0;
    int rc = journal_jobs_each(ctx->journal, project_id, batch, since, put_journal_row,
                               &g, n);
    free(g.index);
    if (rc != 0) {
        *journal_failed = rc != 2;
        return -1;
    }
    return insert_count(out, mark, *n) == 0 ? 0 : -1;
}

/* What one reply is built from, besides the server's groups. */
typedef struct {
    const journal_batch_poll *poll;     /* the journal's view of each batch */
    long long since;                    /* the client's change number, -1: all */
    int journal_failed;                 /* reading the journal failed */
    int early_stop;                     /* the client stops reading at a group */
} reply_plan;

/* Does the client know batch b as submitted in this session?  Only then
 * may its group list changes only (or be empty). */
static int client_knows(const exec_ctx *ctx, const journal_batch_poll *poll)
{
    return poll->njobs > 0 && ctx->session_id > 0 && poll->client_session == ctx->session_id;
}

/*
 * HTCondor 9.0 names a batch "condor#SCHEDD#APP#SECOND": two grid managers
 * of one user (GRIDMANAGER_SELECTION_EXPR) that start a batch of the same
 * app in the same second give both the same name, a BOINC server keeps
 * both, and a query by that name answers with one of them.  The other
 * batch's jobs then never change for its grid manager.  Seen with the
 * real HTCondor (tests/real/test_20_gridmanagers.py); the operator's
 * remedy is in doc/operating.md.  Noticed here: the server lists jobs of
 * a batch this journal knows, and the first of them is no job of ours.
 */
static void warn_if_shadowed(exec_ctx *ctx, long long project_id, const char *batch,
                             const boinc_batch_status *bs, const journal_batch_poll *poll)
{
    long long server_batch = 0;
    int found = 1;
    if (poll->njobs == 0 || bs->njobs == 0 ||
        journal_job_server_batch(ctx->journal, project_id, bs->jobs[0].name,
                                 &server_batch, &found) != 0 || found)
        return;
    log_warn("query_batch2: the server's batch named %s is not the one this journal "
             "submitted (its job %s is unknown here): another batch has the same name, "
             "as when two grid managers of one user submit the same app in the same "
             "second; see doc/operating.md, \"Several grid managers per user\"",
             batch, bs->jobs[0].name);
}

/*
 * One group per requested batch, in request order, after "NULL <token>".
 * The client reads no further than the first batch it may be unsure of
 * (its reply loop stops there: it confirms the batch by a non-empty group,
 * or resubmits it for an empty one): plan->early_stop is set there, and a
 * non-empty group is recorded as the client's.
 */
static char *format_groups(exec_ctx *ctx, const gahp_request *req, reply_plan *plan,
                           const boinc_query_result *r)
{
    strbuf out = STRBUF_INIT;
    int rc = 0;
    for (size_t b = 0; rc == 0 && b < r->nbatches; b++) {
        const boinc_batch_status *bs = &r->batches[b];
        const journal_batch_poll *poll = &plan->poll[b];
        int knows = client_knows(ctx, poll);
        size_t n = bs->njobs;
        warn_if_shadowed(ctx, req->project_id, req->u.query.batches[b], bs, poll);
        if (poll->njobs > 0)
            rc = put_journal_group(ctx, req->project_id, req->u.query.batches[b],
                                   knows ? plan->since : -1, bs, &out, &n,
                                   &plan->journal_failed);
        else
            rc = put_server_group(&out, bs);
        /* The client stops reading at the first batch it may be unsure
         * of, whether it confirms it (a non-empty group) or resubmits it
         * (an empty one): nothing after that group may be taken as read. */
        if (rc == 0 && !knows && !plan->early_stop) {
            plan->early_stop = 1;
            if (n > 0 && poll->njobs > 0 &&
                journal_batch_set_client_session(ctx->journal, req->project_id,
                                                  req->u.query.batches[b],
                                                  ctx->session_id) != 0)
                log_warn("query_batch2: could not record that the client has batch %s",
                         req->u.query.batches[b]);
        }
    }
    if (rc != 0) {
        strbuf_free(&out);
        return NULL;
    }
    return out.data != NULL ? strbuf_detach(&out) : strdup("");
}

/* Remember the statuses of one reply (for the batches `names`) where the
 * journal knows the batch.  A journal failure is logged and returns -1,
 * not an error result: the answer overlays the reply anyway, the client
 * is handed back its own change number, and the batch's recorded
 * server_time stays, so the next query asks the server again. */
static int record_statuses(exec_ctx *ctx, long long project_id,
                           const char *const *names, const boinc_query_result *r,
                           double server_time)
{
    if (ctx->journal == NULL || project_id <= 0)
        return 0;
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
        return -1;
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
    int rc = journal_jobs_record_statuses(ctx->journal, project_id, reports,
                                          r->nbatches, server_time, journal_now(),
                                          &changed);
    if (rc != 0)
        log_warn("query_batch2: job statuses not recorded in the journal");
    else
        log_debug("query_batch2: %lld job status change(s) recorded", changed);
    free(reports);
    free(jobs);
    return rc;
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
static int restore_batch_name(boinc_error *err, const char *const *names, size_t n)
{
    static const char marker[] = "no batch named ";
    char *at = err->code == BOINC_E_SERVER && err->msg != NULL
                   ? strstr(err->msg, marker) : NULL;
    if (at == NULL)
        return 0;
    const char *tail = at + sizeof marker - 1;
    const char *exact = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], tail) == 0)
            return 0;                   /* already exact */
    for (size_t i = 0; exact == NULL && i < n; i++)
        if (tail_names(tail, names[i]))
            exact = names[i];
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
static journal_batch_poll *load_poll_states(exec_ctx *ctx, long long project_id,
                                            const char *const *names, size_t n)
{
    journal_batch_poll *poll = calloc(n ? n : 1, sizeof *poll);
    if (poll == NULL || ctx->journal == NULL || project_id <= 0)
        return poll;
    for (size_t b = 0; b < n; b++)
        if (journal_jobs_poll_state(ctx->journal, project_id, names[b], &poll[b]) != 0)
            memset(&poll[b], 0, sizeof poll[b]);
    return poll;
}

/* A margin below t, whole seconds; 0 (= every job) when t is not > 0. */
static double with_margin(double t)
{
    return t > QUERY_MARGIN_S ? floor(t) - QUERY_MARGIN_S : 0;
}

/* min_mod_time batch b needs: the margin below the journal's last recorded
 * server_time; 0 (every job) when none, and for a batch the journal does
 * not serve (the client's value is a change number of ours, not a time). */
static double batch_min_mod_time(const journal_batch_poll *poll)
{
    if (poll->njobs > 0 && poll->has_server_time)
        return with_margin(poll->server_time);
    return 0;
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

static int plan_parts(const char *const *names, size_t n, const journal_batch_poll *poll,
                      query_part *parts)
{
    memset(parts, 0, NPARTS * sizeof *parts);
    for (int i = 0; i < NPARTS; i++) {
        parts[i].names = calloc(n ? n : 1, sizeof *parts[i].names);
        parts[i].pos = calloc(n ? n : 1, sizeof *parts[i].pos);
        if (parts[i].names == NULL || parts[i].pos == NULL)
            return -1;
    }
    parts[PART_RECENT].mmt = HUGE_VAL;
    for (size_t b = 0; b < n; b++) {
        double t = batch_min_mod_time(&poll[b]);
        query_part *p = &parts[t > 0 ? PART_RECENT : PART_FULL];
        if (t > 0 && t < p->mmt)
            p->mmt = t;
        p->names[p->n] = names[b];
        p->pos[p->n++] = b;
    }
    return 0;
}

/* The batches one query asks about, and the journal's view of each. */
typedef struct {
    const char *const *names;
    size_t n;
    journal_batch_poll *poll;
} query_batches_of;

/* Run one part: 0, or -1 with *e set. */
static int run_part(exec_ctx *ctx, const boinc_project *project, const query_batches_of *qb,
                    query_part *p, exec_err *e)
{
    char mmt[32];
    if (p->mmt > 0)
        snprintf(mmt, sizeof mmt, "%.0f", p->mmt);
    else
        snprintf(mmt, sizeof mmt, "0");
    log_debug("query_batch2: %zu batch(es), min_mod_time %s", p->n, mmt);
    boinc_error err = { 0 };
    int rc = 0;
    if (boinc_query_batch2(ctx->client, project, mmt, p->names, p->n, &p->r,
                           &err) != BOINC_OK) {
        /* The server's text stays last, so "no batch named NAME" ends the
         * message as HTCondor requires. */
        if (restore_batch_name(&err, qb->names, qb->n) != 0)
            exec_err_nomem(e);
        else
            exec_err_boinc(e, "query_batch2", &err);
        rc = -1;
    } else {
        const char *bad = p->r.nbatches != p->n ? "reply does not answer every batch"
                                                 : check_reply(&p->r);
        if (bad != NULL) {
            exec_err_set(e, EXEC_E_RPC, "query_batch2 failed", bad);
            rc = -1;
        }
    }
    boinc_error_clear(&err);
    return rc;
}

static double time_of(const char *server_time)
{
    double t = 0;
    if (num_parse_double(server_time, &t) != 0 || !isfinite(t))
        return 0;       /* recorded statuses, but no time: asks all next */
    return t;
}

/*
 * The change number the client sent as min_mod_time: a number this
 * journal handed out (at most the project's current one), or -1 (list
 * every job) for "0", for anything else (a server time from another
 * program) and for a number from the future (a journal restored from a
 * backup, say).
 */
static long long client_since(const char *min_mod_time, long long current)
{
    long long v;
    if (num_parse_llong(min_mod_time, &v) != 0 || v <= 0 || v > current)
        return -1;
    return v;
}

/* "NULL <token>" + groups: the token is the project's change number when
 * the client reads every group and everything seen was recorded, else the
 * client's own number back (so it is asked about the same changes again). */
static char *with_token(char *groups, const reply_plan *plan, int recorded, long long current)
{
    if (groups == NULL)
        return NULL;
    long long token = recorded && !plan->early_stop ? current
                      : plan->since > 0 ? plan->since : 0;
    /* Not str_printf("...%s", groups): vsnprintf copies a multi-megabyte
     * %s argument at about 35 instructions a byte (a tenth of a
     * 10 x 10,000-job query's CPU, seen with callgrind). */
    char head[32];
    int hn = snprintf(head, sizeof head, "NULL %lld", token);
    size_t glen = strlen(groups);
    char *tail = hn > 0 && (size_t)hn < sizeof head ? malloc((size_t)hn + glen + 1) : NULL;
    if (tail != NULL) {
        memcpy(tail, head, (size_t)hn);
        memcpy(tail + hn, groups, glen + 1);
    }
    free(groups);
    return tail;
}

/*
 * Record each part's statuses with its own server_time, and answer with
 * one group per requested batch, in request order.
 */
static char *answer(exec_ctx *ctx, const gahp_request *req,
                    const journal_batch_poll *poll, query_part *parts)
{
    const gahp_query_batches *q = &req->u.query;
    boinc_query_result merged = { NULL, q->nbatches, NULL };
    merged.batches = calloc(q->nbatches ? q->nbatches : 1, sizeof *merged.batches);
    if (merged.batches == NULL)
        return NULL;
    int recorded = 1;
    for (int i = 0; i < NPARTS; i++) {
        query_part *p = &parts[i];
        if (p->r.server_time == NULL)
            continue;
        if (record_statuses(ctx, req->project_id, p->names, &p->r,
                            time_of(p->r.server_time)) != 0)
            recorded = 0;
        for (size_t k = 0; k < p->n; k++)
            merged.batches[p->pos[k]] = p->r.batches[k];
    }
    /* Read after recording: every change numbered up to `current` is in
     * the rows read below (a later one is listed next time too). */
    long long current = 0;
    if (ctx->journal != NULL && req->project_id > 0 &&
        journal_project_status_seq(ctx->journal, req->project_id, &current) != 0)
        recorded = 0;
    reply_plan plan = { poll, client_since(q->min_mod_time, current), 0, 0 };
    char *tail = with_token(format_groups(ctx, req, &plan, &merged), &plan, recorded,
                            current);
    free(merged.batches);       /* the groups belong to the parts */
    if (tail == NULL && plan.journal_failed)
        return exec_error("query failed", "the journal could not be read");
    return tail;
}

/* Ask the server about the batches qb names (the journal's view loaded
 * into qb->poll first), in the parts plan_parts makes.  0, or -1 with *e
 * set; parts are the caller's to free either way. */
static int ask_server(exec_ctx *ctx, const exec_project *project, query_batches_of *qb,
                      query_part *parts, exec_err *e)
{
    memset(parts, 0, NPARTS * sizeof *parts);
    qb->poll = load_poll_states(ctx, project->journal_id, qb->names, qb->n);
    if (qb->poll == NULL || plan_parts(qb->names, qb->n, qb->poll, parts) != 0)
        return exec_err_nomem(e);
    boinc_project bp = { project->url, project->authenticator };
    /* No batch at all still asks the server once (for its server_time). */
    if (parts[PART_FULL].n == 0 && parts[PART_RECENT].n == 0)
        return run_part(ctx, &bp, qb, &parts[PART_FULL], e);
    for (int i = 0; i < NPARTS; i++)
        if (parts[i].n > 0 && run_part(ctx, &bp, qb, &parts[i], e) != 0)
            return -1;
    return 0;
}

int exec_refresh_batches(exec_ctx *ctx, const exec_project *project,
                         const char *const *names, size_t n, exec_err *e)
{
    query_part parts[NPARTS];
    query_batches_of qb = { names, n, NULL };
    int rc = ask_server(ctx, project, &qb, parts, e);
    /* A journal failure is logged (record_statuses) and is not the
     * refresh's: the batch's recorded server_time stays, so the next
     * refresh asks the server again. */
    for (int i = 0; rc == 0 && i < NPARTS; i++)
        if (parts[i].r.server_time != NULL)
            (void)record_statuses(ctx, project->journal_id, parts[i].names, &parts[i].r,
                                  time_of(parts[i].r.server_time));
    parts_free(parts);
    free(qb.poll);
    return rc;
}

/* BOINC_QUERY_BATCHES, the 9.0 face: the same asking and recording, and
 * the answer HTCondor 9.0 reads (the header of this file). */
char *exec_query_batches(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_query_batches *q = &req->u.query;
    exec_project project = exec_project_of(req);
    query_part parts[NPARTS];
    query_batches_of qb = { (const char *const *)q->batches, q->nbatches, NULL };
    exec_err e = { 0 };
    char *tail = ask_server(ctx, &project, &qb, parts, &e) == 0
        ? answer(ctx, req, qb.poll, parts) : exec_err_result(&e);
    parts_free(parts);
    free(qb.poll);
    return tail;
}
