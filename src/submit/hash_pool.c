/*
 * hash_pool.c - per-file work spread over a few threads (see hash_pool.h),
 * tasks of the process's thread pool (base/tasks.h).  Items are handed out
 * one at a time from a shared atomic counter, so a large file on one
 * thread does not hold back the small ones.
 */
#include "submit/hash_pool.h"

#include "base/tasks.h"

#include <stdatomic.h>
#include <unistd.h>

/* Below this many items the threads cost more than they save. */
#define HASH_POOL_MIN_ITEMS 2

typedef struct {
    atomic_size_t next;
    size_t n;
    void (*work)(size_t i, void *arg);
    void *arg;
} pool_job;

static void pool_worker(void *p)
{
    pool_job *job = p;
    for (;;) {
        size_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->n)
            return;
        job->work(i, job->arg);
    }
}

unsigned hash_pool_threads(size_t n)
{
    if (n < HASH_POOL_MIN_ITEMS)
        return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned t = cpus < 1 ? 1 : cpus > HASH_POOL_MAX_THREADS ? HASH_POOL_MAX_THREADS
                                                             : (unsigned)cpus;
    return n < t ? (unsigned)n : t;
}

void hash_pool_run(size_t n, void (*work)(size_t i, void *arg), void *arg)
{
    pool_job job = { .n = n, .work = work, .arg = arg };
    atomic_init(&job.next, 0);
    unsigned nthreads = hash_pool_threads(n);
    task *tasks[HASH_POOL_MAX_THREADS];
    unsigned started = 0;
    /* The calling thread is one of the workers: start nthreads - 1 more.
     * A thread that cannot be had only means less parallelism. */
    while (started + 1 < nthreads && (tasks[started] = task_start(pool_worker, &job)) != NULL)
        started++;
    pool_worker(&job);
    for (unsigned i = 0; i < started; i++)
        task_join(tasks[i]);
}
