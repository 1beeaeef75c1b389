/*
 * boinc_upload.c - the multipart form of an upload_files request: the
 * request field and one part per file, each streamed by a read callback
 * from the bytes the submit kept from its MD5 pass (no second read of the
 * file) or from the file itself, hashed on the way so that bytes that do
 * not match their MD5 name never complete a request (boinc.h,
 * boinc_upload_src).
 */
#include "boinc/boinc_internal.h"

#include "base/files.h"
#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* curl's own form boundary: 24 dashes and 16 hex digits (random). */
#define BOUNDARY_DASHES "------------------------"
#define BOUNDARY_HEX 16

/*
 * The body is a run of segments read in order: for part k (0 the request
 * field, 1..n the files) its head (boundary and headers, all in one
 * buffer) then its data; after the last part the closing boundary.  One
 * file is open at a time, from its first byte to its last.
 */
struct upload_body {
    const char *request_xml;
    size_t request_len;
    const boinc_upload_part *parts;
    size_t nparts;
    upload_fault *fault;        /* the caller's: what aborted the transfer */
    strbuf heads;               /* every head, back to back, then the close */
    size_t *head_end;           /* nparts + 2 ends in heads */
    long long total;            /* the Content-Length */
    char content_type[96];      /* the request's Content-Type header */
    /* read position */
    size_t seg;                 /* 2k: head of part k; 2k+1: its data */
    long long off;              /* bytes of the segment handed over */
    int fd;                     /* the file being read; -1: none */
    files_md5_stream *md5;      /* checks bytes read back from a file */
};

/* Record why the transfer stops (the first reason wins). */
static void body_fault(upload_body *b, const boinc_upload_part *src, const char *why, int err)
{
    upload_fault *f = b->fault;
    if (f->msg == NULL)
        f->msg = err ? str_printf("cannot read input file %s: %s", src->local_path,
                                  strerror(err))
                     : str_printf("input file %s %s", src->local_path, why);
    f->failed = 1;
}

static void body_close_file(upload_body *b)
{
    if (b->fd >= 0)
        close(b->fd);
    b->fd = -1;
}

/* Bytes read back from a hashed file are checked against the MD5 that
 * names them; kept bytes are the hashed ones. */
static int needs_check(const boinc_upload_part *src)
{
    return src->data == NULL && src->md5 != NULL;
}

/* Read up to len bytes of file part src at b->off into buf: the count,
 * or -1 with the fault recorded.  The last byte is only handed over when
 * the whole content matches its name: a changed file never completes the
 * request body. */
static long long read_file_data(upload_body *b, const boinc_upload_part *src, char *buf,
                                size_t len)
{
    if (b->fd < 0) {
        /* The first look at a file of known size (boinc_upload_check
         * leaves those to this point): one path lookup per file */
        struct stat st;
        b->fd = open(src->local_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (b->fd < 0) {
            body_fault(b, src, NULL, errno);
            return -1;
        }
        if (fstat(b->fd, &st) != 0) {
            body_fault(b, src, NULL, errno);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            body_fault(b, src, "is not a regular file", 0);
            return -1;
        }
    }
    ssize_t r;
    do
        r = len ? read(b->fd, buf, len) : 0;
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        body_fault(b, src, NULL, errno);
        return -1;
    }
    if (r == 0 && len > 0) {
        body_fault(b, src, "changed since it was hashed (it is shorter)", 0);
        return -1;
    }
    if (needs_check(src) && files_md5_stream_update(b->md5, buf, (size_t)r) != 0) {
        body_fault(b, src, "could not be hashed while uploading", 0);
        return -1;
    }
    if (needs_check(src) && b->off + r == src->size) {
        char got[FILES_MD5_HEX_LEN + 1];
        if (files_md5_stream_end(b->md5, got) != 0 ||
            memcmp(got, src->md5, FILES_MD5_HEX_LEN) != 0) {
            body_fault(b, src, "changed since it was hashed (its MD5 is no longer the one "
                               "it is uploaded under)", 0);
            return -1;
        }
    }
    return r;
}

/* Copy the next bytes of segment b->seg into buf (at most len): the count
 * (0 at the segment's end), or -1 when the transfer must stop. */
static long long read_segment(upload_body *b, char *buf, size_t len)
{
    size_t k = b->seg / 2;
    if (b->seg % 2 == 0) {      /* a head, or the close after the last part */
        size_t begin = k == 0 ? 0 : b->head_end[k - 1];
        size_t left = b->head_end[k] - begin - (size_t)b->off;
        size_t n = len < left ? len : left;
        memcpy(buf, b->heads.data + begin + b->off, n);
        return (long long)n;
    }
    if (k == 0) {               /* the request field */
        size_t left = b->request_len - (size_t)b->off;
        size_t n = len < left ? len : left;
        memcpy(buf, b->request_xml + b->off, n);
        return (long long)n;
    }
    const boinc_upload_part *src = &b->parts[k - 1];
    long long left = src->size - b->off;
    size_t n = (long long)len < left ? len : (size_t)left;
    if (src->data != NULL) {
        memcpy(buf, (const char *)src->data + b->off, n);
        return (long long)n;
    }
    return n == 0 ? 0 : read_file_data(b, src, buf, n);
}

/* Fill libcurl's buffer from as many segments as fit. */
size_t boinc_upload_body_read(char *buf, size_t size, size_t nitems, void *arg)
{
    upload_body *b = arg;
    size_t len = size * nitems, done = 0;
    size_t last_seg = 2 * (b->nparts + 1);
    while (done < len && b->seg <= last_seg) {
        long long n = read_segment(b, buf + done, len - done);
        if (n < 0) {
            body_close_file(b);
            return CURL_READFUNC_ABORT;
        }
        if (n == 0) {           /* the segment is complete: the next one */
            body_close_file(b);
            b->seg++;
            b->off = 0;
            continue;
        }
        b->off += n;
        done += (size_t)n;
    }
    return done;
}

/* libcurl rewinds the body to send it again (e.g. after a 100-continue
 * refusal): only a rewind to the start is ever asked for. */
int boinc_upload_body_seek(void *arg, curl_off_t offset, int origin)
{
    upload_body *b = arg;
    if (offset != 0 || origin != SEEK_SET)
        return CURL_SEEKFUNC_CANTSEEK;
    body_close_file(b);
    b->seg = 0;
    b->off = 0;
    char ignored[FILES_MD5_HEX_LEN + 1];
    if (b->md5 != NULL && files_md5_stream_end(b->md5, ignored) != 0)   /* re-initialises */
        return CURL_SEEKFUNC_FAIL;
    return CURL_SEEKFUNC_OK;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A part's field or file name inside its quotes, escaped as a browser
 * (and libcurl's form code) does: ", CR and LF as %22, %0D and %0A. */
static int put_quoted_name(strbuf *sb, const char *name)
{
    int rc = strbuf_putc(sb, '"');
    for (const char *p = name; rc == 0 && *p; ) {
        size_t run = strcspn(p, "\"\r\n");
        rc = strbuf_append(sb, p, run);
        p += run;
        if (rc == 0 && *p)
            rc = strbuf_puts(sb, *p == '"' ? "%22" : *p == '\r' ? "%0D" : "%0A"), p++;
    }
    return rc == 0 ? strbuf_putc(sb, '"') : rc;
}

/* Append the decimal digits of n. */
static int put_size(strbuf *sb, size_t n)
{
    char digits[24];
    size_t i = sizeof digits;
    do
        digits[--i] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    return strbuf_append(sb, digits + i, sizeof digits - i);
}

/* The heads of every part and the closing boundary, into b->heads: plain
 * appends, since a printf per part cost more than the rest of the body. */
static int build_heads(upload_body *b, const char *boundary)
{
    static const char disposition[] = "\r\nContent-Disposition: form-data; name=";
    static const char file_type[] = "\r\nContent-Type: application/octet-stream\r\n\r\n";
    size_t blen = strlen(boundary);
    strbuf *h = &b->heads;
    /* a part's head is about its file name and 140 bytes */
    int rc = strbuf_reserve(h, b->nparts * (blen + 160) + 256);
    if (rc == 0)
        rc = strbuf_puts(h, "--") || strbuf_append(h, boundary, blen) ||
             strbuf_puts(h, disposition) || strbuf_puts(h, "\"request\"\r\n\r\n");
    b->head_end[0] = h->len;
    for (size_t i = 0; rc == 0 && i < b->nparts; i++) {
        rc = strbuf_puts(h, "\r\n--") || strbuf_append(h, boundary, blen) ||
             strbuf_puts(h, disposition) || strbuf_puts(h, "\"file_") ||
             put_size(h, i) || strbuf_puts(h, "\"; filename=") ||
             put_quoted_name(h, base_name(b->parts[i].local_path)) ||
             strbuf_puts(h, file_type);
        b->head_end[i + 1] = h->len;
    }
    if (rc == 0)
        rc = strbuf_puts(h, "\r\n--") || strbuf_append(h, boundary, blen) ||
             strbuf_puts(h, "--\r\n");
    b->head_end[b->nparts + 1] = h->len;
    return rc ? -1 : 0;
}

upload_body *boinc_upload_body_new(const char *request_xml, const boinc_upload_part *parts,
                                   size_t nparts, upload_fault *fault)
{
    char hex[BOUNDARY_HEX + 1];
    char boundary[sizeof BOUNDARY_DASHES + BOUNDARY_HEX];
    upload_body *b = calloc(1, sizeof *b);
    /* a boundary that no input is expected to hold (libcurl's own forms
     * rely on the same odds) */
    if (b == NULL || str_random_hex(hex, BOUNDARY_HEX / 2) != 0) {
        free(b);
        return NULL;
    }
    snprintf(boundary, sizeof boundary, "%s%s", BOUNDARY_DASHES, hex);
    *b = (upload_body){ .request_xml = request_xml, .request_len = strlen(request_xml),
                        .parts = parts, .nparts = nparts, .fault = fault,
                        .heads = STRBUF_INIT, .fd = -1 };
    snprintf(b->content_type, sizeof b->content_type,
             "Content-Type: multipart/form-data; boundary=%s", boundary);
    b->head_end = calloc(nparts + 2, sizeof *b->head_end);
    int needs_md5 = 0;
    for (size_t i = 0; i < nparts; i++)
        needs_md5 |= needs_check(&parts[i]);
    if (b->head_end == NULL || build_heads(b, boundary) != 0 ||
        (needs_md5 && (b->md5 = files_md5_stream_new()) == NULL)) {
        boinc_upload_body_free(b);
        return NULL;
    }
    b->total = (long long)(b->heads.len + b->request_len);
    for (size_t i = 0; i < nparts; i++)
        b->total += parts[i].size;      /* known: boinc_upload_check */
    return b;
}

long long boinc_upload_body_size(const upload_body *b)
{
    return b->total;
}

const char *boinc_upload_body_type(const upload_body *b)
{
    return b->content_type;
}

void boinc_upload_body_free(upload_body *b)
{
    if (b == NULL)
        return;
    body_close_file(b);
    files_md5_stream_free(b->md5);
    strbuf_free(&b->heads);
    free(b->head_end);
    free(b);
}

/* A file read from disk whose size the caller does not know is stat'ed
 * here, for the body's length, and checked to be a readable regular file:
 * a bad path is then BOINC_E_IO before anything is sent.  A file of known
 * size is first opened when the body reaches it (read_file_data), which
 * checks the same and aborts the body if it fails, so nothing is stored
 * either: a 100,000-file submit's uploads made 200,000 path lookups here
 * before, 8 % of its CPU (doc/performance.md, "Third pass"). */
int boinc_upload_check(boinc_upload_part *parts, size_t n, boinc_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (parts[i].data != NULL || parts[i].size >= 0)
            continue;
        struct stat st;
        const char *why = NULL;
        if (stat(parts[i].local_path, &st) != 0)
            why = strerror(errno);
        else if (!S_ISREG(st.st_mode))
            why = "not a regular file";
        else if (faccessat(AT_FDCWD, parts[i].local_path, R_OK, AT_EACCESS) != 0)
            why = strerror(errno);
        if (why != NULL)
            return boinc_fail(err, BOINC_E_IO, 0, "cannot read input file %s: %s",
                              parts[i].local_path, why);
        parts[i].size = (long long)st.st_size;
    }
    return BOINC_OK;
}
