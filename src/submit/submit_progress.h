/*
 * submit_progress.h - progress of a long submit in the log: one info line
 * per phase (hashing, uploading) every few seconds or every few thousand
 * files, never one per file, naming the files and bytes done out of the
 * phase's total and the time since it began.  Shared by the threads of a
 * phase (the hash pool, the upload lanes), so it has its own mutex.
 */
#ifndef BOINC_GAHP_SUBMIT_PROGRESS_H
#define BOINC_GAHP_SUBMIT_PROGRESS_H

#include <pthread.h>
#include <stddef.h>

/* A line at least this often while a phase goes on ... */
#define PROGRESS_INTERVAL_S 5.0
/* ... and at every this many files done. */
#define PROGRESS_FILES 5000

typedef struct submit_progress {
    pthread_mutex_t mu;
    const char *batch;          /* the submit's batch name (not copied) */
    const char *phase;          /* "hashed", "uploaded" */
    size_t files_total, files_done;
    long long bytes_total, bytes_done;
    double start, last;         /* monotonic seconds */
    size_t files_at_last;       /* files_done at the last line */
} submit_progress;

/* bytes_total < 0: not known (the lines then give the bytes done alone). */
void submit_progress_init(submit_progress *p, const char *batch, const char *phase,
                          size_t files_total, long long bytes_total);

/* Set the totals (before the phase's threads start). */
void submit_progress_set_total(submit_progress *p, size_t files_total, long long bytes_total);

/* files more files (bytes bytes) done; logs a line when one is due. */
void submit_progress_add(submit_progress *p, size_t files, long long bytes);

void submit_progress_destroy(submit_progress *p);

#endif
