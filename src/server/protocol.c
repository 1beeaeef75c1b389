/*
 * protocol.c - GAHP line protocol: escaping, tokenising, line splitting and
 * the reader loop (the only writer of stdout).
 *
 * Group commit: all complete lines in the input buffer are handled as one
 * burst.  Return lines are queued; accepted async requests are inserted
 * into the journal in ONE transaction at the end of the burst (or before a
 * command whose answer depends on what came before: RESULTS, QUIT,
 * RESPONSE_PREFIX, ASYNC_MODE_*), then every queued return line is written
 * in order: "S" for a committed request, "F" if the commit failed.
 */
#include "server/protocol.h"

#include "base/files.h"
#include "base/url.h"
#include "server/command.h"
#include "wire/gahp_text.h"
#include "base/log.h"
#include "base/testpoint.h"
#include "server/workers.h"

#include <errno.h>
#include <signal.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The client waits 20 s for each return line and exits without one
 * (GRIDMANAGER_GAHP_RESPONSE_TIMEOUT): the accept commit waits at most this
 * long for another process's journal lock, then answers F (doc/journal.md). */
#define ACCEPT_LOCK_WAIT_MS 17000L
/* Marking results delivered is best effort (a result delivered twice after
 * a restart is harmless): it must not delay reading the next command. */
#define DELIVERED_LOCK_WAIT_MS 500L

/* ---- line splitting ------------------------------------------------------ */

#define READ_CHUNK 65536

static void drop_overlong(line_reader *lr);

void line_reader_init(line_reader *lr, size_t max)
{
    memset(lr, 0, sizeof *lr);
    lr->max = max;
}

void line_reader_free(line_reader *lr)
{
    strbuf_free(&lr->buf);
}

/* Set once SIGTERM or SIGINT was taken (protocol_catch_termination): the
 * reader stops as at the end of stdin.  HTCondor 10.0-25.x end their GAHP
 * with SIGTERM (and close its stdin), not QUIT. */
static int termination;
static int termination_armed;
static sigset_t termination_set;

int protocol_catch_termination(void)
{
    /* No handler: main blocked both signals before any thread started, so
     * every thread inherited that and a SIGTERM stays pending for the
     * process until the reader takes it with sigtimedwait while it waits
     * for input.  Nothing runs in signal context (no race with a blocking
     * read, nothing a sanitizer runtime must defer). */
    sigemptyset(&termination_set);
    sigaddset(&termination_set, SIGTERM);
    sigaddset(&termination_set, SIGINT);
    sigset_t blocked;
    if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0 ||
        !sigismember(&blocked, SIGTERM) || !sigismember(&blocked, SIGINT))
        return -1;
    termination_armed = 1;
    return 0;
}

/* A pending SIGTERM or SIGINT, taken: 1; else 0. */
static int take_termination(void)
{
    static const struct timespec now = { 0, 0 };
    if (sigtimedwait(&termination_set, NULL, &now) > 0)
        termination = 1;
    return termination;
}

/* Wait until fd is readable: 1; 0 when SIGTERM or SIGINT came; -1 on
 * error.  Without protocol_catch_termination, 1 at once (read blocks).
 * The wait looks for the signals every 200 ms: its only cost. */
static int wait_readable(int fd)
{
    if (!termination_armed)
        return 1;
    for (;;) {
        if (take_termination())
            return 0;
        struct pollfd pfd = { fd, POLLIN, 0 };
        int n = poll(&pfd, 1, 200);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

int line_reader_fill(line_reader *lr, int fd)
{
    /* Read bigger chunks as a long line grows: fewer syscalls, and the
     * strbuf doubles, so a 50 MB line costs O(n) copying in total. */
    size_t want = READ_CHUNK;
    if (lr->buf.len - lr->start > 4 * READ_CHUNK)
        want = 4 * READ_CHUNK;
    if (strbuf_reserve(&lr->buf, want) != 0)
        return -1;
    int ready = wait_readable(fd);
    if (ready < 0)
        return -1;
    ssize_t n = 0;
    if (ready > 0) {
        do {
            n = read(fd, lr->buf.data + lr->buf.len, want);
        } while (n < 0 && errno == EINTR);
        if (n < 0)
            return -1;
    }
    if (n == 0) {
        lr->eof = 1;
        return 0;
    }
    lr->buf.len += (size_t)n;
    lr->buf.data[lr->buf.len] = '\0';
    return 1;
}

int line_reader_next(line_reader *lr, char **line, size_t *len)
{
    char *d = lr->buf.data;
    for (; lr->scan < lr->buf.len; lr->scan++) {
        char c = d[lr->scan];
        if (lr->escaped) {
            lr->escaped = 0;
            lr->prev_plain_cr = 0;
            continue;
        }
        if (c == '\\') {
            lr->escaped = 1;
            lr->prev_plain_cr = 0;
            continue;
        }
        if (c == '\n') {
            /* a refused line's length: every byte before its LF */
            size_t raw = lr->scan - lr->start + lr->dropped;
            int kind = lr->dropped > 0 || (lr->max > 0 && raw > lr->max) ? 2 : 1;
            size_t end = lr->scan;
            if (lr->prev_plain_cr && end > lr->start)
                end--;
            d[end] = '\0';
            *line = kind == 2 ? d + end : d + lr->start;   /* "": no request */
            *len = kind == 2 ? raw : end - lr->start;
            lr->scan++;
            lr->start = lr->scan;
            lr->prev_plain_cr = 0;
            lr->dropped = 0;
            return kind;
        }
        lr->prev_plain_cr = (c == '\r');
    }
    drop_overlong(lr);
    return 0;
}

/*
 * A line past max without its end: its bytes so far are dropped, and so
 * are the next ones as they are scanned, until the LF (issue 29 #6: a
 * 1 GB line was buffered whole before its E).  The escape state is kept:
 * an escaped LF still does not end it.
 */
static void drop_overlong(line_reader *lr)
{
    size_t have = lr->buf.len - lr->start;
    if (lr->max == 0 || (lr->dropped == 0 && have <= lr->max))
        return;
    lr->dropped += have;
    lr->buf.len = lr->scan = lr->start;
    lr->buf.data[lr->buf.len] = '\0';
}

int line_reader_rest(line_reader *lr, char **line, size_t *len)
{
    if (lr->start >= lr->buf.len && lr->dropped == 0)
        return 0;
    *line = lr->buf.data + lr->start;
    *len = lr->buf.len - lr->start + lr->dropped;
    lr->dropped = 0;
    lr->start = lr->scan = lr->buf.len;
    return 1;
}

/* A reader buffer above this size that holds nothing is given back: one
 * big request's line (6 MB for 100,000 jobs) is not kept for the next. */
#define LINE_KEEP_BYTES (1024 * 1024)

void line_reader_compact(line_reader *lr)
{
    if (lr->start == 0)
        return;
    size_t rest = lr->buf.len - lr->start;
    if (rest == 0 && lr->buf.cap > LINE_KEEP_BYTES) {
        strbuf_free(&lr->buf);
        lr->scan = lr->start = 0;
        return;
    }
    memmove(lr->buf.data, lr->buf.data + lr->start, rest);
    lr->buf.len = rest;
    lr->buf.data[rest] = '\0';
    lr->scan -= lr->start;
    lr->start = 0;
}

/* ---- pending request ids ------------------------------------------------- */

/* Open-addressing set of client ids that are accepted but not yet
 * delivered (a new request may not reuse one).  Reader thread only. */
typedef struct {
    long *slots;                /* 0 empty, -1 deleted */
    size_t cap, used, live;
} idset;

static size_t id_hash(long id, size_t cap)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

static int idset_grow(idset *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    while (s->live * 2 >= cap)
        cap *= 2;
    long *slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (size_t i = 0; i < s->cap; i++) {
        long id = s->slots[i];
        if (id <= 0)
            continue;
        size_t h = id_hash(id, cap);
        while (slots[h] != 0)
            h = (h + 1) & (cap - 1);
        slots[h] = id;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    s->used = s->live;
    return 0;
}

static long *idset_find(const idset *s, long id)
{
    if (s->cap == 0)
        return NULL;
    size_t h = id_hash(id, s->cap);
    while (s->slots[h] != 0) {
        if (s->slots[h] == id)
            return &s->slots[h];
        h = (h + 1) & (s->cap - 1);
    }
    return NULL;
}

static int idset_add(idset *s, long id)
{
    if ((s->used + 1) * 2 > s->cap && idset_grow(s) != 0)
        return -1;
    size_t h = id_hash(id, s->cap);
    while (s->slots[h] > 0)
        h = (h + 1) & (s->cap - 1);
    if (s->slots[h] == 0)
        s->used++;
    s->slots[h] = id;
    s->live++;
    return 0;
}

static void idset_remove(idset *s, long id)
{
    long *slot = idset_find(s, id);
    if (slot != NULL) {
        *slot = -1;
        s->live--;
    }
}

/* ---- the server ---------------------------------------------------------- */

typedef struct {
    const char *text;           /* literal return line (without prefix) */
    char *owned;                /* malloc'd text to free, or NULL */
    gahp_request *req;          /* async request: "S" or "F" after commit */
} pending_line;

struct protocol {
    int in_fd, out_fd;
    const gahp_config *cfg;
    journal *j;
    long long session_id;
    struct workers *w;

    pthread_mutex_t write_mu;   /* whole-line output; guards the fields below */
    char *prefix;
    int async_mode;
    int r_sent;                 /* R written since the last RESULTS */
    int out_broken;

    char *url, *auth;           /* selected project */
    char *select_error;         /* why the selected project cannot be used
                                 * (then url is NULL); its commands' result */
    char *cache_url, *cache_auth;   /* last project id looked up */
    long long cache_project_id;

    idset pending;
    pending_line *lines;
    size_t nlines, cap;
    line_reader lr;
    gahp_args args;
    strbuf out;
    int quit;
};

/* Return lines the queue always has room for (see queue_line). */
#define LINES_RESERVED 256

protocol *protocol_new(int in_fd, int out_fd, const gahp_config *cfg,
                       journal *j, long long session_id)
{
    protocol *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->in_fd = in_fd;
    p->out_fd = out_fd;
    p->cfg = cfg;
    p->j = j;
    p->session_id = session_id;
    p->lines = calloc(LINES_RESERVED, sizeof *p->lines);
    if (p->lines == NULL) {
        free(p);
        return NULL;
    }
    p->cap = LINES_RESERVED;
    pthread_mutex_init(&p->write_mu, NULL);
    line_reader_init(&p->lr, GAHP_MAX_LINE_BYTES);
    return p;
}

void protocol_set_workers(protocol *p, struct workers *w)
{
    p->w = w;
}

static void clear_secret(char **s)
{
    if (*s != NULL)
        memset(*s, 0, strlen(*s));
    free(*s);
    *s = NULL;
}

void protocol_free(protocol *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->nlines; i++) {
        free(p->lines[i].owned);
        gahp_request_free(p->lines[i].req);
    }
    free(p->lines);
    free(p->prefix);
    free(p->url);
    clear_secret(&p->auth);
    free(p->select_error);
    free(p->cache_url);
    clear_secret(&p->cache_auth);
    free(p->pending.slots);
    line_reader_free(&p->lr);
    gahp_args_free(&p->args);
    strbuf_free(&p->out);
    pthread_mutex_destroy(&p->write_mu);
    free(p);
}

/* Write sb under write_mu (caller holds it). */
static int write_locked(protocol *p, const strbuf *sb)
{
    if (p->out_broken)
        return -1;
    if (files_write_all(p->out_fd, sb->data ? sb->data : "", sb->len) != 0) {
        log_error("cannot write to stdout: %s", strerror(errno));
        p->out_broken = 1;
        return -1;
    }
    return 0;
}

static int put_line(protocol *p, strbuf *sb, const char *text)
{
    if (p->prefix != NULL && strbuf_puts(sb, p->prefix) != 0)
        return -1;
    if (strbuf_puts(sb, text) != 0 || strbuf_putc(sb, '\n') != 0)
        return -1;
    return 0;
}

int protocol_banner(protocol *p)
{
    strbuf sb = STRBUF_INIT;
    int rc = strbuf_puts(&sb, GAHP_VERSION_STRING) == 0 && strbuf_putc(&sb, '\n') == 0
                 ? 0 : -1;
    pthread_mutex_lock(&p->write_mu);
    if (rc == 0)
        rc = write_locked(p, &sb);
    pthread_mutex_unlock(&p->write_mu);
    strbuf_free(&sb);
    return rc;
}

static int flush_burst(protocol *p);

/*
 * Queue the return line of one command.  Every command must get exactly
 * one return line, in order, or the client desynchronises: when the queue
 * cannot grow, the burst so far is flushed (committed and written) and the
 * line takes the freed room; the queue never shrinks below
 * LINES_RESERVED, reserved by protocol_new.
 */
static int queue_line(protocol *p, const char *text, char *owned, gahp_request *req)
{
    if (p->nlines == p->cap) {
        size_t cap = p->cap * 2;
        pending_line *v = testfault("nomem", "queue_line") ? NULL
                                                           : realloc(p->lines, cap * sizeof *v);
        if (v != NULL) {
            p->lines = v;
            p->cap = cap;
        } else {
            log_warn("out of memory growing the return-line queue: flushing "
                     "%zu lines early", p->nlines);
            flush_burst(p);
        }
    }
    p->lines[p->nlines++] = (pending_line){ text, owned, req };
    return 0;
}

/* Project id of req's project inside the burst transaction (cached). */
static int request_project_id(protocol *p, gahp_request *req)
{
    if (req->project_url == NULL)
        return 0;
    if (p->cache_url != NULL && strcmp(p->cache_url, req->project_url) == 0 &&
        strcmp(p->cache_auth, req->authenticator) == 0) {
        req->project_id = p->cache_project_id;
        return 0;
    }
    if (journal_project_id(p->j, req->project_url, req->authenticator,
                           &req->project_id) != 0)
        return -1;
    char *u = strdup(req->project_url), *a = strdup(req->authenticator);
    if (u == NULL || a == NULL) {
        free(u);
        free(a);
        return 0;               /* cache is only an optimisation */
    }
    free(p->cache_url);
    clear_secret(&p->cache_auth);
    p->cache_url = u;
    p->cache_auth = a;
    p->cache_project_id = req->project_id;
    return 0;
}

static void forget_project_cache(protocol *p)
{
    free(p->cache_url);
    p->cache_url = NULL;
    clear_secret(&p->cache_auth);
}

/* Insert every queued request in one transaction.  0 = all committed. */
static int commit_requests(protocol *p)
{
    size_t nreq = 0;
    for (size_t i = 0; i < p->nlines; i++)
        nreq += p->lines[i].req != NULL;
    if (nreq == 0)
        return 0;
    if (journal_begin(p->j) != 0)
        return -1;
    double now = journal_now();
    for (size_t i = 0; i < p->nlines; i++) {
        gahp_request *r = p->lines[i].req;
        if (r == NULL)
            continue;
        if (request_project_id(p, r) != 0 ||
            journal_request_insert(p->j, p->session_id, r->id,
                                   r->row->name, r->args_text,
                                   r->project_id, now, &r->journal_id) != 0) {
            journal_rollback(p->j);
            forget_project_cache(p);    /* its row may have been rolled back */
            return -1;
        }
    }
    if (journal_commit(p->j) != 0) {
        forget_project_cache(p);
        return -1;
    }
    return 0;
}

/* Commit the burst, write its return lines, hand requests to the workers. */
static int flush_burst(protocol *p)
{
    if (p->nlines == 0)
        return 0;
    int committed = commit_requests(p) == 0;
    if (!committed)
        log_error("journal write failed: answering F to this burst's requests");
    strbuf_reset(&p->out);
    int rc = 0;
    pthread_mutex_lock(&p->write_mu);
    for (size_t i = 0; i < p->nlines && rc == 0; i++) {
        const char *text = p->lines[i].req ? (committed ? "S" : "F") : p->lines[i].text;
        rc = put_line(p, &p->out, text);
    }
    if (rc == 0)
        rc = write_locked(p, &p->out);
    else
        log_error("out of memory formatting return lines");
    pthread_mutex_unlock(&p->write_mu);
    for (size_t i = 0; i < p->nlines; i++) {
        pending_line *l = &p->lines[i];
        free(l->owned);
        if (l->req != NULL) {
            if (committed && p->w != NULL) {
                workers_submit(p->w, l->req);
            } else {
                idset_remove(&p->pending, l->req->id);
                gahp_request_free(l->req);
            }
        }
    }
    p->nlines = 0;
    if (p->out.cap > 1 << 20) {
        strbuf_free(&p->out);   /* do not keep a huge buffer around */
    }
    return rc;
}

/* The reader thread's journal lock wait: --busy-timeout, capped so that
 * a return line always comes within the client's 20 s. */
static long accept_lock_wait(const protocol *p)
{
    if (p->cfg != NULL && p->cfg->busy_timeout_ms < ACCEPT_LOCK_WAIT_MS)
        return p->cfg->busy_timeout_ms;
    return ACCEPT_LOCK_WAIT_MS;
}

static void do_results(protocol *p)
{
    size_t n = 0;
    strbuf sb = STRBUF_INIT;
    char head[32];
    pthread_mutex_lock(&p->write_mu);
    gahp_result *list = p->w ? workers_take_results(p->w, &n) : NULL;
    /* results taken, not yet written: a crash here must lose none */
    if (n > 0)
        testpoint("results.taken");
    p->r_sent = 0;
    snprintf(head, sizeof head, "S %zu", n);
    int rc = put_line(p, &sb, head);
    for (gahp_result *r = list; r != NULL && rc == 0; r = r->next)
        rc = put_line(p, &sb, r->line);
    if (rc == 0)
        rc = write_locked(p, &sb);
    else
        log_error("out of memory formatting RESULTS");
    pthread_mutex_unlock(&p->write_mu);
    strbuf_free(&sb);
    if (rc != 0) {
        /* Not delivered: they stay completed in the journal. */
        workers_results_free(list);
        return;
    }
    long long *rows = n ? malloc(n * sizeof *rows) : NULL;
    size_t k = 0;
    for (gahp_result *r = list; r != NULL; r = r->next) {
        idset_remove(&p->pending, r->client_id);
        if (rows != NULL)
            rows[k++] = r->request_row;
    }
    journal_set_lock_wait(p->j, DELIVERED_LOCK_WAIT_MS);
    int marked = n == 0 || (rows != NULL &&
                            journal_requests_delivered(p->j, rows, k, journal_now()) == 0);
    journal_set_lock_wait(p->j, accept_lock_wait(p));
    if (!marked)
        log_warn("could not mark %zu results delivered; they may be delivered "
                 "again after a restart", n);
    free(rows);
    workers_results_free(list);
}

void protocol_results_ready(void *protocol_ptr)
{
    protocol *p = protocol_ptr;
    pthread_mutex_lock(&p->write_mu);
    if (p->async_mode && !p->r_sent && !p->out_broken && p->w != NULL &&
        workers_has_results(p->w)) {
        strbuf sb = STRBUF_INIT;
        if (put_line(p, &sb, "R") == 0 && write_locked(p, &sb) == 0)
            p->r_sent = 1;
        strbuf_free(&sb);
    }
    pthread_mutex_unlock(&p->write_mu);
}

/* Forget the selection (and why it was unusable). */
static void clear_selection(protocol *p)
{
    free(p->url);
    p->url = NULL;
    clear_secret(&p->auth);
    free(p->select_error);
    p->select_error = NULL;
}

/*
 * A well-framed BOINC_SELECT_PROJECT always succeeds: HTCondor 9.0 exits
 * on any other reply (EXCEPT "useBoincResource() failed!") and its
 * successor sends the same line again, forever, stopping every BOINC job
 * of the user.  An unusable project (a URL that is not http/https, an
 * empty authenticator) is remembered with the reason, which becomes the
 * error result of each of its commands (a submit's is the hold reason).
 * -1 only when memory ran out.
 */
int protocol_select_project(protocol *p, const char *url, const char *auth)
{
    clear_selection(p);
    const char *why_url = NULL;
    char *norm = auth[0] != '\0' ? url_normalize(url, &why_url) : NULL;
    if (norm == NULL && auth[0] != '\0' && why_url == NULL)
        return -1;
    if (norm == NULL) {
        /* Neither the URL (it may carry a password) nor the authenticator
         * goes into the message or the log. */
        const char *why = auth[0] == '\0'
            ? "the authenticator is empty (check boinc_authenticator_file)"
            : why_url;
        p->select_error = str_printf("BOINC_SELECT_PROJECT: %s%s", why,
                                     auth[0] == '\0' ? "" : " (check grid_resource)");
        if (p->select_error == NULL)
            return -1;
        log_warn("%s; this project's commands get that error", p->select_error);
        return 0;
    }
    char *a = strdup(auth);
    if (a == NULL) {
        free(norm);
        return -1;
    }
    p->url = norm;
    p->auth = a;
    return 0;
}

/* The selected project's URL and authenticator (or why it is unusable)
 * onto a request.  0, or -1 when memory ran out. */
static int attach_project(protocol *p, gahp_request *req)
{
    if (p->select_error != NULL) {
        if (req->value_error != NULL)
            return 0;           /* the request's own error comes first */
        req->value_error = strdup(p->select_error);
        return req->value_error != NULL ? 0 : -1;
    }
    if (p->url == NULL)
        return 0;
    req->project_url = strdup(p->url);
    req->authenticator = strdup(p->auth);
    return req->project_url != NULL && req->authenticator != NULL ? 0 : -1;
}

static int handle_async(protocol *p, const command_row *c, gahp_args *a)
{
    gahp_request *req;
    const char *why;
    if (command_parse(c, a->argv, a->argc, &req, &why) != 0) {
        log_info("E for %s: %s", a->argv[0], why);
        return queue_line(p, "E", NULL, NULL);
    }
    if (idset_find(&p->pending, req->id) != NULL) {
        log_info("E for %s: request id %ld is still pending", a->argv[0], req->id);
        gahp_request_free(req);
        return queue_line(p, "E", NULL, NULL);
    }
    if (attach_project(p, req) != 0) {
        gahp_request_free(req);
        return queue_line(p, "F", NULL, NULL);
    }
    if (idset_add(&p->pending, req->id) != 0) {
        gahp_request_free(req);
        return queue_line(p, "F", NULL, NULL);
    }
    return queue_line(p, NULL, NULL, req);
}

int protocol_mark_pending(protocol *p, long id)
{
    if (idset_find(&p->pending, id) != NULL)
        return 0;
    return idset_add(&p->pending, id);
}

static void set_prefix(protocol *p, const char *prefix)
{
    char *copy = *prefix ? strdup(prefix) : NULL;
    pthread_mutex_lock(&p->write_mu);
    free(p->prefix);
    p->prefix = copy;
    pthread_mutex_unlock(&p->write_mu);
}

static void set_async(protocol *p, int on)
{
    pthread_mutex_lock(&p->write_mu);
    p->async_mode = on;
    p->r_sent = 0;
    pthread_mutex_unlock(&p->write_mu);
}

/* "S <version>": exactly two tokens (the client checks). */
static char *version_reply(void)
{
    strbuf sb = STRBUF_INIT;
    if (strbuf_puts(&sb, "S ") != 0 || gahp_escape_append(&sb, GAHP_VERSION_STRING) != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* The return line of a synchronous command with the right field count,
 * before the burst is flushed.  *owned: a malloc'd reply to free. */
static const char *sync_reply(protocol *p, const command_row *c, gahp_args *a,
                              char **owned)
{
    switch (c->sync) {
    case SYNC_COMMANDS:
        return command_list_reply();
    case SYNC_VERSION: {
        strbuf sb = STRBUF_INIT;
        if (strbuf_printf(&sb, "S %s", GAHP_VERSION_STRING) != 0) {
            strbuf_free(&sb);
            return "F";
        }
        return *owned = strbuf_detach(&sb);
    }
    case SYNC_CONDOR_VERSION:
        if (journal_session_set_condor_version(p->j, p->session_id, a->argv[1]) != 0)
            log_warn("could not journal CONDOR_VERSION");
        *owned = version_reply();
        return *owned ? *owned : "F";
    case SYNC_RESPONSE_PREFIX:
        return strpbrk(a->argv[1], "\r\n") == NULL ? "S" : "E";
    case SYNC_SELECT_PROJECT:
        return protocol_select_project(p, a->argv[1], a->argv[2]) == 0 ? "S" : "F";
    case SYNC_RESULTS:
        return NULL;            /* writes its own reply */
    default:
        return "S";
    }
}

/* The effect of a synchronous command, after its reply (and, per the
 * table, the burst) went out. */
static void sync_effect(protocol *p, const command_row *c, gahp_args *a)
{
    switch (c->sync) {
    case SYNC_QUIT: p->quit = 1; break;
    case SYNC_RESULTS: do_results(p); break;
    case SYNC_ASYNC_MODE_ON: set_async(p, 1); break;
    case SYNC_ASYNC_MODE_OFF: set_async(p, 0); break;
    case SYNC_RESPONSE_PREFIX: set_prefix(p, a->argv[1]); break;
    default: break;
    }
}

static void handle_sync(protocol *p, const command_row *c, gahp_args *a)
{
    if (a->argc != c->argc) {
        log_info("E for %s: %zu fields, expected %zu", c->name, a->argc - 1, c->argc - 1);
        queue_line(p, "E", NULL, NULL);
        return;
    }
    if (c->burst == BURST_FLUSH_BEFORE)
        flush_burst(p);
    char *owned = NULL;
    const char *reply = sync_reply(p, c, a, &owned);
    int ok = reply == NULL || strcmp(reply, "S") == 0;
    if (reply != NULL)
        queue_line(p, reply, owned, NULL);
    if (c->burst == BURST_FLUSH_AFTER)
        flush_burst(p);
    if (ok)
        sync_effect(p, c, a);
}

static const char *tok_reason(gahp_tok_status st)
{
    switch (st) {
    case GAHP_TOK_NOMEM: return "out of memory";
    case GAHP_TOK_BAD_CHAR: return "NUL byte in the line";
    case GAHP_TOK_TRAILING_ESCAPE: return "line ends in a lone backslash";
    case GAHP_TOK_EMPTY: return "empty line";
    default: return "ok";
    }
}

static void handle_line(protocol *p, char *line, size_t len);

/* A line longer than GAHP_MAX_LINE_BYTES (already dropped) or a request. */
static void handle_input(protocol *p, int kind, char *line, size_t len)
{
    if (kind == 2) {
        log_info("E: a line of %zu bytes, longer than the limit of %zu",
                 len, (size_t)GAHP_MAX_LINE_BYTES);
        queue_line(p, "E", NULL, NULL);
        return;
    }
    handle_line(p, line, len);
}

/* A token array of up to this many slots is kept from line to line. */
#define ARGS_KEEP 4096

static void handle_line(protocol *p, char *line, size_t len)
{
    gahp_tok_status st = gahp_tokenize(line, len, &p->args);
    const command_row *c = NULL;
    if (st != GAHP_TOK_OK) {
        log_info("E: %s", tok_reason(st));
        queue_line(p, "E", NULL, NULL);
    } else if ((c = command_find(p->args.argv[0])) == NULL) {
        log_info("E: unknown command");
        queue_line(p, "E", NULL, NULL);
    } else if (c->sync != SYNC_NONE) {
        handle_sync(p, c, &p->args);
    } else {
        handle_async(p, c, &p->args);
    }
    /* the tokens of a big line (500,000 for 100,000 jobs) are not kept */
    if (p->args.cap > ARGS_KEEP)
        gahp_args_free(&p->args);
}

/* out_broken is written under write_mu by whichever thread writes. */
static int output_broken(protocol *p)
{
    pthread_mutex_lock(&p->write_mu);
    int broken = p->out_broken;
    pthread_mutex_unlock(&p->write_mu);
    return broken;
}

int protocol_run(protocol *p)
{
    int rc = 0;
    journal_set_lock_wait(p->j, accept_lock_wait(p));
    /* Start-up recovery is over: this thread uses its connection only
     * inside write transactions from here on (commit_requests, do_results,
     * CONDOR_VERSION), so the committer may commit through it too. */
    if (p->w != NULL)
        workers_commit_through(p->w, p->j);
    char *line;
    size_t len;
    while (!p->quit && !output_broken(p)) {
        int kind;
        while (!p->quit && (kind = line_reader_next(&p->lr, &line, &len)) != 0)
            handle_input(p, kind, line, len);
        flush_burst(p);
        if (p->quit || output_broken(p))
            break;
        line_reader_compact(&p->lr);
        int r = line_reader_fill(&p->lr, p->in_fd);
        if (r < 0) {
            log_error("cannot read stdin: %s", strerror(errno));
            rc = -1;
            break;
        }
        if (r == 0) {
            /* EOF acts like QUIT.  Only LF-terminated lines are requests:
             * a fragment cut short by the client's death (issue 10 #4)
             * is logged, by its length only, and dropped. */
            if ((kind = line_reader_next(&p->lr, &line, &len)) != 0)
                handle_input(p, kind, line, len);
            else if (line_reader_rest(&p->lr, &line, &len))
                log_warn("stdin closed in the middle of a line: ignored "
                         "%zu bytes without a line end", len);
            flush_burst(p);
            log_info(termination ? "SIGTERM or SIGINT: shutting down"
                                 : "stdin closed: shutting down");
            break;
        }
    }
    return output_broken(p) ? -1 : rc;
}
