/*
 * hash_pool.h - a bounded number of threads for the local file work of a
 * submit (stat and MD5 of its inputs): runs work(i, arg) once for every i
 * in [0, n), on at most HASH_POOL_MAX_THREADS threads (fewer on a machine
 * with fewer CPUs; the caller's own and tasks of the process's pool,
 * base/tasks.h), and returns when all are done.
 *
 * The items must be independent: work(i) may write only to item i's own
 * storage (the caller's arrays) and must not touch the journal, the
 * network or shared state without its own locking.
 */
#ifndef BOINC_GAHP_HASH_POOL_H
#define BOINC_GAHP_HASH_POOL_H

#include <stddef.h>

/* Reading and hashing scale with cores until the disk or the memory bus
 * is the limit; four threads reach MD5 speed on common machines and keep
 * a submit from taking every core of a shared submit host. */
#define HASH_POOL_MAX_THREADS 4

/* Threads hash_pool_run would use for n items (1 = the calling thread). */
unsigned hash_pool_threads(size_t n);

/* Run work(i, arg) for every i in [0, n).  Always completes every item:
 * if no thread can be started the calling thread does them all. */
void hash_pool_run(size_t n, void (*work)(size_t i, void *arg), void *arg);

#endif
