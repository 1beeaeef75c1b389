/*
 * fetch_templates.h - the templates BOINC_FETCH_OUTPUT needs (output file
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
#ifndef BOINC_GAHP_FETCH_TEMPLATES_H
#define BOINC_GAHP_FETCH_TEMPLATES_H

#include "fetch/fetch_step.h"

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
