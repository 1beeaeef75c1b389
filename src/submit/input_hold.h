/*
 * input_hold.h - the bytes of new input files kept from their MD5 pass to
 * their upload, so that a new file is read once (doc/files-and-outputs.md,
 * "One read per new input").  Bounded: a file of at most
 * INPUT_HOLD_FILE_MAX bytes is kept while the process keeps at most
 * INPUT_HOLD_TOTAL_MAX bytes over all its submits; any other file is read
 * again when it is uploaded (and checked against its MD5 on the way).
 */
#ifndef BOINC_GAHP_INPUT_HOLD_H
#define BOINC_GAHP_INPUT_HOLD_H

#include <stddef.h>

#define INPUT_HOLD_FILE_MAX (16LL * 1024 * 1024)
#define INPUT_HOLD_TOTAL_MAX (64LL * 1024 * 1024)

/* Up to this many new files a submit may keep INPUT_HOLD_TOTAL_MAX bytes;
 * a bigger one keeps less (input_hold_budget). */
#define INPUT_HOLD_FULL_FILES 10000

typedef struct input_hold input_hold;

/* The bytes one submit that hashes nfiles new files may keep: all of
 * INPUT_HOLD_TOTAL_MAX up to INPUT_HOLD_FULL_FILES files, then
 * INPUT_HOLD_TOTAL_MAX * (INPUT_HOLD_FULL_FILES / nfiles)^2 (30,000 files
 * about 7 MB, 100,000 about 0.6 MB).  A big batch's own per-job state
 * (names, paths, plan, journal rows) grows with nfiles, so the kept bytes,
 * which only save a second read of each file, give way faster than it
 * grows: the submit's peak memory stays about linear in the batch
 * (tests/e2e_submit/test_submit_memory.py). */
long long input_hold_budget(size_t nfiles);

/* Reserve size bytes of the process-wide budget: 1 when granted (give
 * them back with input_hold_unreserve unless input_hold_put takes them),
 * 0 when the file is too large or the budget is spent. */
int input_hold_reserve(long long size);
void input_hold_unreserve(long long size);

/* A store for about n files; NULL on ENOMEM. */
input_hold *input_hold_new(size_t n);
/* Keep data (malloc'd, size reserved bytes) under a physical name: the
 * store owns it from here on, also on failure (-1, ENOMEM) and when the
 * name is already kept (0: a second path with the same content). */
int input_hold_put(input_hold *h, const char *phys_name, void *data, long long size);
/* The kept bytes of a physical name, or NULL (h may be NULL). */
const void *input_hold_get(const input_hold *h, const char *phys_name, long long *size);
/* Free every kept buffer and give its bytes back to the budget. */
void input_hold_free(input_hold *h);

#endif
