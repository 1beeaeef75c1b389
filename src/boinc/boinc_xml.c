/*
 * boinc_xml.c - tolerant parsing of BOINC web RPC replies (libxml2).
 *
 * Real BOINC servers do not always send well-formed XML: PHP warnings
 * appear as HTML between elements, fatal PHP errors cut the reply off,
 * error texts carry raw unescaped markup, and abort_jobs echoes a stray
 * `<aborted NAME>` line.  So each reply goes through three stages:
 *
 *  1. raw text checks (boinc_reply_check, boinc_reply.c): a fatal <error> (error_num != 0)
 *     anywhere -> BOINC_E_SERVER with its error_msg taken from the raw
 *     bytes (libxml2 would turn markup inside the message into elements);
 *     a PHP fatal error, or an outer element that is never closed ->
 *     BOINC_E_PARSE, never success;
 *  2. libxml2 in recover mode, without network access or external
 *     entities, on a copy in which bare '&' are escaped;
 *  3. the wanted elements are looked up anywhere in the recovered tree.
 */
#define _GNU_SOURCE     /* memmem() (also POSIX.1-2024) */
#include "boinc/boinc_internal.h"
#include "base/num.h"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlreader.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- tree helpers ------------------------------------------------------ */

/* Length of an entity reference at s (s[0] == '&'), or 0 if s does not
 * start a well-formed one. */
static size_t entity_len(const char *s, const char *end)
{
    const char *p = s + 1;
    if (p < end && *p == '#')
        p++;
    const char *name = p;
    while (p < end && p - s < 16 &&
           ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9')))
        p++;
    if (p == name || p >= end || *p != ';')
        return 0;
    return (size_t)(p - s) + 1;
}

/* Copy of the body in which a bare '&' (servers echo names unescaped)
 * becomes "&amp;"; CDATA sections are copied untouched. */
static int escape_bare_amps(const char *body, size_t len, strbuf *out)
{
    const char *end = body + len;
    const char *p = body;
    while (p < end) {
        if (*p == '<' && (size_t)(end - p) >= 9 &&
            memcmp(p, "<![CDATA[", 9) == 0) {
            const char *close = boinc_find_bytes(p + 9, end, "]]>");
            const char *stop = close ? close + 3 : end;
            if (strbuf_append(out, p, (size_t)(stop - p)) != 0)
                return -1;
            p = stop;
            continue;
        }
        if (*p == '&' && entity_len(p, end) == 0) {
            if (strbuf_puts(out, "&amp;") != 0)
                return -1;
        } else if (strbuf_putc(out, *p) != 0) {
            return -1;
        }
        p++;
    }
    return 0;
}

/* Does the body hold a bare '&'?  (Usually not: then the body is parsed
 * in place, without a copy.) */
int boinc_has_bare_amp(const char *body, size_t len)
{
    const char *end = body + len;
    const char *p = body;
    while ((p = memchr(p, '&', (size_t)(end - p))) != NULL) {
        if (entity_len(p, end) == 0)
            return 1;
        p++;
    }
    return 0;
}

static xmlDocPtr parse_tree(const char *body, size_t len, boinc_error *err)
{
    strbuf clean = STRBUF_INIT;
    const char *text = body;
    size_t text_len = len;
    if (boinc_has_bare_amp(body, len)) {
        if (escape_bare_amps(body, len, &clean) != 0) {
            strbuf_free(&clean);
            boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
            return NULL;
        }
        text = strbuf_str(&clean);
        text_len = clean.len;
    }
    if (text_len > INT_MAX) {
        strbuf_free(&clean);
        boinc_fail(err, BOINC_E_PARSE, 200, "reply too large to parse");
        return NULL;
    }
    /* RECOVER: keep going past PHP's HTML; NONET and no NOENT/DTDLOAD: no
     * external entity is ever loaded.  The servers declare ISO-8859-1 but
     * send UTF-8 bytes (the HTTP header says so), hence the override. */
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (ctxt == NULL) {
        strbuf_free(&clean);
        boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        return NULL;
    }
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, text, (int)text_len, NULL,
                                      "UTF-8",
                                      XML_PARSE_RECOVER | XML_PARSE_NONET |
                                      XML_PARSE_COMPACT |
                                      XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    /* libxml2 halts at a text or CDATA node over XML_MAX_TEXT_LENGTH
     * (10,000,000 bytes; e.g. a huge stderr_out), at its other resource
     * limits and when out of memory, and RECOVER would hand back the tree
     * cut there: an error, never a silently cut or dropped value (issue 10
     * #7).  Only a halt sets disableSAX in recovery mode; ordinary
     * well-formedness errors (PHP's HTML) do not. */
    int stopped = ctxt->disableSAX != 0;
    xmlFreeParserCtxt(ctxt);
    strbuf_free(&clean);
    if (stopped) {
        if (doc != NULL)
            xmlFreeDoc(doc);
        boinc_fail(err, BOINC_E_PARSE, 200, "reply holds a text too large to "
                   "read whole (over %d bytes, or out of memory)",
                   XML_MAX_TEXT_LENGTH);
        return NULL;
    }
    if (doc == NULL || xmlDocGetRootElement(doc) == NULL) {
        if (doc != NULL)
            xmlFreeDoc(doc);
        boinc_fail(err, BOINC_E_PARSE, 200, "reply is not XML");
        return NULL;
    }
    return doc;
}

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE &&
           strcmp((const char *)n->name, name) == 0;
}

/* First element named name at or below n (pre-order, n itself included).
 * Only elements are descended into: an entity reference's children are
 * its declaration's nodes, shared by every reference, and a reply whose
 * DTD nests entities made this walk recurse until the stack overflowed
 * (found by tests/fuzz/fuzz_reply.c). */
static xmlNode *find_elem(xmlNode *n, const char *name)
{
    if (n == NULL)
        return NULL;
    if (is_elem(n, name))
        return n;
    for (xmlNode *c = n->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        xmlNode *hit = find_elem(c, name);
        if (hit != NULL)
            return hit;
    }
    return NULL;
}

/* A direct child named name, else the first descendant so named. */
static xmlNode *child_elem(xmlNode *parent, const char *name)
{
    for (xmlNode *c = parent->children; c != NULL; c = c->next)
        if (is_elem(c, name))
            return c;
    for (xmlNode *c = parent->children; c != NULL; c = c->next) {
        xmlNode *hit = find_elem(c, name);
        if (hit != NULL)
            return hit;
    }
    return NULL;
}

/* malloc'd text content of n, surrounding white space trimmed when trim. */
static char *node_text(xmlNode *n, int trim)
{
    /* The usual element holds one text node: read it in place instead of
     * having libxml2 build a copy of the content (two allocations less
     * per field; a 100,000-job query_batch2 has 200,000 such fields). */
    xmlNode *only = n->children;
    int in_place = only != NULL && only->next == NULL && only->type == XML_TEXT_NODE &&
                   only->content != NULL;
    xmlChar *content = in_place ? NULL : xmlNodeGetContent(n);
    const char *s = in_place ? (const char *)only->content
                             : content ? (const char *)content : "";
    size_t len = strlen(s);
    if (trim) {
        while (len > 0 && (*s == ' ' || *s == '\n' || *s == '\r' ||
                           *s == '\t')) {
            s++;
            len--;
        }
        while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\n' ||
                           s[len - 1] == '\r' || s[len - 1] == '\t'))
            len--;
    }
    char *out = malloc(len + 1);
    if (out != NULL) {
        memcpy(out, s, len);
        out[len] = '\0';
    }
    xmlFree(content);
    return out;
}

/* Read child `name` of parent as a number.  Returns 1 if found and
 * valid, 0 if absent, -1 if present but not a number, -2 on ENOMEM. */
static int child_long(xmlNode *parent, const char *name, long *out)
{
    xmlNode *n = child_elem(parent, name);
    if (n == NULL)
        return 0;
    char *text = node_text(n, 1);
    if (text == NULL)
        return -2;
    int rc = num_parse_long_blanks(text, strlen(text), LONG_MIN, LONG_MAX, out) == 0 ? 1 : -1;
    free(text);
    return rc;
}

static int child_double(xmlNode *parent, const char *name, double *out)
{
    xmlNode *n = child_elem(parent, name);
    if (n == NULL)
        return 0;
    char *text = node_text(n, 1);
    if (text == NULL)
        return -2;
    int rc = num_parse_double_blanks(text, strlen(text), out) == 0 ? 1 : -1;
    free(text);
    return rc;
}

/* Map a child_long/child_double result to an error for field `name`. */
static int field_error(int rc, const char *rpc, const char *name,
                       int required, boinc_error *err)
{
    if (rc == -2)
        return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    if (rc == -1)
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to %s: <%s> is not a number", rpc, name);
    if (rc == 0 && required)
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to %s has no <%s>", rpc, name);
    return BOINC_OK;
}

/* Stages 1 and 2 for every parser. */
static int open_reply(const char *rpc, const char *body, size_t len,
                      xmlDocPtr *doc, boinc_error *err)
{
    *doc = NULL;
    int rc = boinc_reply_check(rpc, body, len, err);
    if (rc != BOINC_OK)
        return rc;
    *doc = parse_tree(body, len, err);
    return *doc != NULL ? BOINC_OK : err->code;
}

/* ---- per-RPC parsers ---------------------------------------------------- */

int boinc_parse_success(const char *rpc, const char *body, size_t len,
                        boinc_error *err)
{
    xmlDocPtr doc;
    int rc = open_reply(rpc, body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    /* find anywhere: abort_jobs' stray <aborted NAME> line makes libxml2
     * nest <success> inside a recovered <aborted> element. */
    if (find_elem(xmlDocGetRootElement(doc), "success") == NULL)
        rc = boinc_fail(err, BOINC_E_PARSE, 200,
                        "reply to %s has no <success>", rpc);
    xmlFreeDoc(doc);
    return rc;
}

int boinc_parse_batch_id(const char *rpc, const char *body, size_t len,
                         long *batch_id, boinc_error *err)
{
    xmlDocPtr doc;
    int rc = open_reply(rpc, body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    long id = 0;
    int found = child_long(xmlDocGetRootElement(doc), "batch_id", &id);
    rc = field_error(found, rpc, "batch_id", 1, err);
    if (rc == BOINC_OK && id <= 0)
        rc = boinc_fail(err, BOINC_E_PARSE, 200,
                        "reply to %s: bad batch id %ld", rpc, id);
    if (rc == BOINC_OK)
        *batch_id = id;
    xmlFreeDoc(doc);
    return rc;
}

/* Append the trimmed <open_name> of every <file_ref> below n to names. */
static int collect_open_names(xmlNode *n, char ***names, size_t *count,
                              int required, boinc_error *err)
{
    for (xmlNode *c = n->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (!is_elem(c, "file_ref")) {
            int rc = collect_open_names(c, names, count, required, err);
            if (rc != BOINC_OK)
                return rc;
            continue;
        }
        xmlNode *open = child_elem(c, "open_name");
        if (open == NULL) {
            if (required)
                return boinc_fail(err, BOINC_E_PARSE, 200,
                                  "output template: <file_ref> without "
                                  "<open_name>");
            continue;
        }
        char **grown = realloc(*names, (*count + 1) * sizeof *grown);
        if (grown == NULL)
            return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        *names = grown;
        grown[*count] = node_text(open, 1);
        if (grown[*count] == NULL)
            return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        (*count)++;
    }
    return BOINC_OK;
}

/* What a <file_ref>'s <file_name> and a <file_info>'s <name> are matched
 * by: the first child element's name (a template says <OUTFILE_0/>, which
 * create_work fills in), else the trimmed text.  NULL on ENOMEM. */
static char *file_key(xmlNode *n)
{
    for (xmlNode *c = n->children; c != NULL; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return str_printf("<%s>", (const char *)c->name);
    return node_text(n, 1);
}

/* The <max_nbytes> of outt's <file_info> named like key; 0 when there is
 * none, it is no number or under 1 (BOINC reads 0 as "no limit"). */
static int info_max_nbytes(xmlNode *outt, const char *key, long long *max)
{
    *max = 0;
    for (xmlNode *c = outt->children; c != NULL; c = c->next) {
        xmlNode *name = is_elem(c, "file_info") ? child_elem(c, "name") : NULL;
        if (name == NULL)
            continue;
        char *k = file_key(name);
        if (k == NULL)
            return -1;
        int same = strcmp(k, key) == 0;
        free(k);
        double d = 0;
        if (same && child_double(c, "max_nbytes", &d) == 1 && d >= 1)
            *max = d >= 9e18 ? LLONG_MAX : (long long)d;
        if (same)
            return 0;
    }
    return 0;
}

/* out[i]: the max_nbytes of the i-th <file_ref> below n (the order of
 * collect_open_names) through its <file_name>; *i counts them. */
static int collect_max_nbytes(xmlNode *outt, xmlNode *n, long long *out,
                              size_t cap, size_t *i)
{
    for (xmlNode *c = n->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (!is_elem(c, "file_ref")) {
            if (collect_max_nbytes(outt, c, out, cap, i) != 0)
                return -1;
            continue;
        }
        xmlNode *fname = child_elem(c, "file_name");
        if (*i < cap && fname != NULL) {
            char *key = file_key(fname);
            int rc = key != NULL ? info_max_nbytes(outt, key, &out[*i]) : -1;
            free(key);
            if (rc != 0)
                return -1;
        }
        (*i)++;
    }
    return 0;
}

/* Each output's max_nbytes (issue 29 #7: a download is stopped there). */
static int parse_output_limits(xmlNode *outt, boinc_templates *out,
                               boinc_error *err)
{
    if (out->n_outputs == 0)
        return BOINC_OK;
    out->output_max_nbytes = calloc(out->n_outputs, sizeof *out->output_max_nbytes);
    size_t i = 0;
    if (out->output_max_nbytes == NULL ||
        collect_max_nbytes(outt, outt, out->output_max_nbytes, out->n_outputs, &i) != 0)
        return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    return BOINC_OK;
}

int boinc_parse_templates(const char *body, size_t len, boinc_templates *out,
                          boinc_error *err)
{
    memset(out, 0, sizeof *out);
    xmlDocPtr doc;
    int rc = open_reply("get_templates", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode *templates = find_elem(xmlDocGetRootElement(doc), "templates");
    if (templates == NULL) {
        xmlFreeDoc(doc);
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to get_templates has no <templates>");
    }
    xmlNode *in = find_elem(templates, "input_template");
    xmlNode *outt = find_elem(templates, "output_template");
    size_t n_in_names = 0;
    if (in != NULL) {
        for (xmlNode *c = in->children; c != NULL; c = c->next)
            if (is_elem(c, "file_info"))
                out->n_inputs++;
        rc = collect_open_names(in, &out->input_names, &n_in_names, 0, err);
    }
    if (rc == BOINC_OK && outt != NULL)
        rc = collect_open_names(outt, &out->output_names, &out->n_outputs, 1,
                                err);
    if (rc == BOINC_OK && outt != NULL)
        rc = parse_output_limits(outt, out, err);
    xmlFreeDoc(doc);
    /* input_names may be shorter than n_inputs; boinc_templates_free
     * frees n_inputs entries, so pad with NULLs. */
    if (rc == BOINC_OK && n_in_names < out->n_inputs) {
        char **grown = realloc(out->input_names,
                               out->n_inputs * sizeof *grown);
        if (grown == NULL) {
            rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        } else {
            for (size_t i = n_in_names; i < out->n_inputs; i++)
                grown[i] = NULL;
            out->input_names = grown;
        }
    } else if (rc == BOINC_OK && n_in_names > out->n_inputs) {
        /* More file_refs than file_infos: keep only the first n_inputs. */
        for (size_t i = out->n_inputs; i < n_in_names; i++)
            free(out->input_names[i]);
    }
    if (rc != BOINC_OK) {
        for (size_t i = 0; out->input_names != NULL && i < n_in_names; i++)
            free(out->input_names[i]);
        free(out->input_names);
        out->input_names = NULL;
        out->n_inputs = 0;
        boinc_names_free(out->output_names, out->n_outputs);
        out->output_names = NULL;
        free(out->output_max_nbytes);
        out->output_max_nbytes = NULL;
        out->n_outputs = 0;
    }
    return rc;
}

/* Collect, in document order, the <batch_size> and <job> elements below n
 * (not looking inside a <job>). */
static int collect_batch2_items(xmlNode *n, xmlNode ***items, size_t *count,
                                size_t *cap)
{
    for (xmlNode *c = n->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (is_elem(c, "batch_size") || is_elem(c, "job")) {
            if (*count == *cap) {
                size_t ncap = *cap ? *cap * 2 : 16;
                xmlNode **grown = realloc(*items, ncap * sizeof *grown);
                if (grown == NULL)
                    return -1;
                *items = grown;
                *cap = ncap;
            }
            (*items)[(*count)++] = c;
        } else if (collect_batch2_items(c, items, count, cap) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Trimmed text of n, kept in the string pool of batch b. */
static char *pool_text(boinc_batch_status *b, xmlNode *n)
{
    char *text = node_text(n, 1);
    if (text == NULL)
        return NULL;
    char *kept = boinc_strpool_copy(&b->strings, text, strlen(text));
    free(text);
    return kept;
}

static int fill_job_status(xmlNode *job, boinc_batch_status *b,
                           boinc_job_status *out, boinc_error *err)
{
    xmlNode *name = child_elem(job, "job_name");
    xmlNode *status = child_elem(job, "status");
    if (name == NULL || status == NULL)
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to query_batch2: <job> without %s",
                          name == NULL ? "<job_name>" : "<status>");
    out->name = pool_text(b, name);
    out->status = out->name != NULL ? pool_text(b, status) : NULL;
    if (out->name == NULL || out->status == NULL)
        return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    return BOINC_OK;
}

static int fill_batches(xmlNode **items, size_t nitems, size_t nbatches,
                        boinc_query_result *out, boinc_error *err)
{
    long bi = -1;
    size_t filled = 0;
    for (size_t i = 0; i < nitems; i++) {
        boinc_batch_status *b = bi >= 0 ? &out->batches[bi] : NULL;
        if (is_elem(items[i], "batch_size")) {
            if (b != NULL && filled != b->njobs)
                break;
            if ((size_t)(bi + 1) >= nbatches)
                return boinc_fail(err, BOINC_E_PARSE, 200,
                                  "reply to query_batch2: more <batch_size> "
                                  "than the %zu batches asked for", nbatches);
            char *text = node_text(items[i], 1);
            long size = -1;
            if (text == NULL)
                return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
            int bad = num_parse_long_blanks(text, strlen(text), 0, LONG_MAX, &size) != 0 ||
                      (size_t)size > nitems - i - 1;
            free(text);
            if (bad)
                return boinc_fail(err, BOINC_E_PARSE, 200,
                                  "reply to query_batch2: bad <batch_size> "
                                  "or fewer <job>s than it announces");
            bi++;
            b = &out->batches[bi];
            b->jobs = calloc((size_t)size ? (size_t)size : 1, sizeof *b->jobs);
            if (b->jobs == NULL)
                return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
            b->njobs = (size_t)size;
            filled = 0;
        } else {
            if (b == NULL || filled == b->njobs)
                return boinc_fail(err, BOINC_E_PARSE, 200,
                                  "reply to query_batch2: <job> not covered "
                                  "by a <batch_size>");
            int rc = fill_job_status(items[i], b, &b->jobs[filled], err);
            filled++;
            if (rc != BOINC_OK)
                return rc;
        }
    }
    if ((size_t)(bi + 1) != nbatches ||
        (bi >= 0 && filled != out->batches[bi].njobs))
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to query_batch2: job counts do not match "
                          "the %zu batches asked for", nbatches);
    return BOINC_OK;
}

int boinc_parse_query_batch2_tree(const char *body, size_t len,
                                  size_t nbatches, boinc_query_result *out,
                                  boinc_error *err)
{
    memset(out, 0, sizeof *out);
    xmlDocPtr doc;
    int rc = open_reply("query_batch2", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode *root = xmlDocGetRootElement(doc);
    xmlNode *st = find_elem(root, "server_time");
    xmlNode **items = NULL;
    size_t nitems = 0, cap = 0;
    if (st == NULL) {
        rc = boinc_fail(err, BOINC_E_PARSE, 200,
                        "reply to query_batch2 has no <server_time>");
    } else if ((out->server_time = node_text(st, 1)) == NULL ||
               collect_batch2_items(root, &items, &nitems, &cap) != 0 ||
               (out->batches = calloc(nbatches ? nbatches : 1,
                                      sizeof *out->batches)) == NULL) {
        rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    } else {
        out->nbatches = nbatches;
        double t;
        /* server_time is handed back verbatim as the next min_mod_time,
         * so it must at least be a number. */
        if (num_parse_double_blanks(out->server_time, strlen(out->server_time), &t) != 0)
            rc = boinc_fail(err, BOINC_E_PARSE, 200,
                            "reply to query_batch2: <server_time> is not a "
                            "number");
        /* items are collected below the root: a root that is itself a
         * <batch_size> or <job> means the reply lost its outer element */
        else if (is_elem(root, "batch_size") || is_elem(root, "job"))
            rc = boinc_fail(err, BOINC_E_PARSE, 200,
                            "reply to query_batch2 is malformed");
        else
            rc = fill_batches(items, nitems, nbatches, out, err);
    }
    free(items);
    xmlFreeDoc(doc);
    if (rc != BOINC_OK)
        boinc_query_result_free(out);
    return rc;
}

int boinc_parse_query_batch2(const char *body, size_t len, size_t nbatches,
                             boinc_query_result *out, boinc_error *err)
{
    int rc = boinc_reply_check("query_batch2", body, len, err);
    if (rc != BOINC_OK) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    if (boinc_parse_query_batch2_stream(body, len, nbatches, out) == BOINC_OK)
        return BOINC_OK;
    return boinc_parse_query_batch2_tree(body, len, nbatches, out, err);
}

int boinc_parse_completed_job(const char *body, size_t len,
                              boinc_completed_job *out, boinc_error *err)
{
    static const char rpc[] = "query_completed_job";
    memset(out, 0, sizeof *out);
    xmlDocPtr doc;
    int rc = open_reply(rpc, body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode *job = find_elem(xmlDocGetRootElement(doc), "completed_job");
    if (job == NULL) {
        xmlFreeDoc(doc);
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to %s has no <completed_job>", rpc);
    }
    long exit_status = 0;
    int has_exit = 0;
    rc = field_error(child_long(job, "error_mask", &out->error_mask), rpc,
                     "error_mask", 1, err);
    if (rc == BOINC_OK)
        rc = field_error(child_long(job, "canonical_resultid",
                                    &out->canonical_resultid),
                         rpc, "canonical_resultid", 0, err);
    if (rc == BOINC_OK)
        rc = field_error(child_long(job, "error_resultid",
                                    &out->error_resultid),
                         rpc, "error_resultid", 0, err);
    if (rc == BOINC_OK) {
        has_exit = child_long(job, "exit_status", &exit_status);
        rc = field_error(has_exit, rpc, "exit_status", 0, err);
    }
    if (rc == BOINC_OK)
        rc = field_error(child_double(job, "elapsed_time", &out->elapsed_time),
                         rpc, "elapsed_time", 0, err);
    if (rc == BOINC_OK)
        rc = field_error(child_double(job, "cpu_time", &out->cpu_time), rpc,
                         "cpu_time", 0, err);
    if (rc == BOINC_OK && (exit_status < INT_MIN || exit_status > INT_MAX))
        rc = boinc_fail(err, BOINC_E_PARSE, 200,
                        "reply to %s: exit_status out of range", rpc);
    out->has_exit_status = has_exit == 1;
    out->exit_status = (int)exit_status;
    xmlNode *se = rc == BOINC_OK ? child_elem(job, "stderr_out") : NULL;
    if (se != NULL) {
        /* The CDATA content is itself HTML-escaped: decode it once. */
        char *raw = node_text(se, 0);
        out->stderr_out = raw ? boinc_unescape_entities(raw, strlen(raw))
                              : NULL;
        free(raw);
        if (out->stderr_out == NULL)
            rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    }
    xmlFreeDoc(doc);
    if (rc != BOINC_OK)
        boinc_completed_job_free(out);
    return rc;
}

static int fill_batch_info(xmlNode *b, boinc_batch_info *info,
                           boinc_error *err)
{
    static const char rpc[] = "query_batches";
    long state = 0;
    int rc = field_error(child_long(b, "id", &info->id), rpc, "id", 1, err);
    if (rc == BOINC_OK)
        rc = field_error(child_long(b, "state", &state), rpc, "state", 0, err);
    if (rc == BOINC_OK)
        rc = field_error(child_long(b, "njobs", &info->njobs), rpc, "njobs",
                         0, err);
    if (rc == BOINC_OK)
        rc = field_error(child_double(b, "create_time", &info->create_time),
                         rpc, "create_time", 0, err);
    if (rc == BOINC_OK)
        rc = field_error(child_double(b, "expire_time", &info->expire_time),
                         rpc, "expire_time", 0, err);
    if (rc != BOINC_OK)
        return rc;
    info->state = state >= INT_MIN && state <= INT_MAX ? (int)state : -1;
    xmlNode *name = child_elem(b, "name");
    xmlNode *app = child_elem(b, "app_name");
    if (name == NULL)
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to %s: <batch> without <name>", rpc);
    info->name = node_text(name, 1);
    info->app_name = app ? node_text(app, 1) : strdup("");
    if (info->name == NULL || info->app_name == NULL)
        return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    return BOINC_OK;
}

/* All elements named name anywhere below n, in document order (not
 * looking inside a match). */
static int collect_named(xmlNode *n, const char *name, xmlNode ***items,
                         size_t *count, size_t *cap)
{
    for (xmlNode *c = n->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (is_elem(c, name)) {
            if (*count == *cap) {
                size_t ncap = *cap ? *cap * 2 : 16;
                xmlNode **grown = realloc(*items, ncap * sizeof *grown);
                if (grown == NULL)
                    return -1;
                *items = grown;
                *cap = ncap;
            }
            (*items)[(*count)++] = c;
        } else if (collect_named(c, name, items, count, cap) != 0) {
            return -1;
        }
    }
    return 0;
}

int boinc_parse_query_batches(const char *body, size_t len,
                              boinc_batch_info **out, size_t *n,
                              boinc_error *err)
{
    *out = NULL;
    *n = 0;
    xmlDocPtr doc;
    int rc = open_reply("query_batches", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode **items = NULL;
    size_t count = 0, cap = 0;
    boinc_batch_info *infos = NULL;
    if (collect_named(xmlDocGetRootElement(doc), "batch", &items, &count,
                      &cap) != 0 ||
        (infos = calloc(count ? count : 1, sizeof *infos)) == NULL) {
        rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    } else {
        for (size_t i = 0; i < count && rc == BOINC_OK; i++)
            rc = fill_batch_info(items[i], &infos[i], err);
    }
    free(items);
    xmlFreeDoc(doc);
    if (rc != BOINC_OK) {
        boinc_batch_info_free(infos, count);
        return rc;
    }
    *out = infos;
    *n = count;
    return BOINC_OK;
}

int boinc_parse_batch_jobs(const char *body, size_t len, char ***names,
                           size_t *n, boinc_error *err)
{
    *names = NULL;
    *n = 0;
    xmlDocPtr doc;
    int rc = open_reply("query_batch", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode **items = NULL;
    size_t count = 0, cap = 0;
    char **list = NULL;
    if (collect_named(xmlDocGetRootElement(doc), "job", &items, &count,
                      &cap) != 0 ||
        (list = calloc(count ? count : 1, sizeof *list)) == NULL) {
        rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    } else {
        for (size_t i = 0; i < count && rc == BOINC_OK; i++) {
            xmlNode *name = child_elem(items[i], "name");
            if (name == NULL)
                rc = boinc_fail(err, BOINC_E_PARSE, 200,
                                "reply to query_batch: <job> without <name>");
            else if ((list[i] = node_text(name, 1)) == NULL)
                rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        }
    }
    free(items);
    xmlFreeDoc(doc);
    if (rc != BOINC_OK) {
        boinc_names_free(list, count);
        return rc;
    }
    *names = list;
    *n = count;
    return BOINC_OK;
}

/* The <exit_status> children of one <job> of a query_batch reply. */
static int job_exit_statuses(xmlNode *job, boinc_job_detail *out, boinc_error *err)
{
    size_t cap = 0;
    for (xmlNode *c = job->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "exit_status") != 0)
            continue;
        char *text = node_text(c, 1);
        long v = 0;
        if (text == NULL)
            return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        int bad = num_parse_long_blanks(text, strlen(text), INT_MIN, INT_MAX, &v) != 0;
        free(text);
        if (bad)
            return boinc_fail(err, BOINC_E_PARSE, 200,
                              "reply to query_batch: <exit_status> is not a number");
        if (out->n_exit == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            int *grown = realloc(out->exit_statuses, ncap * sizeof *grown);
            if (grown == NULL)
                return boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
            out->exit_statuses = grown;
            cap = ncap;
        }
        out->exit_statuses[out->n_exit++] = (int)v;
    }
    return BOINC_OK;
}

int boinc_parse_job_detail(const char *body, size_t len, const char *job_name,
                           boinc_job_detail *out, int *found, boinc_error *err)
{
    memset(out, 0, sizeof *out);
    *found = 0;
    xmlDocPtr doc;
    int rc = open_reply("query_batch", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode **items = NULL;
    size_t count = 0, cap = 0;
    if (collect_named(xmlDocGetRootElement(doc), "job", &items, &count, &cap) != 0)
        rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    for (size_t i = 0; i < count && rc == BOINC_OK && !*found; i++) {
        xmlNode *name = child_elem(items[i], "name");
        char *text = name ? node_text(name, 1) : NULL;
        if (name != NULL && text == NULL) {
            rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        } else if (text != NULL && strcmp(text, job_name) == 0) {
            *found = 1;
            xmlNode *status = child_elem(items[i], "status");
            if (child_long(items[i], "canonical_instance_id", &out->canonical_instance_id) < 0)
                rc = boinc_fail(err, BOINC_E_PARSE, 200,
                                "reply to query_batch: bad <canonical_instance_id>");
            else if (status != NULL && (out->status = node_text(status, 1)) == NULL)
                rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
            else
                rc = job_exit_statuses(items[i], out, err);
        }
        free(text);
    }
    free(items);
    xmlFreeDoc(doc);
    if (rc != BOINC_OK) {
        boinc_job_detail_free(out);
        *found = 0;
    }
    return rc;
}

void boinc_job_detail_free(boinc_job_detail *d)
{
    if (d == NULL)
        return;
    free(d->exit_statuses);
    free(d->status);
    memset(d, 0, sizeof *d);
}

int boinc_parse_absent_files(const char *body, size_t len, size_t n,
                             unsigned char *absent, boinc_error *err)
{
    xmlDocPtr doc;
    int rc = open_reply("query_files", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode *list = find_elem(xmlDocGetRootElement(doc), "absent_files");
    if (list == NULL) {
        xmlFreeDoc(doc);
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to query_files has no <absent_files>");
    }
    if (n > 0)
        memset(absent, 0, n);
    for (xmlNode *c = list->children; c != NULL && rc == BOINC_OK;
         c = c->next) {
        if (!is_elem(c, "file"))
            continue;
        char *text = node_text(c, 1);
        long idx = -1;
        if (text == NULL) {
            rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        } else if (num_parse_long_blanks(text, strlen(text), 0, LONG_MAX, &idx) != 0 ||
                   (unsigned long)idx >= n) {
            rc = boinc_fail(err, BOINC_E_PARSE, 200,
                            "reply to query_files: bad file index '%s' "
                            "(asked about %zu files)", text, n);
        } else {
            absent[idx] = 1;
        }
        free(text);
    }
    xmlFreeDoc(doc);
    return rc;
}
