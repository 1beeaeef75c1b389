/*
 * strbuf.h - a growable byte buffer (always NUL-terminated).
 *
 * Used for everything whose size comes from outside: request lines, XML
 * request bodies, HTTP replies.  Growth is geometric, so appending n bytes
 * costs amortised O(n) and a 50 MB line is never copied quadratically.
 * Every function that can allocate returns 0 on success and -1 on ENOMEM;
 * on failure the buffer keeps its previous contents.
 */
#ifndef BOINC_GAHP_STRBUF_H
#define BOINC_GAHP_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
    char *data;     /* NUL-terminated; NULL until the first append */
    size_t len;     /* bytes used, not counting the NUL */
    size_t cap;     /* bytes allocated */
} strbuf;

#define STRBUF_INIT { NULL, 0, 0 }

int strbuf_reserve(strbuf *sb, size_t extra);
int strbuf_append(strbuf *sb, const void *data, size_t len);
int strbuf_puts(strbuf *sb, const char *s);
int strbuf_putc(strbuf *sb, char c);
int strbuf_printf(strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int strbuf_vprintf(strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void strbuf_reset(strbuf *sb);              /* len = 0, keeps memory */
void strbuf_free(strbuf *sb);
/* Hand the data over to the caller (who frees it); sb becomes empty.
 * Returns "" (malloc'd) for an empty buffer, NULL on ENOMEM. */
char *strbuf_detach(strbuf *sb);
/* A malloc'd formatted string, or NULL on ENOMEM (for one-off messages). */
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* *errmsg = str_printf(fmt, ...) when errmsg is not NULL (the message is
 * NULL if even its allocation fails): how a function that reports
 * failures through a char ** sets one. */
void str_set_err(char **errmsg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 2 * nbytes random hex digits from the kernel into out (2 * nbytes + 1
 * bytes, NUL-terminated): 0, or -1 with errno. */
int str_random_hex(char *out, size_t nbytes);
/* Always returns a valid C string ("" before the first append). */
const char *strbuf_str(const strbuf *sb);

#endif
