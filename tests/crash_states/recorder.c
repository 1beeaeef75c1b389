/*
 * recorder.c - LD_PRELOAD interposer for the crash-state explorer
 * (tests/crash_states/explore.py, doc/recovery.md "Power loss").
 *
 * Records, in the order they happen, the file-system operations that
 * decide what a power loss leaves: open/creat (with "created" when O_CREAT
 * made the file, "trunc" for O_TRUNC), write/pwrite/writev (path, offset,
 * length, and the bytes themselves in a per-process blob file), fsync and
 * fdatasync (of files and of directories), ftruncate, rename, unlink,
 * mkdir and rmdir, on paths under CRASHREC_ROOT only; and every byte sent
 * on a socket connected to 127.0.0.1:CRASHREC_PORT (the HTTP requests to
 * the emulator, so that the driver can rebuild the remote server's state
 * at any crash point).  SQLite's -shm file is not recorded: it is rebuilt
 * from the WAL when the journal is opened after a crash.
 *
 * Environment: CRASHREC_LOG (log path, appended to, one line per
 * operation, each written with one write(2) so that the driver's own
 * marker lines interleave in causal order), CRASHREC_ROOT (absolute
 * directory), CRASHREC_PORT (emulator port; 0 or unset: no socket record).
 * Without CRASHREC_LOG every call is passed through untouched.
 *
 * Log lines (fields separated by TAB, paths %-escaped for TAB, LF, %):
 *   open  PATH created(0|1) trunc(0|1) dir(0|1)
 *   write PATH OFFSET LEN BLOBFILE BLOBOFF
 *   trunc PATH SIZE
 *   sync  PATH
 *   rename OLD NEW
 *   unlink PATH
 *   mkdir PATH
 *   rmdir PATH
 *   net   CONN LEN BLOBFILE BLOBOFF
 *   conn  CONN
 * Operations are logged after the real call succeeded.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int log_fd = -1, blob_fd = -1;
static char *root;
static size_t root_len;
static char *blob_name;
static unsigned long long blob_off;
static int port;
static unsigned long conn_seq;

/* fd -> tracked path (NULL: not tracked); fd -> connection id (0: none). */
static char **fd_path;
static unsigned long *fd_conn;
static size_t fd_cap;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_ftruncate)(int, off_t);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_mkdirat)(int, const char *, mode_t);
static int (*real_close)(int);
static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);

static void die(const char *what)
{
    static const char msg[] = "crash-state recorder: fatal: ";
    if (real_write) {
        (void)!real_write(2, msg, sizeof msg - 1);
        (void)!real_write(2, what, strlen(what));
        (void)!real_write(2, "\n", 1);
    }
    abort();
}

#define RESOLVE(var, name) do { \
        *(void **)(&var) = dlsym(RTLD_NEXT, name); \
        if (!var) die("dlsym " name); \
    } while (0)

static void init(void)
{
    RESOLVE(real_write, "write");
    RESOLVE(real_open, "open64");
    RESOLVE(real_openat, "openat64");
    RESOLVE(real_pwrite, "pwrite64");
    RESOLVE(real_writev, "writev");
    RESOLVE(real_fsync, "fsync");
    RESOLVE(real_fdatasync, "fdatasync");
    RESOLVE(real_ftruncate, "ftruncate64");
    RESOLVE(real_renameat, "renameat");
    RESOLVE(real_unlinkat, "unlinkat");
    RESOLVE(real_mkdirat, "mkdirat");
    RESOLVE(real_close, "close");
    RESOLVE(real_connect, "connect");
    RESOLVE(real_send, "send");
    RESOLVE(real_sendto, "sendto");

    const char *log = getenv("CRASHREC_LOG");
    const char *r = getenv("CRASHREC_ROOT");
    if (!log || !*log || !r || r[0] != '/')
        return;
    /* The emulator's port: a malformed one is a broken test set-up, not
     * "record no traffic" (port 0 would silently record nothing). */
    const char *p = getenv("CRASHREC_PORT");
    port = 0;
    if (p != NULL && *p != '\0') {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno != 0 || *end != '\0' || v < 1 || v > 65535)
            die("CRASHREC_PORT is not a port number");
        port = (int)v;
    }
    root = strdup(r);
    if (!root)
        die("out of memory");
    root_len = strlen(root);
    while (root_len > 1 && root[root_len - 1] == '/')
        root[--root_len] = '\0';
    size_t n = strlen(log) + 64;
    blob_name = malloc(n);
    if (!blob_name)
        die("out of memory");
    snprintf(blob_name, n, "%s.%ld.blob", log, (long)getpid());
    log_fd = real_open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    blob_fd = real_open(blob_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0 || blob_fd < 0)
        die("cannot open the log or blob file");
    /* keep them out of the way of the program's own descriptors */
    int hi = fcntl(log_fd, F_DUPFD_CLOEXEC, 900), hb = fcntl(blob_fd, F_DUPFD_CLOEXEC, 900);
    if (hi >= 0 && hb >= 0) {
        real_close(log_fd);
        real_close(blob_fd);
        log_fd = hi;
        blob_fd = hb;
    }
}

static int active(void)
{
    pthread_once(&once, init);
    return log_fd >= 0;
}

/* ---- growable text (no fixed-size buffer for outside data) ---------- */
struct buf { char *p; size_t len, cap; };

static void buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            die("out of memory");
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_fmt(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        die("vsnprintf");
    char *tmp = malloc((size_t)n + 1);
    if (!tmp)
        die("out of memory");
    va_start(ap, fmt);
    vsnprintf(tmp, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_add(b, tmp, (size_t)n);
    free(tmp);
}

static void buf_path(struct buf *b, const char *path)
{
    buf_str(b, "\t");
    for (const char *s = path; *s; s++) {
        if (*s == '\t' || *s == '\n' || *s == '%') {
            char e[4];
            snprintf(e, sizeof e, "%%%02X", (unsigned char)*s);
            buf_str(b, e);
        } else {
            buf_add(b, s, 1);
        }
    }
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = real_write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("cannot write the log");
        p += w;
        n -= (size_t)w;
    }
}

/* Under lock: one line in one write (O_APPEND keeps it whole). */
static void emit(struct buf *b)
{
    buf_str(b, "\n");
    write_all(log_fd, b->p, b->len);
    free(b->p);
}

/* Under lock: store data in the blob file, return its offset. */
static unsigned long long blob_put(const struct iovec *iov, int iovcnt, size_t total)
{
    unsigned long long at = blob_off;
    size_t left = total;
    for (int i = 0; i < iovcnt && left > 0; i++) {
        size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
        write_all(blob_fd, iov[i].iov_base, n);
        left -= n;
    }
    blob_off += total;
    return at;
}

/* ---- paths ---------------------------------------------------------- */

/* Lexically normalised absolute path of (dirfd, path), or NULL. */
static char *abs_path(int dirfd, const char *path)
{
    struct buf b = {0};
    if (path[0] == '/') {
        buf_str(&b, path);
    } else {
        char *base = NULL;
        if (dirfd == AT_FDCWD) {
            base = getcwd(NULL, 0);
        } else {
            pthread_mutex_lock(&lock);
            if (dirfd >= 0 && (size_t)dirfd < fd_cap && fd_path[dirfd])
                base = strdup(fd_path[dirfd]);
            pthread_mutex_unlock(&lock);
            if (!base) {
                struct buf l = {0};
                buf_fmt(&l, "/proc/self/fd/%d", dirfd);
                base = realpath(l.p, NULL);
                free(l.p);
            }
        }
        if (!base)
            return NULL;
        buf_str(&b, base);
        buf_str(&b, "/");
        buf_str(&b, path);
        free(base);
    }
    /* normalise: drop "//", "/./", resolve "/../" lexically */
    char *out = malloc(b.len + 2);
    if (!out)
        die("out of memory");
    size_t o = 0;
    char *save = NULL;
    for (char *tok = strtok_r(b.p, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (strcmp(tok, ".") == 0)
            continue;
        if (strcmp(tok, "..") == 0) {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        out[o++] = '/';
        size_t n = strlen(tok);
        memcpy(out + o, tok, n);
        o += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    free(b.p);
    return out;
}

static int under_root(const char *p)
{
    size_t n = strlen(p);
    if (strncmp(p, root, root_len) != 0 || (p[root_len] != '/' && p[root_len] != '\0'))
        return 0;
    if (n >= 4 && strcmp(p + n - 4, "-shm") == 0)
        return 0;
    return 1;
}

/* Tracked path of (dirfd, path), or NULL. */
static char *tracked(int dirfd, const char *path)
{
    if (!path || !active())
        return NULL;
    char *p = abs_path(dirfd, path);
    if (p && !under_root(p)) {
        free(p);
        return NULL;
    }
    return p;
}

static void fd_grow(int fd)
{
    if ((size_t)fd < fd_cap)
        return;
    size_t cap = fd_cap ? fd_cap : 64;
    while (cap <= (size_t)fd)
        cap *= 2;
    char **np = realloc(fd_path, cap * sizeof *np);
    if (!np)
        die("out of memory");
    fd_path = np;
    unsigned long *nc = realloc(fd_conn, cap * sizeof *nc);
    if (!nc)
        die("out of memory");
    fd_conn = nc;
    for (size_t i = fd_cap; i < cap; i++) {
        fd_path[i] = NULL;
        fd_conn[i] = 0;
    }
    fd_cap = cap;
}

/* Under lock: forget fd. */
static void fd_forget(int fd)
{
    if (fd >= 0 && (size_t)fd < fd_cap) {
        free(fd_path[fd]);
        fd_path[fd] = NULL;
        fd_conn[fd] = 0;
    }
}

/* Under lock: tracked path of fd, or NULL (not a copy). */
static const char *fd_tracked(int fd)
{
    return fd >= 0 && (size_t)fd < fd_cap ? fd_path[fd] : NULL;
}

/* ---- the interposed calls --------------------------------------------- */

static int do_open(int dirfd, const char *path, int flags, mode_t mode)
{
    char *p = tracked(dirfd, path);
    int existed = 1;
    if (p && (flags & O_CREAT)) {
        struct stat st;
        existed = lstat(p, &st) == 0;
    }
    int fd = real_openat(dirfd, path, flags, mode);
    if (fd < 0 || !p) {
        free(p);
        return fd;
    }
    struct stat st;
    int isdir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    pthread_mutex_lock(&lock);
    fd_grow(fd);
    fd_forget(fd);
    fd_path[fd] = p;
    struct buf b = {0};
    buf_str(&b, "open");
    buf_path(&b, p);
    buf_fmt(&b, "\t%d\t%d\t%d", !existed, (flags & O_TRUNC) && !isdir ? 1 : 0, isdir);
    emit(&b);
    pthread_mutex_unlock(&lock);
    return fd;
}

static mode_t open_mode(int flags, va_list ap)
{
    if (flags & (O_CREAT | __O_TMPFILE))
        return (mode_t)va_arg(ap, int);
    return 0;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    pthread_once(&once, init);
    return do_open(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    pthread_once(&once, init);
    return do_open(AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    pthread_once(&once, init);
    return do_open(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    pthread_once(&once, init);
    return do_open(dirfd, path, flags, mode);
}

int creat(const char *path, mode_t mode)
{
    pthread_once(&once, init);
    return do_open(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

int creat64(const char *path, mode_t mode)
{
    pthread_once(&once, init);
    return do_open(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/* Log a data write of `done` bytes at offset off (-1: the position after
 * the write minus done, for write/writev) on a tracked fd, or a socket
 * send on a recorded connection. */
static void log_data(int fd, const struct iovec *iov, int iovcnt, ssize_t done, off_t off)
{
    if (done <= 0 || !active())
        return;
    pthread_mutex_lock(&lock);
    const char *p = fd_tracked(fd);
    unsigned long conn = fd >= 0 && (size_t)fd < fd_cap ? fd_conn[fd] : 0;
    if (p) {
        if (off < 0) {
            off_t end = lseek(fd, 0, SEEK_CUR);
            if (end < 0)
                die("lseek on a tracked file failed");
            off = end - (off_t)done;
        }
        unsigned long long at = blob_put(iov, iovcnt, (size_t)done);
        struct buf b = {0};
        buf_str(&b, "write");
        buf_path(&b, p);
        buf_fmt(&b, "\t%lld\t%lld\t%s\t%llu", (long long)off, (long long)done, blob_name, at);
        emit(&b);
    } else if (conn) {
        unsigned long long at = blob_put(iov, iovcnt, (size_t)done);
        struct buf b = {0};
        buf_fmt(&b, "net\t%lu\t%lld\t%s\t%llu", conn, (long long)done, blob_name, at);
        emit(&b);
    }
    pthread_mutex_unlock(&lock);
}

ssize_t write(int fd, const void *data, size_t n)
{
    pthread_once(&once, init);
    ssize_t w = real_write(fd, data, n);
    struct iovec v = { (void *)data, n };
    log_data(fd, &v, 1, w, -1);
    return w;
}

ssize_t pwrite(int fd, const void *data, size_t n, off_t off)
{
    pthread_once(&once, init);
    ssize_t w = real_pwrite(fd, data, n, off);
    struct iovec v = { (void *)data, n };
    log_data(fd, &v, 1, w, off);
    return w;
}

ssize_t pwrite64(int fd, const void *data, size_t n, off_t off)
{
    return pwrite(fd, data, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    pthread_once(&once, init);
    ssize_t w = real_writev(fd, iov, iovcnt);
    log_data(fd, iov, iovcnt, w, -1);
    return w;
}

ssize_t send(int fd, const void *data, size_t n, int flags)
{
    pthread_once(&once, init);
    ssize_t w = real_send(fd, data, n, flags);
    struct iovec v = { (void *)data, n };
    log_data(fd, &v, 1, w, -1);
    return w;
}

ssize_t sendto(int fd, const void *data, size_t n, int flags,
               const struct sockaddr *to, socklen_t tolen)
{
    pthread_once(&once, init);
    ssize_t w = real_sendto(fd, data, n, flags, to, tolen);
    struct iovec v = { (void *)data, n };
    log_data(fd, &v, 1, w, -1);
    return w;
}

int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
    pthread_once(&once, init);
    int rc = real_connect(fd, sa, len);
    int e = errno;
    if ((rc == 0 || errno == EINPROGRESS) && active() && port > 0 && sa &&
        sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        if (ntohs(in->sin_port) == port && ntohl(in->sin_addr.s_addr) == INADDR_LOOPBACK) {
            pthread_mutex_lock(&lock);
            fd_grow(fd);
            fd_forget(fd);
            fd_conn[fd] = ++conn_seq;
            struct buf b = {0};
            buf_fmt(&b, "conn\t%lu", conn_seq);
            emit(&b);
            pthread_mutex_unlock(&lock);
        }
    }
    errno = e;
    return rc;
}

static int do_sync(int fd, int data_only)
{
    pthread_once(&once, init);
    int rc = data_only ? real_fdatasync(fd) : real_fsync(fd);
    if (rc == 0 && active()) {
        pthread_mutex_lock(&lock);
        const char *p = fd_tracked(fd);
        if (p) {
            struct buf b = {0};
            buf_str(&b, "sync");
            buf_path(&b, p);
            emit(&b);
        }
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

int fsync(int fd) { return do_sync(fd, 0); }
int fdatasync(int fd) { return do_sync(fd, 1); }

int ftruncate(int fd, off_t size)
{
    pthread_once(&once, init);
    int rc = real_ftruncate(fd, size);
    if (rc == 0 && active()) {
        pthread_mutex_lock(&lock);
        const char *p = fd_tracked(fd);
        if (p) {
            struct buf b = {0};
            buf_str(&b, "trunc");
            buf_path(&b, p);
            buf_fmt(&b, "\t%lld", (long long)size);
            emit(&b);
        }
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

int ftruncate64(int fd, off_t size) { return ftruncate(fd, size); }

int close(int fd)
{
    pthread_once(&once, init);
    if (fd != log_fd && fd != blob_fd) {
        pthread_mutex_lock(&lock);
        fd_forget(fd);
        pthread_mutex_unlock(&lock);
    }
    return real_close(fd);
}

/* Under lock: a tracked fd whose path was old (or under old/) now has new. */
static void fd_renamed(const char *old, const char *new)
{
    size_t n = strlen(old);
    for (size_t i = 0; i < fd_cap; i++) {
        char *p = fd_path[i];
        if (!p || strncmp(p, old, n) != 0 || (p[n] != '\0' && p[n] != '/'))
            continue;
        struct buf b = {0};
        buf_str(&b, new);
        buf_str(&b, p + n);
        free(p);
        fd_path[i] = b.p;
    }
}

static int do_rename(int ofd, const char *old, int nfd, const char *new)
{
    pthread_once(&once, init);
    char *po = tracked(ofd, old), *pn = tracked(nfd, new);
    int rc = real_renameat(ofd, old, nfd, new);
    if (rc == 0 && (po || pn)) {
        if (!po || !pn)
            die("rename into or out of the recorded tree");
        pthread_mutex_lock(&lock);
        struct buf b = {0};
        buf_str(&b, "rename");
        buf_path(&b, po);
        buf_path(&b, pn);
        emit(&b);
        fd_renamed(po, pn);
        pthread_mutex_unlock(&lock);
    }
    free(po);
    free(pn);
    return rc;
}

int rename(const char *old, const char *new) { return do_rename(AT_FDCWD, old, AT_FDCWD, new); }
int renameat(int ofd, const char *old, int nfd, const char *new)
{
    return do_rename(ofd, old, nfd, new);
}

static void log_path_op(const char *op, char *p)
{
    pthread_mutex_lock(&lock);
    struct buf b = {0};
    buf_str(&b, op);
    buf_path(&b, p);
    emit(&b);
    pthread_mutex_unlock(&lock);
}

static int do_unlink(int dirfd, const char *path, int flags)
{
    pthread_once(&once, init);
    char *p = tracked(dirfd, path);
    int rc = real_unlinkat(dirfd, path, flags);
    if (rc == 0 && p)
        log_path_op(flags & AT_REMOVEDIR ? "rmdir" : "unlink", p);
    free(p);
    return rc;
}

int unlink(const char *path) { return do_unlink(AT_FDCWD, path, 0); }
int unlinkat(int dirfd, const char *path, int flags) { return do_unlink(dirfd, path, flags); }
int rmdir(const char *path) { return do_unlink(AT_FDCWD, path, AT_REMOVEDIR); }

static int do_mkdir(int dirfd, const char *path, mode_t mode)
{
    pthread_once(&once, init);
    char *p = tracked(dirfd, path);
    int rc = real_mkdirat(dirfd, path, mode);
    if (rc == 0 && p)
        log_path_op("mkdir", p);
    free(p);
    return rc;
}

int mkdir(const char *path, mode_t mode) { return do_mkdir(AT_FDCWD, path, mode); }
int mkdirat(int dirfd, const char *path, mode_t mode) { return do_mkdir(dirfd, path, mode); }
