/*
 * files.c - local files: stat keys, streaming MD5 (OpenSSL libcrypto EVP),
 * physical names, upload chunk planning and deduplication, and
 * files_write_all.  Thread-safe: the submit hashes its inputs on several
 * threads (submit_inputs.c).
 */
#include "base/files.h"

#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

/* Read size for hashing: large enough to amortise syscalls, small enough
 * to keep memory per worker modest. */
#define FILES_READ_CHUNK (1024 * 1024)

/* Smallest read buffer: a small file is read in one call plus the one
 * that sees EOF, without a 1 MB allocation (an mmap + munmap each) per file. */
#define FILES_READ_MIN (16 * 1024)

static void files_set_read_err(char **errmsg, const char *path, int err)
{
    str_set_err(errmsg, "cannot read input file %s: %s", path, strerror(err));
}

/*
 * Open path for reading and check that it is a regular file.  O_NONBLOCK
 * keeps a FIFO named as an input from blocking the open; it changes nothing
 * for regular files.  Returns the fd, or -1 with the message set.
 */
static int files_open_regular(const char *path, struct stat *st, char **errmsg)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        files_set_read_err(errmsg, path, errno);
        return -1;
    }
    if (fstat(fd, st) != 0) {
        files_set_read_err(errmsg, path, errno);
        close(fd);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        if (S_ISDIR(st->st_mode))
            files_set_read_err(errmsg, path, EISDIR);
        else
            str_set_err(errmsg, "cannot read input file %s: not a regular file", path);
        close(fd);
        return -1;
    }
    return fd;
}

/* Fill *out from st; returns 0, or -1 with the message set (ENOMEM). */
static int files_fill_key(const char *path, const struct stat *st,
                          files_stat_key *out, char **errmsg)
{
    char *copy = strdup(path);
    if (!copy) {
        files_set_read_err(errmsg, path, ENOMEM);
        return -1;
    }
    out->path = copy;
    out->size = (long long)st->st_size;
    out->mtime_sec = (long long)st->st_mtim.tv_sec;
    out->mtime_nsec = (long)st->st_mtim.tv_nsec;
    out->inode = (unsigned long long)st->st_ino;
    out->device = (unsigned long long)st->st_dev;
    return 0;
}

/*
 * One stat() and one faccessat() instead of open + fstat + close: a resubmit
 * stats every input and most come from the MD5 cache, so this is the
 * per-file cost that remains (open and close were 90 % of it).  The checks and
 * messages are those of files_open_regular: a directory is EISDIR, any
 * other non-regular file "not a regular file" (checked before any open, so
 * a FIFO cannot block), and faccessat(R_OK, AT_EACCESS: the effective ids, as open
 * uses) reports what open would (EACCES).
 */
int files_stat(const char *path, files_stat_key *out, char **errmsg)
{
    struct stat st;
    out->path = NULL;
    if (stat(path, &st) != 0) {
        files_set_read_err(errmsg, path, errno);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            files_set_read_err(errmsg, path, EISDIR);
        else
            str_set_err(errmsg, "cannot read input file %s: not a regular file", path);
        return -1;
    }
    if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) != 0) {
        files_set_read_err(errmsg, path, errno);
        return -1;
    }
    return files_fill_key(path, &st, out, errmsg);
}

void files_stat_key_free(files_stat_key *key)
{
    if (!key)
        return;
    free(key->path);
    key->path = NULL;
}

int files_stat_key_equal(const files_stat_key *a, const files_stat_key *b)
{
    return a->path && b->path && strcmp(a->path, b->path) == 0 &&
           a->size == b->size && a->mtime_sec == b->mtime_sec &&
           a->mtime_nsec == b->mtime_nsec && a->inode == b->inode &&
           a->device == b->device;
}

/* Read up to len bytes, retrying on EINTR.  Returns bytes read (0 = EOF)
 * or -1 with errno set. */
static ssize_t files_read_some(int fd, unsigned char *buf, size_t len)
{
    for (;;) {
        ssize_t r = read(fd, buf, len);
        if (r >= 0 || errno != EINTR)
            return r;
    }
}

static void files_to_hex(const unsigned char *digest, unsigned int len, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < len; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 0xf];
    }
    out[2 * len] = '\0';
}

/* Hash everything readable from fd into ctx.  Returns bytes hashed, or -1
 * with the message set.  keep != NULL: the caller's buffer of the file's
 * size + 1 (so that a grown file shows), into which the whole file is
 * read; a file that filled it changed (the caller's fstat check fails
 * it).  Else a buffer of its own, freed here. */
static long long files_hash_fd(int fd, EVP_MD_CTX *ctx, long long size_hint,
                               const char *path, unsigned char *keep, char **errmsg)
{
    /* Sized to the file (+1 so the first read of a file that did not grow
     * is short), within [FILES_READ_MIN, FILES_READ_CHUNK]. */
    size_t cap = keep != NULL ? (size_t)size_hint + 1
                 : size_hint < 0 || size_hint >= FILES_READ_CHUNK ? FILES_READ_CHUNK
                 : (size_t)size_hint + 1 < FILES_READ_MIN ? FILES_READ_MIN
                 : (size_t)size_hint + 1;
    unsigned char *buf = keep != NULL ? keep : malloc(cap);
    if (!buf) {
        files_set_read_err(errmsg, path, ENOMEM);
        return -1;
    }
    long long total = 0;
    for (;;) {
        size_t at = keep != NULL ? (size_t)total : 0;
        if (at == cap)
            break;      /* grew past its size: the caller sees the change */
        ssize_t r = files_read_some(fd, buf + at, cap - at);
        if (r < 0) {
            files_set_read_err(errmsg, path, errno);
            total = -1;
            break;
        }
        if (r == 0)
            break;
        if (EVP_DigestUpdate(ctx, buf + at, (size_t)r) != 1) {
            str_set_err(errmsg, "cannot hash input file %s: MD5 update failed", path);
            total = -1;
            break;
        }
        total += r;
        /* A short read that ends at the size fstat gave is the end of the
         * file: no further read to see EOF (one syscall a file, 10,000 a
         * plain 10,000-job batch).  Growth after it is what the caller's
         * second fstat catches; growth before it filled the buffer. */
        if (total == size_hint && (size_t)r < cap - at)
            break;
    }
    if (keep == NULL)
        free(buf);
    return total;
}

static pthread_once_t files_md5_once = PTHREAD_ONCE_INIT;
static EVP_MD *files_md5_alg;

static void files_md5_fetch(void)
{
    files_md5_alg = EVP_MD_fetch(NULL, "MD5", NULL);
}

/* The MD5 implementation, fetched once per process: an EVP_MD_fetch per
 * file costs a provider look-up under a global lock, which serialised the
 * hashing threads.  NULL if libcrypto refuses MD5 (e.g. FIPS-only). */
static const EVP_MD *files_md5(void)
{
    pthread_once(&files_md5_once, files_md5_fetch);
    return files_md5_alg;
}

/* 1 if size or mtime differ between the two stats. */
static int files_changed(const struct stat *before, const struct stat *after)
{
    return before->st_size != after->st_size ||
           before->st_mtim.tv_sec != after->st_mtim.tv_sec ||
           before->st_mtim.tv_nsec != after->st_mtim.tv_nsec;
}

int files_md5_hex_kept(const char *path, char out[FILES_MD5_HEX_LEN + 1],
                       long long *nbytes, files_stat_key *key, files_keep_fn may_keep,
                       void *keep_arg, unsigned char **kept, char **errmsg)
{
    if (key)
        key->path = NULL;
    if (kept)
        *kept = NULL;
    unsigned char *buf = NULL;      /* the caller's buffer for the bytes, if any */
    struct stat before, after;
    int fd = files_open_regular(path, &before, errmsg);
    if (fd < 0)
        return -1;

    int rc = -1;
    const EVP_MD *md = files_md5();
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!md || !ctx || EVP_DigestInit_ex(ctx, md, NULL) != 1) {
        /* e.g. a FIPS-only OpenSSL configuration that refuses MD5 */
        str_set_err(errmsg, "cannot hash input file %s: MD5 not available in libcrypto", path);
        goto out;
    }
    if (kept != NULL && may_keep != NULL && before.st_size < LLONG_MAX)
        buf = may_keep((long long)before.st_size, keep_arg);
    long long total = files_hash_fd(fd, ctx, (long long)before.st_size, path, buf, errmsg);
    if (total < 0)
        goto out;
    if (fstat(fd, &after) != 0) {
        files_set_read_err(errmsg, path, errno);
        goto out;
    }
    if (files_changed(&before, &after) || total != (long long)after.st_size) {
        str_set_err(errmsg, "cannot read input file %s: file changed while it was being hashed", path);
        goto out;
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;
    if (EVP_DigestFinal_ex(ctx, digest, &dlen) != 1 || dlen * 2 != FILES_MD5_HEX_LEN) {
        str_set_err(errmsg, "cannot hash input file %s: MD5 final failed", path);
        goto out;
    }
    /* The key comes from the same open file as the content, so the
     * journal can never pair a digest with a key of other content. */
    if (key && files_fill_key(path, &after, key, errmsg) != 0)
        goto out;
    files_to_hex(digest, dlen, out);
    if (nbytes)
        *nbytes = total;
    if (buf != NULL)
        *kept = buf;
    rc = 0;
out:
    EVP_MD_CTX_free(ctx);
    close(fd);
    return rc;
}

int files_md5_hex_mem(const void *data, size_t len, char out[FILES_MD5_HEX_LEN + 1])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;
    const EVP_MD *md = files_md5();
    int ok = md != NULL && EVP_Digest(data, len, digest, &dlen, md, NULL) == 1 &&
             dlen * 2 == FILES_MD5_HEX_LEN;
    if (!ok)
        return -1;
    files_to_hex(digest, dlen, out);
    return 0;
}

struct files_md5_stream {
    EVP_MD_CTX *ctx;
};

files_md5_stream *files_md5_stream_new(void)
{
    const EVP_MD *md = files_md5();
    files_md5_stream *s = calloc(1, sizeof *s);
    if (s == NULL || md == NULL || (s->ctx = EVP_MD_CTX_new()) == NULL ||
        EVP_DigestInit_ex(s->ctx, md, NULL) != 1) {
        files_md5_stream_free(s);
        return NULL;
    }
    return s;
}

int files_md5_stream_update(files_md5_stream *s, const void *data, size_t len)
{
    return EVP_DigestUpdate(s->ctx, data, len) == 1 ? 0 : -1;
}

int files_md5_stream_end(files_md5_stream *s, char out[FILES_MD5_HEX_LEN + 1])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;
    /* the re-init keeps the context's algorithm: no fetch, no allocation */
    if (EVP_DigestFinal_ex(s->ctx, digest, &dlen) != 1 || dlen * 2 != FILES_MD5_HEX_LEN ||
        EVP_DigestInit_ex(s->ctx, NULL, NULL) != 1)
        return -1;
    files_to_hex(digest, dlen, out);
    return 0;
}

void files_md5_stream_free(files_md5_stream *s)
{
    if (s == NULL)
        return;
    EVP_MD_CTX_free(s->ctx);
    free(s);
}

char *files_normal_path(const char *iwd, const char *path)
{
    char *abs = files_resolve(iwd, path);
    if (abs == NULL)
        return NULL;
    /* in place: the result is never longer; out always ends before p */
    size_t out = 0;
    const char *p = abs;
    while (*p != '\0') {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.')) {
            /* nothing */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (out > 0 && abs[out - 1] != '/')
                out--;
            if (out > 0)
                out--;          /* the '/' before the dropped component */
        } else {
            abs[out++] = '/';
            memmove(abs + out, p, len);
            out += len;
        }
        p += len;
    }
    if (out == 0)
        abs[out++] = '/';
    abs[out] = '\0';
    return abs;
}

char *files_resolve(const char *iwd, const char *path)
{
    if (!path || path[0] == '\0') {
        errno = EINVAL;
        return NULL;
    }
    if (path[0] == '/')
        return strdup(path);
    if (!iwd || iwd[0] == '\0') {
        errno = EINVAL;
        return NULL;
    }
    size_t ilen = strlen(iwd);
    int need_sep = iwd[ilen - 1] != '/';
    size_t plen = strlen(path);
    if (ilen > SIZE_MAX - plen - 2) {
        errno = ENOMEM;
        return NULL;
    }
    char *out = malloc(ilen + (size_t)need_sep + plen + 1);
    if (!out)
        return NULL;
    memcpy(out, iwd, ilen);
    if (need_sep)
        out[ilen] = '/';
    memcpy(out + ilen + (size_t)need_sep, path, plen + 1);
    return out;
}

int files_write_all(int fd, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) {           /* no progress: never loop forever */
            errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}
