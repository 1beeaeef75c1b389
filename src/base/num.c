/*
 * num.c - strict number parsing for request fields and configuration
 * values: the whole token must be the number, with no blanks, no sign
 * other than a leading '-' for integers, no hex, no overflow, nothing
 * infinite.  (See num.h.)
 */
#include "base/num.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Only an optional '-' and digits: strtol alone would accept " +1". */
static int looks_integer(const char *s)
{
    if (*s == '-')
        s++;
    if (*s < '0' || *s > '9')
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int num_parse_llong(const char *s, long long *out)
{
    if (!looks_integer(s))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int num_parse_long(const char *s, long min, long max, long *out)
{
    long long v;
    if (num_parse_llong(s, &v) != 0 || v < min || v > max)
        return -1;
    *out = (long)v;
    return 0;
}

int num_parse_double(const char *s, double *out)
{
    /* strtod skips leading blanks and knows "inf"/"nan"/hex: refuse those. */
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9')))
        return -1;
    for (const char *q = p; *q; q++)
        if (*q == 'x' || *q == 'X')
            return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}
