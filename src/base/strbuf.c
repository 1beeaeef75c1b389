/*
 * strbuf.c - growable NUL-terminated byte buffer.
 */
#include "base/strbuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <string.h>

int strbuf_reserve(strbuf *sb, size_t extra)
{
    if (extra > SIZE_MAX - sb->len - 1) {
        errno = ENOMEM;
        return -1;
    }
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap)
        return 0;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(sb->data, cap);
    if (p == NULL)
        return -1;
    if (sb->data == NULL)
        p[0] = '\0';       /* a buffer that has data is always a C string */
    sb->data = p;
    sb->cap = cap;
    return 0;
}

int strbuf_append(strbuf *sb, const void *data, size_t len)
{
    if (strbuf_reserve(sb, len) != 0)
        return -1;
    if (len > 0)
        memcpy(sb->data + sb->len, data, len);
    sb->len += len;
    sb->data[sb->len] = '\0';
    return 0;
}

int strbuf_puts(strbuf *sb, const char *s)
{
    return strbuf_append(sb, s, strlen(s));
}

int strbuf_putc(strbuf *sb, char c)
{
    return strbuf_append(sb, &c, 1);
}

int strbuf_vprintf(strbuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return -1;
    if (strbuf_reserve(sb, (size_t)n) != 0)
        return -1;
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
    return 0;
}

int strbuf_printf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = strbuf_vprintf(sb, fmt, ap);
    va_end(ap);
    return rc;
}

void strbuf_reset(strbuf *sb)
{
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
}

void strbuf_free(strbuf *sb)
{
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
}

char *strbuf_detach(strbuf *sb)
{
    char *p = sb->data;
    if (p == NULL)
        p = calloc(1, 1);
    sb->data = NULL;
    sb->len = sb->cap = 0;
    return p;
}

const char *strbuf_str(const strbuf *sb)
{
    return sb->data ? sb->data : "";
}

char *str_vprintf(const char *fmt, va_list ap)
{
    strbuf sb = STRBUF_INIT;
    if (strbuf_vprintf(&sb, fmt, ap) != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = str_vprintf(fmt, ap);
    va_end(ap);
    return s;
}

void str_set_err(char **errmsg, const char *fmt, ...)
{
    if (errmsg == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    *errmsg = str_vprintf(fmt, ap);
    va_end(ap);
}

int str_random_hex(char *out, size_t nbytes)
{
    static const char digits[] = "0123456789abcdef";
    /* The raw bytes go to the second half of out and are spread forward:
     * digit pair i is written only over raw bytes already read. */
    unsigned char *raw = (unsigned char *)out + nbytes;
    for (size_t got = 0; got < nbytes;) {
        ssize_t n = getrandom(raw + got, nbytes - got, 0);
        if (n < 0 && errno != EINTR)
            return -1;
        if (n > 0)
            got += (size_t)n;
    }
    for (size_t i = 0; i < nbytes; i++) {
        unsigned char byte = raw[i];
        out[2 * i] = digits[byte >> 4];
        out[2 * i + 1] = digits[byte & 15];
    }
    out[2 * nbytes] = '\0';
    return 0;
}
