/*
 * request.h - strict parsers that turn the argument vector of an
 * asynchronous GAHP request line into a typed request.
 *
 * The protocol module tokenises and unescapes a line; everything about the
 * shape of each BOINC_* command (field counts, numbers, names) is checked
 * here, so a request that reaches a worker is always well formed.
 */
#ifndef BOINC_GAHP_REQUEST_H
#define BOINC_GAHP_REQUEST_H

#include <stdatomic.h>
#include <stddef.h>

typedef enum {
    GAHP_CMD_PING = 0,
    GAHP_CMD_SUBMIT,
    GAHP_CMD_QUERY_BATCHES,
    GAHP_CMD_FETCH_OUTPUT,
    GAHP_CMD_ABORT_JOBS,
    GAHP_CMD_RETIRE_BATCH,
    GAHP_CMD_SET_LEASE,
    /* The BLAH dialect of HTCondor 10.0-25.x (grid_resource = batch boinc) */
    GAHP_CMD_BLAH_SUBMIT,
    GAHP_CMD_BLAH_STATUS,
    GAHP_CMD_BLAH_CANCEL,
    GAHP_CMD_BLAH_PING,
    GAHP_CMD_BLAH_LEAD,         /* internal: close and submit a BLAH group */
    GAHP_CMD_COUNT
} gahp_command;

/* Largest accepted request id (HTCondor wraps at 990,000,000). */
#define GAHP_MAX_REQUEST_ID 2147483647L

typedef struct {
    char *src_path;
    char *dst_name;
} gahp_input_file;

typedef struct {
    char *name;
    size_t nargs;
    char **args;
    size_t ninputs;
    gahp_input_file *inputs;
} gahp_submit_job;

/* Bits of gahp_submit.params_set: which of the six trailing fields were
 * numbers (a field sent as the literal NULL leaves its bit clear). */
enum {
    GAHP_P_FPOPS_EST = 1, GAHP_P_FPOPS_BOUND = 2, GAHP_P_MEMORY_BOUND = 4,
    GAHP_P_DISK_BOUND = 8, GAHP_P_DELAY_BOUND = 16, GAHP_P_APP_VERSION = 32
};

/*
 * The six trailing fields of BOINC_SUBMIT: the one job-parameter type of
 * the program, parsed here and sent as is by BOINC's submit_batch
 * (boinc/boinc.h takes it).  A field the client sent as NULL, or did not
 * send, is 0; a value <= 0 is sent as 0 ("unset" to the server).
 */
typedef struct {
    double rsc_fpops_est;
    double rsc_fpops_bound;
    double rsc_memory_bound;
    double rsc_disk_bound;
    double delay_bound;
    long app_version_num;
} gahp_job_params;

typedef struct {
    char *batch;
    char *app;
    size_t njobs;
    gahp_submit_job *jobs;
    int has_params;         /* the six trailing fields were present */
    unsigned params_set;    /* GAHP_P_* bits */
    gahp_job_params params;
} gahp_submit;

typedef struct {
    char *min_mod_time;     /* verbatim, "0" or a float string */
    size_t nbatches;
    char **batches;
} gahp_query_batches;

typedef struct {
    char *src;
    char *dst;
} gahp_output_spec;

typedef struct {
    char *job;
    char *iwd;
    char *stderr_file;
    int all;                /* 1 = ALL, 0 = SOME */
    size_t nspecs;
    gahp_output_spec *specs;
} gahp_fetch_output;

typedef struct {
    size_t njobs;
    char **jobs;
} gahp_abort_jobs;

typedef struct {
    char *batch;
} gahp_retire_batch;

typedef struct {
    char *batch;
    long long lease_time;   /* unix time */
} gahp_set_lease;

/*
 * BLAH_JOB_SUBMIT: what boinc_gahp takes from the job's ClassAd
 * (blah_submit_ad.c; doc/htcondor.md has the mapping).  Paths are absolute
 * (relative ones joined to Iwd) except out and the output destinations,
 * which stay as the ad gives them: the fetch resolves them against iwd.
 */
typedef struct {
    char *ad_text;          /* the ad as received (unescaped) */
    char *job_dir;          /* JobDirectory: the HTCondor job's stable key */
    char *app;              /* Queue (batch_queue); NULL = blah_default_app */
    char *project;          /* BatchProject (batch_project), or NULL */
    char *iwd;              /* Iwd, absolute */
    char *out;              /* Out, NULL when unset or /dev/null */
    char *err;              /* Err, NULL when unset or /dev/null */
    size_t nargs;
    char **args;            /* Arguments (V2) or Args (V1), split */
    size_t ninputs;
    char **inputs;          /* In (unless /dev/null), then TransferInput */
    int outputs_all;        /* no TransferOutput: every output file */
    size_t noutputs;
    gahp_output_spec *outputs;  /* TransferOutput names and their
                                   TransferOutputRemaps destinations */
    double memory_mb;       /* RequestMemory in MiB, 0 = unset */
} gahp_blah_submit;

typedef struct {
    char *job_id;           /* the id BLAH_JOB_SUBMIT returned */
} gahp_blah_job;

/* The server's command table row (server/command.h); opaque here. */
struct command_row;

typedef struct gahp_request {
    gahp_command cmd;
    const struct command_row *row;  /* the command's row, found once when the
                                   server parsed the request and carried to
                                   its result (as Redis's c->cmd); NULL for a
                                   request made outside the server's table */
    long id;                    /* the client's request id */
    long long journal_id;       /* requests.id in the journal, 0 = none yet */
    long long project_id;       /* projects.id in the journal, 0 = none */
    char *project_url;          /* project selected when accepted, or NULL */
    char *authenticator;        /* idem; never logged */
    char *args_text;            /* canonical escaped argument text after the id */
    int background;             /* 1 = run for the journal only: the outcome is
                                   committed but not queued for RESULTS (recovery
                                   resuming an earlier run's work) */
    struct gahp_arena *arena;   /* the memory of the parsed fields in u (request.c) */
    char *value_error;          /* a well-framed field with a bad value, e.g.
                                   "rsc_memory_bound 2GB is not a number": the
                                   line got S, the result is this error */
    union {
        gahp_submit submit;
        gahp_query_batches query;
        gahp_fetch_output fetch;
        gahp_abort_jobs abort_jobs;
        gahp_retire_batch retire;
        gahp_set_lease lease;
        gahp_blah_submit blah_submit;
        gahp_blah_job blah_job;     /* BLAH_JOB_STATUS, BLAH_JOB_CANCEL */
        long long blah_group;       /* internal BLAH_GROUP_LEAD: the group */
    } u;
    atomic_int extra_refs;      /* holders beyond the first (gahp_request_ref) */
} gahp_request;

/* The parser of one command's fields (after the request id).  Each
 * command's row in command.c names its parser. */
typedef struct gahp_cursor gahp_cursor;
typedef int (*gahp_parse_fn)(gahp_cursor *c, gahp_request *r);

int gahp_parse_ping(gahp_cursor *c, gahp_request *r);
int gahp_parse_submit(gahp_cursor *c, gahp_request *r);
int gahp_parse_query(gahp_cursor *c, gahp_request *r);
int gahp_parse_fetch(gahp_cursor *c, gahp_request *r);
int gahp_parse_abort(gahp_cursor *c, gahp_request *r);
int gahp_parse_retire(gahp_cursor *c, gahp_request *r);
int gahp_parse_lease(gahp_cursor *c, gahp_request *r);
int gahp_parse_blah_submit(gahp_cursor *c, gahp_request *r);
int gahp_parse_blah_job(gahp_cursor *c, gahp_request *r);
int gahp_parse_blah_ping(gahp_cursor *c, gahp_request *r);
int gahp_parse_blah_lead(gahp_cursor *c, gahp_request *r);

/*
 * blah_submit_ad.c: the fields of a BLAH_JOB_SUBMIT ad into *s.  0; 1 with
 * *why (malloc'd) when the ad is well framed but cannot be submitted (the
 * result is then that error); -1 on ENOMEM.
 */
int gahp_blah_submit_from_ad(const char *ad_text, gahp_blah_submit *s, char **why);
void gahp_blah_submit_free(gahp_blah_submit *s);

/*
 * Parse argv[0..argc) (argv[0] is the command name, already unescaped) of
 * command cmd with its parser into a new request.  Returns 0 and sets
 * *out, or -1 with *why pointing at a static human-readable reason: the
 * line is not a well-framed request (wrong field count, a request id that
 * is not a positive integer ...), so the client gets E.  A well-framed
 * line with a bad value parses (0) with (*out)->value_error set.  On
 * ENOMEM *why is "out of memory".  The request does not copy a project;
 * the caller fills project_url/authenticator.
 */
int gahp_request_parse(gahp_command cmd, gahp_parse_fn parse, char *const *argv,
                       size_t argc, gahp_request **out, const char **why);

/*
 * A journaled request, as the journal keeps it to resume it: the
 * command's name, the request id, the escaped fields after the id, and
 * the project it was accepted for (project_url NULL: none).
 */
typedef struct {
    const char *command;
    long id;
    const char *args_text;
    long long project_id;
    const char *project_url;
    const char *authenticator;
} gahp_journal_record;

/*
 * The typed request of a journaled record, parsed as its request line was
 * (gahp_request_parse of "<command> <id> <args_text>"), with the record's
 * project copied.  NULL with *why (static) when the record does not parse
 * or memory ran out.  Recovery and the BLAH dialect's internal requests
 * both rebuild requests this way, and only this way.
 */
gahp_request *gahp_request_from_record(gahp_command cmd, gahp_parse_fn parse,
                                       const gahp_journal_record *rec, const char **why);

/* A request with no fields parsed (an internal one, built typed: the
 * caller fills u); NULL when memory ran out. */
gahp_request *gahp_request_new(gahp_command cmd, long id);
/* Copy a project into r (url NULL: only the id).  0, or -1 on ENOMEM. */
int gahp_request_set_project(gahp_request *r, long long project_id, const char *url,
                             const char *authenticator);

/* Release a reference: the last one frees the request. */
void gahp_request_free(gahp_request *req);
/*
 * Another reference to a request that is complete (it is never written
 * again once dispatched): a submit run that outlives its worker shares
 * the worker's request instead of copying 10,000 jobs.  The reference
 * count is the one field a shared request changes, hence the cast.
 */
gahp_request *gahp_request_ref(const gahp_request *req);

#endif
