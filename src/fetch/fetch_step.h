/*
 * fetch_step.h - what the steps of one BOINC_FETCH_OUTPUT share: the
 * fetch's context and the helpers that fill its exec_err (exec.h).
 *
 * Every step returns 0 when done, or -1 with the exec_err holding a code
 * and the client's message; exec_fetch_output turns it into the result
 * tail once.  Out of memory is exec_err_nomem's EXEC_E_NOMEM with no
 * message (exec.h), never a marker pointer.  Codes: EXEC_E_RPC for a failed BOINC
 * RPC, EXEC_E_LOCAL for a local file operation, EXEC_E_REFUSED for what
 * the server's answer or the request makes impossible (a job not
 * finished, an unsafe name, a bad destination).
 *
 * Below the helpers (fetch_step.c): which outputs a fetch delivers and
 * where (the selection, fetch_select.c), and the app templates cached per
 * process (fetch_templates.c).
 */
#ifndef BOINC_GAHP_FETCH_STEP_H
#define BOINC_GAHP_FETCH_STEP_H

#include "exec/exec.h"
#include <stddef.h>

/* Everything one fetch needs, passed between the steps. */
typedef struct {
    exec_ctx *ctx;
    const gahp_fetch_output *f;
    boinc_project project;
    long long fetched;          /* bytes downloaded so far (--max-fetch-bytes) */
} fetch_ctx;

/* Set *e to code and the printf-style message.  Returns -1. */
int fetch_step_failf(exec_err *e, exec_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Set *e to a failed local file operation, "<step>: <errmsg>" (errmsg from
 * outputs.h, NULL meaning out of memory); frees errmsg.  Returns -1. */
int fetch_step_fail_local(exec_err *e, const char *step, char *errmsg);

/* Set *e to a failed RPC, "<step> failed: <class>: <message>"; clears
 * err.  Returns -1. */
int fetch_step_fail_rpc(exec_err *e, const char *step, boinc_error *err);

/* ==== selection of outputs ==============================================
 *
 * Which files a job produced one BOINC_FETCH_OUTPUT
 * delivers, and where: the ALL/SOME selection by the request's file specs,
 * the specs skipped with a log line, the destination of each file, and the
 * refusal of hidden names in ALL mode.  doc/commands.md has the rules.
 */

/* 1 when the produced file called name is to be delivered. */
int fetch_select_wanted(const gahp_fetch_output *f, const char *name);

/* Log every spec that names none of the n names (what: "an output", ...)
 * or that discards its file (/dev/null): such specs are skipped. */
void fetch_select_log_skipped(const gahp_fetch_output *f, char *const *names,
                             size_t n, const char *what);

/* Where the produced file called name goes (malloc'd), or NULL with *e set. */
char *fetch_select_destination(const gahp_fetch_output *f, const char *name,
                        exec_err *e);

/* In ALL mode, refuse a name starting with '.' that no spec names.
 * 0, or -1 with *e set. */
int fetch_select_check_hidden(const gahp_fetch_output *f, char *const *names,
                       size_t n, const char *what, exec_err *e);

/* ==== template cache ====================================================
 *
 * The templates BOINC_FETCH_OUTPUT needs (output file
 * names and numbers), cached per process by (project URL, app), so that a
 * run of fetches of jobs of one app costs one get_templates RPC instead of
 * one per fetch.
 *
 * The app of a job comes from the journal (the submit recorded it); a job
 * the journal does not know costs its own get_templates by job name, as
 * before, and is not cached (nothing else names its app).  A cache miss
 * asks by job name too, so the RPC and its errors are those of the
 * uncached fetch.  An entry is trusted for FETCH_TEMPLATES_MAX_AGE_S
 * seconds; a download that fails with cached templates makes the caller
 * ask again once (fetch_templates_refresh).  doc/commands.md explains it.
 */

/* How long a cached entry is used before it is asked for again: bounds
 * how long a server-side template change that makes no download fail
 * (an output added or renamed) goes unnoticed. */
#define FETCH_TEMPLATES_MAX_AGE_S 300

/* Entries kept at most (projects x apps); the least recently fetched one
 * makes room. */
#define FETCH_TEMPLATES_MAX_ENTRIES 256

/* One server's cache (exec_shared.templates). */
typedef struct fetch_templates_cache fetch_templates_cache;
/* An empty cache; NULL when out of memory. */
fetch_templates_cache *fetch_templates_cache_new(void);
void fetch_templates_cache_free(fetch_templates_cache *c);

/* One fetch's templates: its own copy (the cache may change meanwhile). */
typedef struct {
    boinc_templates t;
    char *app;                  /* the job's app from the journal; NULL: unknown job */
    int cached;                 /* 1: t came from the cache (may be stale) */
} fetch_templates;

/* The templates of fc's job.  project_id: the request's journal project
 * (<= 0: none known).  0, or -1 with *e set (the RPC's error as
 * "get_templates failed: ...", or out of memory); free *out either way
 * with fetch_templates_free. */
int fetch_templates_get(fetch_ctx *fc, long long project_id,
                        fetch_templates *out, exec_err *e);

/* After a download failed with cached templates: ask the server again by
 * job name and put the answer in the cache.  1 when the answer differs
 * (ft->t then holds it, ft->cached = 0: worth retrying), 0 when it is the
 * same or cannot be had (the original failure stands). */
int fetch_templates_refresh(fetch_ctx *fc, fetch_templates *ft);

void fetch_templates_free(fetch_templates *ft);

#endif
