/*
 * gridmanager.c - find the condor_gridmanager that started us and its
 * selection value (gridmanager.h), from /proc.
 *
 * Everything read here comes from other processes and is bounded: a
 * command line is read up to CMDLINE_MAX bytes (a longer one is treated as
 * not a grid manager's), the stat line up to STAT_MAX.  Any failure gives
 * "no value", never an error: the GAHP then uses its one default journal,
 * as it did before several grid managers were handled.
 */
#include "config/gridmanager.h"

#include "base/num.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMDLINE_MAX (256 * 1024)
#define STAT_MAX 4096
#define SUFFIX_CLEAN_MAX 40

/* Read at most max bytes of a /proc file into a malloc'd buffer; *len gets
 * the length.  Returns NULL on any failure or when the file is longer. */
static char *read_proc_file(long pid, const char *name, size_t max, size_t *len)
{
    char path[64];  /* "/proc/" + a long + "/" + a short literal name */
    int n = snprintf(path, sizeof path, "/proc/%ld/%s", pid, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = malloc(max + 1);
    size_t used = 0;
    while (buf != NULL && used <= max) {
        ssize_t got = read(fd, buf + used, max + 1 - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got < 0) {
                free(buf);
                buf = NULL;
            }
            break;
        }
        used += (size_t)got;
    }
    close(fd);
    if (buf != NULL && used > max) {  /* too long to be what we look for */
        free(buf);
        return NULL;
    }
    if (buf != NULL) {
        buf[used] = '\0';
        *len = used;
    }
    return buf;
}

/* The parent of pid from /proc/pid/stat ("pid (comm) state ppid ..."; comm
 * may hold spaces and parentheses, so the last ')' ends it); -1 if unknown. */
static long parent_of(long pid)
{
    size_t len = 0;
    char *stat = read_proc_file(pid, "stat", STAT_MAX, &len);
    if (stat == NULL)
        return -1;
    long ppid = -1;
    const char *p = strrchr(stat, ')');
    /* ") S 1234 ...": the state is one character, then the ppid */
    if (p != NULL && p[1] == ' ' && p[2] != '\0' && p[3] == ' ' &&
        num_parse_long_blanks(p + 4, strcspn(p + 4, " "), 0, LONG_MAX, &ppid) != 0)
        ppid = -1;
    free(stat);
    return ppid;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* If argv (NUL-separated, len bytes) is a condor_gridmanager's, the value
 * after its last "-A", malloc'd; NULL otherwise.  *is_gm tells whether it
 * was a grid manager at all (with or without "-A"). */
static char *selection_in_cmdline(const char *argv, size_t len, int *is_gm)
{
    *is_gm = 0;
    if (len == 0 || strcmp(base_name(argv), "condor_gridmanager") != 0)
        return NULL;
    *is_gm = 1;
    const char *value = NULL;
    const char *end = argv + len;
    for (const char *arg = argv; arg < end; arg += strlen(arg) + 1)
        if (strcmp(arg, "-A") == 0 && arg + 3 <= end)
            value = arg + 3;  /* "-A" and its NUL */
    if (value == NULL || value >= end || value[0] == '\0')
        return NULL;
    return strdup(value);
}

char *gridmanager_selection_value_of(long pid)
{
    for (int depth = 0; pid > 1 && depth < GRIDMANAGER_MAX_DEPTH; depth++) {
        size_t len = 0;
        char *argv = read_proc_file(pid, "cmdline", CMDLINE_MAX, &len);
        if (argv != NULL) {
            int is_gm = 0;
            char *value = selection_in_cmdline(argv, len, &is_gm);
            free(argv);
            if (is_gm)  /* the nearest grid manager decides, value or not */
                return value;
        }
        pid = parent_of(pid);
    }
    return NULL;
}

char *gridmanager_selection_value(void)
{
    return gridmanager_selection_value_of((long)getppid());
}

/* FNV-1a, 32 bits: a stable name part, not a security measure. */
static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

char *gridmanager_journal_suffix(const char *value)
{
    size_t n = strlen(value);
    if (n > SUFFIX_CLEAN_MAX)
        n = SUFFIX_CLEAN_MAX;
    char *out = malloc(n + 1 + 8 + 1);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)value[i];
        int safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                   (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
        out[i] = safe ? (char)c : '_';
    }
    snprintf(out + n, 1 + 8 + 1, "-%08x", (unsigned)fnv1a(value));
    return out;
}
