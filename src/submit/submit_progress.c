/*
 * submit_progress.c - progress lines of a long submit (submit_progress.h).
 */
#include "submit/submit_progress.h"

#include "base/log.h"

#include <time.h>

/* A real clock: progress is about the time a user waits. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void submit_progress_init(submit_progress *p, const char *batch, const char *phase,
                          size_t files_total, long long bytes_total)
{
    pthread_mutex_init(&p->mu, NULL);
    p->batch = batch;
    p->phase = phase;
    p->files_total = files_total;
    p->bytes_total = bytes_total;
    p->files_done = 0;
    p->bytes_done = 0;
    p->start = p->last = now_s();
    p->files_at_last = 0;
}

void submit_progress_set_total(submit_progress *p, size_t files_total, long long bytes_total)
{
    pthread_mutex_lock(&p->mu);
    p->files_total = files_total;
    p->bytes_total = bytes_total;
    pthread_mutex_unlock(&p->mu);
}

void submit_progress_add(submit_progress *p, size_t files, long long bytes)
{
    pthread_mutex_lock(&p->mu);
    p->files_done += files;
    p->bytes_done += bytes;
    double t = now_s();
    /* The last file of a phase gets no line of its own here: the phase's
     * summary line (or the submit's result) says it ended. */
    int due = p->files_done < p->files_total &&
              (t - p->last >= PROGRESS_INTERVAL_S ||
               p->files_done - p->files_at_last >= PROGRESS_FILES);
    if (due) {
        p->last = t;
        p->files_at_last = p->files_done;
        if (p->bytes_total < 0)     /* not known before the phase (hashing) */
            log_info("submit %s: progress: %s %zu of %zu files, %lld bytes, %.1f s",
                     p->batch, p->phase, p->files_done, p->files_total, p->bytes_done,
                     t - p->start);
        else
            log_info("submit %s: progress: %s %zu of %zu files, %lld of %lld bytes, "
                     "%.1f s", p->batch, p->phase, p->files_done, p->files_total,
                     p->bytes_done, p->bytes_total, t - p->start);
    }
    pthread_mutex_unlock(&p->mu);
}

void submit_progress_destroy(submit_progress *p)
{
    pthread_mutex_destroy(&p->mu);
}
