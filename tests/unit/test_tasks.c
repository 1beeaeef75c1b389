/*
 * test_tasks.c - the process's thread pool (base/tasks.h): a joined task
 * has run; tasks that wait for each other all get a thread (the pool
 * grows, never deadlocks); a task may start and join tasks; a detached
 * task runs to its end; an idle thread is reused; a new thread keeps the
 * creator's blocked signals; the pool works again after tasks_shutdown.
 */
#include "base/tasks.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void set_after_nap(void *arg)
{
    nap_ms(20);
    atomic_store((atomic_int *)arg, 1);
}

static void test_join_waits_for_the_end(void **state)
{
    (void)state;
    atomic_int done;
    atomic_init(&done, 0);
    task *t = task_start(set_after_nap, &done);
    assert_non_null(t);
    task_join(t);
    assert_int_equal(atomic_load(&done), 1);
}

/* Every task waits until all have arrived: they must run at once. */
#define NWAITING (TASKS_KEEP_IDLE * 3)

typedef struct {
    atomic_int arrived;
    atomic_int all_met;
} meeting;

static void meet(void *arg)
{
    meeting *m = arg;
    atomic_fetch_add(&m->arrived, 1);
    for (int i = 0; i < 1000 && atomic_load(&m->arrived) < NWAITING; i++)
        nap_ms(10);
    if (atomic_load(&m->arrived) >= NWAITING)
        atomic_fetch_add(&m->all_met, 1);
}

static void test_waiting_tasks_all_get_a_thread(void **state)
{
    (void)state;
    meeting m;
    atomic_init(&m.arrived, 0);
    atomic_init(&m.all_met, 0);
    task *ts[NWAITING];
    for (int i = 0; i < NWAITING; i++)
        assert_non_null(ts[i] = task_start(meet, &m));
    for (int i = 0; i < NWAITING; i++)
        task_join(ts[i]);
    assert_int_equal(atomic_load(&m.all_met), NWAITING);
}

static void count_one(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void start_and_join_three(void *arg)
{
    task *ts[3];
    for (int i = 0; i < 3; i++)
        ts[i] = task_start(count_one, arg);
    for (int i = 0; i < 3; i++)
        if (ts[i] != NULL)
            task_join(ts[i]);
        else
            count_one(arg);         /* as the callers do: inline */
}

static void test_a_task_starts_and_joins_tasks(void **state)
{
    (void)state;
    atomic_int n;
    atomic_init(&n, 0);
    task *outer[4];
    for (int i = 0; i < 4; i++)
        assert_non_null(outer[i] = task_start(start_and_join_three, &n));
    for (int i = 0; i < 4; i++)
        task_join(outer[i]);
    assert_int_equal(atomic_load(&n), 12);
}

static void test_detached_task_runs_to_its_end(void **state)
{
    (void)state;
    atomic_int done;
    atomic_init(&done, 0);
    assert_int_equal(task_start_detached(set_after_nap, &done), 0);
    /* detach a task that has already ended, too */
    atomic_int n;
    atomic_init(&n, 0);
    task *t = task_start(count_one, &n);
    assert_non_null(t);
    while (atomic_load(&n) == 0)
        nap_ms(1);
    task_detach(t);
    for (int i = 0; i < 1000 && atomic_load(&done) == 0; i++)
        nap_ms(5);
    assert_int_equal(atomic_load(&done), 1);
    tasks_shutdown();       /* joins the threads: nothing for LeakSanitizer */
}

static void note_self(void *arg)
{
    *(pthread_t *)arg = pthread_self();
}

static void test_an_idle_thread_is_reused(void **state)
{
    (void)state;
    pthread_t first, second;
    task *t = task_start(note_self, &first);
    assert_non_null(t);
    task_join(t);
    /* the thread went idle before task_join returned (one lock section) */
    t = task_start(note_self, &second);
    assert_non_null(t);
    task_join(t);
    assert_true(pthread_equal(first, second));
}

static void note_mask(void *arg)
{
    pthread_sigmask(SIG_BLOCK, NULL, (sigset_t *)arg);
}

static void test_a_new_thread_keeps_the_creators_blocked_signals(void **state)
{
    (void)state;
    tasks_shutdown();       /* no idle thread: the task gets a new one */
    sigset_t usr1, old, seen;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigemptyset(&seen);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &usr1, &old), 0);
    task *t = task_start(note_mask, &seen);
    assert_non_null(t);
    task_join(t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    assert_true(sigismember(&seen, SIGUSR1));
    tasks_shutdown();
}

static void test_the_pool_works_after_shutdown(void **state)
{
    (void)state;
    tasks_shutdown();
    tasks_shutdown();       /* on an empty pool: nothing to do */
    atomic_int n;
    atomic_init(&n, 0);
    task *t = task_start(count_one, &n);
    assert_non_null(t);
    task_join(t);
    assert_int_equal(atomic_load(&n), 1);
    tasks_shutdown();
}

/* Task A of the shutdown test: once tasks_shutdown has begun (and, after a
 * nap, is joining A's thread), starts a detached task B on a new thread. */
static atomic_int shutdown_begun;
static atomic_int b_done;

static void b_naps_then_ends(void *arg)
{
    (void)arg;
    nap_ms(300);
    atomic_store(&b_done, 1);
}

static void a_starts_b_during_shutdown(void *arg)
{
    (void)arg;
    while (!atomic_load(&shutdown_begun))
        nap_ms(1);
    /* The nap only widens the window in which tasks_shutdown has taken
     * the thread list and waits for this thread: a slow machine may start
     * B earlier, when any shutdown joins it (the test passes, weaker). */
    nap_ms(200);
    if (task_start_detached(b_naps_then_ends, NULL) != 0)
        atomic_store(&b_done, -1);      /* no cmocka assert off the main thread */
}

/* tasks_shutdown joins a thread that a running task started during the
 * shutdown (issue 42): it returns only after B has ended. */
static void test_shutdown_joins_a_thread_started_during_it(void **state)
{
    (void)state;
    tasks_shutdown();       /* no idle thread: B gets a new one */
    atomic_init(&shutdown_begun, 0);
    atomic_init(&b_done, 0);
    assert_int_equal(task_start_detached(a_starts_b_during_shutdown, NULL), 0);
    atomic_store(&shutdown_begun, 1);
    tasks_shutdown();
    int ended = atomic_load(&b_done);
    while (!atomic_load(&b_done))   /* a broken build: let B end first */
        nap_ms(10);
    assert_int_equal(ended, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_waits_for_the_end),
        cmocka_unit_test(test_waiting_tasks_all_get_a_thread),
        cmocka_unit_test(test_a_task_starts_and_joins_tasks),
        cmocka_unit_test(test_detached_task_runs_to_its_end),
        cmocka_unit_test(test_an_idle_thread_is_reused),
        cmocka_unit_test(test_a_new_thread_keeps_the_creators_blocked_signals),
        cmocka_unit_test(test_the_pool_works_after_shutdown),
        cmocka_unit_test(test_shutdown_joins_a_thread_started_during_it),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    tasks_shutdown();
    return failed;
}
