/*
 * tasks.h - the process's one pool of threads: every thread of the
 * server but main runs a task of it (the reader is main itself).  In the
 * spirit of Redis's bio.c, one place owns the threads; the callers say
 * what runs, not how a thread is made, kept, or ended.
 *
 * A task is fn(arg) on a pool thread: an idle one if there is one, else a
 * new one.  The pool has no upper bound: a task that waits for other
 * tasks (a submit joining its upload lanes, a worker joining its hash
 * threads) can never starve them of a thread.  Its callers bound it (the
 * worker count, HASH_POOL_MAX_THREADS, --upload-connections).  A thread
 * whose task ended waits TASKS_IDLE_SECONDS for another, then exits unless
 * it is one of the TASKS_KEEP_IDLE idle threads the pool keeps.
 *
 * Signals: a new pool thread inherits the signal mask of the thread that
 * starts the task, and keeps it for every later task.  The server blocks
 * SIGTERM and SIGINT in main before the first task (main.c), so every
 * thread blocks them, whoever created it.
 */
#ifndef BOINC_GAHP_TASKS_H
#define BOINC_GAHP_TASKS_H

/* An idle thread waits this long for a next task ... */
#define TASKS_IDLE_SECONDS 30
/* ... then exits, unless fewer than this many threads are idle. */
#define TASKS_KEEP_IDLE 4

typedef struct task task;
typedef void (*task_fn)(void *arg);

/*
 * Run fn(arg) on a pool thread.  Returns the task's handle, to give
 * exactly once to task_join or task_detach; NULL when no thread could be
 * had (fn has not run: the caller runs it inline, or does without).
 */
task *task_start(task_fn fn, void *arg);

/* Wait until t's fn has returned; frees t. */
void task_join(task *t);

/* Let go of t: it ends on its own, unwaited for (frees t, now or then). */
void task_detach(task *t);

/* task_start then task_detach: 0, or -1 (fn has not run). */
int task_start_detached(task_fn fn, void *arg);

/*
 * At the end of the process, once every task has ended (or is about to:
 * its fn returning): end and join every pool thread and free the pool, so
 * that a leak checker sees nothing.  A running task is waited for.  The
 * pool may be used again afterwards (it starts empty).
 */
void tasks_shutdown(void);

#endif
