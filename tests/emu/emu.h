/*
 * emu.h - shared declarations of boinc_emu, the stand-in BOINC project
 * used by the tests and the demo.
 *
 * The emulator is one process: an HTTP server (libmicrohttpd) answering the
 * project's PHP scripts and a control API, a SQLite database holding the
 * project state, and a "backend" (transitioner, simulated hosts, validator,
 * assimilator) driven by a virtual or real clock.  All database access goes
 * through emu_lock()/emu_unlock(): one connection, one mutex.
 */
#ifndef BOINC_EMU_H
#define BOINC_EMU_H

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

/* ---- BOINC constants (values as in BOINC's database) ---- */
enum { SS_UNSENT = 2, SS_IN_PROGRESS = 4, SS_OVER = 5 };
enum {
    OUTCOME_INIT = 0, OUTCOME_SUCCESS = 1, OUTCOME_COULDNT_SEND = 2,
    OUTCOME_CLIENT_ERROR = 3, OUTCOME_NO_REPLY = 4, OUTCOME_DIDNT_NEED = 5,
    OUTCOME_VALIDATE_ERROR = 6, OUTCOME_CLIENT_DETACHED = 7
};
enum { VS_INIT = 0, VS_VALID = 1, VS_INVALID = 2, VS_NO_CHECK = 3, VS_INCONCLUSIVE = 4 };
enum {
    WU_ERR_COULDNT_SEND = 1, WU_ERR_TOO_MANY_ERRORS = 2,
    WU_ERR_TOO_MANY_SUCCESS = 4, WU_ERR_TOO_MANY_TOTAL = 8,
    WU_ERR_CANCELLED = 16, WU_ERR_NO_CANONICAL = 32
};
enum { ASSIM_INIT = 0, ASSIM_READY = 1, ASSIM_DONE = 2 };
enum {
    BATCH_INIT = 0, BATCH_IN_PROGRESS = 1, BATCH_COMPLETE = 2,
    BATCH_ABORTED = 3, BATCH_RETIRED = 4
};
/* Host behaviours (control API names in behaviour_names[]). */
enum {
    BEH_SUCCEED = 0, BEH_CRASH, BEH_NO_REPLY, BEH_WRONG, BEH_SLOW,
    BEH_DETACH, BEH_COUNT
};
#define EMU_NEVER 1e18      /* "no time": transition/report never due */

/* ---- applications ---- */
typedef struct {
    char *name;
    char *kind;             /* uppercase, twoinout, zipout, failer */
    int min_quorum, target_nresults, max_error_results;
    int max_total_results, max_success_results;
    double delay_bound;
    char **inputs;  int ninputs;    /* logical (open) names */
    char **outputs; int noutputs;
    char *in_template;      /* generated template texts (get_templates) */
    char *out_template;
} emu_app;

/* ---- fault injection ---- */
typedef struct {
    char *endpoint;         /* script name, RPC name or "*" */
    int kind;               /* FAULT_* */
    long count;             /* remaining; -1 = unlimited */
    double probability;     /* used when count == -1 */
    long delay_ms;
    int after;              /* apply after processing the request */
} emu_fault;
enum {
    FAULT_NONE = 0, FAULT_HTTP500, FAULT_HTTP503, FAULT_DELAY, FAULT_DROP,
    FAULT_TRUNCATE, FAULT_MALFORMED, FAULT_HTML_ERROR
};

/* RPC kinds counted by /control/counters. */
enum {
    RPC_PING, RPC_GET_TEMPLATES, RPC_CREATE_BATCH, RPC_SUBMIT_BATCH,
    RPC_QUERY_BATCH2, RPC_QUERY_COMPLETED_JOB, RPC_ABORT_JOBS,
    RPC_RETIRE_BATCH, RPC_SET_EXPIRE_TIME, RPC_QUERY_BATCHES, RPC_QUERY_BATCH,
    RPC_ABORT_BATCH, RPC_ESTIMATE_BATCH, RPC_QUERY_FILES, RPC_UPLOAD_FILES,
    RPC_GET_OUTPUT, RPC_OTHER, RPC_COUNT
};
extern const char *const rpc_names[RPC_COUNT];

/* ---- one HTTP exchange ---- */
typedef struct {
    char *name;             /* form field name */
    char *filename;         /* NULL for plain fields */
    char *data;             /* NUL-terminated copy */
    size_t len;
    int upload_error;       /* PHP UPLOAD_ERR_INI_SIZE: file above upload_max_filesize */
    char *tmp_path;         /* PHP's tmp_name: the part written out before the script runs; NULL: not written */
} emu_part;

typedef struct {
    const char *method;
    const char *path;
    void *conn;             /* struct MHD_Connection * */
    strbuf body;
    emu_part *parts;
    int nparts;
    long long over_limit;       /* body size when it exceeded post_max_bytes */
} emu_request;

typedef struct {
    int status;
    char content_type[64];
    strbuf body;
    char *hdr_name[12];
    char *hdr_value[12];
    int nhdr;
    long declared_len;      /* >= 0: Content-Length to announce */
    size_t send_len;        /* with declared_len: bytes really sent */
    int cut;                /* close the connection after send_len bytes */
} emu_reply;

/* ---- global state ---- */
typedef struct {
    char *state_dir, *download_dir, *upload_dir, *slot_dir, *db_path;
    char *php_tmp_dir;          /* PHP's upload_tmp_dir: file parts before the script moves them */
    char *self_exe;
    char *project_url;
    sqlite3 *db;
    pthread_mutex_t lock;       /* database + everything below */
    pthread_mutex_t pass_lock;  /* one backend pass at a time */
    int manual_clock;
    double vnow;                /* manual clock value */
    int nhosts;
    int max_tasks_per_host;
    double run_seconds;
    int parallel;               /* app processes run at once */
    int spawn_exec;             /* 1: posix_spawn a new boinc_emu; 0: fork only */
    int spawn_direct;           /* fork the server itself, not the helper */
    long long post_max_bytes;   /* PHP post_max_size emulation; 0 = none */
    long max_file_uploads;      /* PHP max_file_uploads; 0 = none */
    long long upload_max_filesize;  /* PHP upload_max_filesize; 0 = none */
    emu_app *apps; int napps;
    int quirk_php_warnings, quirk_qcj_stock, quirk_sql_backslash;
    int default_behaviour;
    emu_fault *faults; int nfaults;
    long rpc_count[RPC_COUNT];
    long http_requests;
    long in_flight;             /* project requests being answered now */
    long most_in_flight;        /* the most at once (counters: concurrency seen) */
    long long query_batch2_jobs;    /* job lines listed by query_batch2 replies */
    long files_uploaded;
    long long bytes_uploaded;
    /* What the PHP limits did (counters): requests refused or cut by each
     * limit, and the largest request seen by a project script. */
    long over_post_max, over_file_uploads, over_upload_filesize;
    long long largest_post;
    long most_files_in_post;
    volatile int stopping;
} emu_globals;

extern emu_globals G;

/* util.c */
double emu_now(void);                       /* virtual or real time */
double wall_now(void);
void emu_lock(void);
void emu_unlock(void);
char *xstrdup(const char *s);               /* aborts on ENOMEM */
void *xcalloc(size_t n, size_t size);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int random_hex(char *out, size_t nhex);     /* out: nhex+1 bytes */
void md5_hex(const void *data, size_t len, char out[33]);
int read_file(const char *path, char **data, size_t *len);
int write_file(const char *path, const void *data, size_t len);
int copy_or_link(const char *from, const char *to);
int remove_tree(const char *path);
int mkdir_p(const char *path);
void json_str(strbuf *sb, const char *s);   /* quoted, escaped */
void php_float(strbuf *sb, double v);       /* PHP's echo of a float */
void html_escape(strbuf *sb, const char *s, size_t len);
int parse_long(const char *s, long *out);
int parse_double(const char *s, double *out);
int valid_phys_name(const char *s);
int php_limits_set(const char *spec);       /* "stock", "none" or NAME=SIZE,... */
int php_size(const char *s, long long *out);  /* php.ini size: 8M, 2097152 ... */

/* db.c */
int db_open(void);
void db_close(void);
int db_exec(const char *sql);
sqlite3_stmt *db_prep(const char *sql);
/* a kept statement for a hot path: reset it after use, never finalize it */
sqlite3_stmt *db_prep_kept(const char *sql);
void db_run(sqlite3_stmt *st);              /* step, log failures */
long long db_int(const char *sql, long long id, long long dflt);
int meta_get(const char *key, char **value);
int meta_set(const char *key, const char *value);
void db_begin(void);
void db_commit(void);

/* apps.c */
int apps_load_defaults(void);
int apps_load_config(const char *path);
const emu_app *app_find(const char *name);
int run_app_main(int argc, char **argv);
/* The stderr line of an app run with the job arguments --times E C: the
 * emulator reports elapsed E and CPU C seconds for the run instead of
 * what it measured (a test job with non-zero times; doc/emulator.md). */
#define EMU_TIMES_LINE "reported times: elapsed and cpu "

/* backend.c */
void backend_run_until_quiet(void);
/* max_runs >= 0: run at most that many app instances, and stop once they
 * are all reported (run?max_runs=N); -1: no limit. */
double backend_advance(double seconds, int stop_when_done, long long max_runs);
void *backend_real_clock_thread(void *arg);
int behaviour_parse(const char *s);
extern const char *const behaviour_names[BEH_COUNT];
void job_touch(long long job_id);
void abort_job(long long job_id);
long long unfinished_jobs(void);

/* http.c */
int http_start(int port, int *bound_port);
/* An https listener on another port of 127.0.0.1 (PEM files). */
int http_start_tls(const char *cert_file, const char *key_file, int *bound_port);
void http_stop(void);
void reply_init(emu_reply *r);
void reply_free(emu_reply *r);
void reply_header(emu_reply *r, const char *name, const char *value);
const char *req_arg(const emu_request *rq, const char *name);
void reply_xml_begin(emu_reply *r);

/* rpc.c / jobfile.c / output.c / control.c */
void handle_submit_rpc(const emu_request *rq, emu_reply *r, int *kind);
void handle_job_file(const emu_request *rq, emu_reply *r, int *kind);
void handle_get_output(const emu_request *rq, emu_reply *r);
void handle_control(const emu_request *rq, emu_reply *r);
int rpc_kind_of_request(const emu_request *rq, int job_file);
const char *request_xml(const emu_request *rq, size_t *len);
void php_warnings(strbuf *sb);
void xml_error(strbuf *sb, const char *msg);
/* creatework.c: 0, or -1 with the create_work failure appended to sb */
int create_work_check(int index, char **name_io, char **cmdline, char *const *inputs,
                      int ninputs, strbuf *sb);

/* users (db.c) */
typedef struct { long long id; int submit; } emu_user;

#endif
