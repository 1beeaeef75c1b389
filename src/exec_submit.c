/*
 * exec_submit.c - BOINC_SUBMIT: a batch of jobs onto a BOINC project, with
 * content-addressed inputs, journaled step by step so it can be resumed.
 *
 * Steps (doc/commands.md, doc/recovery.md):
 *   1. hash: stat every local input (a missing one fails before anything
 *      happens on the server), MD5 through the journal's cache keyed by
 *      (path, size, mtime, inode), physical name = md5 + extension;
 *      the batch's distinct files are journaled (state hashed).
 *   2. get_templates: the app exists and every job has its input count.
 *   3. create_batch (step create_sent before, created + server id after).
 *   4. query_files with the batch id, in chunks (files query_sent before,
 *      absent/confirmed after), then upload_files of the absent ones in
 *      chunks bounded by count and bytes (upload_sent, uploaded).
 *   5. submit_batch into the created batch (submit_sent, submitted + jobs).
 *
 * A "*_sent" state whose reply never arrived (transport error, or a crash)
 * is resolved by asking the server with a request that is safe to repeat
 * before anything is sent again: query_batches for create_batch,
 * query_files WITHOUT batch id for query_files/upload_files, query_batch
 * for submit_batch.  So no batch is created twice, no job submitted twice,
 * no file uploaded twice (a real server treats the latter two as fatal).
 *
 * Re-issue binding: a submit whose (project, batch name) the journal knows
 * is answered from the journal when submitted, attached to the running
 * submit when one is in progress in this process, and resumed from its
 * recorded step otherwise; different jobs under the same name are refused.
 */
#include "exec_submit.h"

#include "files.h"
#include "journal_submit.h"
#include "log.h"
#include "protocol.h"
#include "strbuf.h"
#include "strset.h"
#include "submit_deadline.h"
#include "submit_identity.h"
#include "testpoint.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Request size bounds for job_file.php (real servers run with PHP limits
 * of tens of MB per POST). */
#define QUERY_CHUNK_FILES   1000
#define UPLOAD_CHUNK_FILES  200
#define UPLOAD_CHUNK_BYTES  (32LL * 1024 * 1024)
/* Attempts for a step whose earlier attempt had an unknown outcome. */
#define STEP_ATTEMPTS       3
/* A reply lost to a timeout (or a crash right after sending) may belong to
 * a request the server is still working on.  Before concluding that it had
 * no effect, the server is asked again after pauses of 1 s, 2 s, ... */
#define SETTLE_LOOKS        2

/* ---- in-process registry of running submits (re-issue attaches) -------- */

typedef struct active_submit {
    long long project_id;
    char *name;
    int done;
    char *result;              /* result tail of the owner, once done */
    int refs;                  /* owner + waiters */
    struct active_submit *next;
} active_submit;

static pthread_mutex_t active_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t active_cv = PTHREAD_COND_INITIALIZER;
static active_submit *active_list;

/* The file phase (query_files + upload_files) of all submits runs one at a
 * time: two batches sharing a new input must not both see it absent and
 * both upload it (a real server fails the second upload). */
static pthread_mutex_t file_phase_mu = PTHREAD_MUTEX_INITIALIZER;

static void active_unref_locked(active_submit *a)
{
    if (--a->refs > 0)
        return;
    for (active_submit **pp = &active_list; *pp; pp = &(*pp)->next) {
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    }
    free(a->name);
    free(a->result);
    free(a);
}

/*
 * Wait (holding a reference, with active_mu held) until a is done or
 * `until` (NULL = no limit) passes; returns a copy of its result, or NULL
 * with *timed_out = 1, or NULL on ENOMEM.  Drops the reference.
 */
static char *wait_done_locked(active_submit *a, const struct timespec *until,
                              int *timed_out)
{
    *timed_out = 0;
    while (!a->done && !*timed_out) {
        if (until == NULL)
            pthread_cond_wait(&active_cv, &active_mu);
        else if (pthread_cond_timedwait(&active_cv, &active_mu, until) == ETIMEDOUT)
            *timed_out = !a->done;
    }
    char *copy = *timed_out ? NULL : strdup(a->result ? a->result : "NULL");
    active_unref_locked(a);
    return copy;
}

/*
 * Either register the caller as the owner of (project, name) and return
 * NULL with *owner set, or wait (until `until`) for the running owner and
 * return a copy of its result.  *oom is set when memory ran out,
 * *timed_out when the owner was still running at `until`.
 */
static char *active_enter(long long project_id, const char *name,
                          const struct timespec *until, active_submit **owner,
                          int *oom, int *timed_out)
{
    *owner = NULL;
    *oom = 0;
    *timed_out = 0;
    pthread_mutex_lock(&active_mu);
    active_submit *a = active_list;
    while (a && !(a->project_id == project_id && strcmp(a->name, name) == 0 && !a->done))
        a = a->next;
    if (a != NULL) {
        a->refs++;
        char *copy = wait_done_locked(a, until, timed_out);
        pthread_mutex_unlock(&active_mu);
        if (copy == NULL && !*timed_out)
            *oom = 1;
        return copy;
    }
    a = calloc(1, sizeof *a);
    if (a == NULL || (a->name = strdup(name)) == NULL) {
        free(a);
        pthread_mutex_unlock(&active_mu);
        *oom = 1;
        return NULL;
    }
    a->project_id = project_id;
    a->refs = 1;
    a->next = active_list;
    active_list = a;
    *owner = a;
    pthread_mutex_unlock(&active_mu);
    return NULL;
}

static void active_leave(active_submit *a, const char *result)
{
    pthread_mutex_lock(&active_mu);
    a->result = result ? strdup(result) : NULL;
    a->done = 1;
    pthread_cond_broadcast(&active_cv);
    active_unref_locked(a);
    pthread_mutex_unlock(&active_mu);
}

/* ---- one submit run ------------------------------------------------------ */

typedef struct {
    exec_ctx *ctx;
    const gahp_request *req;
    const gahp_submit *s;
    boinc_project project;
    journal_batch batch;
    size_t ninputs;             /* inputs over all jobs */
    char **input_phys;          /* phys name of each input, job order */
    char *error;                /* escaped result token once failed */
} submit_run;

static void run_free(submit_run *r)
{
    for (size_t i = 0; i < r->ninputs; i++)
        free(r->input_phys ? r->input_phys[i] : NULL);
    free(r->input_phys);
    journal_batch_free(&r->batch);
    free(r->error);
}

/* Record a failure: the error token for the client, and (when a batch row
 * exists) step failed + the step to resume from. */
static int fail_with(submit_run *r, const char *resume_step, char *token)
{
    if (token == NULL)
        token = gahp_escape("out of memory");
    free(r->error);
    r->error = token;
    /* The journal keeps the error exactly as the client was given it. */
    if (r->batch.id > 0 && resume_step != NULL)
        journal_batch_set_failed(r->ctx->journal, r->batch.id, resume_step, token);
    return -1;
}

static int fail_msg(submit_run *r, const char *resume_step, const char *step,
                    const char *detail)
{
    return fail_with(r, resume_step, exec_error(step, detail));
}

static int fail_msgf(submit_run *r, const char *resume_step, const char *step,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail_msgf(submit_run *r, const char *resume_step, const char *step,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *detail = str_vprintf(fmt, ap);
    va_end(ap);
    int rc = fail_msg(r, resume_step, step, detail ? detail : "(out of memory)");
    free(detail);
    return rc;
}

static int fail_boinc(submit_run *r, const char *resume_step, const char *step,
                      const boinc_error *err)
{
    return fail_with(r, resume_step, exec_boinc_error(step, err));
}

static int fail_journal(submit_run *r)
{
    return fail_msg(r, NULL, "journal write failed", journal_errmsg(r->ctx->journal));
}

static void settle_pause(int look)
{
    struct timespec ts = { look + 1, 0 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A reply that says the server did NOT act: the step can be redone. */
static int server_refused(const boinc_error *err)
{
    return err->code == BOINC_E_SERVER || err->code == BOINC_E_BADARG ||
           err->code == BOINC_E_IO || err->code == BOINC_E_NOMEM;
}

/* The step we are at: a failed batch resumes at its failed_step. */
static const char *effective_step(const journal_batch *b)
{
    if (strcmp(b->step, BATCH_FAILED) == 0 && b->failed_step != NULL)
        return b->failed_step;
    return b->step;
}

static int step_is(const journal_batch *b, const char *step)
{
    return strcmp(effective_step(b), step) == 0;
}

static int reload_batch(submit_run *r)
{
    int found = 0;
    char *name = strdup(r->s->batch);
    if (name == NULL)
        return fail_msg(r, NULL, "out of memory", NULL);
    journal_batch_free(&r->batch);
    int rc = journal_batch_find(r->ctx->journal, r->req->project_id, name,
                                &r->batch, &found);
    free(name);
    if (rc != 0 || !found)
        return fail_journal(r);
    return 0;
}

static int set_step(submit_run *r, const char *step, long long server_batch_id)
{
    if (journal_batch_set_step(r->ctx->journal, r->batch.id, step, server_batch_id) != 0)
        return fail_journal(r);
    return reload_batch(r);
}

/* ---- step 1: hash ---------------------------------------------------------- */

static char *absolute_path(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    size_t cap = 256;
    for (;;) {
        char *buf = malloc(cap);
        if (buf == NULL)
            return NULL;
        if (getcwd(buf, cap) != NULL) {
            char *abs = str_printf("%s/%s", buf, path);
            free(buf);
            return abs;
        }
        free(buf);
        if (errno != ERANGE || cap > (1u << 20))
            return NULL;
        cap *= 2;
    }
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* MD5 of one local file through the journal's cache. */
static int hash_one(submit_run *r, const char *path, char md5[33], long long *size,
                    files_stat_key *new_key, int *hashed)
{
    files_stat_key key;
    char *msg = NULL;
    *hashed = 0;
    if (files_stat(path, &key, &msg) != 0) {
        int rc = fail_msg(r, NULL, "input file", msg ? msg : path);
        free(msg);
        return rc;
    }
    int hit = 0;
    if (journal_md5_lookup(r->ctx->journal, &key, md5, &hit) != 0) {
        files_stat_key_free(&key);
        return fail_journal(r);
    }
    *size = key.size;
    files_stat_key_free(&key);
    if (hit)
        return 0;
    if (files_md5_hex_keyed(path, md5, size, new_key, &msg) != 0) {
        int rc = fail_msg(r, NULL, "input file", msg ? msg : path);
        free(msg);
        return rc;
    }
    *hashed = 1;
    return 0;
}

typedef struct {
    strset *seen;               /* distinct local paths */
    char **paths;               /* distinct absolute paths */
    char (*md5)[33];
    long long *sizes;
    size_t n, cap;
} path_table;

static void path_table_free(path_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->paths[i]);
    free(t->paths);
    free(t->md5);
    free(t->sizes);
    strset_free(t->seen);
}

static long path_table_find(const path_table *t, const char *path)
{
    /* Linear scans would be quadratic for 10,000 inputs: the strset answers
     * "seen?" and the index is found only for the (few) repeats, by scan
     * from the end where recent repeats are. */
    if (!strset_contains(t->seen, path))
        return -1;
    for (size_t i = t->n; i-- > 0;) {
        if (strcmp(t->paths[i], path) == 0)
            return (long)i;
    }
    return -1;
}

/*
 * Hash every input, fill r->input_phys, and journal the batch's distinct
 * files.  Files read are counted in *nread (the benchmark reports it).
 */
static int hash_inputs(submit_run *r, size_t *nread)
{
    const gahp_submit *s = r->s;
    path_table t = { 0 };
    files_stat_key *new_keys = NULL;
    char **new_md5 = NULL;
    size_t nnew = 0;
    int rc = -1;
    *nread = 0;

    for (size_t i = 0; i < s->njobs; i++)
        r->ninputs += s->jobs[i].ninputs;
    r->input_phys = calloc(r->ninputs ? r->ninputs : 1, sizeof *r->input_phys);
    t.seen = strset_new(r->ninputs);
    t.cap = r->ninputs ? r->ninputs : 1;
    t.paths = calloc(t.cap, sizeof *t.paths);
    t.md5 = calloc(t.cap, sizeof *t.md5);
    t.sizes = calloc(t.cap, sizeof *t.sizes);
    new_keys = calloc(t.cap, sizeof *new_keys);
    new_md5 = calloc(t.cap, sizeof *new_md5);
    if (!r->input_phys || !t.seen || !t.paths || !t.md5 || !t.sizes || !new_keys || !new_md5) {
        fail_msg(r, NULL, "out of memory", NULL);
        goto out;
    }

    size_t k = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        for (size_t f = 0; f < s->jobs[i].ninputs; f++, k++) {
            const char *src = s->jobs[i].inputs[f].src_path;
            char *abs = absolute_path(src);
            if (abs == NULL) {
                fail_msg(r, NULL, "input file", src);
                goto out;
            }
            long idx = path_table_find(&t, abs);
            if (idx < 0) {
                int hashed = 0;
                idx = (long)t.n;
                if (hash_one(r, abs, t.md5[idx], &t.sizes[idx], &new_keys[nnew], &hashed) != 0) {
                    free(abs);
                    goto out;
                }
                if (hashed) {
                    new_md5[nnew++] = t.md5[idx];
                    (*nread)++;
                }
                if (strset_add(t.seen, abs) < 0) {
                    free(abs);
                    fail_msg(r, NULL, "out of memory", NULL);
                    goto out;
                }
                t.paths[t.n++] = abs;
            } else {
                free(abs);
            }
            r->input_phys[k] = files_phys_name(t.md5[idx], base_name(src));
            if (r->input_phys[k] == NULL) {
                fail_msg(r, NULL, "input file", "cannot form a physical name");
                goto out;
            }
        }
    }

    const files_stat_key **keyp = calloc(nnew ? nnew : 1, sizeof *keyp);
    if (keyp == NULL) {
        fail_msg(r, NULL, "out of memory", NULL);
        goto out;
    }
    for (size_t i = 0; i < nnew; i++)
        keyp[i] = &new_keys[i];
    int src = journal_md5_store(r->ctx->journal, keyp, (const char *const *)new_md5, nnew);
    free(keyp);
    if (src != 0) {
        fail_journal(r);
        goto out;
    }

    /* The batch's distinct physical files, in first-use order. */
    journal_batch_file *bf = calloc(t.n ? t.n : 1, sizeof *bf);
    strset *phys_seen = strset_new(t.n);
    if (bf == NULL || phys_seen == NULL) {
        free(bf);
        strset_free(phys_seen);
        fail_msg(r, NULL, "out of memory", NULL);
        goto out;
    }
    size_t nbf = 0;
    k = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        for (size_t f = 0; f < s->jobs[i].ninputs; f++, k++) {
            int added = strset_add(phys_seen, r->input_phys[k]);
            if (added <= 0)
                continue;
            char *abs = absolute_path(s->jobs[i].inputs[f].src_path);
            long idx = abs ? path_table_find(&t, abs) : -1;
            free(abs);
            if (idx < 0 || nbf == t.n)
                continue;
            bf[nbf].phys_name = r->input_phys[k];
            bf[nbf].local_path = t.paths[idx];
            bf[nbf].size = t.sizes[idx];
            nbf++;
        }
    }
    int arc = journal_batch_files_add(r->ctx->journal, r->batch.id, bf, nbf);
    free(bf);
    strset_free(phys_seen);
    if (arc != 0) {
        fail_journal(r);
        goto out;
    }
    rc = 0;
out:
    for (size_t i = 0; i < nnew; i++)
        files_stat_key_free(&new_keys[i]);
    free(new_keys);
    free(new_md5);
    path_table_free(&t);
    return rc;
}

/* ---- step 2: templates ----------------------------------------------------- */

static int check_templates(submit_run *r)
{
    boinc_templates t = { 0 };
    boinc_error err = { 0 };
    if (boinc_get_templates(r->ctx->client, &r->project, r->s->app, &t, &err) != BOINC_OK) {
        int rc = fail_boinc(r, effective_step(&r->batch), "get_templates", &err);
        boinc_error_clear(&err);
        return rc;
    }
    int rc = 0;
    for (size_t i = 0; i < r->s->njobs && rc == 0; i++) {
        if (t.n_inputs > 0 && r->s->jobs[i].ninputs != t.n_inputs) {
            rc = fail_msgf(r, effective_step(&r->batch), "submit refused",
                           "job %s has %zu input files, app %s needs %zu",
                           r->s->jobs[i].name, r->s->jobs[i].ninputs, r->s->app,
                           t.n_inputs);
        }
    }
    boinc_templates_free(&t);
    return rc;
}

/* ---- step 3: create_batch -------------------------------------------------- */

/*
 * After a create_batch whose reply was lost: find the batch it made, if
 * any.  Candidates have our name and app, no jobs yet, and are not already
 * another batch row's; the newest wins.  *found = 0 if there is none.
 */
static int find_created_batch(submit_run *r, long long *server_id, int *found)
{
    boinc_batch_info *b = NULL;
    size_t n = 0;
    boinc_error err = { 0 };
    *found = 0;
    if (boinc_query_batches(r->ctx->client, &r->project, &b, &n, &err) != BOINC_OK) {
        int rc = fail_boinc(r, BATCH_CREATE_SENT, "query_batches (resolving create_batch)", &err);
        boinc_error_clear(&err);
        return rc;
    }
    long best = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i].name == NULL || strcmp(b[i].name, r->s->batch) != 0 ||
            b[i].app_name == NULL || strcmp(b[i].app_name, r->s->app) != 0 ||
            b[i].njobs != 0 || b[i].id <= best)
            continue;
        int known = 0;
        if (journal_server_batch_known(r->ctx->journal, r->req->project_id, b[i].id, &known) != 0) {
            boinc_batch_info_free(b, n);
            return fail_journal(r);
        }
        if (!known)
            best = b[i].id;
    }
    boinc_batch_info_free(b, n);
    if (best > 0) {
        *server_id = best;
        *found = 1;
        log_info("submit %s: adopted server batch %ld created before the reply was lost",
                 r->s->batch, best);
    }
    return 0;
}

static int create_batch_step(submit_run *r)
{
    if (r->batch.server_batch_id > 0)
        return 0;
    for (int attempt = 0; attempt < STEP_ATTEMPTS; attempt++) {
        if (step_is(&r->batch, BATCH_CREATE_SENT)) {
            long long id = 0;
            int found = 0;
            for (int look = 0; !found; look++) {
                if (find_created_batch(r, &id, &found) != 0)
                    return -1;
                if (found || look == SETTLE_LOOKS)
                    break;
                settle_pause(look);
            }
            if (found)
                return set_step(r, BATCH_CREATED, id);
        }
        if (set_step(r, BATCH_CREATE_SENT, 0) != 0)
            return -1;
        testpoint("submit.create_sent");
        long id = 0;
        boinc_error err = { 0 };
        if (boinc_create_batch(r->ctx->client, &r->project, r->s->batch, r->s->app,
                               0.0, &id, &err) == BOINC_OK) {
            boinc_error_clear(&err);
            if (set_step(r, BATCH_CREATED, id) != 0)
                return -1;
            testpoint("submit.created");
            return 0;
        }
        if (server_refused(&err) || attempt + 1 == STEP_ATTEMPTS) {
            int rc = fail_boinc(r, server_refused(&err) ? BATCH_HASHED : BATCH_CREATE_SENT,
                                "create_batch", &err);
            boinc_error_clear(&err);
            return rc;
        }
        log_warn("submit %s: create_batch outcome unknown (%s); asking the server",
                 r->s->batch, err.msg ? err.msg : boinc_code_name(err.code));
        boinc_error_clear(&err);
    }
    return -1;
}

/* ---- step 4: files ----------------------------------------------------------- */

/* Names of the batch files in one of the given states. */
static int files_in_state(journal_batch_file *f, size_t n, const char *state,
                          const char ***names, long long **sizes, size_t *count)
{
    *names = calloc(n ? n : 1, sizeof **names);
    *sizes = calloc(n ? n : 1, sizeof **sizes);
    *count = 0;
    if (*names == NULL || *sizes == NULL) {
        free(*names);
        free(*sizes);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(f[i].state, state) == 0) {
            (*names)[*count] = f[i].phys_name;
            (*sizes)[*count] = f[i].size;
            (*count)++;
        }
    }
    return 0;
}

/* Journal a query_files answer: present files get present_state, the
 * others absent. */
static int record_presence(submit_run *r, const char *const *names, size_t len,
                           const unsigned char *absent, const char *present_state)
{
    const char **present = calloc(len ? len : 1, sizeof *present);
    const char **missing = calloc(len ? len : 1, sizeof *missing);
    int rc = 0;
    if (present == NULL || missing == NULL) {
        rc = fail_msg(r, NULL, "out of memory", NULL);
    } else {
        size_t np = 0, nm = 0;
        for (size_t i = 0; i < len; i++) {
            if (absent[i])
                missing[nm++] = names[i];
            else
                present[np++] = names[i];
        }
        if (journal_batch_files_set_state(r->ctx->journal, r->batch.id, present, np,
                                          present_state) != 0 ||
            journal_batch_files_set_state(r->ctx->journal, r->batch.id, missing, nm,
                                          BFILE_ABSENT) != 0)
            rc = fail_journal(r);
    }
    free(present);
    free(missing);
    return rc;
}

/*
 * Ask the server (query_files WITHOUT batch id: safe to repeat) which of
 * names it has; set the present ones to present_state and the others to
 * absent.
 */
static int any_set(const unsigned char *flags, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (flags[i])
            return 1;
    return 0;
}

static int resolve_presence(submit_run *r, const char *const *names, size_t n,
                            const char *present_state)
{
    /* An upload may still be in progress on the server: absent files are
     * looked for again before they count as absent. */
    int settle = strcmp(present_state, BFILE_UPLOADED) == 0;
    for (size_t start = 0; start < n; start += QUERY_CHUNK_FILES) {
        size_t len = n - start < QUERY_CHUNK_FILES ? n - start : QUERY_CHUNK_FILES;
        unsigned char *absent = calloc(len, 1);
        if (absent == NULL)
            return fail_msg(r, NULL, "out of memory", NULL);
        boinc_error err = { 0 };
        int rc;
        for (int look = 0;; look++) {
            rc = boinc_query_files(r->ctx->client, &r->project, 0, names + start, len,
                                   absent, &err);
            if (rc != BOINC_OK || !settle || look == SETTLE_LOOKS || !any_set(absent, len))
                break;
            settle_pause(look);
        }
        if (rc != BOINC_OK)
            rc = fail_boinc(r, effective_step(&r->batch), "query_files", &err);
        else
            rc = record_presence(r, names + start, len, absent, present_state);
        boinc_error_clear(&err);
        free(absent);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* query_files with the batch id for files not yet asked about. */
static int query_new_files(submit_run *r, const char *const *names, size_t n)
{
    for (size_t start = 0; start < n; start += QUERY_CHUNK_FILES) {
        size_t len = n - start < QUERY_CHUNK_FILES ? n - start : QUERY_CHUNK_FILES;
        const char *const *chunk = names + start;
        if (journal_batch_files_set_state(r->ctx->journal, r->batch.id, chunk, len,
                                          BFILE_QUERY_SENT) != 0)
            return fail_journal(r);
        testpoint("submit.query_sent");
        unsigned char *absent = calloc(len, 1);
        if (absent == NULL)
            return fail_msg(r, NULL, "out of memory", NULL);
        boinc_error err = { 0 };
        int rc = boinc_query_files(r->ctx->client, &r->project, r->batch.server_batch_id,
                                   chunk, len, absent, &err);
        if (rc == BOINC_OK) {
            rc = record_presence(r, chunk, len, absent, BFILE_CONFIRMED);
        } else if (server_refused(&err)) {
            /* Refused: nothing was associated; ask again next time. */
            journal_batch_files_set_state(r->ctx->journal, r->batch.id, chunk, len,
                                          BFILE_HASHED);
            rc = fail_boinc(r, BATCH_CREATED, "query_files", &err);
        } else {
            /* Unknown outcome: the files stay query_sent and are resolved
             * with a batch-less query (repeating this one could be fatal). */
            log_warn("submit %s: query_files outcome unknown (%s)", r->s->batch,
                     err.msg ? err.msg : boinc_code_name(err.code));
            rc = resolve_presence(r, chunk, len, BFILE_CONFIRMED);
        }
        boinc_error_clear(&err);
        free(absent);
        if (rc != 0)
            return -1;
        testpoint("submit.query_done");
    }
    return 0;
}

/* Local path of each named batch file. */
static int local_paths_for(journal_batch_file *f, size_t n, const char *const *names,
                           size_t count, const char ***paths)
{
    *paths = calloc(count ? count : 1, sizeof **paths);
    if (*paths == NULL)
        return -1;
    /* names come from f in the same order (files_in_state), so one pass. */
    size_t k = 0;
    for (size_t i = 0; i < n && k < count; i++) {
        if (f[i].phys_name == names[k])
            (*paths)[k++] = f[i].local_path;
    }
    return k == count ? 0 : -1;
}

static int upload_chunk(submit_run *r, const char *const *names, const char *const *paths,
                        size_t len)
{
    for (int attempt = 0; attempt < STEP_ATTEMPTS; attempt++) {
        if (journal_batch_files_set_state(r->ctx->journal, r->batch.id, names, len,
                                          BFILE_UPLOAD_SENT) != 0)
            return fail_journal(r);
        testpoint("submit.upload_sent");
        boinc_error err = { 0 };
        int rc = boinc_upload_files(r->ctx->client, &r->project, r->batch.server_batch_id,
                                    names, paths, len, &err);
        if (rc == BOINC_OK) {
            boinc_error_clear(&err);
            if (journal_batch_files_set_state(r->ctx->journal, r->batch.id, names, len,
                                              BFILE_UPLOADED) != 0)
                return fail_journal(r);
            testpoint("submit.uploaded");
            return 0;
        }
        if (server_refused(&err)) {
            journal_batch_files_set_state(r->ctx->journal, r->batch.id, names, len,
                                          BFILE_ABSENT);
            rc = fail_boinc(r, BATCH_FILES_KNOWN, "upload_files", &err);
            boinc_error_clear(&err);
            return rc;
        }
        log_warn("submit %s: upload_files outcome unknown (%s); asking the server",
                 r->s->batch, err.msg ? err.msg : boinc_code_name(err.code));
        if (attempt + 1 == STEP_ATTEMPTS) {
            rc = fail_boinc(r, BATCH_FILES_KNOWN, "upload_files", &err);
            boinc_error_clear(&err);
            return rc;
        }
        boinc_error_clear(&err);
        /* What made it is uploaded; upload only what is still absent. */
        if (resolve_presence(r, names, len, BFILE_UPLOADED) != 0)
            return -1;
        return 1;   /* caller re-plans from the journal */
    }
    return -1;
}

static int upload_absent(submit_run *r)
{
    for (int round = 0; round < STEP_ATTEMPTS; round++) {
        journal_batch_file *f = NULL;
        size_t n = 0;
        if (journal_batch_files_list(r->ctx->journal, r->batch.id, &f, &n) != 0)
            return fail_journal(r);
        const char **names = NULL, **paths = NULL;
        long long *sizes = NULL;
        size_t count = 0;
        size_t *starts = NULL, nchunks = 0;
        int rc = -1;
        if (files_in_state(f, n, BFILE_ABSENT, &names, &sizes, &count) != 0 ||
            local_paths_for(f, n, names, count, &paths) != 0 ||
            files_plan_chunks(sizes, count, UPLOAD_CHUNK_FILES, UPLOAD_CHUNK_BYTES,
                              &starts, &nchunks) != 0) {
            fail_msg(r, NULL, "out of memory", NULL);
            goto done;
        }
        rc = 0;
        for (size_t c = 0; c < nchunks && rc == 0; c++) {
            size_t end = c + 1 < nchunks ? starts[c + 1] : count;
            rc = upload_chunk(r, names + starts[c], paths + starts[c], end - starts[c]);
        }
done:
        free(names);
        free(paths);
        free(sizes);
        free(starts);
        journal_batch_files_free(f, n);
        if (rc <= 0)
            return rc;
    }
    return fail_msg(r, BATCH_FILES_KNOWN, "upload_files", "gave up after repeated unknown outcomes");
}

static int files_step(submit_run *r)
{
    if (step_is(&r->batch, BATCH_UPLOADED) || step_is(&r->batch, BATCH_SUBMIT_SENT) ||
        step_is(&r->batch, BATCH_SUBMITTED))
        return 0;
    pthread_mutex_lock(&file_phase_mu);
    journal_batch_file *f = NULL;
    size_t n = 0;
    int rc = -1;
    const char **names = NULL;
    long long *sizes = NULL;
    size_t count = 0;
    if (journal_batch_files_list(r->ctx->journal, r->batch.id, &f, &n) != 0) {
        fail_journal(r);
        goto out;
    }
    /* Uncertain states first: resolved with safe batch-less queries. */
    static const struct { const char *state, *present_state; } uncertain[] = {
        { BFILE_QUERY_SENT, BFILE_CONFIRMED },
        { BFILE_UPLOAD_SENT, BFILE_UPLOADED },
    };
    for (size_t u = 0; u < 2; u++) {
        if (files_in_state(f, n, uncertain[u].state, &names, &sizes, &count) != 0) {
            fail_msg(r, NULL, "out of memory", NULL);
            goto out;
        }
        rc = count ? resolve_presence(r, names, count, uncertain[u].present_state) : 0;
        free(names);
        free(sizes);
        names = NULL;
        sizes = NULL;
        if (rc != 0)
            goto out;
    }
    rc = -1;
    if (files_in_state(f, n, BFILE_HASHED, &names, &sizes, &count) != 0) {
        fail_msg(r, NULL, "out of memory", NULL);
        goto out;
    }
    if (query_new_files(r, names, count) != 0)
        goto out;
    if (set_step(r, BATCH_FILES_KNOWN, 0) != 0)
        goto out;
    if (upload_absent(r) != 0)
        goto out;
    if (set_step(r, BATCH_UPLOADED, 0) != 0)
        goto out;
    rc = 0;
out:
    free(names);
    free(sizes);
    journal_batch_files_free(f, n);
    pthread_mutex_unlock(&file_phase_mu);
    return rc;
}

/* ---- step 5: submit_batch ---------------------------------------------------- */

/*
 * One argument of a job, for BOINC's command_line string.  Real servers
 * hand command_line to a shell inside double quotes, so `"`, `$`, backquote
 * and backslash would be mangled: refused.  An argument that is empty or
 * holds white space is single-quoted (literal inside the server's double
 * quotes, and grouped by the client's command-line parser).
 */
static int append_arg(strbuf *sb, const char *arg, const char **why)
{
    int quote = arg[0] == '\0';
    for (const char *p = arg; *p; p++) {
        if (*p == '"' || *p == '$' || *p == '`' || *p == '\\' || *p == '\n' || *p == '\r') {
            *why = "contains one of \" $ ` \\ or a line break, which BOINC servers mangle";
            return -1;
        }
        if (*p == ' ' || *p == '\t')
            quote = 1;
    }
    if (quote && strchr(arg, '\'') != NULL) {
        *why = "has both white space and a single quote";
        return -1;
    }
    if (sb->len > 0 && strbuf_putc(sb, ' ') != 0)
        return -2;
    if (quote)
        return strbuf_printf(sb, "'%s'", arg) != 0 ? -2 : 0;
    return strbuf_puts(sb, arg) != 0 ? -2 : 0;
}

static int build_command_lines(submit_run *r, char ***out)
{
    const gahp_submit *s = r->s;
    char **lines = calloc(s->njobs ? s->njobs : 1, sizeof *lines);
    if (lines == NULL)
        return fail_msg(r, NULL, "out of memory", NULL);
    for (size_t i = 0; i < s->njobs; i++) {
        strbuf sb = STRBUF_INIT;
        for (size_t a = 0; a < s->jobs[i].nargs; a++) {
            const char *why = NULL;
            int rc = append_arg(&sb, s->jobs[i].args[a], &why);
            if (rc != 0) {
                fail_msgf(r, effective_step(&r->batch), "submit refused",
                          "argument %zu of job %s %s", a + 1, s->jobs[i].name,
                          why ? why : "(out of memory)");
                strbuf_free(&sb);
                for (size_t k = 0; k < i; k++)
                    free(lines[k]);
                free(lines);
                return -1;
            }
        }
        lines[i] = strbuf_detach(&sb);
    }
    *out = lines;
    return 0;
}

/* After a submit_batch whose reply was lost: did the jobs get created? */
static int jobs_on_server(submit_run *r, size_t *njobs)
{
    char **names = NULL;
    size_t n = 0;
    boinc_error err = { 0 };
    if (boinc_query_batch_jobs(r->ctx->client, &r->project, r->batch.server_batch_id,
                               &names, &n, &err) != BOINC_OK) {
        int rc = fail_boinc(r, BATCH_SUBMIT_SENT, "query_batch (resolving submit_batch)", &err);
        boinc_error_clear(&err);
        return rc;
    }
    boinc_names_free(names, n);
    *njobs = n;
    return 0;
}

static int mark_submitted(submit_run *r)
{
    const char **names = calloc(r->s->njobs ? r->s->njobs : 1, sizeof *names);
    if (names == NULL)
        return fail_msg(r, NULL, "out of memory", NULL);
    for (size_t i = 0; i < r->s->njobs; i++)
        names[i] = r->s->jobs[i].name;
    int rc = journal_batch_set_submitted(r->ctx->journal, r->batch.id, names, r->s->njobs);
    free(names);
    if (rc != 0)
        return fail_journal(r);
    testpoint("submit.submitted");
    return 0;
}

static void fill_params(const gahp_submit *s, boinc_job_params *p)
{
    memset(p, 0, sizeof *p);
    if (s->params_set & GAHP_P_FPOPS_EST)
        p->rsc_fpops_est = s->rsc_fpops_est;
    if (s->params_set & GAHP_P_FPOPS_BOUND)
        p->rsc_fpops_bound = s->rsc_fpops_bound;
    if (s->params_set & GAHP_P_MEMORY_BOUND)
        p->rsc_memory_bound = s->rsc_memory_bound;
    if (s->params_set & GAHP_P_DISK_BOUND)
        p->rsc_disk_bound = s->rsc_disk_bound;
    if (s->params_set & GAHP_P_DELAY_BOUND)
        p->delay_bound = s->delay_bound;
    if (s->params_set & GAHP_P_APP_VERSION)
        p->app_version_num = s->app_version_num;
}

static int submit_step(submit_run *r)
{
    const gahp_submit *s = r->s;
    char **lines = NULL;
    boinc_job_spec *specs = NULL;
    int rc = -1;
    if (build_command_lines(r, &lines) != 0)
        return -1;
    specs = calloc(s->njobs ? s->njobs : 1, sizeof *specs);
    if (specs == NULL) {
        fail_msg(r, NULL, "out of memory", NULL);
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        specs[i].name = s->jobs[i].name;
        specs[i].command_line = lines[i];
        specs[i].n_inputs = s->jobs[i].ninputs;
        specs[i].phys_names = (const char *const *)&r->input_phys[k];
        k += s->jobs[i].ninputs;
    }
    boinc_job_params params;
    fill_params(s, &params);

    for (int attempt = 0; attempt < STEP_ATTEMPTS; attempt++) {
        if (step_is(&r->batch, BATCH_SUBMIT_SENT)) {
            size_t n = 0;
            for (int look = 0;; look++) {
                if (jobs_on_server(r, &n) != 0)
                    goto out;
                if (n > 0 || look == SETTLE_LOOKS)
                    break;
                settle_pause(look);
            }
            if (n > 0) {
                if (n != s->njobs) {
                    fail_msgf(r, BATCH_SUBMIT_SENT, "submit_batch",
                              "server batch %lld has %zu jobs, expected %zu",
                              r->batch.server_batch_id, n, s->njobs);
                    goto out;
                }
                rc = mark_submitted(r);
                goto out;
            }
        }
        if (set_step(r, BATCH_SUBMIT_SENT, 0) != 0)
            goto out;
        testpoint("submit.submit_sent");
        boinc_error err = { 0 };
        if (boinc_submit_batch(r->ctx->client, &r->project, r->batch.server_batch_id,
                               s->app, &params, specs, s->njobs, &err) == BOINC_OK) {
            boinc_error_clear(&err);
            rc = mark_submitted(r);
            goto out;
        }
        if (server_refused(&err) || attempt + 1 == STEP_ATTEMPTS) {
            fail_boinc(r, server_refused(&err) ? BATCH_UPLOADED : BATCH_SUBMIT_SENT,
                       "submit_batch", &err);
            boinc_error_clear(&err);
            goto out;
        }
        log_warn("submit %s: submit_batch outcome unknown (%s); asking the server",
                 s->batch, err.msg ? err.msg : boinc_code_name(err.code));
        boinc_error_clear(&err);
    }
out:
    if (lines != NULL) {
        for (size_t i = 0; i < s->njobs; i++)
            free(lines[i]);
        free(lines);
    }
    free(specs);
    return rc;
}

/* ---- the executor ------------------------------------------------------------ */

static int run_steps(submit_run *r)
{
    size_t nread = 0;
    if (r->s->njobs == 0)
        return fail_msg(r, NULL, "submit refused", "a batch needs at least one job");
    if (step_is(&r->batch, BATCH_SUBMITTED))
        return 0;
    /* Hashing is cheap when the cache holds every file (no reads) and gives
     * the per-job physical names, so it runs on every attempt. */
    if (hash_inputs(r, &nread) != 0)
        return -1;
    log_info("submit %s: %zu inputs, %zu files read for hashing", r->s->batch,
             r->ninputs, nread);
    testpoint("submit.hashed");
    if (reload_batch(r) != 0)
        return -1;
    if (r->batch.server_batch_id == 0 && check_templates(r) != 0)
        return -1;
    if (create_batch_step(r) != 0)
        return -1;
    if (files_step(r) != 0)
        return -1;
    return submit_step(r);
}

static char *spec_digest(const gahp_request *req, char out[33])
{
    const char *text = req->args_text ? req->args_text : "";
    return files_md5_hex_mem(text, strlen(text), out) == 0 ? out : NULL;
}

/* Run the submit as the owner of its registry entry; leaves the entry
 * with the result and returns it. */
static char *run_owned(exec_ctx *ctx, const gahp_request *req, active_submit *owner,
                       const char *fp, const char *digest)
{
    const gahp_submit *s = &req->u.submit;
    submit_run r = { 0 };
    r.ctx = ctx;
    r.req = req;
    r.s = s;
    r.project.url = req->project_url;
    r.project.authenticator = req->authenticator;

    int found = 0, same = 1;
    char *result = NULL;
    if (journal_batch_find(ctx->journal, req->project_id, s->batch, &r.batch, &found) != 0) {
        fail_journal(&r);
    } else if (found && submit_identity_same(ctx->journal, &r.batch, fp, digest, &same) != 0) {
        fail_journal(&r);
    } else if (found && !same) {
        fail_msg(&r, NULL, "submit refused",
                 "this batch name was already submitted with different jobs");
    } else if (found && strcmp(r.batch.step, BATCH_SUBMITTED) == 0) {
        result = strdup("NULL");   /* answered from the journal */
    } else {
        int ok = 1;
        if (!found) {
            long long row = 0;
            if (journal_batch_create(ctx->journal, req->project_id, s->batch, s->app,
                                     (long)s->njobs, digest, req->journal_id, &row) != 0 ||
                journal_batch_set_job_set(ctx->journal, row, fp) != 0 ||
                reload_batch(&r) != 0) {
                fail_journal(&r);
                ok = 0;
            }
        } else if (req->journal_id > 0 && r.batch.request_id != req->journal_id) {
            if (journal_batch_set_owner(ctx->journal, r.batch.id, req->journal_id) != 0) {
                fail_journal(&r);
                ok = 0;
            }
        }
        if (ok && run_steps(&r) == 0)
            result = strdup("NULL");
    }
    if (result == NULL && r.error != NULL) {
        result = r.error;
        r.error = NULL;
    }
    active_leave(owner, result);
    run_free(&r);
    return result;
}

/* ---- the deadline (doc/commands.md) ------------------------------------------ */

typedef struct {
    active_submit *owner;
    char fp[SUBMIT_IDENTITY_LEN];
    char digest[33];
} detached_arg;

static void run_detached(exec_ctx *ctx, const gahp_request *req, void *arg)
{
    detached_arg *a = arg;
    free(run_owned(ctx, req, a->owner, a->fp, a->digest));
    free(a);
}

static char *still_running(const exec_ctx *ctx)
{
    char *detail = str_printf("not finished after %ld s (the client gives up at "
                              "300 s); it goes on, and a re-issue of this submit "
                              "gets its outcome", ctx->config->submit_deadline_s);
    char *tok = exec_error("submit still running", detail ? detail : "");
    free(detail);
    return tok;
}

/*
 * The owner's run goes to a thread of its own; the worker answers with its
 * result, or with an error once the deadline passes (the run goes on and
 * stays bound to the batch name: a re-issue attaches to it or finds its
 * outcome in the journal).
 */
static char *run_with_deadline(exec_ctx *ctx, const gahp_request *req,
                               active_submit *owner, const char *fp,
                               const char *digest, const struct timespec *until)
{
    detached_arg *a = calloc(1, sizeof *a);
    if (a == NULL)
        return run_owned(ctx, req, owner, fp, digest);
    a->owner = owner;
    memcpy(a->fp, fp, sizeof a->fp);
    memcpy(a->digest, digest, sizeof a->digest);
    pthread_mutex_lock(&active_mu);
    owner->refs++;              /* the worker's, for the wait below */
    pthread_mutex_unlock(&active_mu);
    if (submit_run_detached(ctx, req, run_detached, a) != 0) {
        free(a);
        pthread_mutex_lock(&active_mu);
        active_unref_locked(owner);
        pthread_mutex_unlock(&active_mu);
        return run_owned(ctx, req, owner, fp, digest);
    }
    int timed_out = 0;
    pthread_mutex_lock(&active_mu);
    char *result = wait_done_locked(owner, until, &timed_out);
    pthread_mutex_unlock(&active_mu);
    if (timed_out) {
        log_warn("submit %s: still running after %ld s; answering the client, "
                 "the submit goes on", req->u.submit.batch, ctx->config->submit_deadline_s);
        return still_running(ctx);
    }
    return result;
}

char *exec_submit(exec_ctx *ctx, const gahp_request *req)
{
    const gahp_submit *s = &req->u.submit;
    char digest[33], fp[SUBMIT_IDENTITY_LEN];
    if (spec_digest(req, digest) == NULL || submit_identity_of(s, fp) != 0)
        return gahp_escape("submit failed: cannot digest the request");
    /* Work resumed for the journal only (recovery) has nobody waiting. */
    long deadline = ctx->config != NULL && !req->background
                        ? ctx->config->submit_deadline_s : 0;
    struct timespec until;
    submit_deadline_at(deadline, &until);

    active_submit *owner = NULL;
    int oom = 0, timed_out = 0, same = 1;
    char *attached = active_enter(req->project_id, s->batch, deadline > 0 ? &until : NULL,
                                  &owner, &oom, &timed_out);
    if (attached != NULL || oom || timed_out) {
        /* Same batch running in this process: its outcome is ours, if the
         * jobs are the same (checked against the journal row below). */
        if (oom)
            return NULL;
        journal_batch b;
        int found = 0;
        if (journal_batch_find(ctx->journal, req->project_id, s->batch, &b, &found) == 0 &&
            found && submit_identity_same(ctx->journal, &b, fp, digest, &same) == 0 &&
            !same) {
            journal_batch_free(&b);
            free(attached);
            return exec_error("submit refused", "this batch name was already submitted "
                              "with different jobs");
        }
        if (found)
            journal_batch_free(&b);
        return timed_out ? still_running(ctx) : attached;
    }
    if (deadline > 0)
        return run_with_deadline(ctx, req, owner, fp, digest, &until);
    return run_owned(ctx, req, owner, fp, digest);
}
