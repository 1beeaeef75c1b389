/*
 * scripted_client.h - a boinc_client implementation for unit tests (the
 * interface of src/boinc/boinc.h): it answers the RPCs of a submit, a
 * fetch and a status query from a small model of a BOINC server and a
 * script of faults, and records every call.  Linked into every unit test
 * (the Makefile links each non-test_ file of tests/unit/ into them).
 *
 * The model (a "world": the server's batches, three input files and the
 * jobs) answers as a real server would, and like one it refuses what is
 * fatal on repeat: a file associated with a batch twice (query_files with
 * the batch id), an upload of a file it already has, a second
 * submit_batch into a batch.  Those, and a second batch of one name, are
 * counted as violations: a correct engine never causes one.
 *
 * A fault turns the n-th call of one RPC (or every call) into an outcome:
 *
 *   not sent        BOINC_E_BADARG, reached = 0, no effect
 *   refused         BOINC_E_SERVER, reached = 1, no effect
 *   unknown acted   BOINC_E_TRANSPORT, reached = 1, the effect happened
 *   unknown         BOINC_E_HTTP 502, reached = 1, no effect
 *   no memory       BOINC_E_NOMEM before sending (reached = 0, no effect),
 *                   or while buffering the reply (reached = 1, effect)
 *   limit           BOINC_E_SERVER with PHP's max_file_uploads error, no
 *                   effect (for upload_files)
 *   acts late       BOINC_E_TRANSPORT, reached = 1: a timeout while the
 *                   server still works on it; the effect shows from the
 *                   second call after (create, upload, submit)
 *
 * Fetch and query (test_fetch_seam.c, test_query_seam.c): the world also
 * holds the app's outputs (its template and the bytes get_output sends,
 * with the Content-Length the server announces), finished jobs (what
 * query_completed_job and query_batch's job details answer) and batches
 * with their jobs' statuses and modification times (query_batch2 lists
 * the jobs modified after min_mod_time, as a server does; an unknown name
 * is "no batch named NAME"; abort_jobs makes a job ERROR).  get_output
 * keeps the contract of boinc.h: the download limit is honoured
 * (BOINC_E_IO past it), a byte count other than the announced one is
 * BOINC_E_TRANSPORT; unlike the libcurl client, a failed download leaves
 * the bytes it wrote in fd, so a test sees that the fetch, not the
 * client, keeps them from a final name.
 *
 * A world may serve several clients at once (a submit's helper lanes): it
 * has a mutex.  Ownership: exec_ctx frees the clients (boinc_client_free);
 * the world outlives them and is freed by world_destroy.
 */
#ifndef TEST_SCRIPTED_CLIENT_H
#define TEST_SCRIPTED_CLIENT_H

#include "boinc/boinc.h"
#include "exec/exec.h"

#include <pthread.h>
#include <stddef.h>

#define SC_BATCH "b1"           /* the one batch name the model knows */
#define SC_APP "app"
#define SC_NFILES 3             /* the model's files; the first is present at start */
#define SC_MAX_CALLS 256
#define SC_MAX_BATCHES 8
#define SC_MAX_FAULTS 3

/* The RPCs a submit makes, in the order of its steps; then those of a
 * fetch, a status query and an abort; K_OTHER: the rest (ping, retire,
 * set_expire_time), answered "not sent". */
typedef enum {
    K_TEMPLATES, K_QUERY_BATCHES, K_CREATE, K_QUERY_FILES, K_QUERY_FILES_SAFE,
    K_UPLOAD, K_QUERY_BATCH, K_SUBMIT,
    K_COMPLETED, K_TEMPLATES_JOB, K_JOB_DETAIL, K_GET_OUTPUT, K_QUERY2, K_ABORT,
    K_OTHER, K_COUNT
} sc_kind;
#define K_FIRST_NOT_SUBMIT K_COMPLETED  /* kinds from here on: no submit's RPC */
#define BIT(k) (1u << (k))
extern const char *const sc_kind_name[K_COUNT];

typedef enum {
    O_DONE, O_NOT_SENT, O_REFUSED, O_UNK_ACTED, O_UNKNOWN, O_ALWAYS_UNKNOWN,
    O_NOMEM_BEFORE, O_NOMEM_REPLY, O_LIMIT, O_UNK_LATE, O_COUNT
} sc_outcome;
extern const char *const sc_outcome_name[O_COUNT];

/* The error an outcome gives (O_DONE: none). */
typedef struct {
    boinc_code code;
    long http;
    int reached;
    const char *msg;
} sc_failure;
extern const sc_failure sc_failure_of[O_COUNT];

/* Does the server act on a call with this outcome (its effect happens)? */
int sc_acts(sc_outcome o);
/* Is the outcome unknown to the caller (it must ask before resending)? */
int sc_uncertain(sc_outcome o);

typedef struct {
    sc_kind kind;
    int nth;            /* 1 = first call of that RPC; 0 = every call */
    sc_outcome o;       /* O_DONE = no fault (an unused slot) */
} sc_fault;

typedef struct {
    sc_kind kind;
    sc_outcome o;
    int client;         /* which client made it (1 = the first made) */
    int file_num;       /* get_output: the file asked for */
    long long limit;    /* get_output: the download limit in force (0: none) */
} sc_call;

#define SC_MAX_OUTPUTS 4
#define SC_MAX_FJOBS 8
#define SC_MAX_QBATCHES 4
#define SC_MAX_QJOBS 8
#define SC_MAX_Q2 8

/* One output of the app: its template entry and what get_output sends. */
typedef struct {
    const char *name;           /* the output template's open_name */
    long long max_nbytes;       /* the template's max_nbytes (0: none) */
    const void *data;           /* the bytes the server sends */
    size_t len;
    long long declared;         /* the Content-Length it announces; < 0: len */
} sc_output;

/* A job as query_completed_job (and query_batch's details) tell it. */
typedef struct {
    const char *name;
    long canonical_resultid;    /* 0: none */
    long error_mask;
    int has_exit_status;
    int exit_status;
    double elapsed, cpu;
    const char *stderr_out;     /* NULL: absent */
    int completed_broken;       /* a stock server's query_completed_job dies
                                   (BOINC_E_PARSE); query_batch still lists
                                   detail_exit (< 0: no failed instance) and
                                   detail_status */
    int detail_exit;
    const char *detail_status;
} sc_fjob;

/* A batch as query_batch2 sees it. */
typedef struct {
    const char *name;           /* NULL: an unused slot */
    size_t njobs;
    struct {
        const char *name;
        const char *status;     /* as sent: DONE, ERROR, IN_PROGRESS, UNSENT ... */
        long long mod_time;
    } jobs[SC_MAX_QJOBS];
} sc_qbatch;

/* One query_batch2 call: what the client asked. */
typedef struct {
    char mmt[32];
    char names[200];            /* the batch names, space separated */
} sc_q2call;

typedef struct {
    pthread_mutex_t mu;
    char phys[SC_NFILES][64];       /* the files' physical names */
    int present[SC_NFILES], uploads[SC_NFILES], assoc[SC_NFILES];
    size_t nbatches;
    long batch_id[SC_MAX_BATCHES];
    size_t batch_jobs[SC_MAX_BATCHES];
    int submits;                    /* submit_batch calls that acted */
    sc_fault faults[SC_MAX_FAULTS]; /* the script */
    int seen[K_COUNT];              /* calls so far, by RPC */
    sc_call calls[SC_MAX_CALLS];    /* the record */
    size_t ncalls;
    int violations;
    char violation[200];            /* the first one */
    int clients;                    /* clients made */
    sc_kind late_kind;              /* an effect still to come (O_UNK_LATE) */
    int late_countdown;             /* calls until it shows; 0 = none */
    unsigned late_files;
    int late_batch;
    size_t late_njobs;
    /* fetch: the app's outputs, finished jobs, the server batch id of
     * query_batch's job details */
    sc_output outputs[SC_MAX_OUTPUTS];
    size_t noutputs;
    sc_fjob fjobs[SC_MAX_FJOBS];
    size_t nfjobs;
    long detail_batch_id;
    /* query: batches, the server's clock, the calls, reply shape faults */
    sc_qbatch qbatches[SC_MAX_QBATCHES];
    long long server_time;      /* <server_time> of the next reply */
    sc_q2call q2[SC_MAX_Q2];
    size_t nq2;
    int q2_short;               /* the reply answers one batch fewer */
    int q2_no_time;             /* the reply's server_time is empty */
} sc_world;

/* A world whose server has files phys[0..SC_NFILES), only the first. */
void sc_world_init(sc_world *w, const char *const phys[SC_NFILES]);
void sc_world_destroy(sc_world *w);
/* A new script: faults (n of them), the call counts from zero. */
void sc_world_script(sc_world *w, const sc_fault *faults, size_t n);

/* The batch of world w named name (NULL: none). */
sc_qbatch *sc_qbatch_find(sc_world *w, const char *name);
/* Set a job's status on the server, modified at the world's server_time. */
void sc_qjob_set(sc_world *w, const char *batch, const char *job, const char *status);
/* Calls of kind k in the record. */
int sc_count(const sc_world *w, sc_kind k);

/* A client source (exec.h) whose every client is scripted on world w. */
exec_client_source sc_source(sc_world *w);

#endif
