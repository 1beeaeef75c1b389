/*
 * submit_inputs.c - hashing and physical names of a submit's inputs (see
 * submit_inputs.h).
 */
#include "submit_inputs.h"

#include "files.h"
#include "strbuf.h"
#include "strset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The distinct local files of one submit, indexed by absolute path. */
typedef struct {
    strset *index;              /* absolute path -> slot (insertion order) */
    char **paths;               /* slot -> absolute path */
    char (*md5)[33];
    long long *sizes;
    size_t n;
    size_t *slot_of_input;      /* job input k -> its slot */
    files_stat_key *new_keys;   /* cache misses, to store */
    char **new_md5;
    size_t nnew;
} input_plan;

static void plan_free(input_plan *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->paths[i]);
    for (size_t i = 0; i < t->nnew; i++)
        files_stat_key_free(&t->new_keys[i]);
    free(t->paths);
    free(t->md5);
    free(t->sizes);
    free(t->slot_of_input);
    free(t->new_keys);
    free(t->new_md5);
    strset_free(t->index);
}

static int plan_alloc(input_plan *t, size_t ninputs)
{
    size_t cap = ninputs ? ninputs : 1;
    t->index = strset_new(ninputs);
    t->paths = calloc(cap, sizeof *t->paths);
    t->md5 = calloc(cap, sizeof *t->md5);
    t->sizes = calloc(cap, sizeof *t->sizes);
    t->slot_of_input = calloc(cap, sizeof *t->slot_of_input);
    t->new_keys = calloc(cap, sizeof *t->new_keys);
    t->new_md5 = calloc(cap, sizeof *t->new_md5);
    return t->index && t->paths && t->md5 && t->sizes && t->slot_of_input &&
                   t->new_keys && t->new_md5 ? 0 : -1;
}

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

static int fail_input(submit_run *r, char *msg, const char *path)
{
    int rc = run_fail(r, -1, EXEC_E_LOCAL, "input file", msg ? msg : path);
    free(msg);
    return rc;
}

/* MD5 of the file in slot through the journal's cache; a miss is read and
 * queued in t->new_keys for the cache. */
static int hash_slot(submit_run *r, input_plan *t, size_t slot, size_t *nread)
{
    const char *path = t->paths[slot];
    files_stat_key key;
    char *msg = NULL;
    if (files_stat(path, &key, &msg) != 0)
        return fail_input(r, msg, path);
    int hit = 0;
    int rc = journal_md5_lookup(r->ctx->journal, &key, t->md5[slot], &hit);
    t->sizes[slot] = key.size;
    files_stat_key_free(&key);
    if (rc != 0)
        return run_fail_journal(r);
    if (hit)
        return 0;
    if (files_md5_hex_keyed(path, t->md5[slot], &t->sizes[slot],
                            &t->new_keys[t->nnew], &msg) != 0)
        return fail_input(r, msg, path);
    t->new_md5[t->nnew++] = t->md5[slot];
    (*nread)++;
    return 0;
}

/* The slot of one job input: found in the index, or a new one (hashed). */
static int plan_input(submit_run *r, input_plan *t, const char *src, size_t k,
                      size_t *nread)
{
    char *abs = absolute_path(src);
    if (abs == NULL)
        return run_fail(r, -1, EXEC_E_LOCAL, "input file", src);
    long slot = strset_index(t->index, abs);
    if (slot >= 0) {
        free(abs);
    } else {
        if (strset_add(t->index, abs) < 0) {
            free(abs);
            return run_fail_nomem(r);
        }
        slot = (long)t->n;
        t->paths[t->n++] = abs;
        if (hash_slot(r, t, (size_t)slot, nread) != 0)
            return -1;
    }
    t->slot_of_input[k] = (size_t)slot;
    r->input_phys[k] = files_phys_name(t->md5[slot], base_name(src));
    if (r->input_phys[k] == NULL)
        return run_fail(r, -1, EXEC_E_LOCAL, "input file", "cannot form a physical name");
    return 0;
}

static int store_new_hashes(submit_run *r, input_plan *t)
{
    const files_stat_key **keyp = calloc(t->nnew ? t->nnew : 1, sizeof *keyp);
    if (keyp == NULL)
        return run_fail_nomem(r);
    for (size_t i = 0; i < t->nnew; i++)
        keyp[i] = &t->new_keys[i];
    int rc = journal_md5_store(r->ctx->journal, keyp, (const char *const *)t->new_md5,
                               t->nnew);
    free(keyp);
    return rc != 0 ? run_fail_journal(r) : 0;
}

/* Journal the batch's distinct physical files, in first-use order. */
static int record_batch_files(submit_run *r, input_plan *t)
{
    journal_batch_file *bf = calloc(r->ninputs ? r->ninputs : 1, sizeof *bf);
    strset *phys_seen = strset_new(t->n);
    int rc = -1;
    if (bf == NULL || phys_seen == NULL) {
        run_fail_nomem(r);
        goto out;
    }
    size_t nbf = 0;
    for (size_t k = 0; k < r->ninputs; k++) {
        int added = strset_add(phys_seen, r->input_phys[k]);
        if (added < 0) {
            run_fail_nomem(r);
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
             ? run_fail_journal(r) : 0;
out:
    free(bf);
    strset_free(phys_seen);
    return rc;
}

int submit_plan_inputs(submit_run *r, size_t *nread)
{
    const gahp_submit *s = r->s;
    input_plan t = { 0 };
    int rc = -1;
    *nread = 0;
    r->ninputs = 0;
    for (size_t i = 0; i < s->njobs; i++)
        r->ninputs += s->jobs[i].ninputs;
    r->input_phys = calloc(r->ninputs ? r->ninputs : 1, sizeof *r->input_phys);
    if (r->input_phys == NULL || plan_alloc(&t, r->ninputs) != 0) {
        run_fail_nomem(r);
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        for (size_t f = 0; f < s->jobs[i].ninputs; f++, k++) {
            if (plan_input(r, &t, s->jobs[i].inputs[f].src_path, k, nread) != 0)
                goto out;
        }
    }
    if (store_new_hashes(r, &t) != 0 || record_batch_files(r, &t) != 0)
        goto out;
    rc = 0;
out:
    plan_free(&t);
    return rc;
}
