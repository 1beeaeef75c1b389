/*
 * boinc_batch2.c - the fast path for query_batch2 replies: one libxml2
 * SAX2 pass that fills the job arrays directly (issue 12).
 *
 * A query_batch2 reply lists every job of the batches asked for: 100,000
 * jobs are a 9 MB reply and, as a libxml2 tree, about 90 MB.  A reply of
 * the regular shape (<query_batch2> holding <server_time>, then
 * <batch_size> and <job> elements, each <job> with one <job_name> and one
 * <status>, and no parser complaint at all) is read here without any
 * tree: libxml2 hands over element starts, ends and text, the text of the
 * wanted fields collects in one reused buffer, and names and statuses go
 * into each batch's string pool (no malloc per job).  Anything else (PHP
 * notices, an <error>, odd nesting, a DTD, bad UTF-8) returns
 * BATCH2_IRREGULAR and the caller parses the reply again as a tree, so
 * every result and message is exactly the tree parser's; the fuzz
 * harness (tests/fuzz/fuzz_reply.c) checks that whatever this pass
 * accepts, the tree reads the same.
 */
#define _GNU_SOURCE     /* memmem() (also POSIX.1-2024) */
#include "boinc/boinc_internal.h"
#include "base/num.h"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BATCH2_IRREGULAR (-1)

/* The shortest <job> this pass accepts, "<job><job_name/><status/></job>":
 * the reply's length over this bounds the jobs it can hold, so a hostile
 * <batch_size> cannot make us allocate more than the reply warrants (the
 * job count itself is checked against the <job>s read). */
#define BATCH2_MIN_JOB_BYTES 31

/* What the text being read belongs to. */
typedef enum { FIELD_NONE, FIELD_TIME, FIELD_SIZE, FIELD_NAME, FIELD_STATUS,
               FIELD_OTHER } batch2_field;

typedef struct {
    boinc_query_result *out;
    size_t nbatches;
    long bi;                /* current batch, -1 before the first <batch_size> */
    size_t filled;          /* jobs of batch bi complete so far */
    size_t jobs_left;       /* most jobs the rest of the reply can hold */
    int depth;              /* elements open */
    batch2_field field;     /* set while a wanted element is open */
    int in_job, has_name, has_status;
    strbuf text;            /* text of the open field, reused */
    int irregular;          /* once set, the rest of the reply is ignored */
} batch2_sax;

/* ---- checks on the raw text --------------------------------------------- */

/* Is s[0..len) valid UTF-8 without NUL bytes?  Such replies go to the tree
 * parser, whose reading of bad bytes the code has always had.  Runs of
 * ASCII are checked 8 bytes at a time (a reply is nearly all ASCII). */
static int plain_utf8(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (len - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            /* no high bit and no zero byte among the 8 */
            if (((w | ((w - 0x0101010101010101ULL) & ~w)) &
                 0x8080808080808080ULL) == 0) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2
                 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (c == 0 || n == 0 || n > len - i || (n == 2 && c < 0xC2))
            return 0;
        unsigned long cp = n == 1 ? c : c & (0x7F >> n);
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += n;
    }
    return 1;
}

/* ---- the fields ---------------------------------------------------------- */

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Does the XML declaration, if any, name an encoding the tree parser also
 * reads as UTF-8 (UTF-8 itself, or the ISO-8859-1 the servers declare)?
 * The SAX pass ignores the declaration (XML_PARSE_IGNORE_ENC); for any
 * other name the tree parser's reading is its own (an unknown name stops
 * it), so such replies go to the tree. */
static int declared_encoding_ok(const char *body, size_t len)
{
    static const char bom[] = "\xEF\xBB\xBF";
    if (len >= 3 && memcmp(body, bom, 3) == 0) {
        body += 3;
        len -= 3;
    }
    if (len < 5 || memcmp(body, "<?xml", 5) != 0)
        return 1;
    const char *end = memmem(body, len, "?>", 2);
    if (end == NULL)
        return 0;
    const char *enc = memmem(body, (size_t)(end - body), "encoding", 8);
    if (enc == NULL)
        return 1;
    const char *p = enc + 8;
    while (p < end && is_space(*p))
        p++;
    if (p == end || *p++ != '=')
        return 0;
    while (p < end && is_space(*p))
        p++;
    if (p == end || (*p != '"' && *p != '\''))
        return 0;
    char quote = *p++;
    const char *close = memchr(p, quote, (size_t)(end - p));
    if (close == NULL)
        return 0;
    size_t n = (size_t)(close - p);
    return (n == 5 && strncasecmp(p, "UTF-8", 5) == 0) ||
           (n == 10 && strncasecmp(p, "ISO-8859-1", 10) == 0);
}

/* The collected text without surrounding white space (as the tree
 * parser's node_text(n, 1)). */
static const char *trimmed(const strbuf *t, size_t *len)
{
    const char *s = t->data != NULL ? t->data : "";
    size_t n = t->len;
    while (n > 0 && is_space(*s)) {
        s++;
        n--;
    }
    while (n > 0 && is_space(s[n - 1]))
        n--;
    *len = n;
    return s;
}

static void set_server_time(batch2_sax *st, const char *s, size_t n)
{
    double t;
    st->out->server_time = strndup(s, n);
    /* server_time is handed back verbatim as the next min_mod_time, so it
     * must at least be a number. */
    if (st->out->server_time == NULL ||
        num_parse_double_blanks(st->out->server_time, n, &t) != 0)
        st->irregular = 1;
}

/* A <batch_size> closed (its trimmed text s, n): start the next batch. */
static void start_batch(batch2_sax *st, const char *s, size_t n)
{
    boinc_batch_status *b = st->bi >= 0 ? &st->out->batches[st->bi] : NULL;
    long size = -1;
    if ((b != NULL && st->filled != b->njobs) ||
        (size_t)(st->bi + 1) >= st->nbatches) {
        st->irregular = 1;
        return;
    }
    if (num_parse_long_blanks(s, n, 0, LONG_MAX, &size) != 0 ||
        (size_t)size > st->jobs_left) {
        st->irregular = 1;
        return;
    }
    st->jobs_left -= (size_t)size;
    b = &st->out->batches[++st->bi];
    b->jobs = calloc((size_t)size ? (size_t)size : 1, sizeof *b->jobs);
    if (b->jobs == NULL) {
        st->irregular = 1;
        return;
    }
    b->njobs = (size_t)size;
    st->filled = 0;
}

/* A <job_name> or <status> of the open <job> closed (trimmed text s, n). */
static void set_job_field(batch2_sax *st, batch2_field f, const char *s, size_t n)
{
    boinc_batch_status *b = &st->out->batches[st->bi];
    boinc_job_status *js = &b->jobs[st->filled];
    char *kept = boinc_strpool_copy(&b->strings, s, n);
    if (kept == NULL)
        st->irregular = 1;
    else if (f == FIELD_NAME)
        js->name = kept;
    else
        js->status = kept;
}

/* ---- SAX callbacks -------------------------------------------------------- */

/* An element directly below <query_batch2>. */
static void open_top(batch2_sax *st, const char *name)
{
    int is_time = strcmp(name, "server_time") == 0;
    /* server_time comes once, before any batch (as the tree parser would
     * find it first). */
    if (is_time != (st->out->server_time == NULL)) {
        st->irregular = 1;
    } else if (is_time) {
        st->field = FIELD_TIME;
    } else if (strcmp(name, "batch_size") == 0) {
        st->field = FIELD_SIZE;
    } else if (strcmp(name, "job") == 0) {
        boinc_batch_status *b = st->bi >= 0 ? &st->out->batches[st->bi] : NULL;
        if (b == NULL || st->filled == b->njobs) {
            st->irregular = 1;
            return;
        }
        st->in_job = 1;
        st->has_name = st->has_status = 0;
    } else {
        st->irregular = 1;
    }
}

/* An element directly below a <job>: one <job_name> and one <status>
 * (the tree parser takes the first of several), others are ignored. */
static void open_in_job(batch2_sax *st, const char *name)
{
    int *seen = NULL;
    st->field = FIELD_OTHER;
    if (strcmp(name, "job_name") == 0) {
        seen = &st->has_name;
        st->field = FIELD_NAME;
    } else if (strcmp(name, "status") == 0) {
        seen = &st->has_status;
        st->field = FIELD_STATUS;
    }
    if (seen != NULL && (*seen)++ != 0)
        st->irregular = 1;
}

static void on_start(void *ctx, const xmlChar *localname,
                     const xmlChar *prefix, const xmlChar *uri,
                     int nb_namespaces, const xmlChar **namespaces,
                     int nb_attributes, int nb_defaulted,
                     const xmlChar **attributes)
{
    (void)prefix, (void)uri, (void)nb_namespaces, (void)namespaces;
    (void)nb_attributes, (void)nb_defaulted, (void)attributes;
    batch2_sax *st = ctx;
    if (st->irregular)
        return;
    const char *name = (const char *)localname;
    st->depth++;
    strbuf_reset(&st->text);
    if (st->depth == 1)
        st->irregular = strcmp(name, "query_batch2") != 0;
    else if (st->depth == 2)
        open_top(st, name);
    else if (st->depth == 3 && st->in_job)
        open_in_job(st, name);
    else    /* deeper nesting, or markup inside a number: the tree's job */
        st->irregular = 1;
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                   const xmlChar *uri)
{
    (void)localname, (void)prefix, (void)uri;
    batch2_sax *st = ctx;
    if (st->irregular)
        return;
    batch2_field f = st->field;
    st->field = FIELD_NONE;
    size_t n;
    const char *s = trimmed(&st->text, &n);
    if (f == FIELD_TIME)
        set_server_time(st, s, n);
    else if (f == FIELD_SIZE)
        start_batch(st, s, n);
    else if (f == FIELD_NAME || f == FIELD_STATUS)
        set_job_field(st, f, s, n);
    else if (st->depth == 2 && st->in_job) {
        /* the </job>: both fields are required */
        st->in_job = 0;
        if (!st->has_name || !st->has_status)
            st->irregular = 1;
        else
            st->filled++;
    }
    st->depth--;
}

/* Text and CDATA alike, as the tree parser's node text joins both. */
static void on_text(void *ctx, const xmlChar *ch, int len)
{
    batch2_sax *st = ctx;
    if (st->irregular || st->field == FIELD_NONE || st->field == FIELD_OTHER)
        return;
    if (len > 0 && strbuf_append(&st->text, ch, (size_t)len) != 0)
        st->irregular = 1;
}

static void on_complaint(void *ctx, xmlErrorPtr error)
{
    (void)error;
    ((batch2_sax *)ctx)->irregular = 1;
}

/* A DTD may declare entities and defaults: leave such replies to the tree. */
static void on_dtd(void *ctx, const xmlChar *name, const xmlChar *external_id,
                   const xmlChar *system_id)
{
    (void)name, (void)external_id, (void)system_id;
    ((batch2_sax *)ctx)->irregular = 1;
}

/* ---- the plain scan ------------------------------------------------------ */

/*
 * Before libxml2, a scan of the reply as the servers write it: the XML
 * declaration, then only the elements of the regular shape, each written
 * "<name>" and "</name>" (no attribute, no space, no empty-element tag),
 * every field's text plain (printable ASCII, tab or newline; no '&', '<',
 * '>' or '\r', so no entity, CDATA, comment or line-end normalisation to
 * mimic), and nothing but white space between elements.  On that subset
 * the text of a field is the bytes between its tags, exactly what the SAX
 * pass collects, and the same setters judge it.  Anything else, even
 * well-formed XML, stops the scan and the reply goes to the SAX pass
 * (which may still take it): the scan only ever takes fewer replies.
 * libxml2's push parser costs about 5,000 instructions a job; this about
 * 300 (callgrind, 10 x 10,000-job query).
 */
typedef struct {
    const char *p, *end;
} plain_scan;

/* Byte classes of the scan (one table look-up a byte): PLAIN_TEXT bytes
 * may stand in a field's text; PLAIN_SPACE ones also between elements. */
enum { PLAIN_TEXT = 1, PLAIN_SPACE = 2 };
static unsigned char plain_class[256];
static pthread_once_t plain_once = PTHREAD_ONCE_INIT;

static void plain_classes(void)
{
    for (int c = 0x20; c < 0x7F; c++)
        plain_class[c] = PLAIN_TEXT;
    plain_class['&'] = plain_class['<'] = plain_class['>'] = 0;
    plain_class[' '] = plain_class['\t'] = plain_class['\n'] = PLAIN_TEXT | PLAIN_SPACE;
}

static void skip_space(plain_scan *sc)
{
    const char *p = sc->p;
    while (p < sc->end && (plain_class[(unsigned char)*p] & PLAIN_SPACE))
        p++;
    sc->p = p;
}

/* Consume the literal lit (a tag) if it comes next. */
static int take(plain_scan *sc, const char *lit, size_t n)
{
    if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, lit, n) != 0)
        return 0;
    sc->p += n;
    return 1;
}

/* The plain text of a field up to its closing tag: *s, *n trimmed. */
static int take_text(plain_scan *sc, const char *close, size_t cn,
                     const char **s, size_t *n)
{
    const char *b = sc->p;
    const char *q = b;
    while (q < sc->end && (plain_class[(unsigned char)*q] & PLAIN_TEXT))
        q++;
    if (q == sc->end || *q != '<')
        return 0;
    sc->p = q;
    if (!take(sc, close, cn))
        return 0;
    while (b < q && is_space(*b))
        b++;
    while (q > b && is_space(q[-1]))
        q--;
    *s = b;
    *n = (size_t)(q - b);
    return 1;
}

#define TAKE(sc, lit) take((sc), (lit), sizeof(lit) - 1)

/* "<?xml version="1.0" [encoding="..."] ?>" (declared_encoding_ok judged
 * the encoding's name), or no declaration. */
static int take_declaration(plain_scan *sc)
{
    if (!TAKE(sc, "<?xml"))
        return 1;
    if (sc->p == sc->end || !is_space(*sc->p))
        return 0;
    skip_space(sc);
    if (!TAKE(sc, "version=\"1.0\"") && !TAKE(sc, "version='1.0'"))
        return 0;
    const char *sp = sc->p;
    skip_space(sc);
    if (sc->p > sp && TAKE(sc, "encoding=")) {
        if (sc->p == sc->end || (*sc->p != '"' && *sc->p != '\''))
            return 0;
        char quote = *sc->p++;
        while (sc->p < sc->end && (isalnum((unsigned char)*sc->p) || *sc->p == '-'))
            sc->p++;
        if (sc->p == sc->end || *sc->p++ != quote)
            return 0;
        skip_space(sc);
    }
    return TAKE(sc, "?>");
}

/* One "<job>...</job>" of the current batch (the <job> taken). */
static int plain_job(plain_scan *sc, batch2_sax *st)
{
    boinc_batch_status *b = st->bi >= 0 ? &st->out->batches[st->bi] : NULL;
    const char *s;
    size_t n;
    if (b == NULL || st->filled == b->njobs)
        return 0;
    skip_space(sc);
    if (!TAKE(sc, "<job_name>") || !take_text(sc, "</job_name>", 11, &s, &n))
        return 0;
    set_job_field(st, FIELD_NAME, s, n);
    skip_space(sc);
    if (!TAKE(sc, "<status>") || !take_text(sc, "</status>", 9, &s, &n))
        return 0;
    set_job_field(st, FIELD_STATUS, s, n);
    skip_space(sc);
    if (st->irregular || !TAKE(sc, "</job>"))
        return 0;
    st->filled++;
    return 1;
}

/* The whole reply by the plain scan: 1 = read (st filled as the SAX pass
 * would, final checks still to do), 0 = not of the plain shape. */
static int plain_pass(const char *body, size_t len, batch2_sax *st)
{
    plain_scan sc = { body, body + len };
    const char *s;
    size_t n;
    if (pthread_once(&plain_once, plain_classes) != 0)
        return 0;
    if (!take_declaration(&sc))
        return 0;
    skip_space(&sc);
    if (!TAKE(&sc, "<query_batch2>"))
        return 0;
    skip_space(&sc);
    if (!TAKE(&sc, "<server_time>") || !take_text(&sc, "</server_time>", 14, &s, &n))
        return 0;
    set_server_time(st, s, n);
    for (;;) {
        skip_space(&sc);
        if (st->irregular)
            return 0;
        if (TAKE(&sc, "<job>")) {
            if (!plain_job(&sc, st))
                return 0;
        } else if (TAKE(&sc, "<batch_size>")) {
            if (!take_text(&sc, "</batch_size>", 13, &s, &n))
                return 0;
            start_batch(st, s, n);
        } else {
            break;
        }
    }
    if (!TAKE(&sc, "</query_batch2>"))
        return 0;
    skip_space(&sc);
    return sc.p == sc.end && !st->irregular;
}

/* ---- the pass ------------------------------------------------------------- */

/* libxml2's push parser, fed this much at a time, keeps only a window of
 * the reply (xmlCtxtReadMemory would copy all of it, then copy it again
 * through a UTF-8 "decoder"; 35 MB of buffers for a 9 MB reply). */
#define BATCH2_CHUNK ((size_t)64 * 1024)

/* The bytes are read as UTF-8 whatever the XML declaration says (servers
 * declare ISO-8859-1 but send UTF-8, as the tree parser's override says;
 * plain_utf8 vouched for them): XML_PARSE_IGNORE_ENC.  Otherwise the
 * options of the tree parser.  Returns the parser's verdict: 0 if it
 * complained or halted. */
static int sax_pass(const char *body, size_t len, size_t chunk,
                    batch2_sax *st)
{
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.endElementNs = on_end;
    sax.characters = on_text;
    sax.ignorableWhitespace = on_text;
    sax.cdataBlock = on_text;
    sax.serror = on_complaint;
    sax.internalSubset = on_dtd;
    sax.externalSubset = on_dtd;
    xmlParserCtxtPtr ctxt = xmlCreatePushParserCtxt(&sax, st, NULL, 0, NULL);
    if (ctxt == NULL)
        return 0;
    xmlCtxtUseOptions(ctxt, XML_PARSE_RECOVER | XML_PARSE_NONET |
                      XML_PARSE_IGNORE_ENC);
    for (size_t off = 0; off < len && !st->irregular; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        xmlParseChunk(ctxt, body + off, (int)n, 0);
    }
    if (!st->irregular)
        xmlParseChunk(ctxt, NULL, 0, 1);
    int clean = ctxt->wellFormed && !ctxt->disableSAX && ctxt->errNo == 0;
    /* Our callbacks build no document; free one if libxml2 made any. */
    if (ctxt->myDoc != NULL)
        xmlFreeDoc(ctxt->myDoc);
    xmlFreeParserCtxt(ctxt);
    return clean;
}

int boinc_parse_query_batch2_stream(const char *body, size_t len,
                                    size_t nbatches, boinc_query_result *out)
{
    return boinc_parse_query_batch2_chunked(body, len, nbatches, out,
                                            BATCH2_CHUNK);
}

int boinc_parse_query_batch2_chunked(const char *body, size_t len,
                                     size_t nbatches, boinc_query_result *out,
                                     size_t chunk)
{
    memset(out, 0, sizeof *out);
    if (chunk == 0 || chunk > INT_MAX || len > INT_MAX || boinc_has_bare_amp(body, len) ||
        !plain_utf8((const unsigned char *)body, len) ||
        !declared_encoding_ok(body, len))
        return BATCH2_IRREGULAR;
    out->batches = calloc(nbatches ? nbatches : 1, sizeof *out->batches);
    if (out->batches == NULL)
        return BATCH2_IRREGULAR;
    out->nbatches = nbatches;
    batch2_sax st = { .out = out, .nbatches = nbatches, .bi = -1,
                      .jobs_left = len / BATCH2_MIN_JOB_BYTES };
    int clean = plain_pass(body, len, &st);
    if (!clean) {
        /* Start again from nothing for the SAX pass. */
        boinc_query_result_free(out);
        memset(out, 0, sizeof *out);
        out->batches = calloc(nbatches ? nbatches : 1, sizeof *out->batches);
        if (out->batches == NULL)
            return BATCH2_IRREGULAR;
        out->nbatches = nbatches;
        st = (batch2_sax){ .out = out, .nbatches = nbatches, .bi = -1,
                           .jobs_left = len / BATCH2_MIN_JOB_BYTES };
        clean = sax_pass(body, len, chunk, &st);
    }
    int rc = clean && !st.irregular && st.depth == 0 &&
                     out->server_time != NULL &&
                     (size_t)(st.bi + 1) == nbatches &&
                     (st.bi < 0 || st.filled == out->batches[st.bi].njobs)
                 ? BOINC_OK : BATCH2_IRREGULAR;
    strbuf_free(&st.text);
    if (rc != BOINC_OK)
        boinc_query_result_free(out);
    return rc;
}
