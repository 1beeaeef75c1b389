/*
 * submit_inputs.h - input planning of a BOINC_SUBMIT: every job input is
 * stat'ed and hashed (MD5 through the journal's cache keyed by path, size,
 * mtime and inode), given its content-addressed physical name, and the
 * batch's distinct files are journaled (batch_files, state hashed).
 *
 * Linear in the number of job inputs: a hash index maps each distinct
 * local path to its slot, so a file shared by every job is looked up in
 * O(1), not found by rescanning the list.  Each distinct file is stat'ed
 * once; the stats and the hashing of cache misses run on the hash pool
 * (below), the cache keys are looked up in one read transaction and
 * the new digests stored in one write transaction.  Of several bad inputs
 * the first in job order is reported, as a serial pass would.
 *
 * Declared below the plan: the hash pool and the store of kept input
 * bytes, which only the plan fills and only the upload reads.
 */
#ifndef BOINC_GAHP_SUBMIT_INPUTS_H
#define BOINC_GAHP_SUBMIT_INPUTS_H

#include "submit/engine.h"
#include "base/pages.h"

#include <stddef.h>

/* Fill r->ninputs and r->input_phys (one physical name per job input, in
 * job order) and journal the batch's distinct files.  *nread counts the
 * files read for hashing (cache misses).  0, or -1 with r's error set. */
int submit_inputs_plan(submit_run *r, size_t *nread);

/* ==== hash pool =========================================================
 *
 * A bounded number of threads for the local file work of a
 * submit (stat and MD5 of its inputs): runs work(i, arg) once for every i
 * in [0, n), on at most HASH_POOL_MAX_THREADS threads (fewer on a machine
 * with fewer CPUs; the caller's own and tasks of the process's pool,
 * base/tasks.h), and returns when all are done.
 *
 * The items must be independent: work(i) may write only to item i's own
 * storage (the caller's arrays) and must not touch the journal, the
 * network or shared state without its own locking.
 */

/* Reading and hashing scale with cores until the disk or the memory bus
 * is the limit; four threads reach MD5 speed on common machines and keep
 * a submit from taking every core of a shared submit host. */
#define HASH_POOL_MAX_THREADS 4

/* Threads hash_pool_run would use for n items (1 = the calling thread). */
unsigned hash_pool_threads(size_t n);

/* Run work(i, arg) for every i in [0, n).  Always completes every item:
 * if no thread can be started the calling thread does them all. */
void hash_pool_run(size_t n, void (*work)(size_t i, void *arg), void *arg);

/* ==== kept input bytes ==================================================
 *
 * The bytes of new input files kept from their MD5 pass to
 * their upload, so that a new file is read once (doc/files-and-outputs.md,
 * "One read per new input").  Bounded: a file of at most
 * INPUT_HOLD_FILE_MAX bytes is kept while the process keeps at most
 * INPUT_HOLD_TOTAL_MAX bytes over all its submits; any other file is read
 * again when it is uploaded (and checked against its MD5 on the way).
 */

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
 * them back with input_hold_unreserve, or let input_hold_new take them),
 * 0 when the file is too large or the budget is spent. */
int input_hold_reserve(long long size);
void input_hold_unreserve(long long size);

/* A store for about n files whose bytes are in pages (a region of
 * base/pages.h, filled by the hashing), for which reserved bytes of the
 * budget are held: the store owns both once it is made; NULL on ENOMEM
 * (they stay the caller's). */
input_hold *input_hold_new(size_t n, page_region *pages, long long reserved);
/* Keep size bytes at data (in the store's pages) under a physical name:
 * 1, 0 when the name is already kept (a second path with the same
 * content), -1 on ENOMEM (the bytes are then not found by name). */
int input_hold_put(input_hold *h, const char *phys_name, const void *data, long long size);
/* The kept bytes of a physical name, or NULL (h may be NULL). */
const void *input_hold_get(const input_hold *h, const char *phys_name, long long *size);
/* Unmap the kept bytes and give their reservation back to the budget. */
void input_hold_free(input_hold *h);

#endif
