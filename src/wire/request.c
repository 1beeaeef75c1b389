/*
 * request.c - strict parsers for the asynchronous BOINC_* GAHP commands.
 *
 * Every field is checked: counts must match the tokens that follow exactly,
 * numbers are whole tokens without overflow, names are non-empty.  Counts
 * are checked against the number of tokens left BEFORE anything is
 * allocated, so a line claiming 10^9 jobs cannot make us allocate for them.
 */
#include "wire/request.h"

#include "wire/gahp_text.h"
#include "base/num.h"
#include "base/strbuf.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the parsed fields' arena --------------------------------------------- */
/*
 * Every string and array a parser makes lives in the request's arena: a
 * few blocks, freed whole with the request, instead of a malloc each.  A
 * 100,000-job BOINC_SUBMIT made 500,000 allocations (name, argument and
 * input arrays, source and destination of each input), each with its
 * header and rounding: 23 MB for 6 MB of text, held for the submit's life.
 */
typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];         /* cap bytes */
} arena_block;

typedef struct gahp_arena gahp_arena;
struct gahp_arena {
    arena_block *head;          /* the block being filled; older ones follow */
    size_t next_cap;            /* the next block's size: doubles to ARENA_BLOCK_MAX */
};

#define ARENA_BLOCK_MIN 512
#define ARENA_BLOCK_MAX (1024 * 1024)

/* n bytes aligned to align (a power of two, at most max_align_t's), or
 * NULL when out of memory. */
static void *arena_alloc(gahp_arena *a, size_t n, size_t align)
{
    arena_block *b = a->head;
    if (b != NULL) {
        size_t at = (b->used + align - 1) & ~(align - 1);
        if (at <= b->cap && n <= b->cap - at) {
            b->used = at + n;
            return (char *)b->data + at;
        }
    }
    size_t cap = a->next_cap ? a->next_cap : ARENA_BLOCK_MIN;
    int own = n > cap;          /* a large array: a block of its own */
    if (own)
        cap = n;
    else if (cap < ARENA_BLOCK_MAX)
        a->next_cap = cap * 2;
    if (cap > SIZE_MAX - sizeof *b || (b = malloc(sizeof *b + cap)) == NULL)
        return NULL;
    b->cap = cap;
    b->used = n;
    if (own && a->head != NULL) {       /* behind the head, which keeps filling */
        b->next = a->head->next;
        a->head->next = b;
    } else {
        b->next = a->head;
        a->head = b;
    }
    return b->data;
}

static void arena_free(gahp_arena *a)
{
    if (a == NULL)
        return;
    for (arena_block *b = a->head, *next; b != NULL; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

/* ---- token cursor -------------------------------------------------------- */

struct gahp_cursor {
    char *const *argv;
    size_t argc;
    size_t pos;
    const char *why;
    gahp_request *req;
};
typedef gahp_cursor cursor;

/* A copy of t in the request's arena (why set when out of memory). */
static char *arena_strdup(cursor *c, const char *t)
{
    size_t n = strlen(t) + 1;
    char *d = arena_alloc(c->req->arena, n, 1);
    if (d == NULL)
        c->why = "out of memory";
    else
        memcpy(d, t, n);
    return d;
}

/*
 * A well-framed field with a value the request cannot be carried out
 * with: not a framing error (the line still gets S), but recorded in the
 * request, whose result is then an error naming the field and the value.
 * Only the first one is kept.  0, or -1 on ENOMEM.
 */
static int bad_value(cursor *c, const char *field, const char *value, const char *what)
{
    if (c->req->value_error != NULL)
        return 0;
    c->req->value_error = str_printf("%s %s is not %s", field, value, what);
    if (c->req->value_error == NULL) {
        c->why = "out of memory";
        return -1;
    }
    return 0;
}

static size_t left(const cursor *c)
{
    return c->argc - c->pos;
}

/* Next token, or NULL (why set) when the line ended early. */
static const char *next_token(cursor *c)
{
    if (c->pos >= c->argc) {
        c->why = "missing fields";
        return NULL;
    }
    return c->argv[c->pos++];
}

static char *next_name(cursor *c)
{
    const char *t = next_token(c);
    if (t == NULL)
        return NULL;
    if (*t == '\0') {
        c->why = "empty name";
        return NULL;
    }
    return arena_strdup(c, t);
}

/* Any string, the empty one included (job arguments). */
static char *next_string(cursor *c)
{
    const char *t = next_token(c);
    return t != NULL ? arena_strdup(c, t) : NULL;
}

/* A count of items each needing at least per_item tokens after it. */
static int next_count(cursor *c, size_t per_item, size_t *out)
{
    const char *t = next_token(c);
    if (t == NULL)
        return -1;
    long v;
    if (num_parse_long(t, 0, GAHP_MAX_REQUEST_ID, &v) != 0) {
        c->why = "count is not a non-negative integer";
        return -1;
    }
    if (per_item > 0 && (size_t)v > left(c) / per_item) {
        c->why = "count larger than the fields that follow";
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* n zeroed items of size bytes in the request's arena (n counted against
 * the tokens left, so bounded by the line). */
static void *alloc_array(cursor *c, size_t n, size_t size)
{
    void *p = NULL;
    if (n == 0)
        n = 1;
    if (size == 0 || n <= SIZE_MAX / size)
        p = arena_alloc(c->req->arena, n * size, _Alignof(max_align_t));
    if (p == NULL)
        c->why = "out of memory";
    else
        memset(p, 0, n * size);
    return p;
}

/* ---- per-command parsers ------------------------------------------------- */

int gahp_parse_ping(cursor *c, gahp_request *r)
{
    (void)c;
    (void)r;
    return 0;
}

/* One of the six trailing fields: untyped strings on the client's side
 * (job-ad attributes, "NULL" when unset), so a value that is not a number
 * is a bad value, not a bad line. */
static int parse_param(cursor *c, const char *field, unsigned bit, int integer,
                       gahp_submit *s, double *dval)
{
    const char *t = next_token(c);
    if (t == NULL)
        return -1;
    if (strcmp(t, "NULL") == 0)
        return 0;
    if (integer) {
        long v;
        if (num_parse_long(t, -2147483647L, 2147483647L, &v) != 0)
            return bad_value(c, field, t, "an integer");
        s->params.app_version_num = v;
    } else if (num_parse_double(t, dval) != 0) {
        return bad_value(c, field, t, "a number");
    }
    s->params_set |= bit;
    return 0;
}

static int parse_submit_job(cursor *c, gahp_submit_job *j)
{
    if ((j->name = next_name(c)) == NULL)
        return -1;
    if (next_count(c, 1, &j->nargs) != 0)
        return -1;
    if ((j->args = alloc_array(c, j->nargs, sizeof *j->args)) == NULL)
        return -1;
    for (size_t i = 0; i < j->nargs; i++)
        if ((j->args[i] = next_string(c)) == NULL)
            return -1;
    if (next_count(c, 2, &j->ninputs) != 0)
        return -1;
    if ((j->inputs = alloc_array(c, j->ninputs, sizeof *j->inputs)) == NULL)
        return -1;
    for (size_t i = 0; i < j->ninputs; i++) {
        if ((j->inputs[i].src_path = next_name(c)) == NULL ||
            (j->inputs[i].dst_name = next_name(c)) == NULL)
            return -1;
    }
    return 0;
}

int gahp_parse_submit(cursor *c, gahp_request *r)
{
    gahp_submit *s = &r->u.submit;
    if ((s->batch = next_name(c)) == NULL || (s->app = next_name(c)) == NULL)
        return -1;
    /* A job is at least: name, nargs, ninputs. */
    if (next_count(c, 3, &s->njobs) != 0)
        return -1;
    if ((s->jobs = alloc_array(c, s->njobs, sizeof *s->jobs)) == NULL)
        return -1;
    for (size_t i = 0; i < s->njobs; i++)
        if (parse_submit_job(c, &s->jobs[i]) != 0)
            return -1;
    if (left(c) == 0)
        return 0;
    if (left(c) != 6) {
        c->why = "BOINC_SUBMIT needs all six resource fields or none";
        return -1;
    }
    s->has_params = 1;
    double unused = 0;
    if (parse_param(c, "rsc_fpops_est", GAHP_P_FPOPS_EST, 0, s, &s->params.rsc_fpops_est) != 0 ||
        parse_param(c, "rsc_fpops_bound", GAHP_P_FPOPS_BOUND, 0, s, &s->params.rsc_fpops_bound) != 0 ||
        parse_param(c, "rsc_memory_bound", GAHP_P_MEMORY_BOUND, 0, s,
                    &s->params.rsc_memory_bound) != 0 ||
        parse_param(c, "rsc_disk_bound", GAHP_P_DISK_BOUND, 0, s, &s->params.rsc_disk_bound) != 0 ||
        parse_param(c, "delay_bound", GAHP_P_DELAY_BOUND, 0, s, &s->params.delay_bound) != 0 ||
        parse_param(c, "app_version_num", GAHP_P_APP_VERSION, 1, s, &unused) != 0)
        return -1;
    return 0;
}

int gahp_parse_query(cursor *c, gahp_request *r)
{
    gahp_query_batches *q = &r->u.query;
    const char *t = next_token(c);
    if (t == NULL)
        return -1;
    double v;
    if (num_parse_double(t, &v) != 0 || v < 0) {
        c->why = "min_mod_time is not a non-negative number";
        return -1;
    }
    if ((q->min_mod_time = arena_strdup(c, t)) == NULL)
        return -1;
    if (next_count(c, 1, &q->nbatches) != 0)
        return -1;
    if ((q->batches = alloc_array(c, q->nbatches, sizeof *q->batches)) == NULL)
        return -1;
    for (size_t i = 0; i < q->nbatches; i++)
        if ((q->batches[i] = next_name(c)) == NULL)
            return -1;
    return 0;
}

int gahp_parse_fetch(cursor *c, gahp_request *r)
{
    gahp_fetch_output *f = &r->u.fetch;
    if ((f->job = next_name(c)) == NULL || (f->iwd = next_name(c)) == NULL ||
        (f->stderr_file = next_name(c)) == NULL)
        return -1;
    const char *mode = next_token(c);
    if (mode == NULL)
        return -1;
    if (strcmp(mode, "ALL") == 0) {
        f->all = 1;
    } else if (strcmp(mode, "SOME") == 0) {
        f->all = 0;
    } else {
        c->why = "mode is neither ALL nor SOME";
        return -1;
    }
    if (next_count(c, 2, &f->nspecs) != 0)
        return -1;
    if ((f->specs = alloc_array(c, f->nspecs, sizeof *f->specs)) == NULL)
        return -1;
    for (size_t i = 0; i < f->nspecs; i++) {
        if ((f->specs[i].src = next_name(c)) == NULL ||
            (f->specs[i].dst = next_name(c)) == NULL)
            return -1;
    }
    return 0;
}

int gahp_parse_abort(cursor *c, gahp_request *r)
{
    gahp_abort_jobs *a = &r->u.abort_jobs;
    if (left(c) == 0) {
        c->why = "BOINC_ABORT_JOBS needs at least one job";
        return -1;
    }
    a->njobs = left(c);
    if ((a->jobs = alloc_array(c, a->njobs, sizeof *a->jobs)) == NULL)
        return -1;
    for (size_t i = 0; i < a->njobs; i++)
        if ((a->jobs[i] = next_name(c)) == NULL)
            return -1;
    return 0;
}

/* BLAH_JOB_SUBMIT <id> <ad>: a well-framed line is one ad token; what the
 * ad says is checked by gahp_blah_submit_from_ad, and an ad that cannot
 * be submitted is a bad value (S, then an error result that HTCondor
 * makes the job's hold reason). */
int gahp_parse_blah_submit(cursor *c, gahp_request *r)
{
    const char *ad = next_token(c);
    if (ad == NULL)
        return -1;
    char *why = NULL;
    int rc = gahp_blah_submit_from_ad(ad, &r->u.blah_submit, &why);
    if (rc < 0) {
        c->why = "out of memory";
        return -1;
    }
    if (rc > 0 && r->value_error == NULL)
        r->value_error = why;
    else
        free(why);
    return 0;
}

/* BLAH_JOB_STATUS and BLAH_JOB_CANCEL <id> <job id>. */
int gahp_parse_blah_job(cursor *c, gahp_request *r)
{
    return (r->u.blah_job.job_id = next_name(c)) == NULL ? -1 : 0;
}

/* BLAH_PING <id> [<batch type>]: the type (boinc) names no project. */
int gahp_parse_blah_ping(cursor *c, gahp_request *r)
{
    (void)r;
    if (left(c) > 0)
        (void)next_token(c);
    return 0;
}

/* Internal BLAH_GROUP_LEAD <id> <group>: never read from a client. */
int gahp_parse_blah_lead(cursor *c, gahp_request *r)
{
    const char *t = next_token(c);
    if (t == NULL)
        return -1;
    if (num_parse_llong(t, &r->u.blah_group) != 0 || r->u.blah_group <= 0) {
        c->why = "group is not a positive integer";
        return -1;
    }
    return 0;
}

int gahp_parse_retire(cursor *c, gahp_request *r)
{
    return (r->u.retire.batch = next_name(c)) == NULL ? -1 : 0;
}

int gahp_parse_lease(cursor *c, gahp_request *r)
{
    if ((r->u.lease.batch = next_name(c)) == NULL)
        return -1;
    const char *t = next_token(c);
    if (t == NULL)
        return -1;
    if (num_parse_llong(t, &r->u.lease.lease_time) != 0 ||
        r->u.lease.lease_time < 0)
        return bad_value(c, "lease time", t, "a non-negative integer");
    return 0;
}

/* The escaped arguments after the id, joined by spaces: what the journal
 * stores, and what "same request again" is compared on. */
static char *canonical_args(char *const *argv, size_t argc)
{
    strbuf sb = STRBUF_INIT;
    for (size_t i = 2; i < argc; i++) {
        if ((i > 2 && strbuf_putc(&sb, ' ') != 0) ||
            gahp_escape_append(&sb, argv[i]) != 0) {
            strbuf_free(&sb);
            return NULL;
        }
    }
    /* held for the request's life: no doubling slack (up to half of a
     * big submit's text) */
    size_t len = sb.len;
    char *text = strbuf_detach(&sb);
    char *fit = realloc(text, len + 1);
    return fit != NULL ? fit : text;
}

int gahp_request_parse(gahp_command cmd, gahp_parse_fn parse, char *const *argv,
                       size_t argc, gahp_request **out, const char **why)
{
    *out = NULL;
    gahp_request *r = calloc(1, sizeof *r);
    if (r == NULL) {
        *why = "out of memory";
        return -1;
    }
    r->cmd = cmd;
    atomic_init(&r->extra_refs, 0);
    cursor c = { argv, argc, 1, NULL, r };
    const char *id = next_token(&c);
    if (id == NULL) {
        *why = "missing request id";
        free(r);
        return -1;
    }
    if (num_parse_long(id, 1, GAHP_MAX_REQUEST_ID, &r->id) != 0) {
        *why = "request id is not a positive integer";
        free(r);
        return -1;
    }
    if ((r->arena = calloc(1, sizeof *r->arena)) == NULL) {
        *why = "out of memory";
        free(r);
        return -1;
    }
    if (parse(&c, r) != 0) {
        *why = c.why;
        gahp_request_free(r);
        return -1;
    }
    if (left(&c) != 0) {
        *why = "extra fields";
        gahp_request_free(r);
        return -1;
    }
    if ((r->args_text = canonical_args(argv, argc)) == NULL) {
        *why = "out of memory";
        gahp_request_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

gahp_request *gahp_request_new(gahp_command cmd, long id)
{
    gahp_request *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->cmd = cmd;
    r->id = id;
    atomic_init(&r->extra_refs, 0);
    return r;
}

int gahp_request_set_project(gahp_request *r, long long project_id, const char *url,
                             const char *authenticator)
{
    r->project_id = project_id;
    if (url == NULL)
        return 0;           /* none selected when it was journaled */
    r->project_url = strdup(url);
    r->authenticator = strdup(authenticator != NULL ? authenticator : "");
    return r->project_url != NULL && r->authenticator != NULL ? 0 : -1;
}

gahp_request *gahp_request_from_record(gahp_command cmd, gahp_parse_fn parse,
                                       const gahp_journal_record *rec, const char **why)
{
    /* the record is the request line as it was read, less its framing:
     * rebuilt and parsed by the one strict parser, so that a resumed
     * request is exactly the request that was accepted */
    strbuf line = STRBUF_INIT;
    *why = "out of memory";
    if (strbuf_printf(&line, "%s %ld%s%s", rec->command, rec->id,
                      rec->args_text[0] ? " " : "", rec->args_text) != 0) {
        strbuf_free(&line);
        return NULL;
    }
    gahp_args args = { 0 };
    gahp_request *req = NULL;
    if (gahp_tokenize(line.data, line.len, &args) != GAHP_TOK_OK)
        *why = "the record does not tokenise";
    else if (gahp_request_parse(cmd, parse, args.argv, args.argc, &req, why) == 0 &&
             gahp_request_set_project(req, rec->project_id, rec->project_url,
                                      rec->authenticator) != 0) {
        gahp_request_free(req);
        req = NULL;
        *why = "out of memory";
    }
    gahp_args_free(&args);
    strbuf_free(&line);
    return req;
}

gahp_request *gahp_request_ref(const gahp_request *req)
{
    gahp_request *r = (gahp_request *)req;
    atomic_fetch_add(&r->extra_refs, 1);
    return r;
}

void gahp_request_free(gahp_request *r)
{
    if (r == NULL)
        return;
    /* another holder remains: only the count drops (acq_rel: the last
     * holder sees everything the others did before they let go) */
    if (atomic_fetch_sub_explicit(&r->extra_refs, 1, memory_order_acq_rel) > 0)
        return;
    /* the parsed fields are the arena's; a BLAH submit's come from its ad */
    if (r->cmd == GAHP_CMD_BLAH_SUBMIT)
        gahp_blah_submit_free(&r->u.blah_submit);
    arena_free(r->arena);
    free(r->project_url);
    free(r->authenticator);
    free(r->args_text);
    free(r->value_error);
    free(r);
}
