/*
 * util.c - small helpers of the emulator: clock, locking, allocation,
 * files, MD5, JSON/HTML escaping and number parsing.
 */
#include "emu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

emu_globals G;

double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double emu_now(void)
{
    return G.manual_clock ? G.vnow : wall_now();
}

void emu_lock(void)
{
    pthread_mutex_lock(&G.lock);
}

void emu_unlock(void)
{
    pthread_mutex_unlock(&G.lock);
}

/* Out of memory in a test emulator is not worth recovering from: the
 * process dies loudly instead of answering wrongly. */
static void oom(void)
{
    log_error("boinc_emu: out of memory");
    abort();
}

char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (d == NULL)
        oom();
    return d;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        oom();
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    int rc = strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    if (rc != 0)
        oom();
    char *s = strbuf_detach(&sb);
    if (s == NULL)
        oom();
    return s;
}

int random_hex(char *out, size_t nhex)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t nbytes = (nhex + 1) / 2;
    unsigned char buf[64];
    if (nbytes > sizeof buf) {
        close(fd);
        return -1;
    }
    ssize_t got = read(fd, buf, nbytes);
    close(fd);
    if (got != (ssize_t)nbytes)
        return -1;
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < nhex; i++)
        out[i] = hex[(buf[i / 2] >> ((i % 2) ? 0 : 4)) & 15];
    out[nhex] = '\0';
    return 0;
}

void md5_hex(const void *data, size_t len, char out[33])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;
    static const char hex[] = "0123456789abcdef";
    if (EVP_Digest(data, len, digest, &dlen, EVP_md5(), NULL) != 1 || dlen != 16) {
        memset(out, '0', 32);
        out[32] = '\0';
        return;
    }
    for (unsigned i = 0; i < 16; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[32] = '\0';
}

int read_file(const char *path, char **data, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return -1;
    strbuf sb = STRBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) {
        if (strbuf_append(&sb, buf, n) != 0) {
            fclose(fp);
            strbuf_free(&sb);
            return -1;
        }
    }
    int err = ferror(fp);
    fclose(fp);
    if (err) {
        strbuf_free(&sb);
        return -1;
    }
    *len = sb.len;
    *data = strbuf_detach(&sb);
    return *data ? 0 : -1;
}

int write_file(const char *path, const void *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    if (fp == NULL)
        return -1;
    size_t w = len ? fwrite(data, 1, len, fp) : 0;
    int rc = (w == len) ? 0 : -1;
    if (fclose(fp) != 0)
        rc = -1;
    return rc;
}

/* Hard links are free and inputs are immutable; copy across devices. */
int copy_or_link(const char *from, const char *to)
{
    if (link(from, to) == 0)
        return 0;
    char *data;
    size_t len;
    if (read_file(from, &data, &len) != 0)
        return -1;
    int rc = write_file(to, data, len);
    free(data);
    return rc;
}

int remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = xasprintf("%s/%s", path, e->d_name);
        if (remove_tree(p) != 0)
            rc = -1;
        free(p);
    }
    closedir(d);
    if (rmdir(path) != 0)
        rc = -1;
    return rc;
}

int mkdir_p(const char *path)
{
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            *s = '/';
        }
    }
    int rc = (mkdir(p, 0700) == 0 || errno == EEXIST) ? 0 : -1;
    free(p);
    return rc;
}

void json_str(strbuf *sb, const char *s)
{
    strbuf_putc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            strbuf_putc(sb, '\\');
            strbuf_putc(sb, (char)*p);
        } else if (*p < 0x20) {
            strbuf_printf(sb, "\\u%04x", *p);
        } else {
            strbuf_putc(sb, (char)*p);
        }
    }
    strbuf_putc(sb, '"');
}

/* PHP prints floats with 14 significant digits and no trailing zeros
 * (e.g. 1795251833.4764, 1.99752, 0); %.14G does the same for the values
 * a BOINC server prints. */
void php_float(strbuf *sb, double v)
{
    if (!isfinite(v))
        v = 0;
    strbuf_printf(sb, "%.14G", v);
}

void html_escape(strbuf *sb, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case '<': strbuf_puts(sb, "&lt;"); break;
        case '>': strbuf_puts(sb, "&gt;"); break;
        case '&': strbuf_puts(sb, "&amp;"); break;
        case '"': strbuf_puts(sb, "&quot;"); break;
        default: strbuf_putc(sb, s[i]);
        }
    }
}

int parse_long(const char *s, long *out)
{
    if (s == NULL)
        return -1;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (*s == '\0')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int parse_double(const char *s, double *out)
{
    if (s == NULL)
        return -1;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (*s == '\0')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* job_file.php's is_valid_filename(): ^[\w\-. ]+$ (PHP's \w: ASCII
 * letters, digits, underscore). */
int valid_phys_name(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    /* "." and ".." match the regex but would name directories: refused
     * here (a real server would fail later, less clearly). */
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
                 c == ' ';
        if (!ok)
            return 0;
    }
    return 1;
}

/* A php.ini size: digits with an optional K, M or G suffix (powers of
 * 1024, as PHP reads them). */
int php_size(const char *s, long long *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    long long mult = 1;
    if (*end == 'K' || *end == 'k') mult = 1024LL, end++;
    else if (*end == 'M' || *end == 'm') mult = 1024LL * 1024, end++;
    else if (*end == 'G' || *end == 'g') mult = 1024LL * 1024 * 1024, end++;
    if (errno != 0 || *end != '\0' || v < 0 || v > (1LL << 50) / mult)
        return -1;
    *out = v * mult;
    return 0;
}

/*
 * The PHP upload limits: "stock" (Debian's php.ini: max_file_uploads 20,
 * post_max_size 8M, upload_max_filesize 2M), "none" (no limits), or a
 * comma list of NAME=VALUE with those three names (0 = no limit); names
 * not listed keep their value.  Caller holds emu_lock() or runs alone.
 */
int php_limits_set(const char *spec)
{
    if (strcmp(spec, "stock") == 0) {
        G.max_file_uploads = 20;
        G.post_max_bytes = 8LL * 1024 * 1024;
        G.upload_max_filesize = 2LL * 1024 * 1024;
        return 0;
    }
    if (strcmp(spec, "none") == 0) {
        G.max_file_uploads = 0;
        G.post_max_bytes = 0;
        G.upload_max_filesize = 0;
        return 0;
    }
    long files = G.max_file_uploads;
    long long post = G.post_max_bytes, size = G.upload_max_filesize;
    char *copy = xstrdup(spec), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        long long v;
        if (eq == NULL || php_size(eq + 1, &v) != 0) {
            rc = -1;
            break;
        }
        *eq = '\0';
        if (strcmp(t, "max_file_uploads") == 0 && v <= 1000000) files = (long)v;
        else if (strcmp(t, "post_max_size") == 0) post = v;
        else if (strcmp(t, "upload_max_filesize") == 0) size = v;
        else rc = -1;
    }
    free(copy);
    if (rc == 0) {
        G.max_file_uploads = files;
        G.post_max_bytes = post;
        G.upload_max_filesize = size;
    }
    return rc;
}
