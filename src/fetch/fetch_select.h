/*
 * fetch_select.h - which files a job produced one BOINC_FETCH_OUTPUT
 * delivers, and where: the ALL/SOME selection by the request's file specs,
 * the specs skipped with a log line, the destination of each file, and the
 * refusal of hidden names in ALL mode.  doc/commands.md has the rules.
 */
#ifndef BOINC_GAHP_FETCH_SELECT_H
#define BOINC_GAHP_FETCH_SELECT_H

#include "exec/exec.h"

#include <stddef.h>

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

#endif
