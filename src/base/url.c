/*
 * url.c - project URL validation and normal form (see url.h).
 */
#include "base/url.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int url_is_http(const char *url)
{
    return strncasecmp(url, "http://", 7) == 0 ||
           strncasecmp(url, "https://", 8) == 0;
}

char *url_normalize(const char *url, const char **why)
{
    *why = NULL;
    if (url == NULL || !url_is_http(url)) {
        *why = "project URL must start with http:// or https://";
        return NULL;
    }
    const char *host = strstr(url, "://") + 3;
    if (*host == '\0' || *host == '/') {
        *why = "project URL has no host";
        return NULL;
    }
    for (const char *p = url; *p != '\0'; p++) {
        /* A URL with white space or controls is a mistake, and a query or
         * fragment would swallow the script name appended to it. */
        if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#') {
            *why = "project URL must not contain spaces, '?' or '#'";
            return NULL;
        }
    }
    size_t n = strlen(url);
    int add_slash = url[n - 1] != '/';
    char *out = malloc(n + 2);
    if (out == NULL)
        return NULL;
    memcpy(out, url, n);
    if (add_slash)
        out[n++] = '/';
    out[n] = '\0';
    return out;
}
