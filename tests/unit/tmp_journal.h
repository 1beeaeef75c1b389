/*
 * tmp_journal.h - what the journal unit tests share: a private temporary
 * directory per test, the journal path in it, and a journal opened there
 * with the tests' options.  Linked into every unit test binary (the
 * Makefile's UNIT_LIB).
 */
#ifndef BOINC_GAHP_TMP_JOURNAL_H
#define BOINC_GAHP_TMP_JOURNAL_H

#include "journal/journal.h"

/* A fresh /tmp/<prefix>.XXXXXX; 0, or -1 (cmocka setup failure). */
int tmp_journal_setup(const char *prefix);

/* Remove every file in that directory (the journal, its -wal and -shm,
 * backup copies, anything a test made), then the directory. */
int tmp_journal_teardown(void);

/* "<dir>/j.db", and "<dir>/<name>" for other files of a test. */
const char *tmp_journal_path(void);
const char *tmp_journal_dir(void);

/* journal_open of tmp_journal_path() with synchronous FULL, a 1 s busy
 * timeout and migrations; NULL with *err set on failure. */
journal *tmp_journal_open(char **err);

#endif
