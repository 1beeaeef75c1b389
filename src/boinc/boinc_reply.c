/*
 * boinc_reply.c - the checks every web RPC reply and every output download
 * goes through before anything is parsed (boinc_xml.c parses the rest).
 *
 * Real BOINC servers report failures in ways an XML parser would miss or
 * mangle: a fatal <error> whose error_msg carries raw markup, a PHP fatal
 * error that cuts the reply off, an HTML error page sent as an output
 * file.  These are found in the raw bytes:
 *
 *   boinc_reply_check   a fatal <error> (error_num != 0) anywhere ->
 *                       BOINC_E_SERVER with its error_msg from the raw
 *                       bytes; a PHP fatal error, or an outer element that
 *                       is never closed -> BOINC_E_PARSE, never success
 *   boinc_output_is_file, boinc_output_error
 *                       whether a get_output.php answer is the file or an
 *                       error page, and the error it means
 *   boinc_find_bytes    memmem over [from, end), for both files
 */
#define _GNU_SOURCE     /* memmem() (also POSIX.1-2024) */
#include "boinc/boinc_internal.h"
#include "base/num.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- raw text helpers -------------------------------------------------- */

const char *boinc_find_bytes(const char *from, const char *end, const char *needle)
{
    /* memmem, not a loop stopping at every '<': a reply is scanned
     * several times over (9 MB for 100,000 jobs). */
    if (from >= end)
        return NULL;
    return memmem(from, (size_t)(end - from), needle, strlen(needle));
}

/* Some occurrence of needle, searched from the end (where a reply's outer
 * closing tag is), or NULL. */
static const char *find_bytes_from_end(const char *from, const char *end,
                                       const char *needle)
{
    size_t nlen = strlen(needle);
    if (from >= end || (size_t)(end - from) < nlen)
        return NULL;
    size_t span = (size_t)(end - from) - nlen + 1;  /* possible starts */
    while (span > 0) {
        const char *hit = memrchr(from, needle[0], span);
        if (hit == NULL)
            return NULL;
        if (memcmp(hit, needle, nlen) == 0)
            return hit;
        span = (size_t)(hit - from);
    }
    return NULL;
}

/* Last occurrence of needle that starts before limit, or NULL. */
static const char *find_last_before(const char *start, const char *limit,
                                    const char *needle)
{
    const char *last = NULL;
    const char *p = start;
    const char *hit;
    while ((hit = boinc_find_bytes(p, limit, needle)) != NULL) {
        last = hit;
        p = hit + 1;
    }
    return last;
}

/* The text of an error_msg, raw bytes: CDATA is taken literally, anything
 * else is entity-decoded once; then squashed to one line. */
static char *message_text(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
        s++;
    static const char cdata[] = "<![CDATA[";
    if ((size_t)(end - s) >= sizeof cdata - 1 &&
        memcmp(s, cdata, sizeof cdata - 1) == 0) {
        const char *in = s + sizeof cdata - 1;
        const char *close = boinc_find_bytes(in, end, "]]>");
        return boinc_squash(in, (size_t)((close ? close : end) - in),
                            BOINC_MSG_MAX);
    }
    char *plain = boinc_unescape_entities(s, (size_t)(end - s));
    if (plain == NULL)
        return NULL;
    char *line = boinc_squash(plain, strlen(plain), BOINC_MSG_MAX);
    free(plain);
    return line;
}

/* Integer value of the text between start and end; 0 if not a number. */
static long raw_number(const char *start, const char *end)
{
    long v = 0;
    if (num_parse_long_blanks(start, (size_t)(end - start), LONG_MIN, LONG_MAX, &v) != 0)
        return 0;
    return v;
}

/* Look for an <error> whose <error_num> is non-zero.  Returns BOINC_OK or
 * BOINC_E_SERVER / BOINC_E_NOMEM with *err set. */
static int find_fatal_error(const char *body, const char *end,
                            boinc_error *err)
{
    const char *p = body;
    const char *hit;
    while ((hit = boinc_find_bytes(p, end, "<error_num>")) != NULL) {
        const char *num = hit + strlen("<error_num>");
        const char *num_end = boinc_find_bytes(num, end, "</error_num>");
        if (num_end == NULL)
            break;
        p = num_end;
        long code = raw_number(num, num_end);
        if (code == 0)
            continue;       /* a PHP notice: no or zero error_num */
        /* The message belongs to the same <error>: search from its start,
         * so the order of error_num and error_msg does not matter. */
        const char *elem = find_last_before(body, hit, "<error>");
        const char *msg = boinc_find_bytes(elem ? elem : hit, end, "<error_msg>");
        if (msg == NULL)
            return boinc_fail(err, BOINC_E_SERVER, 200,
                              "server error %ld (no message)", code);
        msg += strlen("<error_msg>");
        /* A message cut off by a crash runs to the end of the body. */
        const char *msg_end = boinc_find_bytes(msg, end, "</error_msg>");
        char *text = message_text(msg, msg_end ? msg_end : end);
        if (text == NULL)
            return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        if (*text == '\0')
            boinc_fail(err, BOINC_E_SERVER, 200, "server error %ld", code);
        else
            boinc_fail(err, BOINC_E_SERVER, 200, "%s", text);
        free(text);
        return BOINC_E_SERVER;
    }
    return BOINC_OK;
}

/* Report a PHP fatal error ("<b>Fatal error</b>: ...") as BOINC_E_PARSE
 * with its first lines; BOINC_OK if there is none. */
static int find_php_fatal(const char *body, const char *end, boinc_error *err)
{
    const char *hit = boinc_find_bytes(body, end, "<b>Fatal error</b>");
    if (hit == NULL)
        return BOINC_OK;
    const char *stop = boinc_find_bytes(hit, end, "Stack trace:");
    char *text = boinc_html_summary(hit, (size_t)((stop ? stop : end) - hit),
                                    500);
    if (text == NULL)
        return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    boinc_fail(err, BOINC_E_PARSE, 200, "server error: %s", text);
    free(text);
    return BOINC_E_PARSE;
}

int boinc_reply_check(const char *rpc, const char *body, size_t len,
                      boinc_error *err)
{
    const char *end = body + len;
    int rc = find_fatal_error(body, end, err);
    if (rc == BOINC_OK)
        rc = find_php_fatal(body, end, err);
    if (rc != BOINC_OK)
        return rc;
    /* The handlers always close the outer element (even after <error>);
     * a reply without it was cut off or is not a BOINC reply at all. */
    strbuf close = STRBUF_INIT;
    if (strbuf_printf(&close, "</%s>", rpc) != 0)
        return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    int closed = find_bytes_from_end(body, end, strbuf_str(&close)) != NULL;
    strbuf_free(&close);
    if (closed)
        return BOINC_OK;
    const char *text_start = boinc_find_bytes(body, end, "?>");
    text_start = text_start ? text_start + 2 : body;
    char *text = boinc_html_summary(text_start, (size_t)(end - text_start),
                                    300);
    if (text == NULL)
        return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    boinc_fail(err, BOINC_E_PARSE, 200,
               "truncated or unexpected reply to %s%s%s", rpc,
               *text ? ": " : " (empty body)", text);
    free(text);
    return BOINC_E_PARSE;
}

/* ---- get_output.php ----------------------------------------------------- */

int boinc_output_is_file(const char *content_type)
{
    static const char want[] = "application/octet-stream";
    return content_type != NULL &&
           strncasecmp(content_type, want, sizeof want - 1) == 0;
}

/* The message of a BOINC "Unable to handle request" HTML page: the text
 * after its <h2> heading up to the next tag; else the <title>. */
static char *html_page_message(const char *body, size_t len)
{
    const char *end = body + len;
    const char *h2 = boinc_find_bytes(body, end, "</h2>");
    if (h2 != NULL) {
        const char *start = h2 + 5;
        const char *stop = memchr(start, '<', (size_t)(end - start));
        char *text = boinc_html_summary(start,
                                        (size_t)((stop ? stop : end) - start),
                                        300);
        if (text == NULL || *text != '\0')
            return text;
        free(text);
    }
    const char *title = boinc_find_bytes(body, end, "<title>");
    if (title != NULL) {
        const char *stop = boinc_find_bytes(title, end, "</title>");
        return boinc_html_summary(title, (size_t)((stop ? stop : end) - title),
                                  300);
    }
    return boinc_html_summary(body, len, 300);
}

int boinc_output_error(long http_status, const char *content_type,
                       const char *body, size_t len, boinc_error *err)
{
    static const char prefix[] = "ERROR:";
    char *text;
    if (len >= sizeof prefix - 1 && memcmp(body, prefix, sizeof prefix - 1) == 0)
        text = boinc_squash(body + sizeof prefix - 1,
                            len - (sizeof prefix - 1), 500);
    else
        text = html_page_message(body, len);
    if (text == NULL)
        return boinc_fail(err, BOINC_E_NOMEM, http_status, "out of memory");
    if (*text == '\0')
        boinc_fail(err, BOINC_E_SERVER, http_status,
                   "get_output returned no file (content type %s)",
                   content_type ? content_type : "none");
    else
        boinc_fail(err, BOINC_E_SERVER, http_status, "%s", text);
    free(text);
    return BOINC_E_SERVER;
}
