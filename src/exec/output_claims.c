/*
 * output_claims.c - the output paths a job writes (output_claims.h).
 */
#include "exec/output_claims.h"

#include "base/files.h"
#include "base/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void exec_claims_free(exec_claims *c)
{
    for (size_t i = 0; c->paths != NULL && i < c->n; i++)
        free(c->paths[i]);
    free(c->paths);
    c->paths = NULL;
    c->n = 0;
}

/* 0 added (or /dev/null, or the stderr file on an output's path: the
 * stderr is appended to it), 1 a duplicate (*why), -1. */
static int add_path(exec_claims *c, const char **labels, const char *iwd, const char *path,
                    const char *label, int appended, char **why)
{
    char *abs = files_normal_path(iwd, path);
    if (abs == NULL && errno == EINVAL) {
        *why = str_printf("output %s: destination %s is not a usable path (relative, "
                          "with no directory to put it in, or empty)", label,
                          path[0] != '\0' ? path : "(empty)");
        return *why != NULL ? 1 : -1;
    }
    if (abs == NULL)
        return -1;
    if (strcmp(abs, "/dev/null") == 0) {
        free(abs);
        return 0;
    }
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->paths[i], abs) == 0) {
            if (appended) {
                free(abs);
                return 0;
            }
            *why = str_printf("two outputs of this job go to %s: %s and %s", abs, labels[i],
                              label);
            free(abs);
            return *why != NULL ? 1 : -1;
        }
    }
    c->paths[c->n] = abs;
    labels[c->n] = label;
    c->n++;
    return 0;
}

int exec_claim_paths(const char *iwd, const char *stderr_path, const gahp_output_spec *specs,
                     size_t n, exec_claims *out, char **why)
{
    out->paths = NULL;
    out->n = 0;
    *why = NULL;
    const char **labels = calloc(n + 1, sizeof *labels);
    out->paths = calloc(n + 1, sizeof *out->paths);
    if (labels == NULL || out->paths == NULL) {
        free(labels);
        exec_claims_free(out);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = add_path(out, labels, iwd, specs[i].dst, specs[i].src, 0, why);
    if (rc == 0 && stderr_path != NULL && stderr_path[0] != '\0')
        rc = add_path(out, labels, iwd, stderr_path, "the BOINC stderr", 1, why);
    free(labels);
    if (rc != 0)
        exec_claims_free(out);
    return rc;
}

char *exec_claim_refusal(const char *path, const char *other_job)
{
    return str_printf("output path %s is also written by job %s, live at the same time",
                      path, other_job);
}
