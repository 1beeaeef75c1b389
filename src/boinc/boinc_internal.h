/*
 * boinc_internal.h - private interface between the parts of the BOINC RPC
 * client (boinc.c the interface's dispatchers, boinc_curl.c the libcurl
 * implementation's RPCs, boinc_req.c request building, boinc_xml.c reply
 * parsing, boinc_http.c transport and the libcurl client object,
 * boinc_util.c text helpers).
 *
 * Only the files of src/boinc/ and the unit tests include this; everything here is a
 * pure function (no network) unless it takes a boinc_curl_client.
 */
#ifndef BOINC_GAHP_BOINC_INTERNAL_H
#define BOINC_GAHP_BOINC_INTERNAL_H

#include "boinc/boinc.h"
#include "base/strbuf.h"

#include <curl/curl.h>
#include <stddef.h>

/* ---- errors and text (boinc_util.c) ----------------------------------- */

/* Set *err (NULL allowed) and return code.  The message is formatted with
 * printf rules; on ENOMEM the message is left NULL. */
int boinc_fail(boinc_error *err, boinc_code code, long http_status,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Longest message kept from a server; longer ones end in " [...]". */
#define BOINC_MSG_MAX 2000

/* One line: control characters become spaces, runs of spaces collapse,
 * leading/trailing space is trimmed, and the result is capped at max bytes
 * (on a UTF-8 boundary, marked " [...]").  malloc'd; NULL on ENOMEM. */
char *boinc_squash(const char *s, size_t n, size_t max);

/* Decode &lt; &gt; &amp; &quot; &apos; &#NN; &#xHH; once; unknown entities
 * stay as they are.  malloc'd; NULL on ENOMEM. */
char *boinc_unescape_entities(const char *s, size_t n);

/* Text of an HTML/PHP fragment for a message: tags removed, entities
 * decoded, squashed to one line of at most max bytes.  NULL on ENOMEM. */
char *boinc_html_summary(const char *s, size_t n, size_t max);

/* text with every run of min(8, strlen(secret)) or more characters that
 * occurs in secret replaced by "***" (whole copies and cut pieces alike).
 * malloc'd; NULL on ENOMEM. */
char *boinc_scrub_text(const char *text, const char *secret);

/* The same on err->msg (dropped on ENOMEM: never keep a secret). */
void boinc_scrub_secret(boinc_error *err, const char *secret);

/* The password of a URL's user information ("http://user:PASS@host/"),
 * malloc'd, or NULL when there is none (or on ENOMEM). */
char *boinc_url_password(const char *url);

/* Scrub both secrets of a project from err: its authenticator and the
 * password its URL may carry (issue 10 #6, #11). */
void boinc_scrub_project(boinc_error *err, const char *authenticator,
                         const char *url);

/* ---- string pool (boinc_util.c) --------------------------------------- */
/* Strings carved out of large blocks, all freed at once: a 100,000-job
 * query_batch2 reply needs 200,000 short strings, which as separate
 * mallocs cost more than reading the reply. */
typedef struct boinc_strpool boinc_strpool;

/* A NUL-terminated copy of s[0..n) kept in *pool (created on first use).
 * NULL on ENOMEM. */
char *boinc_strpool_copy(boinc_strpool **pool, const char *s, size_t n);
void boinc_strpool_free(boinc_strpool *pool);

/* ---- request bodies (boinc_req.c) -------------------------------------- */
/* Each appends the XML for field `request` to sb; 0, or -1 on ENOMEM.
 * Every caller-supplied string is XML-escaped; floats use %.6f. */

int boinc_req_ping(strbuf *sb);
/* key is "app_name" or "job_name" (capture 02 / 03). */
int boinc_req_get_templates(strbuf *sb, const char *auth, const char *key,
                            const char *value);
int boinc_req_create_batch(strbuf *sb, const char *auth, const char *batch,
                           const char *app, double expire_time);
int boinc_req_submit_batch(strbuf *sb, const char *auth, long batch_id,
                           const char *app, const gahp_job_params *params,
                           const boinc_job_spec *jobs, size_t njobs);
int boinc_req_query_batch2(strbuf *sb, const char *auth,
                           const char *min_mod_time,
                           const char *const *batches, size_t n);
int boinc_req_query_completed_job(strbuf *sb, const char *auth,
                                  const char *job);
int boinc_req_abort_jobs(strbuf *sb, const char *auth,
                         const char *const *jobs, size_t n);
int boinc_req_retire_batch(strbuf *sb, const char *auth, const char *batch);
int boinc_req_set_expire_time(strbuf *sb, const char *auth,
                              const char *batch, double expire_time);
int boinc_req_query_batches(strbuf *sb, const char *auth);
int boinc_req_query_batch_jobs(strbuf *sb, const char *auth, long batch_id);
/* query_files and upload_files share one shape. */
int boinc_req_file_list(strbuf *sb, const char *rpc, const char *auth,
                        long batch_id, const char *const *names, size_t n);

/* The get_output.php URL for one output file; values are URL-escaped
 * with escape (curl_easy_escape in production).  0 or -1 on ENOMEM. */
typedef char *(*boinc_url_escape_fn)(const char *s, void *ctx);
int boinc_output_url(strbuf *sb, const char *project_url, const char *auth,
                     const char *job, int file_num,
                     boinc_url_escape_fn escape, void *ctx);

/* ---- reply parsing (boinc_xml.c) --------------------------------------- */
/*
 * Every parser first runs boinc_reply_check(): a fatal <error> anywhere
 * (error_num != 0, also at top level) gives BOINC_E_SERVER with the
 * squashed error_msg; a PHP fatal error or a reply whose outer element is
 * not closed gives BOINC_E_PARSE "server error: ..." / "truncated reply".
 * Then the success content is looked up anywhere in the (recovered) tree;
 * when it is missing or malformed: BOINC_E_PARSE.
 */
/* memmem over [from, end): the first occurrence of needle, or NULL. */
const char *boinc_find_bytes(const char *from, const char *end, const char *needle);

int boinc_reply_check(const char *rpc, const char *body, size_t len,
                      boinc_error *err);

/* ping, abort_jobs, retire_batch, set_expire_time, upload_files */
int boinc_parse_success(const char *rpc, const char *body, size_t len,
                        boinc_error *err);
/* create_batch, submit_batch */
int boinc_parse_batch_id(const char *rpc, const char *body, size_t len,
                         long *batch_id, boinc_error *err);
int boinc_parse_templates(const char *body, size_t len, boinc_templates *out,
                          boinc_error *err);
int boinc_parse_query_batch2(const char *body, size_t len, size_t nbatches,
                             boinc_query_result *out, boinc_error *err);
/* Its two halves (for tests and the fuzz harness's differential check):
 * the streaming SAX pass (boinc_batch2.c), which only accepts a regular
 * reply and returns BOINC_OK or -1 (nothing else set), and the tree
 * parser, which takes anything libxml2 can recover and reports every
 * error.  boinc_parse_query_batch2 runs boinc_reply_check, the stream,
 * then the tree. */
int boinc_parse_query_batch2_stream(const char *body, size_t len,
                                    size_t nbatches, boinc_query_result *out);
/* The stream fed to libxml2 chunk bytes at a time (tests: every split). */
int boinc_parse_query_batch2_chunked(const char *body, size_t len,
                                     size_t nbatches, boinc_query_result *out,
                                     size_t chunk);
int boinc_parse_query_batch2_tree(const char *body, size_t len,
                                  size_t nbatches, boinc_query_result *out,
                                  boinc_error *err);
/* Does body hold an '&' that does not start an entity reference (which
 * the tree parser escapes before parsing)? */
int boinc_has_bare_amp(const char *body, size_t len);
int boinc_parse_completed_job(const char *body, size_t len,
                              boinc_completed_job *out, boinc_error *err);
int boinc_parse_query_batches(const char *body, size_t len,
                              boinc_batch_info **out, size_t *n,
                              boinc_error *err);
int boinc_parse_batch_jobs(const char *body, size_t len, char ***names,
                           size_t *n, boinc_error *err);
int boinc_parse_job_detail(const char *body, size_t len, const char *job_name,
                           boinc_job_detail *out, int *found, boinc_error *err);
int boinc_parse_absent_files(const char *body, size_t len, size_t n,
                             unsigned char *absent, boinc_error *err);

/* A get_output.php answer that is not a file: describe it.  content_type
 * may be NULL.  Always returns BOINC_E_SERVER (ERROR: body or HTML page)
 * with the server's message. */
int boinc_output_error(long http_status, const char *content_type,
                       const char *body, size_t len, boinc_error *err);
/* 1 if content_type announces a file (application/octet-stream). */
int boinc_output_is_file(const char *content_type);

/* ---- the libcurl client (boinc_http.c, boinc_curl.c) -------------------- */

/* What boinc_client_new() makes: struct boinc_client first, then its
 * curl handle and options (defined in boinc_http.c). */
typedef struct boinc_curl_client boinc_curl_client;

/* The libcurl client of a client made by boinc_client_new (its base is
 * the first member); NULL for NULL. */
static inline boinc_curl_client *boinc_curl_of(boinc_client *c)
{
    return (boinc_curl_client *)(void *)c;
}

/* Its operations (boinc_curl.c); the two that are not RPCs are in
 * boinc_http.c. */
extern const boinc_client_ops boinc_curl_ops;
void boinc_curl_set_download_limit(boinc_client *c, long long max_bytes);
void boinc_curl_free(boinc_client *c);

/* ---- transport (boinc_http.c) ------------------------------------------ */

typedef enum {
    BOINC_ONCE = 0,     /* side effects: sent exactly once */
    BOINC_RETRY = 1     /* safe to repeat: retried within the budget */
} boinc_retry_policy;

/* A file part of an upload_files request (boinc_upload.c): the i-th
 * part of a request is the form field file_i. */
typedef struct {
    const char *local_path;
    const void *data;           /* the kept bytes; NULL: read local_path */
    long long size;             /* the bytes sent; < 0: the file's (stat) */
    const char *md5;            /* 32 hex digits the bytes read from the
                                   file must hash to; NULL: not checked */
} boinc_upload_part;

/* Why an upload's read callback stopped the transfer (msg malloc'd). */
typedef struct {
    int failed;
    char *msg;
} upload_fault;

/* The multipart/form-data body of a request: the request field, then one
 * part per file, streamed by boinc_upload_body_read (libcurl's read
 * callback) from the kept bytes or the file; a part that fails its read
 * or MD5 check fills *fault and aborts the transfer before the body is
 * complete.  Built here rather than by libcurl's form API, which formats
 * each part's headers through its own printf (8% of a 10,000-file
 * submit's instructions); the bytes on the wire are the same.  The parts'
 * sizes must be known (boinc_upload_check).  NULL: out of memory, or no
 * randomness for the boundary. */
typedef struct upload_body upload_body;
upload_body *boinc_upload_body_new(const char *request_xml, const boinc_upload_part *parts,
                                   size_t nparts, upload_fault *fault);
long long boinc_upload_body_size(const upload_body *b);    /* Content-Length */
const char *boinc_upload_body_type(const upload_body *b);  /* the Content-Type header line */
size_t boinc_upload_body_read(char *buf, size_t size, size_t nitems, void *arg);
int boinc_upload_body_seek(void *arg, curl_off_t offset, int origin);
void boinc_upload_body_free(upload_body *b);
/* Before anything is sent, the parts read from disk whose size is not
 * given: stat'ed for it and checked (readable regular files): BOINC_OK or
 * BOINC_E_IO.  Parts of known size are checked as the body reaches them. */
int boinc_upload_check(boinc_upload_part *parts, size_t n, boinc_error *err);

/*
 * POST request_xml as form field `request` (plus file parts) to
 * project_url + script; on HTTP 200 the body is left in *reply.
 * Transport errors and HTTP 5xx are retried when policy says so.
 */
int boinc_http_post(boinc_curl_client *c, const char *project_url,
                    const char *script, const char *rpc,
                    const char *request_xml, const boinc_upload_part *parts,
                    size_t nparts, boinc_retry_policy policy, strbuf *reply,
                    boinc_error *err);

/* GET url (which carries the authenticator: never logged unredacted) into
 * fd, with the checks of boinc_get_output_file(). */
int boinc_http_get_to_fd(boinc_curl_client *c, const char *url, int fd,
                         long long *nbytes, boinc_error *err);

/* The secrets of the project the next requests go to (not copied: they
 * must outlive the calls): every message is scrubbed of them before the
 * transport logs it.  NULLs clear them. */
void boinc_curl_set_secrets(boinc_curl_client *c, const char *authenticator,
                            const char *project_url);

/* Escape s for a URL query with this client's curl handle (client is a
 * boinc_curl_client). */
char *boinc_http_escape(const char *s, void *client);

/* Delay before retry number attempt (0-based): 500 ms doubled per attempt,
 * capped at 10 s, then scaled by a jitter factor in [0.5, 1.0]
 * (jitter01 in [0, 1]). */
long boinc_backoff_ms(unsigned attempt, double jitter01);

/* Is this failure worth another try of a safe request? */
int boinc_is_retryable(int code, long http_status);

/* The MD5 a physical name starts with (boinc_phys_name: 32 lowercase hex
 * digits, then the end or an extension): phys_name itself, or NULL. */
const char *boinc_phys_name_md5(const char *phys_name);

#endif
