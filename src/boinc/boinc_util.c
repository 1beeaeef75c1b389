/*
 * boinc_util.c - text helpers of the BOINC RPC client: error filling,
 * squashing server text to one line, entity decoding, HTML-to-text
 * summaries for messages.  Numbers are base/num's.
 */
#include "boinc/boinc_internal.h"

#include "base/files.h"
#include "base/num.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int boinc_fail(boinc_error *err, boinc_code code, long http_status,
               const char *fmt, ...)
{
    if (err == NULL)
        return code;
    free(err->msg);
    err->msg = NULL;
    err->code = code;
    err->http_status = http_status;
    strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    int rc = strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    if (rc == 0)
        err->msg = strbuf_detach(&sb);
    strbuf_free(&sb);
    return code;
}

/* Back off from position n to the start of a UTF-8 sequence, so a cut
 * never splits a multi-byte character. */
static size_t utf8_boundary(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

char *boinc_squash(const char *s, size_t n, size_t max)
{
    static const char more[] = " [...]";
    char *out = malloc(n + sizeof more);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    int pending_space = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\0')
            break;
        if (ch < 0x20 || ch == 0x7f || ch == ' ') {
            pending_space = o > 0;      /* leading space is dropped */
            continue;
        }
        if (pending_space)
            out[o++] = ' ';
        pending_space = 0;
        out[o++] = (char)ch;
    }
    out[o] = '\0';
    if (max >= sizeof more && o > max) {
        size_t cut = utf8_boundary(out, max - (sizeof more - 1));
        while (cut > 0 && out[cut - 1] == ' ')
            cut--;
        memcpy(out + cut, more, sizeof more);
    }
    return out;
}

char *boinc_one_line(const char *text)
{
    return boinc_squash(text, strlen(text), 0);
}

/* Append code point cp as UTF-8; 0 or -1 if cp is not a valid scalar. */
static int put_utf8(char *out, size_t *o, unsigned long cp)
{
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
    return 0;
}

/* Decode one entity starting at s[0] == '&' (ent_len bytes up to and
 * including ';').  Returns 0 and appends the text, or -1 if unknown. */
static int decode_entity(const char *s, size_t ent_len, char *out, size_t *o)
{
    static const struct { const char *name; char ch; } named[] = {
        { "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' },
        { "&quot;", '"' }, { "&apos;", '\'' },
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (strlen(named[i].name) == ent_len &&
            memcmp(s, named[i].name, ent_len) == 0) {
            out[(*o)++] = named[i].ch;
            return 0;
        }
    }
    if (ent_len < 4 || s[1] != '#')
        return -1;
    int hex = s[2] == 'x' || s[2] == 'X';
    const char *digits = s + (hex ? 3 : 2);
    const char *end = s + ent_len - 1;      /* the ';' */
    if (digits >= end || end - digits > 8)
        return -1;
    unsigned long long cp;     /* above U+10FFFF is no character */
    if (num_parse_digits(digits, (size_t)(end - digits), hex ? 16 : 10, 0x10FFFF, &cp) != 0)
        return -1;
    return put_utf8(out, o, (unsigned long)cp);
}

char *boinc_unescape_entities(const char *s, size_t n)
{
    /* Decoding never lengthens the text: a code point needing k UTF-8
     * bytes is written with at least k + 3 bytes (&#128; is 6 bytes for
     * 2, &#x800; 7 for 3, &#65536; 8 for 4). */
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '&') {
            const char *semi = memchr(s + i, ';', n - i < 12 ? n - i : 12);
            if (semi != NULL) {
                size_t ent_len = (size_t)(semi - (s + i)) + 1;
                size_t before = o;
                if (decode_entity(s + i, ent_len, out, &o) == 0) {
                    i += ent_len - 1;
                    continue;
                }
                o = before;
            }
        }
        out[o++] = s[i];
    }
    out[o] = '\0';
    return out;
}

/* Does the tag starting at s (just after '<') break a line in HTML?  Those
 * become a space; inline tags like <b> vanish, so "<b>Fatal error</b>:"
 * reads "Fatal error:". */
static int is_block_tag(const char *s, const char *end)
{
    static const char *const blocks[] = {
        "br", "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul",
        "tr", "td", "th", "table", "title", "center", "html", "head", "body",
    };
    if (s < end && *s == '/')
        s++;
    const char *name = s;
    while (s < end && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                       (*s >= '0' && *s <= '9')))
        s++;
    size_t len = (size_t)(s - name);
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        if (strlen(blocks[i]) == len && strncasecmp(name, blocks[i], len) == 0)
            return 1;
    return 0;
}

char *boinc_html_summary(const char *s, size_t n, size_t max)
{
    char *text = malloc(n + 1);
    if (text == NULL)
        return NULL;
    size_t o = 0;
    int in_tag = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in_tag && s[i] == '<') {
            in_tag = 1;
            if (is_block_tag(s + i + 1, s + n))
                text[o++] = ' ';
        } else if (in_tag && s[i] == '>') {
            in_tag = 0;
        } else if (!in_tag) {
            text[o++] = s[i];
        }
    }
    text[o] = '\0';
    char *plain = boinc_unescape_entities(text, o);
    free(text);
    if (plain == NULL)
        return NULL;
    char *line = boinc_squash(plain, strlen(plain), max);
    free(plain);
    return line;
}

/* Length of the longest prefix of s that occurs somewhere in secret. */
static size_t secret_run(const char *s, const char *secret, size_t slen)
{
    size_t best = 0;
    for (size_t j = 0; j < slen && slen - j > best; j++) {
        size_t k = 0;
        while (s[k] != '\0' && j + k < slen && s[k] == secret[j + k])
            k++;
        if (k > best)
            best = k;
    }
    return best;
}

/*
 * Every run of at least min(8, length) characters that is a substring of
 * the secret becomes "***": not only whole copies, but also the pieces a
 * length cap or a server's own cutting may leave (issue 10 #6).  Quadratic
 * in the secret's length, which is small (an authenticator is 32 hex
 * digits); messages are at most a few kB.
 */
char *boinc_scrub_text(const char *text, const char *secret)
{
    size_t slen = secret != NULL ? strlen(secret) : 0;
    if (slen == 0)
        return strdup(text);
    size_t min = slen < 8 ? slen : 8;
    strbuf sb = STRBUF_INIT;
    int failed = 0;
    const char *p = text;
    while (*p != '\0') {
        size_t run = secret_run(p, secret, slen);
        if (run >= min) {
            failed |= strbuf_puts(&sb, "***");
            p += run;
        } else {
            failed |= strbuf_putc(&sb, *p);
            p++;
        }
    }
    char *clean = failed ? NULL : strbuf_detach(&sb);
    if (clean == NULL && !failed)
        clean = strdup("");
    strbuf_free(&sb);
    return clean;
}

void boinc_scrub_secret(boinc_error *err, const char *secret)
{
    if (err == NULL || err->msg == NULL || secret == NULL || *secret == '\0')
        return;
    char *clean = boinc_scrub_text(err->msg, secret);
    free(err->msg);
    /* On ENOMEM drop the message rather than keep the secret. */
    err->msg = clean;
}

char *boinc_url_password(const char *url)
{
    const char *host = url != NULL ? strstr(url, "://") : NULL;
    if (host == NULL)
        return NULL;
    host += 3;
    size_t hostlen = strcspn(host, "/?#");
    const char *at = memchr(host, '@', hostlen);
    if (at == NULL)
        return NULL;
    /* The last '@' of the authority ends the user information. */
    while (memchr(at + 1, '@', hostlen - (size_t)(at + 1 - host)) != NULL)
        at = memchr(at + 1, '@', hostlen - (size_t)(at + 1 - host));
    const char *colon = memchr(host, ':', (size_t)(at - host));
    if (colon == NULL || colon + 1 == at)
        return NULL;
    return strndup(colon + 1, (size_t)(at - colon - 1));
}

void boinc_scrub_project(boinc_error *err, const char *authenticator,
                         const char *url)
{
    boinc_scrub_secret(err, authenticator);
    char *pw = boinc_url_password(url);
    boinc_scrub_secret(err, pw);
    if (pw != NULL) {
        memset(pw, 0, strlen(pw));
        free(pw);
    }
}

/* ---- string pool -------------------------------------------------------- */

/* 256 KiB blocks: few enough mallocs for 100,000 jobs (about 10 blocks),
 * small enough not to matter for a one-job reply. */
#define STRPOOL_BLOCK ((size_t)256 * 1024)

typedef struct strpool_block {
    struct strpool_block *next;
    size_t used, cap;
    char data[];
} strpool_block;

struct boinc_strpool {
    strpool_block *head;        /* the block being filled, then older ones */
};

char *boinc_strpool_copy(boinc_strpool **pool, const char *s, size_t n)
{
    if (*pool == NULL && (*pool = calloc(1, sizeof **pool)) == NULL)
        return NULL;
    if (n >= SIZE_MAX - sizeof(strpool_block) - STRPOOL_BLOCK)
        return NULL;
    strpool_block *b = (*pool)->head;
    if (b == NULL || b->cap - b->used < n + 1) {
        /* A string longer than a block gets a block of its own, kept
         * behind the one being filled. */
        int own = n + 1 > STRPOOL_BLOCK;
        size_t cap = own ? n + 1 : STRPOOL_BLOCK;
        strpool_block *nb = malloc(sizeof *nb + cap);
        if (nb == NULL)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        if (own && b != NULL) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            (*pool)->head = nb;
        }
        b = nb;
    }
    char *out = b->data + b->used;
    memcpy(out, s, n);
    out[n] = '\0';
    b->used += n + 1;
    return out;
}

void boinc_strpool_free(boinc_strpool *pool)
{
    if (pool == NULL)
        return;
    strpool_block *b = pool->head;
    while (b != NULL) {
        strpool_block *next = b->next;
        free(b);
        b = next;
    }
    free(pool);
}

/* ---- physical names (boinc.h) ---------------------------------------------- */

static int phys_name_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

const char *boinc_phys_name_md5(const char *phys_name)
{
    for (size_t i = 0; i < FILES_MD5_HEX_LEN; i++) {
        char ch = phys_name[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return NULL;
    }
    char end = phys_name[FILES_MD5_HEX_LEN];
    return end == '\0' || end == '.' ? phys_name : NULL;
}

/*
 * The extension of local_name that a physical name may carry: from the last
 * '.' of the basename (not at its position 0), only if at least one
 * character follows and every following character is in [A-Za-z0-9_-].
 * Returns a pointer into local_name, or "" for no extension.
 */
static const char *usable_extension(const char *local_name)
{
    const char *base = strrchr(local_name, '/');
    base = base ? base + 1 : local_name;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base || dot[1] == '\0')
        return "";
    for (const unsigned char *p = (const unsigned char *)dot + 1; *p; p++) {
        if (*p == '.' || !phys_name_char(*p))
            return "";
    }
    if (strlen(dot) > BOINC_PHYS_NAME_MAX - FILES_MD5_HEX_LEN)
        return "";
    return dot;
}

char *boinc_phys_name(const char *md5_hex, const char *local_name)
{
    if (!md5_hex || !local_name || boinc_phys_name_md5(md5_hex) == NULL ||
        md5_hex[FILES_MD5_HEX_LEN] != '\0') {
        errno = EINVAL;
        return NULL;
    }
    const char *ext = usable_extension(local_name);
    size_t len = FILES_MD5_HEX_LEN + strlen(ext);
    char *name = malloc(len + 1);
    if (!name)
        return NULL;
    memcpy(name, md5_hex, FILES_MD5_HEX_LEN);
    memcpy(name + FILES_MD5_HEX_LEN, ext, strlen(ext) + 1);
    return name;
}
