/*
 * journal_internal.h - helpers shared by the files of the journal module
 * (src/journal.c and src/journal_*.c); nothing outside it includes this.
 */
#ifndef BOINC_GAHP_JOURNAL_INTERNAL_H
#define BOINC_GAHP_JOURNAL_INTERNAL_H

#include "journal.h"

/* Record "<what>: <sqlite error>" as the handle's error, log it, return -1. */
int journal_fail(journal *j, const char *what);

/*
 * Prepare, bind, step once and finalize sql.  types gives one letter per
 * parameter: 't' text (const char *), 'i' int64 (long long), 'd' double,
 * 'n' null (consumes no argument).  Returns 0 or journal_fail().
 */
int journal_run(journal *j, const char *sql, const char *what, const char *types, ...);

#endif
