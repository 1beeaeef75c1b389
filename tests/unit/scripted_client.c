/*
 * scripted_client.c - the scripted BOINC client of the unit tests (see
 * scripted_client.h).
 */
#include "scripted_client.h"

#include "boinc/boinc_internal.h"
#include "base/num.h"
#include "base/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const sc_kind_name[K_COUNT] = {
    "get_templates", "query_batches", "create_batch", "query_files+batch",
    "query_files", "upload_files", "query_batch", "submit_batch",
    "query_completed_job", "get_templates by job", "query_batch (job details)",
    "get_output", "query_batch2", "abort_jobs", "other",
};

const char *const sc_outcome_name[O_COUNT] = {
    "done", "not sent", "refused", "unknown (acted)", "unknown",
    "always unknown", "no memory before sending", "no memory for the reply", "limit",
    "unknown (acts late)",
};

const sc_failure sc_failure_of[O_COUNT] = {
    [O_NOT_SENT] = { BOINC_E_BADARG, 0, 0, "scripted: not sent" },
    [O_REFUSED] = { BOINC_E_SERVER, 0, 1, "scripted refusal" },
    [O_UNK_ACTED] = { BOINC_E_TRANSPORT, 0, 1, "scripted: reply lost" },
    [O_UNKNOWN] = { BOINC_E_HTTP, 502, 1, "scripted: bad gateway" },
    [O_ALWAYS_UNKNOWN] = { BOINC_E_HTTP, 502, 1, "scripted: bad gateway" },
    [O_NOMEM_BEFORE] = { BOINC_E_NOMEM, 0, 0, "scripted: no memory for the request" },
    [O_NOMEM_REPLY] = { BOINC_E_NOMEM, 200, 1, "scripted: no memory for the reply" },
    [O_LIMIT] = { BOINC_E_SERVER, 0, 1,
                  "# of uploaded files (1) doesn't agree with request (2)" },
    [O_UNK_LATE] = { BOINC_E_TRANSPORT, 0, 1, "scripted: timed out" },
};

int sc_acts(sc_outcome o)
{
    return o == O_DONE || o == O_UNK_ACTED || o == O_NOMEM_REPLY;
}

int sc_uncertain(sc_outcome o)
{
    return o == O_UNK_ACTED || o == O_UNKNOWN || o == O_ALWAYS_UNKNOWN ||
           o == O_NOMEM_REPLY || o == O_UNK_LATE;
}

void sc_world_init(sc_world *w, const char *const phys[SC_NFILES])
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    for (int i = 0; phys != NULL && i < SC_NFILES; i++)
        snprintf(w->phys[i], sizeof w->phys[i], "%s", phys[i]);
    w->present[0] = phys != NULL;
}

void sc_world_destroy(sc_world *w)
{
    pthread_mutex_destroy(&w->mu);
}

void sc_world_script(sc_world *w, const sc_fault *faults, size_t n)
{
    memset(w->faults, 0, sizeof w->faults);
    for (size_t i = 0; i < n && i < SC_MAX_FAULTS; i++)
        w->faults[i] = faults[i];
    memset(w->seen, 0, sizeof w->seen);
}

typedef struct {
    boinc_client base;  /* first: the interface */
    sc_world *w;
    int index;
    long long limit;    /* set_download_limit's (0: none) */
} scripted_client;

static sc_world *world_of(boinc_client *c, int *index)
{
    scripted_client *s = (scripted_client *)(void *)c;
    *index = s->index;
    return s->w;
}

static void violate(sc_world *w, const char *what)
{
    if (w->violations++ == 0)
        snprintf(w->violation, sizeof w->violation, "%s", what);
}

/* ---- the server's effects ---- */

static void add_batch(sc_world *w, long *id)
{
    if (w->nbatches >= SC_MAX_BATCHES)
        return;
    if (w->nbatches > 0)
        violate(w, "create_batch: a second batch of the same name");
    w->batch_id[w->nbatches] = 100 + (long)w->nbatches;
    if (id != NULL)
        *id = w->batch_id[w->nbatches];
    w->nbatches++;
}

static void add_file(sc_world *w, int f)
{
    if (f < 0 || w->present[f]) {
        violate(w, "upload_files of a file the server has");
        return;
    }
    w->present[f] = 1;
    w->uploads[f]++;
    w->assoc[f]++;
}

static void add_jobs(sc_world *w, int b, size_t njobs)
{
    if (b < 0 || w->batch_jobs[b] > 0)
        violate(w, "submit_batch into no batch, or a second time");
    else
        w->batch_jobs[b] = njobs;
    w->submits++;
}

/* An effect the server completes late (O_UNK_LATE): seen from the second
 * call after the one that caused it on. */
static void arm_late(sc_world *w, sc_kind k, unsigned files, int batch, size_t njobs)
{
    w->late_kind = k;
    w->late_countdown = 2;
    w->late_files = files;
    w->late_batch = batch;
    w->late_njobs = njobs;
}

static void apply_late(sc_world *w)
{
    if (w->late_countdown == 0 || --w->late_countdown > 0)
        return;
    if (w->late_kind == K_CREATE)
        add_batch(w, NULL);
    for (int f = 0; w->late_kind == K_UPLOAD && f < SC_NFILES; f++)
        if (w->late_files & (1u << f))
            add_file(w, f);
    if (w->late_kind == K_SUBMIT)
        add_jobs(w, w->late_batch, w->late_njobs);
}

/* Start a call: clear err, lock the world, record the call; its outcome. */
static sc_outcome begin(boinc_client *c, sc_kind k, boinc_error *err, sc_world **wp)
{
    int index;
    sc_world *w = *wp = world_of(c, &index);
    boinc_error_clear(err);
    pthread_mutex_lock(&w->mu);
    apply_late(w);
    int n = ++w->seen[k];
    sc_outcome o = O_DONE;
    for (size_t i = 0; i < SC_MAX_FAULTS; i++)
        if (w->faults[i].o != O_DONE && w->faults[i].kind == k &&
            (w->faults[i].nth == 0 || w->faults[i].nth == n))
            o = w->faults[i].o;
    if (w->ncalls < SC_MAX_CALLS)
        w->calls[w->ncalls++] = (sc_call){ k, o, index, 0, 0 };
    return o;
}

/* End a call (unlock): BOINC_OK, or the scripted failure of o. */
static int end(sc_world *w, sc_outcome o, boinc_error *err)
{
    pthread_mutex_unlock(&w->mu);
    if (o == O_DONE)
        return BOINC_OK;
    err->code = sc_failure_of[o].code;
    err->http_status = sc_failure_of[o].http;
    err->reached = sc_failure_of[o].reached;
    err->msg = strdup(sc_failure_of[o].msg);
    return err->code;
}

static int file_index(const sc_world *w, const char *phys)
{
    for (int i = 0; i < SC_NFILES; i++)
        if (strcmp(w->phys[i], phys) == 0)
            return i;
    return -1;
}

static int s_get_templates(boinc_client *c, const boinc_project *p, const char *app,
                           boinc_templates *out, boinc_error *err)
{
    (void)p;
    (void)app;
    sc_world *w;
    sc_outcome o = begin(c, K_TEMPLATES, err, &w);
    memset(out, 0, sizeof *out);
    if (o == O_DONE) {
        out->n_inputs = 1;
        out->input_names = calloc(1, sizeof *out->input_names);
        out->input_names[0] = strdup("in");
    }
    return end(w, o, err);
}

static int s_create_batch(boinc_client *c, const boinc_project *p, const char *name,
                          const char *app, double expire, long *id, boinc_error *err)
{
    (void)p;
    (void)name;
    (void)app;
    (void)expire;
    sc_world *w;
    sc_outcome o = begin(c, K_CREATE, err, &w);
    if (sc_acts(o))
        add_batch(w, o == O_DONE ? id : NULL);
    if (o == O_UNK_LATE)
        arm_late(w, K_CREATE, 0, -1, 0);
    return end(w, o, err);
}

static int s_query_batches(boinc_client *c, const boinc_project *p, boinc_batch_info **out,
                           size_t *n, boinc_error *err)
{
    (void)p;
    sc_world *w;
    sc_outcome o = begin(c, K_QUERY_BATCHES, err, &w);
    *out = NULL;
    *n = 0;
    if (o == O_DONE && w->nbatches > 0) {
        *out = calloc(w->nbatches, sizeof **out);
        for (size_t i = 0; i < w->nbatches; i++) {
            (*out)[i] = (boinc_batch_info){ .id = w->batch_id[i], .name = strdup(SC_BATCH),
                                            .app_name = strdup(SC_APP),
                                            .njobs = (long)w->batch_jobs[i] };
        }
        *n = w->nbatches;
    }
    return end(w, o, err);
}

/* The model's batch with this id, or -1. */
static int batch_index(const sc_world *w, long id)
{
    for (size_t i = 0; i < w->nbatches; i++)
        if (w->batch_id[i] == id)
            return (int)i;
    return -1;
}

static int s_query_files(boinc_client *c, const boinc_project *p, long batch_id,
                         const char *const *names, size_t n, unsigned char *absent,
                         boinc_error *err)
{
    (void)p;
    sc_world *w;
    sc_outcome o = begin(c, batch_id > 0 ? K_QUERY_FILES : K_QUERY_FILES_SAFE, err, &w);
    for (size_t i = 0; i < n; i++) {
        int f = file_index(w, names[i]);
        if (f < 0) {
            violate(w, "query_files: a file of no job");
            continue;
        }
        if (sc_acts(o) && batch_id > 0 && w->present[f] && w->assoc[f]++ > 0)
            violate(w, "query_files with the batch id twice for one file");
        if (o == O_DONE)
            absent[i] = !w->present[f];
    }
    return end(w, o, err);
}

static int s_upload_files(boinc_client *c, const boinc_project *p, long batch_id,
                          const char *const *names, const boinc_upload_src *src, size_t n,
                          boinc_error *err)
{
    (void)p;
    (void)src;
    sc_world *w;
    sc_outcome o = begin(c, K_UPLOAD, err, &w);
    if (sc_acts(o) && batch_index(w, batch_id) < 0)
        violate(w, "upload_files into no batch");
    unsigned files = 0;
    for (size_t i = 0; i < n; i++) {
        int f = file_index(w, names[i]);
        if (sc_acts(o))
            add_file(w, f);
        else if (f >= 0)
            files |= 1u << f;
    }
    if (o == O_UNK_LATE)
        arm_late(w, K_UPLOAD, files, -1, 0);
    return end(w, o, err);
}

static int s_submit_batch(boinc_client *c, const boinc_project *p, long batch_id,
                          const char *app, const gahp_job_params *params,
                          const boinc_job_spec *jobs, size_t njobs, boinc_error *err)
{
    (void)p;
    (void)app;
    (void)params;
    (void)jobs;
    sc_world *w;
    sc_outcome o = begin(c, K_SUBMIT, err, &w);
    int b = batch_index(w, batch_id);
    if (sc_acts(o))
        add_jobs(w, b, njobs);
    if (o == O_UNK_LATE)
        arm_late(w, K_SUBMIT, 0, b, njobs);
    return end(w, o, err);
}

static int s_query_batch_jobs(boinc_client *c, const boinc_project *p, long batch_id,
                              char ***names, size_t *n, boinc_error *err)
{
    (void)p;
    sc_world *w;
    sc_outcome o = begin(c, K_QUERY_BATCH, err, &w);
    int b = batch_index(w, batch_id);
    *names = NULL;
    *n = 0;
    if (o == O_DONE && b >= 0 && w->batch_jobs[b] > 0) {
        *n = w->batch_jobs[b];
        *names = calloc(*n, sizeof **names);
        for (size_t i = 0; i < *n; i++)
            (*names)[i] = strdup("job");
    }
    return end(w, o, err);
}

/* End a call (unlock) with a failure of the model's own. */
static int fail_with(sc_world *w, boinc_error *err, boinc_code code, int reached,
                     const char *msg)
{
    pthread_mutex_unlock(&w->mu);
    boinc_fail(err, code, 0, "%s", msg);
    err->reached = reached;
    return code;
}

/* ---- fetch: finished jobs, the app's template, get_output ---- */

static const sc_fjob *fjob_find(const sc_world *w, const char *name)
{
    for (size_t i = 0; i < w->nfjobs; i++)
        if (strcmp(w->fjobs[i].name, name) == 0)
            return &w->fjobs[i];
    return NULL;
}

static int s_get_templates_for_job(boinc_client *c, const boinc_project *p, const char *job,
                                   boinc_templates *out, boinc_error *err)
{
    (void)p;
    sc_world *w;
    sc_outcome o = begin(c, K_TEMPLATES_JOB, err, &w);
    memset(out, 0, sizeof *out);
    if (o != O_DONE)
        return end(w, o, err);
    if (fjob_find(w, job) == NULL)
        return fail_with(w, err, BOINC_E_SERVER, 1, "job not found");
    out->n_outputs = w->noutputs;
    if (w->noutputs > 0) {
        out->output_names = calloc(w->noutputs, sizeof *out->output_names);
        out->output_max_nbytes = calloc(w->noutputs, sizeof *out->output_max_nbytes);
        if (out->output_names == NULL || out->output_max_nbytes == NULL) {
            boinc_templates_free(out);
            return fail_with(w, err, BOINC_E_NOMEM, 1, "out of memory");
        }
        for (size_t i = 0; i < w->noutputs; i++) {
            out->output_names[i] = strdup(w->outputs[i].name);
            out->output_max_nbytes[i] = w->outputs[i].max_nbytes;
        }
    }
    return end(w, o, err);
}

static int s_query_completed_job(boinc_client *c, const boinc_project *p, const char *job,
                                 boinc_completed_job *out, boinc_error *err)
{
    (void)p;
    sc_world *w;
    sc_outcome o = begin(c, K_COMPLETED, err, &w);
    memset(out, 0, sizeof *out);
    if (o != O_DONE)
        return end(w, o, err);
    const sc_fjob *j = fjob_find(w, job);
    if (j == NULL)
        return fail_with(w, err, BOINC_E_SERVER, 1, "no such job");
    if (j->completed_broken)
        return fail_with(w, err, BOINC_E_PARSE, 1,
                         "server error: Fatal error: Uncaught Error: scripted");
    out->canonical_resultid = j->canonical_resultid;
    out->error_mask = j->error_mask;
    out->has_exit_status = j->has_exit_status;
    out->exit_status = j->exit_status;
    out->elapsed_time = j->elapsed;
    out->cpu_time = j->cpu;
    out->stderr_out = j->stderr_out != NULL ? strdup(j->stderr_out) : NULL;
    return end(w, o, err);
}

static int s_query_job_detail(boinc_client *c, const boinc_project *p, long batch_id,
                              const char *job, boinc_job_detail *out, int *found,
                              boinc_error *err)
{
    (void)p;
    sc_world *w;
    sc_outcome o = begin(c, K_JOB_DETAIL, err, &w);
    memset(out, 0, sizeof *out);
    *found = 0;
    if (o != O_DONE)
        return end(w, o, err);
    if (batch_id != w->detail_batch_id)
        return fail_with(w, err, BOINC_E_SERVER, 1, "no such batch");
    const sc_fjob *j = fjob_find(w, job);
    if (j != NULL) {
        *found = 1;
        out->canonical_instance_id = j->canonical_resultid;
        out->status = j->detail_status != NULL ? strdup(j->detail_status) : NULL;
        if (j->detail_exit >= 0) {
            out->exit_statuses = calloc(1, sizeof *out->exit_statuses);
            if (out->exit_statuses != NULL) {
                out->exit_statuses[0] = j->detail_exit;
                out->n_exit = 1;
            }
        }
    }
    return end(w, o, err);
}

/* Write n bytes of data to fd.  0, or an errno value. */
static int write_bytes(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, data, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        data += k;
        n -= (size_t)k;
    }
    return 0;
}

/* get_output of one output of a finished job, as the libcurl client
 * reports it (boinc_http.c: get_verdict), except that the bytes a failed
 * download wrote stay in fd (see the header). */
static int s_get_output_file(boinc_client *c, const boinc_project *p, const char *job,
                             int file_num, int fd, long long *nbytes, boinc_error *err)
{
    (void)p;
    scripted_client *s = (scripted_client *)(void *)c;
    sc_world *w;
    sc_outcome o = begin(c, K_GET_OUTPUT, err, &w);
    if (w->ncalls > 0) {
        w->calls[w->ncalls - 1].file_num = file_num;
        w->calls[w->ncalls - 1].limit = s->limit;
    }
    *nbytes = 0;
    const sc_fjob *j = fjob_find(w, job);
    const sc_output *out = file_num >= 0 && (size_t)file_num < w->noutputs
                               ? &w->outputs[file_num] : NULL;
    if (o != O_DONE) {
        if (out != NULL)        /* the transfer broke off half way */
            write_bytes(fd, out->data, out->len / 2);
        return end(w, o, err);
    }
    if (j == NULL || j->canonical_resultid == 0)
        return fail_with(w, err, BOINC_E_SERVER, 1, "no canonical result");
    if (out == NULL)
        return fail_with(w, err, BOINC_E_SERVER, 1, "bad file_num");
    char msg[200];
    size_t len = out->len;
    long long declared = out->declared >= 0 ? out->declared : (long long)len;
    if (s->limit > 0 && (long long)len > s->limit) {
        write_bytes(fd, out->data, (size_t)s->limit);
        snprintf(msg, sizeof msg, "get_output: output file larger than the limit of %lld "
                 "bytes (--max-output-bytes / --max-fetch-bytes / the template's "
                 "max_nbytes)", s->limit);
        return fail_with(w, err, BOINC_E_IO, 1, msg);
    }
    int e = write_bytes(fd, out->data, len);
    if (e != 0) {
        snprintf(msg, sizeof msg, "get_output: cannot write the output file: %s",
                 strerror(e));
        return fail_with(w, err, BOINC_E_IO, 1, msg);
    }
    if ((long long)len < declared) {
        snprintf(msg, sizeof msg, "get_output: body shorter than Content-Length "
                 "(%zu of %lld bytes)", len, declared);
        return fail_with(w, err, BOINC_E_TRANSPORT, 1, msg);
    }
    if ((long long)len != declared) {
        snprintf(msg, sizeof msg, "get_output: got %zu bytes, Content-Length said %lld",
                 len, declared);
        return fail_with(w, err, BOINC_E_TRANSPORT, 1, msg);
    }
    *nbytes = (long long)len;
    return end(w, o, err);
}

static void s_set_download_limit(boinc_client *c, long long max_bytes)
{
    scripted_client *s = (scripted_client *)(void *)c;
    s->limit = max_bytes > 0 ? max_bytes : 0;
}

/* ---- query: batches and their jobs' statuses ---- */

sc_qbatch *sc_qbatch_find(sc_world *w, const char *name)
{
    for (size_t i = 0; i < SC_MAX_QBATCHES; i++)
        if (w->qbatches[i].name != NULL && strcmp(w->qbatches[i].name, name) == 0)
            return &w->qbatches[i];
    return NULL;
}

void sc_qjob_set(sc_world *w, const char *batch, const char *job, const char *status)
{
    sc_qbatch *b = sc_qbatch_find(w, batch);
    for (size_t i = 0; b != NULL && i < b->njobs; i++)
        if (strcmp(b->jobs[i].name, job) == 0) {
            b->jobs[i].status = status;
            b->jobs[i].mod_time = w->server_time;
        }
}

int sc_count(const sc_world *w, sc_kind k)
{
    int n = 0;
    for (size_t i = 0; i < w->ncalls; i++)
        n += w->calls[i].kind == k;
    return n;
}

/* query_batch2: for each name, its jobs modified after min_mod_time (all
 * for 0), in submit order; an unknown name fails the call with the
 * server's words, squashed to one line as the libcurl client does. */
static int s_query_batch2(boinc_client *c, const boinc_project *p, const char *mmt,
                          const char *const *names, size_t n, boinc_query_result *out,
                          boinc_error *err)
{
    (void)p;
    sc_world *w;
    sc_outcome o = begin(c, K_QUERY2, err, &w);
    memset(out, 0, sizeof *out);
    if (w->nq2 < SC_MAX_Q2) {
        sc_q2call *q = &w->q2[w->nq2++];
        snprintf(q->mmt, sizeof q->mmt, "%s", mmt);
        size_t at = 0;
        for (size_t i = 0; i < n && at < sizeof q->names; i++) {
            int k = snprintf(q->names + at, sizeof q->names - at, "%s%s", i ? " " : "",
                             names[i]);
            at += k > 0 ? (size_t)k : 0;
        }
    }
    if (o != O_DONE)
        return end(w, o, err);
    /* the client sends a number it formatted itself: anything else is a
     * defect the test must see, not a 0 as atoll would make it */
    long long since;
    if (num_parse_llong(mmt, &since) != 0)
        return fail_with(w, err, BOINC_E_SERVER, 1, "min_mod_time is not a number");
    for (size_t i = 0; i < n; i++) {
        if (sc_qbatch_find(w, names[i]) != NULL)
            continue;
        char *raw = str_printf("no batch named %s", names[i]);
        char *msg = raw != NULL ? boinc_one_line(raw) : NULL;
        int rc = fail_with(w, err, BOINC_E_SERVER, 1, msg != NULL ? msg : "out of memory");
        free(raw);
        free(msg);
        return rc;
    }
    char st[32];
    snprintf(st, sizeof st, "%lld", w->server_time);
    out->server_time = strdup(w->q2_no_time ? "" : st);
    out->nbatches = w->q2_short && n > 0 ? n - 1 : n;
    out->batches = calloc(n ? n : 1, sizeof *out->batches);
    for (size_t i = 0; out->batches != NULL && i < out->nbatches; i++) {
        const sc_qbatch *b = sc_qbatch_find(w, names[i]);
        boinc_batch_status *bs = &out->batches[i];
        bs->jobs = calloc(b->njobs ? b->njobs : 1, sizeof *bs->jobs);
        for (size_t k = 0; bs->jobs != NULL && k < b->njobs; k++) {
            if (since > 0 && b->jobs[k].mod_time <= since)
                continue;
            boinc_job_status *js = &bs->jobs[bs->njobs++];
            js->name = boinc_strpool_copy(&bs->strings, b->jobs[k].name,
                                          strlen(b->jobs[k].name));
            js->status = boinc_strpool_copy(&bs->strings, b->jobs[k].status,
                                            strlen(b->jobs[k].status));
        }
    }
    return end(w, o, err);
}

/* abort_jobs: each named job of a batch becomes ERROR, modified now. */
static int s_abort_jobs(boinc_client *c, const boinc_project *p, const char *const *jobs,
                        size_t n, boinc_error *err)
{
    (void)p;
    sc_world *w;
    sc_outcome o = begin(c, K_ABORT, err, &w);
    for (size_t i = 0; o == O_DONE && i < n; i++)
        for (size_t b = 0; b < SC_MAX_QBATCHES; b++)
            if (w->qbatches[b].name != NULL)
                sc_qjob_set(w, w->qbatches[b].name, jobs[i], "ERROR");
    return end(w, o, err);
}

/* What neither a submit, a fetch nor a query calls: recorded, and
 * answered "not sent". */
static int unscripted(boinc_client *c, boinc_error *err)
{
    sc_world *w;
    begin(c, K_OTHER, err, &w);
    return end(w, O_NOT_SENT, err);
}

static int s_ping(boinc_client *c, const boinc_project *p, boinc_error *err)
{
    (void)p;
    return unscripted(c, err);
}

static int s_retire_batch(boinc_client *c, const boinc_project *p, const char *batch,
                          boinc_error *err)
{
    (void)p;
    (void)batch;
    return unscripted(c, err);
}

static int s_set_expire_time(boinc_client *c, const boinc_project *p, const char *batch,
                             double expire, boinc_error *err)
{
    (void)p;
    (void)batch;
    (void)expire;
    return unscripted(c, err);
}

static void s_free(boinc_client *c)
{
    free(c);
}

static const boinc_client_ops scripted_ops = {
    .name = "scripted",
    .ping = s_ping,
    .get_templates = s_get_templates,
    .get_templates_for_job = s_get_templates_for_job,
    .create_batch = s_create_batch,
    .submit_batch = s_submit_batch,
    .query_batch2 = s_query_batch2,
    .query_completed_job = s_query_completed_job,
    .abort_jobs = s_abort_jobs,
    .retire_batch = s_retire_batch,
    .set_expire_time = s_set_expire_time,
    .query_batches = s_query_batches,
    .query_batch_jobs = s_query_batch_jobs,
    .query_job_detail = s_query_job_detail,
    .query_files = s_query_files,
    .upload_files = s_upload_files,
    .get_output_file = s_get_output_file,
    .set_download_limit = s_set_download_limit,
    .free = s_free,
};

/* The client source handed to the executor context: each context (the
 * worker's, a helper lane's) gets a client of its own on one sc_world. */
static boinc_client *make_scripted(const gahp_config *cfg, void *arg)
{
    (void)cfg;
    sc_world *w = arg;
    scripted_client *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->base.ops = &scripted_ops;
    s->w = w;
    pthread_mutex_lock(&w->mu);
    s->index = ++w->clients;
    pthread_mutex_unlock(&w->mu);
    return &s->base;
}

exec_client_source sc_source(sc_world *w)
{
    return (exec_client_source){ make_scripted, w };
}
