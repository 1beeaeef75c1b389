/*
 * submit_inputs.c - the inputs of a submit (see submit_inputs.h): the
 * plan (hashing and physical names), then the hash pool it runs on, then
 * the store of kept input bytes it fills for the upload.
 */
#include "submit/submit_inputs.h"

#include "base/files.h"
#include "submit/engine.h"
#include "journal/journal_files.h"
#include "base/log.h"
#include "base/pages.h"
#include "base/strbuf.h"
#include "base/strset.h"
#include "base/tasks.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * The distinct local files of one submit, indexed by absolute path; every
 * per-slot array is written by one pool item only (the slot's), so the
 * stat and hash passes need no locking.
 */
typedef struct {
    strset *index;              /* absolute path -> slot (insertion order) */
    char *cwd;                  /* getcwd() once, for relative paths */
    char **paths;               /* slot -> absolute path */
    unsigned char *path_owned;  /* slot -> paths[slot] is the plan's copy (a
                                   relative input made absolute); else it is
                                   the request's own text, which outlives the plan */
    char (*md5)[33];
    long long *sizes;
    files_stat_key *keys;       /* slot -> the cache's key, then the hashed one on a miss */
    unsigned char *hit;         /* slot -> the cache has the path; after the
                                   pass: its MD5 came from the cache */
    unsigned char **kept;       /* slot -> its bytes from the hash, in hold_pages */
    char **errmsg;              /* slot -> message of a failed stat/hash */
    unsigned char *failed;      /* slot -> stat or hash failed */
    size_t n;
    size_t *slot_of_input;      /* job input k -> its slot */
    size_t *miss;               /* cache misses: the slots hashed (after the pass) */
    size_t nmiss;
    long long hold_cap;         /* bytes this submit may keep (input_hold_budget) */
    atomic_llong hold_used;     /* bytes of the budget it reserved; the pool's items add to it */
    page_region *hold_pages;    /* the kept bytes, until the store takes them (NULL: none) */
    double t_hash;              /* seconds spent hashing the misses */
    submit_progress progress;   /* of the hashing, for the log */
} input_plan;

static void plan_free(input_plan *t)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->path_owned[i])
            free(t->paths[i]);
        files_stat_key_free(&t->keys[i]);
        free(t->errmsg[i]);
    }
    if (t->hold_pages != NULL) {
        page_region_free(t->hold_pages);
        input_hold_unreserve(atomic_load(&t->hold_used));
    }
    free(t->kept);
    free(t->cwd);
    free(t->paths);
    free(t->path_owned);
    free(t->md5);
    free(t->sizes);
    free(t->keys);
    free(t->hit);
    free(t->errmsg);
    free(t->failed);
    free(t->slot_of_input);
    free(t->miss);
    strset_free(t->index);
}

static int plan_alloc(input_plan *t, size_t ninputs)
{
    size_t cap = ninputs ? ninputs : 1;
    t->index = strset_new(ninputs);
    t->paths = calloc(cap, sizeof *t->paths);
    t->path_owned = calloc(cap, sizeof *t->path_owned);
    t->md5 = calloc(cap, sizeof *t->md5);
    t->sizes = calloc(cap, sizeof *t->sizes);
    t->keys = calloc(cap, sizeof *t->keys);
    t->hit = calloc(cap, sizeof *t->hit);
    t->errmsg = calloc(cap, sizeof *t->errmsg);
    t->kept = calloc(cap, sizeof *t->kept);
    t->failed = calloc(cap, sizeof *t->failed);
    t->slot_of_input = calloc(cap, sizeof *t->slot_of_input);
    t->miss = calloc(cap, sizeof *t->miss);
    return t->index && t->paths && t->path_owned && t->md5 && t->sizes && t->keys && t->hit &&
                   t->kept && t->errmsg && t->failed && t->slot_of_input && t->miss ? 0 : -1;
}

static char *current_dir(void)
{
    size_t cap = 256;
    for (;;) {
        char *buf = malloc(cap);
        if (buf == NULL)
            return NULL;
        if (getcwd(buf, cap) != NULL)
            return buf;
        free(buf);
        if (errno != ERANGE || cap > (1u << 20))
            return NULL;
        cap *= 2;
    }
}

/* path made absolute against the working directory (read once per
 * submit): an absolute path is the request's own text (*owned = 0, no
 * copy: a 100,000-file batch's paths are not held twice), a relative one
 * a new string (*owned = 1). */
static char *absolute_path(input_plan *t, const char *path, int *owned)
{
    *owned = path[0] != '/';
    if (!*owned)
        return (char *)path;
    if (t->cwd == NULL && (t->cwd = current_dir()) == NULL)
        return NULL;
    return str_printf("%s/%s", t->cwd, path);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The input's own problem: blamed on it (exec_err_blame), so that the
 * BLAH dialect holds its job alone. */
static int fail_input(submit_run *r, char *msg, const char *path)
{
    int rc = engine_fail_input(r, -1, EXEC_E_LOCAL, "input file", msg ? msg : path, path,
                               msg ? msg : path);
    free(msg);
    return rc;
}

/* A real clock (not the test clock): this measures work, it times nothing. */
static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A share of this submit's hold budget and then of the process's: 1 when
 * both grant size bytes. */
static int plan_hold_reserve(input_plan *t, long long size)
{
    long long now = atomic_load(&t->hold_used);
    do {
        if (size < 0 || now + size > t->hold_cap)
            return 0;
    } while (!atomic_compare_exchange_weak(&t->hold_used, &now, now + size));
    if (input_hold_reserve(size))
        return 1;
    atomic_fetch_sub(&t->hold_used, size);
    return 0;
}

static void plan_hold_unreserve(input_plan *t, long long size)
{
    atomic_fetch_sub(&t->hold_used, size);
    input_hold_unreserve(size);
}

/* A slot being hashed, for keep_slot. */
typedef struct {
    input_plan *t;
    size_t slot;
} hash_item;

/* files_keep_fn: room in the plan's region for a new file's bytes, kept
 * for its upload when the hold budget grants its size (a new file is
 * likely absent on the server: read once, not twice).  Room once given
 * stays reserved until the region goes, even if the hash then fails: the
 * region's bytes never exceed what the budget granted. */
static void *keep_slot(long long size, void *arg)
{
    hash_item *h = arg;
    input_plan *t = h->t;
    if (t->hold_pages == NULL || !plan_hold_reserve(t, size))
        return NULL;
    void *room = page_region_alloc(t->hold_pages, (size_t)size + 1);
    if (room == NULL)
        plan_hold_unreserve(t, size);
    return room;
}

/* Hash a slot's file.  Its key becomes the one from the fstat of the
 * hashed descriptor (files_md5_hex_kept). */
static void hash_slot(input_plan *t, size_t slot)
{
    hash_item h = { t, slot };
    files_stat_key_free(&t->keys[slot]);
    if (files_md5_hex_kept(t->paths[slot], t->md5[slot], &t->sizes[slot], &t->keys[slot],
                           keep_slot, &h, &t->kept[slot], &t->errmsg[slot]) != 0)
        t->failed[slot] = 1;
    submit_progress_add(&t->progress, 1, t->failed[slot] ? 0 : t->sizes[slot]);
}

/* The cache's key and a fresh stat name the same content: path, size,
 * mtime and inode as the journal keeps them. */
static int same_key(const files_stat_key *cached, const files_stat_key *now)
{
    return cached->size == now->size && cached->mtime_sec == now->mtime_sec &&
           cached->mtime_nsec == now->mtime_nsec && cached->inode == now->inode;
}

/*
 * Pool item: the one pass over a distinct file.  A path the cache has is
 * stat'ed (files_stat: a readable regular file) and its digest taken when
 * the key still matches; any other file is opened and hashed at once: the
 * open and fstat of the hashing are its checks, so a new file costs open,
 * fstat, read, fstat and close, not a stat and an access before them.
 */
static void plan_slot(size_t slot, void *arg)
{
    input_plan *t = arg;
    if (t->hit[slot]) {
        files_stat_key now;
        if (files_stat(t->paths[slot], &now, &t->errmsg[slot]) != 0) {
            t->hit[slot] = 0;
            t->failed[slot] = 1;
            return;
        }
        int same = same_key(&t->keys[slot], &now);
        t->sizes[slot] = now.size;
        files_stat_key_free(&now);
        if (same)
            return;
        t->hit[slot] = 0;
    }
    hash_slot(t, slot);
}

/* The first failed slot in first-use order fails the submit, with the
 * message a serial pass would have stopped at.  0 if none failed. */
static int first_failure(submit_run *r, input_plan *t)
{
    for (size_t slot = 0; slot < t->n; slot++) {
        if (t->failed[slot]) {
            char *msg = t->errmsg[slot];
            t->errmsg[slot] = NULL;
            return fail_input(r, msg, t->paths[slot]);
        }
    }
    return 0;
}

/* Look every path up in the MD5 cache at once, then one pass over the
 * distinct files on the hash pool (plan_slot).  Every file is visited even
 * after one fails, the first failure in first-use order is the one
 * reported: the message a serial pass would have stopped at. */
static int hash_slots(submit_run *r, input_plan *t, size_t *nread)
{
    if (journal_md5_find(r->ctx->journal, (const char *const *)t->paths, t->n, t->keys,
                         t->md5, t->hit) != 0)
        return engine_fail_journal(r);
    size_t uncached = 0;
    for (size_t i = 0; i < t->n; i++)
        uncached += !t->hit[i];
    t->hold_cap = input_hold_budget(uncached);
    /* Address space for the budget, plus each file's extra byte (keep_slot)
     * and the region's own overhead; only what is written becomes
     * resident.  Without it the files are read again at upload. */
    if (uncached > 0 && t->hold_cap > 0)
        t->hold_pages = page_region_new((size_t)t->hold_cap +
                                        uncached * (1 + PAGE_REGION_OVERHEAD));
    submit_progress_init(&t->progress, r->s->batch, "hashed", uncached, -1);
    t->t_hash = monotonic_seconds();
    hash_pool_run(t->n, plan_slot, t);
    t->t_hash = monotonic_seconds() - t->t_hash;
    submit_progress_destroy(&t->progress);
    if (first_failure(r, t) != 0)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        if (!t->hit[i])
            t->miss[t->nmiss++] = i;
    }
    *nread = t->nmiss;
    return 0;
}

/* Where the planning time went: for make bench and for users who wonder
 * what a submit spends before its first RPC. */
static void log_plan(submit_run *r, const input_plan *t, double t_start)
{
    long long bytes = 0;
    for (size_t i = 0; i < t->nmiss; i++)
        bytes += t->sizes[t->miss[i]];
    log_info("submit %s: inputs planned in %.3f s: %zu distinct files, hashed %zu files,"
             " %lld bytes in %.3f s on %u threads",
             r->s->batch, monotonic_seconds() - t_start, t->n, t->nmiss, bytes, t->t_hash,
             hash_pool_threads(t->nmiss));
}

/* The slot of one job input: found in the index, or a new one. */
static int index_input(submit_run *r, input_plan *t, const char *src, size_t k)
{
    int owned = 0;
    char *abs = absolute_path(t, src, &owned);
    if (abs == NULL)
        return engine_fail(r, -1, EXEC_E_LOCAL, "input file", src);
    long slot = strset_index(t->index, abs);
    if (slot >= 0) {
        if (owned)
            free(abs);
    } else {
        if (strset_add(t->index, abs) < 0) {
            if (owned)
                free(abs);
            return engine_fail_nomem(r);
        }
        slot = (long)t->n;
        t->path_owned[t->n] = (unsigned char)owned;
        t->paths[t->n++] = abs;
    }
    t->slot_of_input[k] = (size_t)slot;
    return 0;
}

/* Slots whose bytes were kept: the store is sized for them, not for every
 * hashed file (a big batch keeps few within its budget). */
static size_t count_kept(const input_plan *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->kept[i] != NULL;
    return n;
}

/* Physical name of every job input, from its slot's MD5; a slot's kept
 * bytes go to r->hold under the name of its first input. */
static int name_inputs(submit_run *r, input_plan *t)
{
    size_t k = 0;
    for (size_t i = 0; i < r->s->njobs; i++) {
        for (size_t f = 0; f < r->s->jobs[i].ninputs; f++, k++) {
            const char *src = r->s->jobs[i].inputs[f].src_path;
            size_t slot = t->slot_of_input[k];
            r->input_phys[k] = boinc_phys_name(t->md5[slot], base_name(src));
            if (r->input_phys[k] == NULL)
                return engine_fail(r, -1, EXEC_E_LOCAL, "input file",
                                "cannot form a physical name");
            if (t->kept[slot] == NULL)
                continue;
            if (r->hold == NULL) {
                /* the store takes the region and its reservation */
                r->hold = input_hold_new(count_kept(t), t->hold_pages,
                                         atomic_load(&t->hold_used));
                if (r->hold == NULL)
                    return engine_fail_nomem(r);
                t->hold_pages = NULL;
            }
            int kept = input_hold_put(r->hold, r->input_phys[k], t->kept[slot],
                                      t->sizes[slot]);
            t->kept[slot] = NULL;
            if (kept < 0)
                return engine_fail_nomem(r);
        }
    }
    return 0;
}

static int store_new_hashes(submit_run *r, input_plan *t)
{
    const files_stat_key **keyp = calloc(t->nmiss ? t->nmiss : 1, sizeof *keyp);
    const char **md5p = calloc(t->nmiss ? t->nmiss : 1, sizeof *md5p);
    if (keyp == NULL || md5p == NULL) {
        free(keyp);
        free(md5p);
        return engine_fail_nomem(r);
    }
    for (size_t i = 0; i < t->nmiss; i++) {
        keyp[i] = &t->keys[t->miss[i]];
        md5p[i] = t->md5[t->miss[i]];
    }
    int rc = journal_md5_store(r->ctx->journal, keyp, md5p, t->nmiss);
    free(keyp);
    free(md5p);
    return rc != 0 ? engine_fail_journal(r) : 0;
}

/* Journal the batch's distinct physical files, in first-use order. */
static int record_batch_files(submit_run *r, input_plan *t)
{
    journal_batch_file *bf = calloc(r->ninputs ? r->ninputs : 1, sizeof *bf);
    strset *phys_seen = strset_new(t->n);
    int rc = -1;
    if (bf == NULL || phys_seen == NULL) {
        engine_fail_nomem(r);
        goto out;
    }
    size_t nbf = 0;
    for (size_t k = 0; k < r->ninputs; k++) {
        int added = strset_add(phys_seen, r->input_phys[k]);
        if (added < 0) {
            engine_fail_nomem(r);
            goto out;
        }
        if (added == 0)
            continue;
        size_t slot = t->slot_of_input[k];
        bf[nbf].phys_name = r->input_phys[k];
        bf[nbf].local_path = t->paths[slot];
        bf[nbf].size = t->sizes[slot];
        nbf++;
    }
    rc = journal_batch_files_add(r->ctx->journal, r->batch.id, bf, nbf) != 0
             ? engine_fail_journal(r) : 0;
    /* the same transaction moved a new batch (and only a new one) to
     * hashed and cleared the error an earlier attempt noted */
    if (rc == 0 && r->batch.state == BATCH_NEW)
        engine_row_written(r, BATCH_HASHED, BATCH_HASHED, 0, NULL);
out:
    free(bf);
    strset_free(phys_seen);
    return rc;
}

int submit_inputs_plan(submit_run *r, size_t *nread)
{
    const gahp_submit *s = r->s;
    input_plan t = { 0 };
    int rc = -1;
    double t_start = monotonic_seconds();
    *nread = 0;
    r->ninputs = 0;
    for (size_t i = 0; i < s->njobs; i++)
        r->ninputs += s->jobs[i].ninputs;
    r->input_phys = calloc(r->ninputs ? r->ninputs : 1, sizeof *r->input_phys);
    if (r->input_phys == NULL || plan_alloc(&t, r->ninputs) != 0) {
        engine_fail_nomem(r);
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        for (size_t f = 0; f < s->jobs[i].ninputs; f++, k++) {
            if (index_input(r, &t, s->jobs[i].inputs[f].src_path, k) != 0)
                goto out;
        }
    }
    /* the path index only merges repeated paths: its copies of every path
     * are not held through the hashing and the journal writes */
    strset_free(t.index);
    t.index = NULL;
    if (hash_slots(r, &t, nread) != 0 || name_inputs(r, &t) != 0 ||
        store_new_hashes(r, &t) != 0 || record_batch_files(r, &t) != 0)
        goto out;
    log_plan(r, &t, t_start);
    rc = 0;
out:
    plan_free(&t);
    return rc;
}

/* ==== hash pool =========================================================
 *
 * Per-file work spread over a few threads (see submit_inputs.h),
 * tasks of the process's thread pool (base/tasks.h).  Items are handed out
 * one at a time from a shared atomic counter, so a large file on one
 * thread does not hold back the small ones.
 */

/* Below this many items the threads cost more than they save. */
#define HASH_POOL_MIN_ITEMS 2

typedef struct {
    atomic_size_t next;
    size_t n;
    void (*work)(size_t i, void *arg);
    void *arg;
} pool_job;

static void pool_worker(void *p)
{
    pool_job *job = p;
    for (;;) {
        size_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->n)
            return;
        job->work(i, job->arg);
    }
}

unsigned hash_pool_threads(size_t n)
{
    if (n < HASH_POOL_MIN_ITEMS)
        return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned t = cpus < 1 ? 1 : cpus > HASH_POOL_MAX_THREADS ? HASH_POOL_MAX_THREADS
                                                             : (unsigned)cpus;
    return n < t ? (unsigned)n : t;
}

void hash_pool_run(size_t n, void (*work)(size_t i, void *arg), void *arg)
{
    pool_job job = { .n = n, .work = work, .arg = arg };
    atomic_init(&job.next, 0);
    unsigned nthreads = hash_pool_threads(n);
    task *tasks[HASH_POOL_MAX_THREADS];
    unsigned started = 0;
    /* The calling thread is one of the workers: start nthreads - 1 more.
     * A thread that cannot be had only means less parallelism. */
    while (started + 1 < nthreads && (tasks[started] = task_start(pool_worker, &job)) != NULL)
        started++;
    pool_worker(&job);
    for (unsigned i = 0; i < started; i++)
        task_join(tasks[i]);
}

/* ==== kept input bytes ==================================================
 *
 * Kept input bytes between hashing and upload (see
 * submit_inputs.h).  Written by the submit's planning thread only; the upload
 * lanes only read it, after planning, so the store needs no lock.  The
 * budget is process-wide (several submits run at once) and atomic.
 */

struct input_hold {
    strset *names;          /* physical name -> index */
    const void **data;      /* in pages */
    long long *sizes;
    size_t n, cap;
    page_region *pages;     /* every kept byte */
    long long reserved;     /* budget held for them, given back with the pages */
};

static atomic_llong held_bytes;

int input_hold_reserve(long long size)
{
    if (size < 0 || size > INPUT_HOLD_FILE_MAX)
        return 0;
    long long now = atomic_load(&held_bytes);
    do {
        if (now + size > INPUT_HOLD_TOTAL_MAX)
            return 0;
    } while (!atomic_compare_exchange_weak(&held_bytes, &now, now + size));
    return 1;
}

long long input_hold_budget(size_t nfiles)
{
    if (nfiles <= INPUT_HOLD_FULL_FILES)
        return INPUT_HOLD_TOTAL_MAX;
    double share = (double)INPUT_HOLD_FULL_FILES / (double)nfiles;
    return (long long)((double)INPUT_HOLD_TOTAL_MAX * share * share);
}

void input_hold_unreserve(long long size)
{
    atomic_fetch_sub(&held_bytes, size);
}

input_hold *input_hold_new(size_t n, page_region *pages, long long reserved)
{
    input_hold *h = calloc(1, sizeof *h);
    size_t cap = n ? n : 1;
    if (h == NULL)
        return NULL;
    h->pages = pages;
    h->reserved = reserved;
    h->names = strset_new(n);
    h->data = calloc(cap, sizeof *h->data);
    h->sizes = calloc(cap, sizeof *h->sizes);
    h->cap = cap;
    if (h->names == NULL || h->data == NULL || h->sizes == NULL) {
        h->pages = NULL;        /* still the caller's */
        h->reserved = 0;
        input_hold_free(h);
        return NULL;
    }
    return h;
}

int input_hold_put(input_hold *h, const char *phys_name, const void *data, long long size)
{
    int added = h->n < h->cap ? strset_add(h->names, phys_name) : -1;
    if (added <= 0)
        return added;
    h->data[h->n] = data;
    h->sizes[h->n] = size;
    h->n++;
    return 1;
}

const void *input_hold_get(const input_hold *h, const char *phys_name, long long *size)
{
    long i = h != NULL ? strset_index(h->names, phys_name) : -1;
    if (i < 0)
        return NULL;
    *size = h->sizes[i];
    return h->data[i];
}

void input_hold_free(input_hold *h)
{
    if (h == NULL)
        return;
    page_region_free(h->pages);
    input_hold_unreserve(h->reserved);
    strset_free(h->names);
    free(h->data);
    free(h->sizes);
    free(h);
}
