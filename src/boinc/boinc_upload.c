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

/* One file part's reader; freed by curl_mime_free (part_free). */
typedef struct {
    const boinc_upload_part *src;
    upload_fault *fault;        /* the form's: what aborted the transfer */
    int fd;                     /* -1: not open (opened at the first read) */
    long long pos;              /* bytes handed to libcurl */
    files_md5_stream *md5;      /* NULL: not checked */
} part_reader;

/* Record why the transfer stops (the first reason wins) and stop it. */
static size_t part_abort(part_reader *pr, const char *why, int err)
{
    upload_fault *f = pr->fault;
    if (f->msg == NULL)
        f->msg = err ? str_printf("cannot read input file %s: %s", pr->src->local_path,
                                  strerror(err))
                     : str_printf("input file %s %s", pr->src->local_path, why);
    f->failed = 1;
    return CURL_READFUNC_ABORT;
}

/* Check the bytes sent so far against the MD5 name, at the file's last
 * byte: 0 when they match. */
static int part_check_md5(part_reader *pr)
{
    char got[FILES_MD5_HEX_LEN + 1];
    return files_md5_stream_end(pr->md5, got) == 0 &&
                   memcmp(got, pr->src->md5, FILES_MD5_HEX_LEN) == 0
               ? 0 : -1;
}

/* Read from the file, at most the size that was hashed. */
static size_t part_read_file(part_reader *pr, char *buf, size_t len)
{
    if (pr->fd < 0) {
        pr->fd = open(pr->src->local_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (pr->fd < 0)
            return part_abort(pr, NULL, errno);
    }
    if (pr->src->size >= 0 && (long long)len > pr->src->size - pr->pos)
        len = (size_t)(pr->src->size - pr->pos);
    ssize_t r;
    do
        r = len ? read(pr->fd, buf, len) : 0;
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return part_abort(pr, NULL, errno);
    if (pr->src->size >= 0 && r == 0 && pr->pos < pr->src->size)
        return part_abort(pr, "changed since it was hashed (it is shorter)", 0);
    if (pr->md5 != NULL && files_md5_stream_update(pr->md5, buf, (size_t)r) != 0)
        return part_abort(pr, "could not be hashed while uploading", 0);
    pr->pos += r;
    /* The last byte is only handed over when the whole content matches
     * the name: a changed file never completes the request body. */
    if (pr->md5 != NULL && r > 0 && pr->pos == pr->src->size && part_check_md5(pr) != 0)
        return part_abort(pr, "changed since it was hashed (its MD5 is no longer the one it "
                              "is uploaded under)", 0);
    return (size_t)r;
}

static size_t part_read(char *buf, size_t size, size_t nitems, void *arg)
{
    part_reader *pr = arg;
    size_t len = size * nitems;
    if (pr->src->data == NULL)
        return part_read_file(pr, buf, len);
    if ((long long)len > pr->src->size - pr->pos)
        len = (size_t)(pr->src->size - pr->pos);
    memcpy(buf, (const char *)pr->src->data + pr->pos, len);
    pr->pos += (long long)len;
    return len;
}

/* libcurl rewinds a part to send it again (e.g. after a 100-continue
 * refusal): only a rewind to the start is ever asked for. */
static int part_seek(void *arg, curl_off_t offset, int origin)
{
    part_reader *pr = arg;
    if (offset != 0 || origin != SEEK_SET)
        return CURL_SEEKFUNC_CANTSEEK;
    if (pr->fd >= 0 && lseek(pr->fd, 0, SEEK_SET) != 0)
        return CURL_SEEKFUNC_FAIL;
    pr->pos = 0;
    if (pr->md5 != NULL) {
        char ignored[FILES_MD5_HEX_LEN + 1];
        if (files_md5_stream_end(pr->md5, ignored) != 0)     /* re-initialises */
            return CURL_SEEKFUNC_FAIL;
    }
    return CURL_SEEKFUNC_OK;
}

static void part_free(void *arg)
{
    part_reader *pr = arg;
    if (pr->fd >= 0)
        close(pr->fd);
    files_md5_stream_free(pr->md5);
    free(pr);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* One file part: streamed by a part_reader; its file name (PHP needs one
 * for $_FILES) is the local file's base name, as curl_mime_filedata sets. */
static int add_file_part(curl_mime *mime, const boinc_upload_part *src, upload_fault *fault)
{
    curl_mimepart *part = curl_mime_addpart(mime);
    part_reader *pr = calloc(1, sizeof *pr);
    if (part == NULL || pr == NULL) {
        free(pr);
        return -1;
    }
    *pr = (part_reader){ .src = src, .fault = fault, .fd = -1 };
    /* Only bytes read back from the file need checking: kept bytes are
     * the hashed ones. */
    if (src->data == NULL && src->size >= 0 && src->md5 != NULL &&
        (pr->md5 = files_md5_stream_new()) == NULL) {
        free(pr);
        return -1;
    }
    /* the size is known, so the body has a Content-Length and a request
     * cut short by an abort is never a complete one */
    if (curl_mime_data_cb(part, src->size, part_read, part_seek, part_free, pr) != CURLE_OK) {
        part_free(pr);
        return -1;
    }
    return curl_mime_name(part, src->part_name) == CURLE_OK &&
                   curl_mime_filename(part, base_name(src->local_path)) == CURLE_OK &&
                   curl_mime_type(part, "application/octet-stream") == CURLE_OK
               ? 0 : -1;
}

curl_mime *boinc_upload_form(CURL *h, const char *request_xml,
                             const boinc_upload_part *parts, size_t nparts,
                             upload_fault *fault)
{
    curl_mime *mime = curl_mime_init(h);
    if (mime == NULL)
        return NULL;
    curl_mimepart *part = curl_mime_addpart(mime);
    if (part == NULL || curl_mime_name(part, "request") != CURLE_OK ||
        curl_mime_data(part, request_xml, CURL_ZERO_TERMINATED) != CURLE_OK)
        goto fail;
    for (size_t i = 0; i < nparts; i++)
        if (add_file_part(mime, &parts[i], fault) != 0)
            goto fail;
    return mime;
fail:
    curl_mime_free(mime);
    return NULL;
}

/* Check that every file read from disk is a readable regular file now,
 * so a bad path is a clear BOINC_E_IO before anything is sent; its size
 * is taken when the caller gave none (the part's length must be known). */
int boinc_upload_check(boinc_upload_part *parts, size_t n, boinc_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (parts[i].data != NULL)
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
        if (parts[i].size < 0)
            parts[i].size = (long long)st.st_size;
    }
    return BOINC_OK;
}
