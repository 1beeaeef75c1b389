/*
 * log.h - leveled logging to stderr and/or a log file, never stdout.
 *
 * stdout carries the GAHP protocol, so every diagnostic goes through here.
 * Callers must never pass an authenticator, or a URL that carries one
 * (get_output.php URLs do), to these functions; log_redact_url() exists for
 * the latter.
 */
#ifndef BOINC_GAHP_LOG_H
#define BOINC_GAHP_LOG_H

#include <stdarg.h>

typedef enum {
    LOG_ERROR = 0,
    LOG_WARN = 1,
    LOG_INFO = 2,
    LOG_DEBUG = 3
} log_level;

/*
 * Open the log: path NULL means stderr.  Returns 0, or -1 with errno set
 * and *why (when why is not NULL) a malloc'd reason (the previous
 * destination stays).  A missing file is created 0600 with its missing
 * directories (0700); a symbolic link, a file of another user or one
 * other users may write is refused; an existing one of ours is narrowed
 * to 0600.
 */
int log_open(const char *path, log_level level, char **why);
/* Would log_open(path) succeed?  Checked without creating anything:
 * NULL when it would, else a malloc'd reason. */
char *log_file_problem(const char *path);
void log_close(void);
/* Before log_open: tee_stderr 1 = every line goes to stderr as well as to
 * the file; max_bytes > 0 = the file is renamed PATH.old (one old copy)
 * and started again once it reaches max_bytes. */
void log_configure(int tee_stderr, long long max_bytes);

/* Parse "error", "warn", "info" or "debug"; returns 0 or -1. */
int log_level_parse(const char *name, log_level *out);

void log_msg(log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The same, to the log file only (nothing when there is none): for a
 * message the caller has already printed on stderr in plain words. */
void log_file_msg(log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * Return a malloc'd copy of url with the value of every query parameter
 * named auth_str or authenticator replaced by "***".  NULL on ENOMEM.
 */
char *log_redact_url(const char *url);

#endif
