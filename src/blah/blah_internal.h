/*
 * blah_internal.h - what blah.c and blah_status.c share: the server's BLAH
 * state, the result tails of the four commands, and internal requests
 * (an ordinary command's typed request, rebuilt from its journaled
 * record, run by calling its executor).
 */
#ifndef BOINC_GAHP_BLAH_INTERNAL_H
#define BOINC_GAHP_BLAH_INTERNAL_H

#include "blah/blah.h"

#include "base/strbuf.h"
#include "base/tasks.h"

#include <pthread.h>

/* The internal command that submits a group (server/command.c's row:
 * the BOINC_SUBMIT parser and executor, never sent by a client). */
#define BLAH_GROUP_SUBMIT "BLAH_GROUP_SUBMIT"

/* A group being filled in this process: its leader waits on the state's
 * condition until the group should close. */
typedef struct blah_group {
    long long id;
    long long project_id;
    char *app;
    char *batch;                /* its BOINC batch name */
    double memory_mb;
    double opened;              /* real time (seconds) */
    double last_join;
    long njobs;
    int closing;                /* the leader took it: nobody joins */
    gahp_request *lead_req;     /* its BLAH_GROUP_LEAD, handed to a worker by
                                   the group timer when the group is due (NULL:
                                   handed already, or led inline) */
    struct blah_group *next;
} blah_group;

/* Per project: when the scheduler's next pass over it is due, and how
 * long it waits after a pass that found the project unreachable. */
typedef struct blah_refresh {
    long long project_id;
    double due;                 /* real time; 0 = at once */
    double backoff;             /* seconds; 0 = the last pass reached it */
    double kick_at;             /* a pass is wanted then (0 = none) ... */
    double first_kick;          /* ... asked for since then (0 = none) */
    double pass_start;          /* when the last pass began (0 = none yet) */
    struct blah_asks *asks;     /* HTCondor's statuses of jobs in flight, or NULL */
    struct blah_refresh *next;
} blah_refresh;

/* An app's input count as its template says, per project, or why it
 * cannot be used (the app is unknown); kept for BLAH_TEMPLATE_TTL_S. */
typedef struct blah_app {
    long long project_id;
    char *app;
    size_t n_inputs;
    char *error;                /* NULL = usable */
    double fetched;
    struct blah_app *next;
} blah_app;

struct blah_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* a group joined or closed, a refresh ended */
    blah_group *groups;
    blah_refresh *refreshes;
    blah_app *apps;
    /* The scheduler (blah_sched.c): one background task per server, with
     * its own context; it waits on cv for its next due time or a kick. */
    struct task *sched_task;
    struct task *timer_task;    /* the group timer (blah_sched.c) */
    exec_ctx sched_ctx;
    int sched_started;          /* the task was started (sched_ctx is open) */
    int sched_stop;             /* QUIT: leave at the next wait */
    int sched_busy;             /* in a pass (maybe in network I/O) */
    double sched_wake;          /* the earliest kick_at asked for (0 = none) */
};

#define BLAH_TEMPLATE_TTL_S 600.0

double blah_clock(void);        /* real time in seconds */


/* An ordinary command's request from its journaled record (command and
 * args_text, gahp_request_from_record), with like's project; NULL on
 * error (logged). */
gahp_request *blah_record_request(gahp_command cmd, gahp_parse_fn parse, const char *command,
                                  const char *args_text, const gahp_request *like);


/* blah.c, shared with blah_isolate.c: */
/* Why the input at path cannot be submitted (missing, unreadable, not a
 * regular file, larger than cfg's blah_max_input_bytes), malloc'd, or
 * NULL. */
char *blah_input_problem(const char *path, const gahp_config *cfg);
/* A batch name no other journal will make: random bits from the kernel
 * (malloc'd; NULL when the kernel's random source failed). */
char *blah_new_batch_name(void);
/* t escaped as one token, after a space unless sb is empty. */
int blah_put_token(strbuf *sb, const char *t);
/* One job of a group's BOINC_SUBMIT text (its id, then its spec). */
int blah_add_job_text(strbuf *jobs, const char *gahp_id, const char *spec);
/* A group's BOINC_SUBMIT argument text from its jobs' text (malloc'd). */
char *blah_group_args_text(const char *batch, const char *app, double memory_mb,
                           const strbuf *jobs, size_t njobs);
/* Run a group's submit here and record its outcome as the internal
 * request's result (completed and delivered: nobody else will read it);
 * then the scheduler is kicked (a failed batch may be split). */
void blah_submit_group(exec_ctx *ctx, gahp_request *sreq, const char *batch);

/* blah_isolate.c: per-job isolation (doc/blah-core.md).  At a group's
 * close, each job with an input gone missing or unreadable since it was
 * accepted (or grown past blah_max_input_bytes) is held alone: the count,
 * or -1 (logged). */
int blah_hold_unreadable(exec_ctx *ctx, long long group_id, const char *batch);
/* In the scheduler's pass over like's project: every group whose batch
 * was refused for one input is split (its jobs that gave the input held,
 * the rest submitted as a new batch). */
void blah_split_groups(exec_ctx *ctx, const gahp_request *like);

/* blah_sched.c: a pass over like's project is wanted now (a job was
 * cancelled, a group's batch reached the server): the scheduler sends its
 * aborts, queries it, fetches what finished.  Starts the scheduler with a
 * context made like ctx's if it is not running.  Never waits on the
 * network. */
void blah_send_aborts(exec_ctx *ctx, const gahp_request *like);
/* A BLAH_JOB_STATUS of job_id, a job the next pass over project_id may
 * move (blah_job_awaits_pass): asked again after some seconds, it brings
 * that pass forward to that long after the last one began (never sooner
 * than blah_status_min_interval after it).  Takes the lock; no I/O. */
void blah_status_asked(exec_ctx *ctx, long long project_id, const char *job_id);
/* Start the scheduler and the group timer (a context made like ctx's) if
 * they are not running.  0 when they run, -1 when they could not start
 * (logged; tried again at the next call). */
int blah_sched_ensure(exec_ctx *ctx);

/* blah.c, for the group timer, under st->mu: when the next armed group
 * (one with a lead_req) should close (INFINITY: none), and the lead
 * request of a group due at now (the group marked closing, its lead_req
 * taken), or NULL. */
double blah_groups_next_close(const struct blah_state *st, const gahp_config *cfg);
gahp_request *blah_groups_take_due(struct blah_state *st, const gahp_config *cfg, double now);

#endif
