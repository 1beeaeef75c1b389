/*
 * boinc.h - client for a BOINC project's remote job submission web RPCs.
 *
 * The client is an interface, the way Redis's rio abstracts its back
 * ends: a boinc_client is a pointer to a table of operations
 * (boinc_client_ops, below), and every public RPC function here is a thin
 * dispatcher, boinc_create_batch(c, ...) = c->ops->create_batch(c, ...).
 * Callers (src/submit, src/cmd, src/fetch) only ever see boinc_client *.
 * An implementation embeds struct boinc_client as its FIRST member and
 * sets its ops; doc/boinc-client.md says how to write one.
 *
 *   operation              RPC (script)                     side effects
 *   ping                   ping (submit_rpc_handler.php)    none
 *   get_templates          get_templates by app             none
 *   get_templates_for_job  get_templates by job             none
 *   create_batch           create_batch                     a batch
 *   submit_batch           submit_batch                     the jobs
 *   query_batch2           query_batch2                     none
 *   query_completed_job    query_completed_job              none
 *   abort_jobs             abort_jobs                       idempotent
 *   retire_batch           retire_batch                     idempotent
 *   set_expire_time        set_expire_time                  idempotent
 *   query_batches          query_batches                    none
 *   query_batch_jobs       query_batch (job details)        none
 *   query_job_detail       query_batch (job details)        none
 *   query_files            query_files (job_file.php)       with a batch id:
 *                                                           associations
 *   upload_files           upload_files (job_file.php)      the files
 *   get_output_file        get_output.php                   none
 *   set_download_limit     (no RPC) limit the next downloads
 *   free                   (no RPC) release the client
 *
 * Implementations:
 *   libcurl   boinc_client_new(): src/boinc/boinc_curl.c (requests,
 *             replies) and boinc_http.c (transport); what the server uses.
 *   scripted  tests/unit/test_submit_engine.c: answers from a script and a
 *             model of a server, records every call.
 * The executor context gets its client from a client source
 * (src/exec/exec_ctx.h), so a test hands the server another one.
 *
 * Each client belongs to one thread (the libcurl one: one curl handle, so
 * connections are reused); clients are not shared between threads.
 *
 * Every call returns BOINC_OK (0) or another boinc_code, and fills *err
 * with the code, the HTTP status where there was one, and a one-line,
 * human-readable message (no newlines; never containing the authenticator,
 * nor a URL that carries it).  Server <error> replies keep the server's own
 * text, squashed to one line.  Callers release err with boinc_error_clear().
 * A NULL client is BOINC_E_BADARG; so is a NULL err (nothing filled).
 * Results are released with the boinc_*_free functions below, whatever
 * implementation filled them.
 *
 * Retries: requests that are safe to repeat on a real server (ping,
 * get_templates, query_batch2, query_batches, query_batch,
 * query_completed_job, retire_batch, set_expire_time, abort_jobs,
 * get_output, query_files WITHOUT a batch id) are retried with exponential
 * backoff on transport errors and HTTP 5xx, within opts.retry_budget_ms.
 * Requests with side effects that a repeat would duplicate or that a real
 * server rejects on repeat (create_batch, submit_batch, upload_files,
 * query_files WITH a batch id) are sent exactly once; on a failure with
 * err->reached set their outcome is unknown and the caller resolves it
 * with a safe query (doc/recovery.md).  Every implementation keeps this
 * contract, and sets err->reached exactly when the request may have
 * reached the server.
 */
#ifndef BOINC_GAHP_BOINC_H
#define BOINC_GAHP_BOINC_H

#include "wire/request.h"       /* gahp_job_params: what submit_batch sends */

#include <stddef.h>

typedef enum {
    BOINC_OK = 0,
    BOINC_E_NOMEM,      /* out of memory */
    BOINC_E_BADARG,     /* caller error: bad URL scheme, empty name ... */
    BOINC_E_TRANSPORT,  /* connect refused, timeout, reset, partial body */
    BOINC_E_HTTP,       /* HTTP status other than 200 */
    BOINC_E_PARSE,      /* unparseable, truncated or unexpected reply
                           (including PHP fatal errors inside the XML) */
    BOINC_E_SERVER,     /* the server answered with an <error> / ERROR: */
    BOINC_E_IO,         /* local file could not be read or written */
    BOINC_E_SETUP       /* only the operator can fix it, so never retried:
                           the project's certificate failed verification
                           (issuer, name, expiry), a malformed URL, an
                           unknown host name; nothing reached the server */
} boinc_code;

typedef struct {
    boinc_code code;
    long http_status;   /* 0 when no HTTP reply was received */
    char *msg;          /* malloc'd one-line message, or NULL */
    int reached;        /* 1 once the request was handed to the network: it
                           may have reached the server, so a failure after
                           that (a lost or unparseable reply, no memory to
                           buffer it) leaves the outcome unknown */
} boinc_error;

void boinc_error_clear(boinc_error *err);
/* Server text in the one-line form error messages carry: control
 * characters and runs of spaces become one space, ends trimmed (no length
 * cap).  malloc'd, NULL on ENOMEM. */
char *boinc_one_line(const char *text);

/* Short fixed name of a code, e.g. "transport error". */
const char *boinc_code_name(boinc_code code);

typedef struct {
    long connect_timeout_ms;  /* per connection attempt (default 10000) */
    long total_timeout_ms;    /* per HTTP request, whole transfer (default 300000) */
    long retry_budget_ms;     /* total time spent retrying a safe request (default 60000) */
    const char *ca_file;      /* CA bundle; NULL = system default */
    const char *ca_path;      /* CA directory; NULL = system default */
    int tls_verify;           /* 1 (default) = verify peer and host */
    long long max_reply_bytes;    /* largest RPC reply body kept, bytes
                                     (default BOINC_DEFAULT_MAX_REPLY); a
                                     longer one is BOINC_E_PARSE; <= 0 = none */
    long long max_download_bytes; /* largest get_output file, bytes (default
                                     BOINC_DEFAULT_MAX_DOWNLOAD); a longer
                                     one is BOINC_E_IO; <= 0 = none */
} boinc_options;

/* 32 MiB: a query_batch2 reply for a 100,000-job batch is about 7 MB,
 * query_batch with job details about 15 MB.  query_batch2 is read as a
 * stream (about 2-3 times the reply in memory); the other replies are
 * parsed as a libxml2 tree (about 14 times), so this also bounds a
 * worker's memory. */
#define BOINC_DEFAULT_MAX_REPLY (32LL * 1024 * 1024)
/* 4 GiB per output file. */
#define BOINC_DEFAULT_MAX_DOWNLOAD (4LL * 1024 * 1024 * 1024)

/* Fill opts with the defaults above. */
void boinc_options_default(boinc_options *opts);

/* A project as selected by BOINC_SELECT_PROJECT: url ends in '/'. */
typedef struct {
    const char *url;
    const char *authenticator;
} boinc_project;

/* A client: the first member of every implementation (see the top). */
typedef struct boinc_client_ops boinc_client_ops;
typedef struct boinc_client {
    const boinc_client_ops *ops;
} boinc_client;

/* Call once in main() before any thread starts / after all have ended. */
int boinc_global_init(void);
void boinc_global_cleanup(void);

/* The libcurl client.  NULL on ENOMEM / curl failure.  opts is copied
 * (strings too). */
boinc_client *boinc_client_new(const boinc_options *opts);
/* Release any client (its ops->free); NULL is a no-op. */
void boinc_client_free(boinc_client *client);

/* Limit the next get_output downloads of this client to max_bytes per
 * file (a fetch's remaining total); <= 0 restores opts.max_download_bytes.
 * The smaller of the two applies. */
void boinc_client_set_download_limit(boinc_client *client, long long max_bytes);

/* ---- submit_rpc_handler.php ------------------------------------------ */

int boinc_ping(boinc_client *c, const boinc_project *p, boinc_error *err);

typedef struct {
    size_t n_inputs;        /* <file_info> count of the input template */
    char **input_names;     /* their <open_name>s, in order (may be fewer) */
    size_t n_outputs;
    char **output_names;    /* output <open_name>s; index = get_output file_num */
    /* each output's <max_nbytes> from its <file_info> (0: none stated);
     * NULL when the template has no outputs */
    long long *output_max_nbytes;
} boinc_templates;

int boinc_get_templates(boinc_client *c, const boinc_project *p,
                        const char *app_name, boinc_templates *out,
                        boinc_error *err);
/* The same, looked up by a job's name (<job_name> instead of <app_name>):
 * what BOINC_FETCH_OUTPUT uses, since it only knows the job. */
int boinc_get_templates_for_job(boinc_client *c, const boinc_project *p,
                                const char *job_name, boinc_templates *out,
                                boinc_error *err);
void boinc_templates_free(boinc_templates *t);

int boinc_create_batch(boinc_client *c, const boinc_project *p,
                       const char *batch_name, const char *app_name,
                       double expire_time, long *batch_id, boinc_error *err);

typedef struct {
    const char *name;
    const char *command_line;        /* NULL or "" = none */
    size_t n_inputs;
    const char *const *phys_names;   /* n_inputs physical names */
} boinc_job_spec;

int boinc_submit_batch(boinc_client *c, const boinc_project *p,
                       long batch_id, const char *app_name,
                       const gahp_job_params *params,
                       const boinc_job_spec *jobs, size_t njobs,
                       boinc_error *err);

typedef struct {
    char *name;
    char *status;           /* as sent: DONE, ERROR, IN_PROGRESS, UNSENT */
} boinc_job_status;

struct boinc_strpool;

typedef struct {
    size_t njobs;
    boinc_job_status *jobs;
    /* Owns the names and statuses of jobs: a few large blocks instead of
     * two mallocs per job (never free a name or status on its own). */
    struct boinc_strpool *strings;
} boinc_batch_status;

typedef struct {
    char *server_time;      /* verbatim text of <server_time> */
    size_t nbatches;        /* equals the number of names requested */
    boinc_batch_status *batches;
} boinc_query_result;

int boinc_query_batch2(boinc_client *c, const boinc_project *p,
                       const char *min_mod_time,
                       const char *const *batch_names, size_t nbatches,
                       boinc_query_result *out, boinc_error *err);
void boinc_query_result_free(boinc_query_result *r);

typedef struct {
    long error_mask;
    long canonical_resultid;    /* 0 when absent */
    long error_resultid;        /* 0 when absent */
    int has_exit_status;        /* exit/elapsed/cpu present */
    int exit_status;
    double elapsed_time;
    double cpu_time;
    char *stderr_out;           /* unescaped text, or NULL when absent */
} boinc_completed_job;

int boinc_query_completed_job(boinc_client *c, const boinc_project *p,
                              const char *job_name, boinc_completed_job *out,
                              boinc_error *err);
void boinc_completed_job_free(boinc_completed_job *j);

int boinc_abort_jobs(boinc_client *c, const boinc_project *p,
                     const char *const *job_names, size_t njobs,
                     boinc_error *err);
int boinc_retire_batch(boinc_client *c, const boinc_project *p,
                       const char *batch_name, boinc_error *err);
int boinc_set_expire_time(boinc_client *c, const boinc_project *p,
                          const char *batch_name, double expire_time,
                          boinc_error *err);

/* query_batches: every batch of the user (used by crash recovery). */
typedef struct {
    long id;
    char *name;
    char *app_name;
    int state;              /* 0 INIT (no jobs yet), 1 IN_PROGRESS, 2 COMPLETE ... */
    long njobs;
    double create_time;
    double expire_time;
} boinc_batch_info;

int boinc_query_batches(boinc_client *c, const boinc_project *p,
                        boinc_batch_info **out, size_t *n, boinc_error *err);
void boinc_batch_info_free(boinc_batch_info *b, size_t n);

/* query_batch by id with job details: the names of the batch's jobs. */
int boinc_query_batch_jobs(boinc_client *c, const boinc_project *p,
                           long batch_id, char ***job_names, size_t *n,
                           boinc_error *err);
void boinc_names_free(char **names, size_t n);

/*
 * query_batch by id with <get_job_details>1</get_job_details>, for one job
 * of the batch: what a stock server still tells about a job without a
 * canonical instance when its query_completed_job is broken.  *found = 0
 * when the batch does not list the job.
 */
typedef struct {
    long canonical_instance_id;     /* 0 = none */
    size_t n_exit;                  /* failed instances, in reply order */
    int *exit_statuses;
    char *status;                   /* <status> text (queued, error ...), or NULL */
} boinc_job_detail;

int boinc_query_job_detail(boinc_client *c, const boinc_project *p, long batch_id,
                           const char *job_name, boinc_job_detail *out, int *found,
                           boinc_error *err);
void boinc_job_detail_free(boinc_job_detail *d);

/* ---- job_file.php ------------------------------------------------------ */

/*
 * query_files: absent[i] is set to 1 if the server lacks phys_names[i],
 * else 0.  batch_id > 0 associates the present files with the batch (NOT
 * safe to repeat on a real server); batch_id <= 0 only asks (safe).
 * Names must be distinct.  The caller splits large lists into chunks.
 */
int boinc_query_files(boinc_client *c, const boinc_project *p, long batch_id,
                      const char *const *phys_names, size_t n,
                      unsigned char *absent, boinc_error *err);

/*
 * Where one uploaded file's bytes come from.  data != NULL: those size
 * bytes, as they were hashed (the submit kept them from its MD5 pass, so
 * the file is read once).  data == NULL: local_path is read during the
 * transfer; when size >= 0 and the physical name starts with an MD5, the
 * bytes sent are hashed on the way and the request is aborted before its
 * last byte leaves if they are not size bytes with that MD5 (the file
 * changed since it was hashed): BOINC_E_IO, nothing stored on the server.
 */
typedef struct {
    const char *local_path;     /* read when data is NULL; named in messages */
    const void *data;           /* NULL: read local_path */
    long long size;             /* bytes hashed; < 0: unknown, not checked */
} boinc_upload_src;

/* upload_files: each file (see above) is sent as multipart part file_i under
 * phys_names[i]; associated with batch_id when > 0.  Sent once. */
int boinc_upload_files_src(boinc_client *c, const boinc_project *p, long batch_id,
                           const char *const *phys_names, const boinc_upload_src *src,
                           size_t n, boinc_error *err);

/* ---- get_output.php ---------------------------------------------------- */

/*
 * Download output file file_num of job_name's canonical instance into fd
 * (which must be an empty, writable regular file; on retry it is truncated
 * and rewritten).  Fails, never writing an error page as success, on:
 * HTTP != 200, an `ERROR:` body or text/html content type (BOINC_E_SERVER
 * with the server's message), a body shorter than Content-Length
 * (BOINC_E_TRANSPORT).  *nbytes receives the byte count written.
 */
int boinc_get_output_file(boinc_client *c, const boinc_project *p,
                          const char *job_name, int file_num, int fd,
                          long long *nbytes, boinc_error *err);

/* ---- the interface ------------------------------------------------------ */
/*
 * One entry per operation, with the arguments and contract of the public
 * function of the same name above (c is never NULL; err is never NULL).
 * Every entry must be set: an implementation that does not support an
 * RPC answers BOINC_E_BADARG with reached = 0.
 */
struct boinc_client_ops {
    const char *name;           /* "libcurl", "scripted", ... (for logs) */
    int (*ping)(boinc_client *c, const boinc_project *p, boinc_error *err);
    int (*get_templates)(boinc_client *c, const boinc_project *p, const char *app_name,
                         boinc_templates *out, boinc_error *err);
    int (*get_templates_for_job)(boinc_client *c, const boinc_project *p,
                                 const char *job_name, boinc_templates *out,
                                 boinc_error *err);
    int (*create_batch)(boinc_client *c, const boinc_project *p, const char *batch_name,
                        const char *app_name, double expire_time, long *batch_id,
                        boinc_error *err);
    int (*submit_batch)(boinc_client *c, const boinc_project *p, long batch_id,
                        const char *app_name, const gahp_job_params *params,
                        const boinc_job_spec *jobs, size_t njobs, boinc_error *err);
    int (*query_batch2)(boinc_client *c, const boinc_project *p, const char *min_mod_time,
                        const char *const *batch_names, size_t nbatches,
                        boinc_query_result *out, boinc_error *err);
    int (*query_completed_job)(boinc_client *c, const boinc_project *p,
                               const char *job_name, boinc_completed_job *out,
                               boinc_error *err);
    int (*abort_jobs)(boinc_client *c, const boinc_project *p,
                      const char *const *job_names, size_t njobs, boinc_error *err);
    int (*retire_batch)(boinc_client *c, const boinc_project *p, const char *batch_name,
                        boinc_error *err);
    int (*set_expire_time)(boinc_client *c, const boinc_project *p, const char *batch_name,
                           double expire_time, boinc_error *err);
    int (*query_batches)(boinc_client *c, const boinc_project *p, boinc_batch_info **out,
                         size_t *n, boinc_error *err);
    int (*query_batch_jobs)(boinc_client *c, const boinc_project *p, long batch_id,
                            char ***job_names, size_t *n, boinc_error *err);
    int (*query_job_detail)(boinc_client *c, const boinc_project *p, long batch_id,
                            const char *job_name, boinc_job_detail *out, int *found,
                            boinc_error *err);
    int (*query_files)(boinc_client *c, const boinc_project *p, long batch_id,
                       const char *const *phys_names, size_t n, unsigned char *absent,
                       boinc_error *err);
    int (*upload_files)(boinc_client *c, const boinc_project *p, long batch_id,
                        const char *const *phys_names, const boinc_upload_src *src,
                        size_t n, boinc_error *err);
    int (*get_output_file)(boinc_client *c, const boinc_project *p, const char *job_name,
                           int file_num, int fd, long long *nbytes, boinc_error *err);
    void (*set_download_limit)(boinc_client *c, long long max_bytes);
    void (*free)(boinc_client *c);
};

/* Longest physical name the BOINC server accepts. */
#define BOINC_PHYS_NAME_MAX 255

/*
 * Physical name for content md5_hex (32 lowercase hex digits) of the local
 * file local_name: md5_hex + the extension of local_name's basename (from
 * its last '.', when that '.' is not the first character), e.g.
 * "in.dat" -> "<md5>.dat", "data.tar.gz" -> "<md5>.gz", ".bashrc" -> "<md5>".
 * The extension is dropped when it is only "." or has a character outside
 * [A-Za-z0-9_-] after the dot, so the result always matches
 * ^[A-Za-z0-9_.-]{1,255}$.  Returns a malloc'd string, or NULL with errno
 * EINVAL (md5_hex is not 32 lowercase hex digits) or ENOMEM.
 */
char *boinc_phys_name(const char *md5_hex, const char *local_name);


#endif
