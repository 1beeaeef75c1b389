/*
 * blah_submit_ad.c - the fields of a BLAH_JOB_SUBMIT job ad (request.h,
 * gahp_blah_submit).
 *
 * HTCondor's grid manager (INFNBatchJob::buildSubmitAd) sends the job's
 * evaluated attributes: Iwd absolute, In/Out/Err and TransferInput as the
 * submit file wrote them (relative to Iwd), Arguments in the V2 syntax (or
 * Args in V1), Queue from batch_queue, JobDirectory = "home_bl_<sandbox
 * id>", the job's stable key.  What cannot be submitted as given is an
 * error naming the submit-file command to fix, since it becomes the job's
 * hold reason.
 */
#include "wire/request.h"

#include "wire/classad.h"
#include "base/files.h"
#include "base/num.h"
#include "base/strbuf.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const classad *ad;
    gahp_blah_submit *s;
    char **why;
} ad_reader;

/* Set the error msg (malloc'd, taken; the first one wins); returns 1, or
 * -1 when msg is NULL (out of memory). */
static int refuse(ad_reader *r, char *msg)
{
    if (msg == NULL)
        return -1;
    if (*r->why == NULL)
        *r->why = msg;
    else
        free(msg);
    return 1;
}

/* A string attribute that is set and is not /dev/null, or NULL. */
static const char *file_attr(const classad *ad, const char *name)
{
    const char *v = classad_string(ad, name);
    return v != NULL && v[0] != '\0' && strcmp(v, "/dev/null") != 0 ? v : NULL;
}

static int dup_attr(ad_reader *r, const char *name, char **out)
{
    const char *v = classad_string(r->ad, name);
    if (v == NULL || v[0] == '\0')
        return 0;
    return (*out = strdup(v)) != NULL ? 0 : -1;
}

static int read_args(ad_reader *r)
{
    gahp_blah_submit *s = r->s;
    const char *v2 = classad_string(r->ad, "Arguments");
    const char *v1 = classad_string(r->ad, "Args");
    if (v2 != NULL) {
        const char *why = NULL;
        int rc = classad_split_args(v2, &s->args, &s->nargs, &why);
        if (rc == -1)
            return refuse(r, str_printf("arguments: %s", why));
        return rc == 0 ? 0 : -1;
    }
    if (v1 != NULL)
        return classad_split_words(v1, &s->args, &s->nargs) == 0 ? 0 : -1;
    return 0;
}

static int add_input(ad_reader *r, size_t *cap, const char *name)
{
    gahp_blah_submit *s = r->s;
    if (strstr(name, "://") != NULL)
        return refuse(r, str_printf("transfer_input_files: %s is a URL; boinc_gahp "
                                    "uploads local files only", name));
    if (s->ninputs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        char **v = realloc(s->inputs, ncap * sizeof *v);
        if (v == NULL)
            return -1;
        s->inputs = v;
        *cap = ncap;
    }
    if ((s->inputs[s->ninputs] = files_resolve(s->iwd, name)) == NULL)
        return -1;
    s->ninputs++;
    return 0;
}

/* In first (the job's stdin is its first input file), then TransferInput
 * in the order the submit file lists them. */
static int read_inputs(ad_reader *r)
{
    size_t cap = 0;
    const char *in = file_attr(r->ad, "In");
    int rc = in != NULL ? add_input(r, &cap, in) : 0;
    const char *list = classad_string(r->ad, "TransferInput");
    if (rc != 0 || list == NULL)
        return rc;
    char **items = NULL;
    size_t n = 0;
    if (classad_split_list(list, &items, &n) != 0)
        return -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = add_input(r, &cap, items[i]);
    strv_free(items, n);
    return rc;
}

static char *trimmed(const char *a, const char *b)
{
    while (a < b && (*a == ' ' || *a == '\t'))
        a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    return strndup(a, (size_t)(b - a));
}

/* The destination TransferOutputRemaps ("a = x; b = y") gives name, or
 * NULL when it gives none; *dst malloc'd.  0, 1 (refused), -1. */
static int remap_of(ad_reader *r, const char *name, char **dst)
{
    *dst = NULL;
    const char *remaps = classad_string(r->ad, "TransferOutputRemaps");
    for (const char *p = remaps; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ';');
        if (end == NULL)
            end = p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq != NULL) {
            char *from = trimmed(p, eq), *to = trimmed(eq + 1, end);
            int match = from != NULL && to != NULL && strcmp(from, name) == 0;
            free(from);
            if (to == NULL)
                return -1;
            if (match) {
                *dst = to;
                return 0;
            }
            free(to);
        }
        p = *end == ';' ? end + 1 : end;
    }
    return 0;
}

static int read_outputs(ad_reader *r)
{
    gahp_blah_submit *s = r->s;
    const char *list = classad_string(r->ad, "TransferOutput");
    char **items = NULL;
    size_t n = 0;
    if (list != NULL && classad_split_list(list, &items, &n) != 0)
        return -1;
    s->outputs_all = n == 0;
    if (n > 0 && (s->outputs = calloc(n, sizeof *s->outputs)) == NULL) {
        strv_free(items, n);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *dst = NULL;
        rc = remap_of(r, items[i], &dst);
        if (rc == 0 && dst == NULL && (dst = strdup(items[i])) == NULL)
            rc = -1;
        if (rc == 0) {
            s->outputs[i].src = items[i];
            s->outputs[i].dst = dst;
            items[i] = NULL;
            s->noutputs++;
        }
    }
    strv_free(items, n);
    return rc;
}

static int read_memory(ad_reader *r)
{
    const classad_attr *a = classad_find(r->ad, "RequestMemory");
    double mb;
    if (a != NULL && !a->is_string && num_parse_double(a->value, &mb) == 0 && mb > 0)
        r->s->memory_mb = mb;
    return 0;
}

static int read_ad(ad_reader *r)
{
    gahp_blah_submit *s = r->s;
    int rc;
    if (dup_attr(r, "JobDirectory", &s->job_dir) != 0 || dup_attr(r, "Iwd", &s->iwd) != 0 ||
        dup_attr(r, "Queue", &s->app) != 0 || dup_attr(r, "BatchProject", &s->project) != 0)
        return -1;
    if (s->job_dir == NULL)
        return refuse(r, strdup("the job ad has no JobDirectory: boinc_gahp needs "
                                "HTCondor 10.0 or later with grid_resource = batch boinc"));
    if (s->iwd == NULL || s->iwd[0] != '/')
        return refuse(r, str_printf("the job ad's Iwd %s is not an absolute directory",
                                    s->iwd ? s->iwd : "(unset)"));
    const char *out = file_attr(r->ad, "Out"), *err = file_attr(r->ad, "Err");
    if ((out != NULL && (s->out = strdup(out)) == NULL) ||
        (err != NULL && (s->err = strdup(err)) == NULL))
        return -1;
    if ((rc = read_args(r)) != 0 || (rc = read_inputs(r)) != 0 ||
        (rc = read_outputs(r)) != 0 || (rc = read_memory(r)) != 0)
        return rc;
    return 0;
}

int gahp_blah_submit_from_ad(const char *ad_text, gahp_blah_submit *s, char **why)
{
    memset(s, 0, sizeof *s);
    *why = NULL;
    if ((s->ad_text = strdup(ad_text)) == NULL)
        return -1;
    classad ad;
    char *syntax = NULL;
    int rc = classad_parse(ad_text, &ad, &syntax);
    if (rc == -2)
        return -1;
    if (rc == -1) {
        *why = str_printf("the job ad cannot be read: %s", syntax);
        free(syntax);
        return *why != NULL ? 1 : -1;
    }
    ad_reader r = { &ad, s, why };
    rc = read_ad(&r);
    classad_free(&ad);
    return rc;
}

void gahp_blah_submit_free(gahp_blah_submit *s)
{
    free(s->ad_text);
    free(s->job_dir);
    free(s->app);
    free(s->project);
    free(s->iwd);
    free(s->out);
    free(s->err);
    strv_free(s->args, s->nargs);
    strv_free(s->inputs, s->ninputs);
    for (size_t i = 0; s->outputs != NULL && i < s->noutputs; i++) {
        free(s->outputs[i].src);
        free(s->outputs[i].dst);
    }
    free(s->outputs);
    memset(s, 0, sizeof *s);
}
