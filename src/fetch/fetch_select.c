/*
 * fetch_select.c - which files a job produced one BOINC_FETCH_OUTPUT
 * delivers, and where (fetch_select_*, declared in fetch_step.h).
 */
#include "fetch/fetch_step.h"

#include "base/strbuf.h"
#include "base/files.h"
#include "base/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The spec whose <src> is name, or NULL (the first one wins). */
static const gahp_output_spec *find_spec(const gahp_fetch_output *f,
                                         const char *name)
{
    for (size_t i = 0; i < f->nspecs; i++)
        if (strcmp(f->specs[i].src, name) == 0)
            return &f->specs[i];
    return NULL;
}

static int name_in(const char *name, char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] != NULL && strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

/* A spec whose destination is /dev/null asks for the file to be thrown
 * away (HTCondor adds "null /dev/null" for an unset error file). */
static int discarded(const gahp_output_spec *spec)
{
    return strcmp(spec->dst, "/dev/null") == 0;
}

/*
 * Specs that cannot apply are skipped with a log line, never an error:
 * HTCondor's SOME list carries (basename(Out), Out) and (basename(Err),
 * Err) for the job's stdout and stderr, names a BOINC app normally does
 * not produce, and an error result would hold an ordinary job.  Specs
 * whose destination is /dev/null are skipped too (fetch_select_wanted leaves
 * them out).  Every output that exists and is selected must still arrive.
 */
void fetch_select_log_skipped(const gahp_fetch_output *f, char *const *names,
                             size_t n, const char *what)
{
    for (size_t i = 0; i < f->nspecs; i++) {
        const char *src = f->specs[i].src;
        if (discarded(&f->specs[i]))
            log_info("fetch_output: job %s: spec %s -> /dev/null skipped",
                     f->job, src);
        else if (!name_in(src, names, n))
            log_info("fetch_output: job %s: spec for %s skipped: not %s of "
                     "the job", f->job, src, what);
    }
}

/* The spec's <dst> when a spec names the file, else <iwd>/<name>. */
char *fetch_select_destination(const gahp_fetch_output *f, const char *name,
                        exec_err *e)
{
    const gahp_output_spec *spec = find_spec(f, name);
    const char *path = spec != NULL ? spec->dst : name;
    char *dest = files_resolve(f->iwd, path);
    if (dest == NULL) {
        if (errno == ENOMEM)
            exec_err_nomem(e);
        else
            fetch_step_failf(e, EXEC_E_REFUSED,
                        "fetch_output failed: bad destination %s for %s",
                        path, name);
    }
    return dest;
}

int fetch_select_wanted(const gahp_fetch_output *f, const char *name)
{
    const gahp_output_spec *spec = find_spec(f, name);
    if (spec != NULL && discarded(spec))
        return 0;
    return f->all || spec != NULL;
}

/*
 * ALL places every produced file under its own name in the iwd, so a
 * server-chosen ".bashrc" or ".ssh" would land among the user's hidden
 * files: in ALL mode a name starting with '.' is refused unless a spec
 * names it (issue 10 #8).
 */
int fetch_select_check_hidden(const gahp_fetch_output *f, char *const *names,
                       size_t n, const char *what, exec_err *e)
{
    for (size_t i = 0; f->all && i < n; i++)
        if (names[i] != NULL && names[i][0] == '.' &&
            find_spec(f, names[i]) == NULL)
            return fetch_step_failf(e, EXEC_E_REFUSED,
                               "fetch_output failed: %s %s starts with '.' "
                               "and no file spec names it", what, names[i]);
    return 0;
}
