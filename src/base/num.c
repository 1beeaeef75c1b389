/*
 * num.c - strict number parsing (see num.h): the whole text must be the
 * number, with no sign other than a leading '-' for integers (and '+' or
 * '-' for a decimal), no hex, no overflow, nothing infinite.  Integers are
 * accumulated here with an overflow check on every digit; decimals go
 * through strtod once their shape is checked.
 */
#include "base/num.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return (unsigned)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (unsigned)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (unsigned)(c - 'A' + 10);
    return 99;
}

int num_parse_digits(const char *s, size_t n, unsigned base, unsigned long long max,
                     unsigned long long *out)
{
    if (n == 0 || (base != 10 && base != 16))
        return -1;
    unsigned long long v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = digit_value(s[i]);
        if (d >= base || d > max || v > (max - d) / base)
            return -1;          /* not a digit, or v * base + d > max */
        v = v * base + d;
    }
    *out = v;
    return 0;
}

/* Optional '-' and decimal digits, the n bytes at s. */
static int span_llong(const char *s, size_t n, long long *out)
{
    int neg = n > 0 && *s == '-';
    unsigned long long limit = neg ? (unsigned long long)LLONG_MAX + 1u : LLONG_MAX;
    unsigned long long mag;
    if (num_parse_digits(s + neg, n - (size_t)neg, 10, limit, &mag) != 0)
        return -1;
    if (!neg)
        *out = (long long)mag;
    else if (mag == (unsigned long long)LLONG_MAX + 1u)
        *out = LLONG_MIN;
    else
        *out = -(long long)mag;
    return 0;
}

static int span_long(const char *s, size_t n, long min, long max, long *out)
{
    long long v;
    if (span_llong(s, n, &v) != 0 || v < min || v > max)
        return -1;
    *out = (long)v;
    return 0;
}

/* A decimal number, the n bytes at s (NUL-terminated somewhere after them:
 * strtod reads on, and a number that runs on past s + n is refused). */
static int span_double(const char *s, size_t n, double *out)
{
    /* strtod skips leading blanks and knows "inf"/"nan"/hex: refuse those. */
    const char *p = s, *e = s + n;
    if (p < e && (*p == '-' || *p == '+'))
        p++;
    if (!(p < e && ((*p >= '0' && *p <= '9') ||
                    (*p == '.' && p + 1 < e && p[1] >= '0' && p[1] <= '9'))))
        return -1;
    for (const char *q = p; q < e; q++)
        if (*q == 'x' || *q == 'X')
            return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno != 0 || end != e || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* The n bytes at s without the blanks around them: [*start, *start + return). */
static size_t trim(const char *s, size_t n, const char **start)
{
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    *start = s;
    return n;
}

int num_parse_llong(const char *s, long long *out)
{
    return span_llong(s, strlen(s), out);
}

int num_parse_long(const char *s, long min, long max, long *out)
{
    return span_long(s, strlen(s), min, max, out);
}

int num_parse_double(const char *s, double *out)
{
    return span_double(s, strlen(s), out);
}

int num_parse_long_blanks(const char *s, size_t n, long min, long max, long *out)
{
    const char *p;
    size_t len = trim(s, n, &p);
    return span_long(p, len, min, max, out);
}

int num_parse_double_blanks(const char *s, size_t n, double *out)
{
    const char *p;
    size_t len = trim(s, n, &p);
    return span_double(p, len, out);
}
