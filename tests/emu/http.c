/*
 * http.c - the emulator's HTTP side (libmicrohttpd, one thread per
 * connection, 127.0.0.1 only): request body collection, multipart/form-data
 * and urlencoded parsing, routing to the project scripts and the control
 * API, fault injection, and sending replies exactly as built (including
 * replies that announce more bytes than they send, like a real server's
 * broken downloads).
 */
#define _GNU_SOURCE     /* memmem() */
#include "emu.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

static struct MHD_Daemon *daemon_handle;
static struct MHD_Daemon *tls_handle;       /* the https listener, if any */

#define MAX_BODY (512L * 1024 * 1024)   /* refuse absurd uploads */

void reply_init(emu_reply *r)
{
    memset(r, 0, sizeof *r);
    r->status = 200;
    r->declared_len = -1;
    snprintf(r->content_type, sizeof r->content_type, "text/xml;charset=UTF-8");
}

void reply_free(emu_reply *r)
{
    strbuf_free(&r->body);
    for (int i = 0; i < r->nhdr; i++) {
        free(r->hdr_name[i]);
        free(r->hdr_value[i]);
    }
    r->nhdr = 0;
}

void reply_header(emu_reply *r, const char *name, const char *value)
{
    if (r->nhdr >= 12)
        return;
    r->hdr_name[r->nhdr] = xstrdup(name);
    r->hdr_value[r->nhdr] = xstrdup(value);
    r->nhdr++;
}

void reply_xml_begin(emu_reply *r)
{
    strbuf_puts(&r->body, "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n");
}

const char *req_arg(const emu_request *rq, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)rq->conn,
                                       MHD_GET_ARGUMENT_KIND, name);
}

const char *request_xml(const emu_request *rq, size_t *len)
{
    for (int i = 0; i < rq->nparts; i++) {
        if (strcmp(rq->parts[i].name, "request") == 0) {
            *len = rq->parts[i].len;
            return rq->parts[i].data;
        }
    }
    *len = 0;
    return "";
}

/* ---- body parsing ---- */

static void add_part(emu_request *rq, const char *name, size_t nlen,
                     const char *filename, size_t flen, const char *data, size_t dlen)
{
    emu_part *p = realloc(rq->parts, (size_t)(rq->nparts + 1) * sizeof *p);
    if (p == NULL)
        abort();
    rq->parts = p;
    emu_part *n = &p[rq->nparts++];
    n->name = xcalloc(nlen + 1, 1);
    memcpy(n->name, name, nlen);
    n->filename = NULL;
    if (filename) {
        n->filename = xcalloc(flen + 1, 1);
        memcpy(n->filename, filename, flen);
    }
    n->data = xcalloc(dlen + 1, 1);
    if (dlen)
        memcpy(n->data, data, dlen);
    n->len = dlen;
    n->upload_error = 0;
    n->tmp_path = NULL;
}

/* Value of a parameter like name="x" inside a header line. */
static const char *header_param(const char *hdr, size_t hlen, const char *param, size_t *vlen)
{
    size_t plen = strlen(param);
    for (size_t i = 0; i + plen + 2 <= hlen; i++) {
        if ((i == 0 || hdr[i - 1] == ' ' || hdr[i - 1] == ';') &&
            strncasecmp(hdr + i, param, plen) == 0 && hdr[i + plen] == '=') {
            const char *v = hdr + i + plen + 1;
            size_t rest = hlen - (size_t)(v - hdr);
            if (rest > 0 && *v == '"') {
                const char *e = memchr(v + 1, '"', rest - 1);
                if (e == NULL)
                    return NULL;
                *vlen = (size_t)(e - v - 1);
                return v + 1;
            }
            size_t k = 0;
            while (k < rest && v[k] != ';' && v[k] != '\r' && v[k] != '\n')
                k++;
            *vlen = k;
            return v;
        }
    }
    return NULL;
}

static void parse_multipart(emu_request *rq, const char *ctype)
{
    size_t blen;
    const char *b = header_param(ctype, strlen(ctype), "boundary", &blen);
    if (b == NULL || blen == 0 || blen > 200)
        return;
    char delim[210];
    snprintf(delim, sizeof delim, "--%.*s", (int)blen, b);
    size_t dlen = strlen(delim);
    const char *body = rq->body.data ? rq->body.data : "";
    const char *end = body + rq->body.len;
    const char *p = memmem(body, rq->body.len, delim, dlen);
    while (p != NULL) {
        p += dlen;
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            break;
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
            p += 2;
        const char *hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (hend == NULL)
            break;
        const char *data = hend + 4;
        /* the data ends at CRLF + delimiter */
        char close[214];
        snprintf(close, sizeof close, "\r\n%s", delim);
        const char *next = memmem(data, (size_t)(end - data), close, dlen + 2);
        if (next == NULL)
            break;
        size_t nlen = 0, flen = 0;
        const char *name = header_param(p, (size_t)(hend - p), "name", &nlen);
        const char *fname = header_param(p, (size_t)(hend - p), "filename", &flen);
        if (name)
            add_part(rq, name, nlen, fname, flen, data, (size_t)(next - data));
        p = next + 2;
    }
}

/*
 * PHP's per-file limits on a parsed multipart POST: file parts past the
 * max_file_uploads-th are dropped silently (the script never sees them);
 * a file above upload_max_filesize stays in $_FILES with its error set
 * and no content.
 */
static void apply_file_limits(emu_request *rq)
{
    emu_lock();
    long max_files = G.max_file_uploads;
    long long max_size = G.upload_max_filesize;
    emu_unlock();
    int nfiles = 0, kept = 0, dropped = 0, too_big = 0;
    for (int i = 0; i < rq->nparts; i++) {
        emu_part *p = &rq->parts[i];
        if (p->filename == NULL) {
            rq->parts[kept++] = *p;
            continue;
        }
        if (max_files > 0 && nfiles >= max_files) {
            free(p->name);
            free(p->filename);
            free(p->data);
            dropped++;
            continue;
        }
        nfiles++;
        if (max_size > 0 && (long long)p->len > max_size) {
            p->upload_error = 1;
            p->data[0] = '\0';
            p->len = 0;
            too_big++;
        }
        rq->parts[kept++] = *p;
    }
    rq->nparts = kept;
    emu_lock();
    /* the count the client sent, before PHP dropped any */
    if (nfiles + dropped > G.most_files_in_post)
        G.most_files_in_post = nfiles + dropped;
    G.over_file_uploads += dropped > 0;
    G.over_upload_filesize += too_big;
    emu_unlock();
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static char *url_decode(const char *s, size_t len, size_t *out_len)
{
    char *o = xcalloc(len + 1, 1);
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '+') {
            o[k++] = ' ';
        } else if (s[i] == '%' && i + 2 < len && hexval(s[i + 1]) >= 0 &&
                   hexval(s[i + 2]) >= 0) {
            o[k++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            o[k++] = s[i];
        }
    }
    *out_len = k;
    return o;
}

static void parse_urlencoded(emu_request *rq)
{
    const char *s = rq->body.data ? rq->body.data : "";
    size_t len = rq->body.len;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && s[j] != '&')
            j++;
        const char *eq = memchr(s + i, '=', j - i);
        if (eq) {
            size_t kl, vl;
            char *k = url_decode(s + i, (size_t)(eq - s - i), &kl);
            char *v = url_decode(eq + 1, (size_t)(s + j - eq - 1), &vl);
            add_part(rq, k, kl, NULL, 0, v, vl);
            free(k);
            free(v);
        }
        i = j + 1;
    }
}

/* ---- canned pages ---- */

static void apache_page(emu_reply *r, int status)
{
    r->status = status;
    snprintf(r->content_type, sizeof r->content_type, "text/html; charset=iso-8859-1");
    strbuf_reset(&r->body);
    const char *title, *h1, *text;
    if (status == 403) {
        title = "403 Forbidden"; h1 = "Forbidden";
        text = "You don't have permission to access this resource.";
    } else if (status == 404) {
        title = "404 Not Found"; h1 = "Not Found";
        text = "The requested URL was not found on this server.";
    } else if (status == 503) {
        title = "503 Service Unavailable"; h1 = "Service Unavailable";
        text = "The server is temporarily unable to service your\nrequest due to maintenance downtime or capacity\nproblems. Please try again later.";
    } else {
        title = "500 Internal Server Error"; h1 = "Internal Server Error";
        text = "The server encountered an internal error or\nmisconfiguration and was unable to complete\nyour request.";
    }
    strbuf_printf(&r->body,
                  "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">\n"
                  "<html><head>\n<title>%s</title>\n</head><body>\n<h1>%s</h1>\n<p>%s</p>\n</body></html>\n",
                  title, h1, text);
}

/* ---- faults ---- */

static int fault_matches(const emu_fault *f, const char *script, int kind)
{
    if (strcmp(f->endpoint, "*") == 0 || strcmp(f->endpoint, script) == 0)
        return 1;
    return kind >= 0 && kind < RPC_COUNT && strcmp(f->endpoint, rpc_names[kind]) == 0;
}

/* Take the first matching fault (consuming one of its count). */
static int fault_take(const char *script, int kind, emu_fault *out)
{
    int found = 0;
    emu_lock();
    for (int i = 0; i < G.nfaults; i++) {
        emu_fault *f = &G.faults[i];
        if (!fault_matches(f, script, kind))
            continue;
        if (f->count < 0) {
            double roll = (double)random() / ((double)RAND_MAX + 1.0);
            if (roll >= f->probability)
                continue;
            *out = *f;
            found = 1;
            break;
        }
        *out = *f;
        found = 1;
        if (--f->count == 0) {
            free(f->endpoint);
            memmove(&G.faults[i], &G.faults[i + 1], (size_t)(G.nfaults - i - 1) * sizeof *f);
            G.nfaults--;
        }
        break;
    }
    emu_unlock();
    out->endpoint = NULL;   /* not owned by the copy */
    return found;
}

static const char fatal_text[] =
    "<br />\n<b>Fatal error</b>:  Allowed memory size of 134217728 bytes exhausted "
    "(tried to allocate 20480 bytes) in <b>/srv/boinc/projects/test/html/inc/boinc_db.inc</b>"
    " on line <b>123</b><br />\n";

static void apply_fault(const emu_fault *f, emu_reply *r, const char *script, int kind)
{
    int is_output = strcmp(script, "get_output.php") == 0;
    const char *tag = (kind >= 0 && kind < RPC_OTHER) ? rpc_names[kind] : "error";
    switch (f->kind) {
    case FAULT_HTTP500:
        apache_page(r, 500);
        break;
    case FAULT_HTTP503:
        apache_page(r, 503);
        break;
    case FAULT_DROP:
        if (r->body.len < 2 && is_output) {
            /* not processed: a plausible download, cut in the middle */
            snprintf(r->content_type, sizeof r->content_type, "application/octet-stream");
            strbuf_puts(&r->body, "output file contents that never arrive in full\n");
        } else if (r->body.len < 2) {
            reply_xml_begin(r);
            strbuf_printf(&r->body, "<%s>\n<success>1</success>\n        </%s>\n    ", tag, tag);
        }
        r->declared_len = (long)r->body.len;
        r->send_len = r->body.len / 2;
        r->cut = 1;
        break;
    case FAULT_TRUNCATE: {
        strbuf keep = STRBUF_INIT;
        if (r->body.len > 60) {     /* after: cut the real reply */
            strbuf_append(&keep, r->body.data, r->body.len / 2);
            strbuf_putc(&keep, '\n');
        } else {
            strbuf_puts(&keep, "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n");
            strbuf_printf(&keep, "<%s>\n", tag);
        }
        strbuf_puts(&keep, fatal_text);
        strbuf_free(&r->body);
        r->body = keep;
        r->status = 200;
        snprintf(r->content_type, sizeof r->content_type, "text/xml;charset=UTF-8");
        break;
    }
    case FAULT_MALFORMED:
        strbuf_reset(&r->body);
        strbuf_append(&r->body, "\x01\x02\xff garbage <<<& not xml at all >>> \xfe\n", 38);
        r->status = 200;
        snprintf(r->content_type, sizeof r->content_type,
                 is_output ? "application/octet-stream" : "text/xml;charset=UTF-8");
        break;
    case FAULT_HTML_ERROR:
        strbuf_reset(&r->body);
        r->status = 200;
        snprintf(r->content_type, sizeof r->content_type, "text/html; charset=UTF-8");
        if (is_output)
            strbuf_puts(&r->body, "ERROR: database error (injected fault)");
        else
            strbuf_puts(&r->body,
                        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<title>Unable to handle request</title>\n"
                        "</head>\n<body>\n<h2>Unable to handle request</h2>\n"
                        "Database error (injected fault)<br>\n</body>\n</html>\n");
        break;
    default:
        break;
    }
}

/* ---- dispatch ---- */

typedef struct {
    emu_request rq;
    int too_big;
} conn_ctx;

static void route_project(emu_request *rq, emu_reply *r);

static void route(emu_request *rq, emu_reply *r)
{
    if (strncmp(rq->path, "/control/", 9) == 0) {
        snprintf(r->content_type, sizeof r->content_type, "application/json");
        handle_control(rq, r);
        return;
    }
    emu_lock();
    G.http_requests++;
    if (++G.in_flight > G.most_in_flight)
        G.most_in_flight = G.in_flight;
    emu_unlock();
    route_project(rq, r);
    emu_lock();
    G.in_flight--;
    emu_unlock();
}

static void route_project(emu_request *rq, emu_reply *r)
{
    const char *path = rq->path;
    const char *script = NULL;
    if (strncmp(path, "/emu/", 5) == 0)
        script = path + 5;
    else if (strncmp(path, "/emu", 4) == 0) {
        apache_page(r, 403);    /* project URL without its trailing slash */
        return;
    } else {
        apache_page(r, 404);
        return;
    }
    int is_rpc = strcmp(script, "submit_rpc_handler.php") == 0;
    int is_jf = strcmp(script, "job_file.php") == 0;
    int is_out = strcmp(script, "get_output.php") == 0;
    if (!is_rpc && !is_jf && !is_out) {
        apache_page(r, 404);
        return;
    }
    int kind = is_out ? RPC_GET_OUTPUT : rpc_kind_of_request(rq, is_jf);
    emu_lock();
    G.rpc_count[kind]++;
    emu_unlock();
    emu_fault f;
    int faulted = fault_take(script, kind, &f);
    if (faulted && f.delay_ms > 0) {
        struct timespec ts = { f.delay_ms / 1000, (f.delay_ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
    if (faulted && !f.after && f.kind != FAULT_DELAY) {
        apply_fault(&f, r, script, kind);
        return;
    }
    if (rq->over_limit && !is_out)
        strbuf_printf(&r->body, "<br />\n<b>Warning</b>:  PHP Request Startup: POST Content-Length of %lld "
                      "bytes exceeds the limit of %lld bytes in <b>Unknown</b> on line <b>0</b><br />\n",
                      rq->over_limit, G.post_max_bytes);
    if (is_rpc)
        handle_submit_rpc(rq, r, &kind);
    else if (is_jf)
        handle_job_file(rq, r, &kind);
    else
        handle_get_output(rq, r);
    if (faulted && f.after && f.kind != FAULT_DELAY)
        apply_fault(&f, r, script, kind);
}

typedef struct {
    char *data;
    size_t send_len;
} cut_ctx;

static ssize_t cut_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    cut_ctx *c = cls;
    if (pos >= c->send_len)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = c->send_len - (size_t)pos;
    if (n > max)
        n = max;
    memcpy(buf, c->data + pos, n);
    return (ssize_t)n;
}

static void cut_free(void *cls)
{
    cut_ctx *c = cls;
    free(c->data);
    free(c);
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, emu_reply *r)
{
    struct MHD_Response *resp;
    if (r->declared_len >= 0) {
        cut_ctx *c = xcalloc(1, sizeof *c);
        c->send_len = r->send_len <= r->body.len ? r->send_len : r->body.len;
        c->data = xcalloc(r->body.len + 1, 1);
        if (r->body.len)
            memcpy(c->data, r->body.data, r->body.len);
        resp = MHD_create_response_from_callback((uint64_t)r->declared_len, 4096,
                                                 cut_reader, c, cut_free);
    } else {
        resp = MHD_create_response_from_buffer(r->body.len, r->body.data ? r->body.data : (void *)"",
                                               MHD_RESPMEM_MUST_COPY);
    }
    if (resp == NULL)
        return MHD_NO;
    for (int i = 0; i < r->nhdr; i++)
        MHD_add_response_header(resp, r->hdr_name[i], r->hdr_value[i]);
    MHD_add_response_header(resp, "Content-Type", r->content_type);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/*
 * PHP writes every file part of a multipart POST to its upload_tmp_dir
 * while it reads the request, before the script runs, in the request's
 * own Apache process: parallel requests write their files in parallel,
 * and job_file.php only moves them (move_uploaded_file, a rename).  So
 * does the emulator: the parts are written here, outside the state lock,
 * and upload_files renames them under it.  Writing them under the lock
 * (as before) serialised every connection's file creation, which a real
 * server does not.  A part that cannot be written keeps tmp_path NULL and
 * is written by the script's step instead.
 */
static void stage_file_parts(emu_request *rq)
{
    static atomic_ulong seq;
    for (int i = 0; i < rq->nparts; i++) {
        emu_part *p = &rq->parts[i];
        if (p->filename == NULL || p->upload_error)
            continue;
        char *tmp = xasprintf("%s/php%ld_%lu", G.php_tmp_dir, (long)getpid(),
                              atomic_fetch_add(&seq, 1));
        if (write_file(tmp, p->data, p->len) == 0) {
            p->tmp_path = tmp;
        } else {
            unlink(tmp);
            free(tmp);
        }
    }
}

/* PHP deletes the temporary files a script did not move at its end. */
static void unstage_file_parts(emu_request *rq)
{
    for (int i = 0; i < rq->nparts; i++) {
        if (rq->parts[i].tmp_path == NULL)
            continue;
        unlink(rq->parts[i].tmp_path);      /* ENOENT: the script moved it */
        free(rq->parts[i].tmp_path);
        rq->parts[i].tmp_path = NULL;
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    conn_ctx *cc = *con_cls;
    if (cc == NULL) {
        cc = xcalloc(1, sizeof *cc);
        *con_cls = cc;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (cc->rq.body.len + *upload_size > (size_t)MAX_BODY)
            cc->too_big = 1;
        else if (strbuf_append(&cc->rq.body, upload_data, *upload_size) != 0)
            cc->too_big = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    emu_request *rq = &cc->rq;
    rq->method = method;
    rq->path = url;
    rq->conn = conn;
    int control = strncmp(url, "/control/", 9) == 0;
    emu_lock();
    long long post_max = G.post_max_bytes;
    if (!control && (long long)rq->body.len > G.largest_post)
        G.largest_post = (long long)rq->body.len;
    if (post_max > 0 && (long long)rq->body.len > post_max && !control)
        G.over_post_max++;
    emu_unlock();
    if (post_max > 0 && (long long)rq->body.len > post_max && !control) {
        /* PHP drops the whole POST ($_POST and $_FILES are empty) */
        rq->over_limit = (long long)rq->body.len;
    } else if (!cc->too_big) {
        const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
        if (ct && strncasecmp(ct, "multipart/form-data", 19) == 0)
            parse_multipart(rq, ct);
        else if (ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0)
            parse_urlencoded(rq);
        if (!control) {
            apply_file_limits(rq);
            stage_file_parts(rq);
        }
    }
    emu_reply r;
    reply_init(&r);
    route(rq, &r);
    /* PHP's request shutdown deletes the parts before the client has the
     * whole reply; doing it only in on_completed (after the reply went out)
     * let a client see them still there. */
    unstage_file_parts(rq);
    enum MHD_Result ret = send_reply(conn, &r);
    reply_free(&r);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    conn_ctx *cc = *con_cls;
    if (cc == NULL)
        return;
    unstage_file_parts(&cc->rq);
    for (int i = 0; i < cc->rq.nparts; i++) {
        free(cc->rq.parts[i].name);
        free(cc->rq.parts[i].filename);
        free(cc->rq.parts[i].data);
    }
    free(cc->rq.parts);
    strbuf_free(&cc->rq.body);
    free(cc);
    *con_cls = NULL;
}

/* 127.0.0.1:port, the only address the emulator ever listens on. */
static int loopback(int port, struct sockaddr_in *addr)
{
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, "127.0.0.1", &addr->sin_addr) == 1 ? 0 : -1;
}

static int bound_port_of(struct MHD_Daemon *d, int *bound_port)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    if (info == NULL || info->port == 0)
        return -1;
    *bound_port = info->port;
    return 0;
}

/*
 * A second listener, https (libmicrohttpd's GnuTLS support), serving the
 * same project with the certificate and key the caller made (the tests
 * make their own CA: tests/lib/tls.py).  The control API stays on the
 * http listener.
 */
int http_start_tls(const char *cert_file, const char *key_file, int *bound_port)
{
    char *cert = NULL, *key = NULL;
    size_t n = 0;
    struct sockaddr_in addr;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        log_error("boinc_emu: this libmicrohttpd has no TLS support");
        return -1;
    }
    if (read_file(cert_file, &cert, &n) != 0 || read_file(key_file, &key, &n) != 0 ||
        loopback(0, &addr) != 0) {
        log_error("boinc_emu: cannot read %s or %s", cert_file, key_file);
        free(cert);
        free(key);
        return -1;
    }
    tls_handle = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                  MHD_USE_TLS, 0, NULL, NULL, on_request, NULL,
                                  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                  MHD_OPTION_HTTPS_MEM_CERT, cert,
                                  MHD_OPTION_HTTPS_MEM_KEY, key,
                                  MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                                  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
                                  MHD_OPTION_END);
    /* MHD copies neither: they must live as long as the daemon, that is
     * the process (freed by the exit) */
    if (tls_handle == NULL) {
        log_error("boinc_emu: cannot start the https listener (bad certificate or key?)");
        free(cert);
        free(key);
        return -1;
    }
    return bound_port_of(tls_handle, bound_port);
}

int http_start(int port, int *bound_port)
{
    struct sockaddr_in addr;
    if (loopback(port, &addr) != 0)
        return -1;
    daemon_handle = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
                                     (uint16_t)port, NULL, NULL, on_request, NULL,
                                     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                     MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
                                     MHD_OPTION_END);
    if (daemon_handle == NULL)
        return -1;
    return bound_port_of(daemon_handle, bound_port);
}

void http_stop(void)
{
    if (tls_handle) {
        MHD_stop_daemon(tls_handle);
        tls_handle = NULL;
    }
    if (daemon_handle) {
        MHD_stop_daemon(daemon_handle);
        daemon_handle = NULL;
    }
}
