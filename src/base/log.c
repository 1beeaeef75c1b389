/*
 * log.c - leveled, thread-safe logging to stderr and/or a log file, with
 * size-bounded rotation of the file.
 *
 * Each line is written under a mutex so lines from worker threads never
 * interleave.  Nothing here ever touches stdout.
 */
#include "base/log.h"

#include "base/dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static FILE *log_fp;            /* NULL = stderr */
static char *log_path;          /* the file's name, for rotation */
static int log_tee;             /* 1 = every line also to stderr */
static long long log_max;       /* rotate at this size; 0 = never */
static int log_rotate_broken;   /* rename failed once: stop trying */
static log_level log_threshold = LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void log_configure(int tee_stderr, long long max_bytes)
{
    pthread_mutex_lock(&log_lock);
    log_tee = tee_stderr;
    log_max = max_bytes > 0 ? max_bytes : 0;
    pthread_mutex_unlock(&log_lock);
}

/*
 * Why a log file may not be used, NULL when it may.  The log names jobs,
 * batches, paths and errors: a file another user owns (they could read
 * it, or pre-created it in a shared directory to collect our lines) or
 * may write (they could forge our lines) is refused (issue 28).  A
 * character device (/dev/null) holds nothing to read.
 */
static const char *unsafe_log_file(const struct stat *st)
{
    if (S_ISCHR(st->st_mode))
        return NULL;
    if (!S_ISREG(st->st_mode))
        return "not a regular file";
    if (st->st_uid != geteuid())
        return "owned by another user";
    if ((st->st_mode & 022) != 0)
        return "writable by other users";
    return NULL;
}

/* *why = a malloc'd reason; out of memory leaves it NULL (the caller then
 * says strerror(errno)). */
static void set_why(char **why, const char *reason)
{
    if (why != NULL && *why == NULL)
        *why = strdup(reason);
}

/*
 * Open path for appending, created 0600 whatever the umask, with its
 * directory (0700) when missing.  O_NOFOLLOW: a link planted where our
 * log goes is refused, not followed; O_NONBLOCK only so that a FIFO
 * cannot block the open (refused just after).  A regular file of ours
 * with group or other read bits is narrowed to 0600 (issue 10 #9).
 */
static FILE *open_log_file(const char *path, char **why)
{
    char *slash = strrchr(path, '/');
    if (slash != NULL && slash != path) {
        char *dir = strndup(path, (size_t)(slash - path));
        int made = dir != NULL ? dirs_make(dir, NULL) : -1;
        free(dir);
        if (made != 0)
            return NULL;                /* errno from mkdir (or ENOMEM) */
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
                        O_NONBLOCK, 0600);
    if (fd < 0) {
        if (errno == ELOOP)
            set_why(why, "a symbolic link (not followed)");
        return NULL;
    }
    struct stat st;
    const char *bad = NULL;
    int rc = fstat(fd, &st);
    if (rc == 0 && (bad = unsafe_log_file(&st)) != NULL) {
        set_why(why, bad);
        errno = EPERM;
        rc = -1;
    }
    if (rc == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) != 0)
        rc = fchmod(fd, st.st_mode & 0700);
    int flags = rc == 0 ? fcntl(fd, F_GETFL) : -1;
    if (rc == 0)
        rc = flags < 0 ? -1 : fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE *fp = rc == 0 ? fdopen(fd, "a") : NULL;
    if (fp == NULL) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    setvbuf(fp, NULL, _IOLBF, 0);
    return fp;
}

char *log_file_problem(const char *path)
{
    struct stat st;
    const char *bad = NULL;
    if (lstat(path, &st) == 0) {
        bad = S_ISLNK(st.st_mode) ? "a symbolic link (not followed)" : unsafe_log_file(&st);
        if (bad == NULL && access(path, W_OK) != 0)
            bad = strerror(errno);
    } else if (errno != ENOENT) {
        bad = strerror(errno);
    } else {
        char *slash = strrchr(path, '/');
        char *dir = slash == NULL ? strdup(".") : slash == path ? strdup("/")
                    : strndup(path, (size_t)(slash - path));
        if (dir == NULL)
            return strdup("out of memory");
        if (dirs_creatable(dir) != 0)
            bad = strerror(errno);
        free(dir);
    }
    return bad != NULL ? strdup(bad) : NULL;
}

int log_open(const char *path, log_level level, char **why)
{
    if (why != NULL)
        *why = NULL;
    log_threshold = level;
    if (path == NULL)
        return 0;
    char *name = strdup(path);
    if (name == NULL)
        return -1;
    FILE *fp = open_log_file(path, why);
    if (fp == NULL) {
        int e = errno;
        free(name);
        if (why != NULL && *why == NULL)
            *why = strdup(strerror(e));
        errno = e;
        return -1;
    }
    pthread_mutex_lock(&log_lock);
    if (log_fp != NULL)
        fclose(log_fp);
    free(log_path);
    log_fp = fp;
    log_path = name;
    log_rotate_broken = 0;
    pthread_mutex_unlock(&log_lock);
    return 0;
}

void log_close(void)
{
    pthread_mutex_lock(&log_lock);
    if (log_fp != NULL)
        fclose(log_fp);
    log_fp = NULL;
    free(log_path);
    log_path = NULL;
    pthread_mutex_unlock(&log_lock);
}

/*
 * Size-bounded log (under log_lock): once the file has reached log_max,
 * it becomes PATH.old (replacing the previous one: HTCondor's own logs
 * keep one old copy the same way) and a new PATH is started, so a server
 * that runs for months uses at most about twice the limit.  Several
 * processes may share one file: when the name no longer leads to our
 * file, another one has rotated it, and we only reopen the name.  A
 * rename that fails (a shared file in a directory the user cannot write)
 * turns rotation off for this process; the file then grows.
 */
static void rotate_if_due(void)
{
    struct stat st, named;
    if (log_fp == NULL || log_max == 0 || log_rotate_broken ||
        fstat(fileno(log_fp), &st) != 0 || !S_ISREG(st.st_mode) ||
        (long long)st.st_size < log_max)
        return;
    int moved = stat(log_path, &named) == 0 &&
                (named.st_ino != st.st_ino || named.st_dev != st.st_dev);
    if (!moved) {
        size_t n = strlen(log_path);
        char *old = malloc(n + 5);
        if (old == NULL)
            return;                 /* try again at the next line */
        memcpy(old, log_path, n);
        memcpy(old + n, ".old", 5);
        int rc = rename(log_path, old);
        free(old);
        if (rc != 0) {
            log_rotate_broken = 1;
            return;
        }
    }
    FILE *fp = open_log_file(log_path, NULL);
    if (fp == NULL) {
        log_rotate_broken = 1;      /* keep writing to the renamed file */
        return;
    }
    fclose(log_fp);
    log_fp = fp;
}

int log_level_parse(const char *name, log_level *out)
{
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *out = (log_level)i;
            return 0;
        }
    }
    return -1;
}

static void write_line(FILE *fp, const char *stamp, long ms, log_level level,
                       const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* The line is formatted first and written with one fwrite: stderr is
 * unbuffered, where a prefix, a message and a newline written apart cost
 * three write(2)s per line (a third of a BLAH_JOB_STATUS's CPU at 10,000
 * statuses a second went to logging; doc/performance.md, issue 39). */
static void write_line(FILE *fp, const char *stamp, long ms, log_level level,
                       const char *fmt, va_list ap)
{
    char small[512];
    char *buf = small;
    int head = snprintf(small, sizeof small, "%s.%03ldZ boinc_gahp[%s] ", stamp, ms,
                        level_names[level]);
    if (head < 0 || (size_t)head >= sizeof small)
        head = 0;
    va_list copy;
    va_copy(copy, ap);
    int body = vsnprintf(small + head, sizeof small - (size_t)head, fmt, copy);
    va_end(copy);
    if (body < 0) {
        body = 0;
        small[head] = '\0';
    } else if ((size_t)head + (size_t)body + 2 > sizeof small) {
        /* a long line: a buffer of its size, or, without memory, the
         * part that fit */
        char *big = malloc((size_t)head + (size_t)body + 2);
        if (big != NULL) {
            memcpy(big, small, (size_t)head);
            vsnprintf(big + head, (size_t)body + 1, fmt, ap);
            buf = big;
        } else {
            body = (int)(sizeof small - 2 - (size_t)head);
        }
    }
    size_t n = (size_t)head + (size_t)body;
    buf[n++] = '\n';
    fwrite(buf, 1, n, fp);
    fflush(fp);
    if (buf != small)
        free(buf);
}

static void log_v(log_level level, int file_only, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void log_v(log_level level, int file_only, const char *fmt, va_list ap)
{
    char stamp[32];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    if (strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        stamp[0] = '\0';
    long ms = ts.tv_nsec / 1000000L;

    pthread_mutex_lock(&log_lock);
    rotate_if_due();
    if (log_fp != NULL) {
        va_list copy;
        va_copy(copy, ap);
        write_line(log_fp, stamp, ms, level, fmt, copy);
        va_end(copy);
    }
    if (!file_only && (log_fp == NULL || log_tee))
        write_line(stderr, stamp, ms, level, fmt, ap);
    pthread_mutex_unlock(&log_lock);
}

void log_msg(log_level level, const char *fmt, ...)
{
    if (level > log_threshold)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_v(level, 0, fmt, ap);
    va_end(ap);
}

void log_file_msg(log_level level, const char *fmt, ...)
{
    if (level > log_threshold)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_v(level, 1, fmt, ap);
    va_end(ap);
}

static int is_secret_param(const char *name, size_t len)
{
    static const char *const secret[] = { "auth_str", "authenticator" };
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++) {
        if (strlen(secret[i]) == len && strncmp(name, secret[i], len) == 0)
            return 1;
    }
    return 0;
}

/* Copy url up to (not including) its query into out, with the password
 * of "scheme://user:PASS@host" replaced by "***"; returns bytes written. */
static size_t copy_redacted_authority(const char *url, size_t upto, char *out)
{
    const char *scheme_end = strstr(url, "://");
    size_t o = 0, i = 0;
    if (scheme_end != NULL && (size_t)(scheme_end - url) < upto) {
        size_t host = (size_t)(scheme_end - url) + 3;
        size_t auth_end = host;
        while (auth_end < upto && url[auth_end] != '/')
            auth_end++;
        size_t at = auth_end;       /* the last '@' of the authority */
        for (size_t k = host; k < auth_end; k++)
            if (url[k] == '@')
                at = k;
        const char *colon = at < auth_end
            ? memchr(url + host, ':', at - host) : NULL;
        if (colon != NULL) {
            size_t keep = (size_t)(colon - url) + 1;
            memcpy(out, url, keep);
            memcpy(out + keep, "***", 3);
            o = keep + 3;
            i = at;
        }
    }
    memcpy(out + o, url + i, upto - i);
    return o + (upto - i);
}

char *log_redact_url(const char *url)
{
    /* The result is never longer than url plus "***" per parameter (and
     * for the password), each secret value replaced by exactly 3 bytes, so
     * 2x + 8 is ample. */
    size_t n = strlen(url);
    char *out = malloc(2 * n + 8);
    if (out == NULL)
        return NULL;
    const char *q = strchr(url, '?');
    if (q == NULL) {
        size_t o = copy_redacted_authority(url, n, out);
        out[o] = '\0';
        return out;
    }
    size_t o = copy_redacted_authority(url, (size_t)(q - url), out);
    out[o++] = '?';
    const char *p = q + 1;
    while (*p != '\0') {
        const char *end = strchr(p, '&');
        if (end == NULL)
            end = p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq != NULL && is_secret_param(p, (size_t)(eq - p))) {
            size_t klen = (size_t)(eq - p) + 1;
            memcpy(out + o, p, klen);
            o += klen;
            memcpy(out + o, "***", 3);
            o += 3;
        } else {
            memcpy(out + o, p, (size_t)(end - p));
            o += (size_t)(end - p);
        }
        if (*end == '&')
            out[o++] = '&';
        p = *end == '&' ? end + 1 : end;
    }
    out[o] = '\0';
    return out;
}
