/*
 * tasks.c - the process's pool of threads (tasks.h).
 *
 * One mutex guards the pool and every task handle's state: tasks start
 * and end seldom (a request, a file chunk, a hash slice), never per byte,
 * so one lock costs nothing measurable and keeps the hand-offs plain.
 * Each thread has its own condition, so giving a task to an idle thread
 * wakes that thread only.
 *
 * A thread that leaves after its idle wait detaches itself and frees its
 * record, under the lock: after that it only returns, touching nothing of
 * the pool.  Joining it instead (by the next caller) would leave a thread
 * ended but not joined whenever the server leaves with _exit (requests
 * still running), which ThreadSanitizer reports as a leak.  Every other
 * thread is joined by tasks_shutdown.
 */
#include "base/tasks.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct task {
    task_fn fn;
    void *arg;
    int done;               /* fn has returned */
    int detached;           /* nobody will join: the thread frees it */
    pthread_cond_t ended;   /* done was set (task_join waits on it) */
};

typedef struct pool_thread {
    struct pool_thread *next;       /* in pool.all */
    struct pool_thread *next_idle;  /* in pool.idle */
    pthread_t tid;
    pthread_cond_t wake;            /* a task was given, or shutdown */
    task *job;                      /* given and not yet taken */
} pool_thread;

static struct {
    pthread_mutex_t mu;
    pool_thread *all;       /* every thread that has not left */
    pool_thread *idle;      /* waiting for a task; the last to go idle first
                               (its stack and caches are the warmest) */
    size_t nidle;
    int stopping;           /* tasks_shutdown: idle threads leave */
} pool = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void unlink_idle(pool_thread *th)
{
    for (pool_thread **p = &pool.idle; *p != NULL; p = &(*p)->next_idle)
        if (*p == th) {
            *p = th->next_idle;
            break;
        }
    th->next_idle = NULL;
    pool.nidle--;
}

static void unlink_all(pool_thread *th)
{
    for (pool_thread **p = &pool.all; *p != NULL; p = &(*p)->next)
        if (*p == th) {
            *p = th->next;
            break;
        }
    th->next = NULL;
}

/* t's fn has returned (under pool.mu). */
static void task_ended(task *t)
{
    t->done = 1;
    if (t->detached) {
        pthread_cond_destroy(&t->ended);
        free(t);
    } else {
        pthread_cond_signal(&t->ended);
    }
}

/* Wait for a task until the idle time is over; 1 when th is to leave
 * (under pool.mu; th is on the idle list until it gets a task or leaves). */
static int wait_idle(pool_thread *th)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += TASKS_IDLE_SECONDS;
    th->next_idle = pool.idle;
    pool.idle = th;
    pool.nidle++;
    for (;;) {
        int rc = 0;
        while (th->job == NULL && !pool.stopping && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&th->wake, &pool.mu, &until);
        if (th->job != NULL)
            return 0;                   /* task_start took it off the list */
        if (pool.stopping || pool.nidle > TASKS_KEEP_IDLE) {
            unlink_idle(th);
            return 1;
        }
        /* one of the threads kept: wait again, as long as it takes */
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += TASKS_IDLE_SECONDS;
    }
}

static void *thread_main(void *arg)
{
    pool_thread *th = arg;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        task *t = th->job;
        if (t != NULL) {
            th->job = NULL;
            pthread_mutex_unlock(&pool.mu);
            t->fn(t->arg);
            pthread_mutex_lock(&pool.mu);
            task_ended(t);
        }
        if (pool.stopping || wait_idle(th))
            break;
    }
    if (!pool.stopping) {
        /* left after its idle wait; else tasks_shutdown joins it */
        unlink_all(th);
        pthread_detach(pthread_self());
        pthread_cond_destroy(&th->wake);
        free(th);
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

/* A new thread whose first task is t (under pool.mu): 0, or -1. */
static int new_thread(task *t)
{
    pool_thread *th = calloc(1, sizeof *th);
    if (th == NULL)
        return -1;
    pthread_cond_init(&th->wake, NULL);
    th->job = t;
    /* The one pthread_create of the server.  Default attributes: the
     * system's stack size, joinable (joined by tasks_shutdown, or
     * detached when it leaves), and the creator's signal mask (tasks.h). */
    if (pthread_create(&th->tid, NULL, thread_main, th) != 0) {
        pthread_cond_destroy(&th->wake);
        free(th);
        return -1;
    }
    th->next = pool.all;
    pool.all = th;
    return 0;
}

task *task_start(task_fn fn, void *arg)
{
    task *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->fn = fn;
    t->arg = arg;
    pthread_cond_init(&t->ended, NULL);
    pthread_mutex_lock(&pool.mu);
    int rc = 0;
    if (pool.idle != NULL) {
        pool_thread *th = pool.idle;
        unlink_idle(th);
        th->job = t;
        pthread_cond_signal(&th->wake);
    } else {
        rc = new_thread(t);
    }
    pthread_mutex_unlock(&pool.mu);
    if (rc != 0) {
        pthread_cond_destroy(&t->ended);
        free(t);
        return NULL;
    }
    return t;
}

void task_join(task *t)
{
    pthread_mutex_lock(&pool.mu);
    while (!t->done)
        pthread_cond_wait(&t->ended, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    pthread_cond_destroy(&t->ended);
    free(t);
}

void task_detach(task *t)
{
    pthread_mutex_lock(&pool.mu);
    int done = t->done;
    t->detached = 1;
    pthread_mutex_unlock(&pool.mu);
    if (done) {
        pthread_cond_destroy(&t->ended);
        free(t);
    }
}

int task_start_detached(task_fn fn, void *arg)
{
    task *t = task_start(fn, arg);
    if (t == NULL)
        return -1;
    task_detach(t);
    return 0;
}

void tasks_shutdown(void)
{
    pthread_mutex_lock(&pool.mu);
    pool.stopping = 1;
    /* Again until none is left: a task still running may start another
     * (whose new thread then ends with it, on pool.all). */
    while (pool.all != NULL) {
        for (pool_thread *th = pool.all; th != NULL; th = th->next)
            pthread_cond_signal(&th->wake);
        pool_thread *all = pool.all;
        pool.all = NULL;
        /* Unlocked: a thread running a task ends it, then sees stopping. */
        pthread_mutex_unlock(&pool.mu);
        while (all != NULL) {
            pool_thread *next = all->next;
            pthread_join(all->tid, NULL);
            pthread_cond_destroy(&all->wake);
            free(all);
            all = next;
        }
        pthread_mutex_lock(&pool.mu);
    }
    pool.stopping = 0;
    pthread_mutex_unlock(&pool.mu);
}
