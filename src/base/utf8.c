/*
 * utf8.c - strict UTF-8 (see utf8.h).
 */
#include "base/utf8.h"

long utf8_decode(const char *str, size_t len, size_t *n)
{
    const unsigned char *s = (const unsigned char *)str;
    *n = 1;
    if (len == 0)
        return -1;
    unsigned char c = s[0];
    if (c < 0x80)
        return c;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;    /* the second byte's range */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0;                      /* no overlong form */
        else if (c == 0xED)
            hi = 0x9F;                      /* no surrogate */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;                      /* no overlong form */
        else if (c == 0xF4)
            hi = 0x8F;                      /* nothing above U+10FFFF */
    } else {
        return -1;          /* a continuation byte, C0, C1, F5-FF */
    }
    if (len < need || s[1] < lo || s[1] > hi)
        return -1;
    long cp = c & (0x7F >> need);
    for (size_t k = 1; k < need; k++) {
        if (k > 1 && (s[k] < 0x80 || s[k] > 0xBF))
            return -1;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    *n = need;
    return cp;
}

size_t utf8_valid_len(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t n;
        if (utf8_decode(s + i, len - i, &n) < 0)
            break;
        i += n;
    }
    return i;
}
