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
 *
 * Here: the stages and the tree helpers (boinc_xml_tree.h), and the
 * parsers of the short replies (success, a batch id, templates); the
 * replies about batches and jobs are parsed in boinc_xml_jobs.c.
 */
#define _GNU_SOURCE     /* memmem() (also POSIX.1-2024) */
#include "boinc/boinc_internal.h"
#include "boinc/boinc_xml_tree.h"
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

xmlDocPtr boinc_xml_parse_tree(const char *body, size_t len, boinc_error *err)
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

int boinc_xml_is(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE &&
           strcmp((const char *)n->name, name) == 0;
}

/* First element named name at or below n (pre-order, n itself included).
 * Only elements are descended into: an entity reference's children are
 * its declaration's nodes, shared by every reference, and a reply whose
 * DTD nests entities made this walk recurse until the stack overflowed
 * (found by tests/fuzz/fuzz_reply.c). */
xmlNode *boinc_xml_find(xmlNode *n, const char *name)
{
    if (n == NULL)
        return NULL;
    if (boinc_xml_is(n, name))
        return n;
    for (xmlNode *c = n->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        xmlNode *hit = boinc_xml_find(c, name);
        if (hit != NULL)
            return hit;
    }
    return NULL;
}

/* A direct child named name, else the first descendant so named. */
xmlNode *boinc_xml_child(xmlNode *parent, const char *name)
{
    for (xmlNode *c = parent->children; c != NULL; c = c->next)
        if (boinc_xml_is(c, name))
            return c;
    for (xmlNode *c = parent->children; c != NULL; c = c->next) {
        xmlNode *hit = boinc_xml_find(c, name);
        if (hit != NULL)
            return hit;
    }
    return NULL;
}

/* malloc'd text content of n, surrounding white space trimmed when trim. */
char *boinc_xml_text(xmlNode *n, int trim)
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

/* A parser of a number's text into *out: 0, or -1 when it is not one. */
typedef int (*number_parser)(const char *text, void *out);

static int parse_long_text(const char *text, void *out)
{
    return num_parse_long_blanks(text, strlen(text), LONG_MIN, LONG_MAX, out);
}

static int parse_double_text(const char *text, void *out)
{
    return num_parse_double_blanks(text, strlen(text), out);
}

/* Read child `name` of parent with parse.  Returns 1 if found and valid,
 * 0 if absent, -1 if present but not a number, -2 on ENOMEM. */
static int child_number(xmlNode *parent, const char *name, number_parser parse, void *out)
{
    xmlNode *n = boinc_xml_child(parent, name);
    if (n == NULL)
        return 0;
    char *text = boinc_xml_text(n, 1);
    if (text == NULL)
        return -2;
    int rc = parse(text, out) == 0 ? 1 : -1;
    free(text);
    return rc;
}

int boinc_xml_child_long(xmlNode *parent, const char *name, long *out)
{
    return child_number(parent, name, parse_long_text, out);
}

int boinc_xml_child_double(xmlNode *parent, const char *name, double *out)
{
    return child_number(parent, name, parse_double_text, out);
}

/* Map a boinc_xml_child_long/_double result to an error for field `name`. */
int boinc_xml_field_error(int rc, const char *rpc, const char *name,
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
int boinc_xml_open_reply(const char *rpc, const char *body, size_t len,
                      xmlDocPtr *doc, boinc_error *err)
{
    *doc = NULL;
    int rc = boinc_reply_check(rpc, body, len, err);
    if (rc != BOINC_OK)
        return rc;
    *doc = boinc_xml_parse_tree(body, len, err);
    return *doc != NULL ? BOINC_OK : err->code;
}

/* ---- per-RPC parsers ---------------------------------------------------- */

int boinc_parse_success(const char *rpc, const char *body, size_t len,
                        boinc_error *err)
{
    xmlDocPtr doc;
    int rc = boinc_xml_open_reply(rpc, body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    /* find anywhere: abort_jobs' stray <aborted NAME> line makes libxml2
     * nest <success> inside a recovered <aborted> element. */
    if (boinc_xml_find(xmlDocGetRootElement(doc), "success") == NULL)
        rc = boinc_fail(err, BOINC_E_PARSE, 200,
                        "reply to %s has no <success>", rpc);
    xmlFreeDoc(doc);
    return rc;
}

int boinc_parse_batch_id(const char *rpc, const char *body, size_t len,
                         long *batch_id, boinc_error *err)
{
    xmlDocPtr doc;
    int rc = boinc_xml_open_reply(rpc, body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    long id = 0;
    int found = boinc_xml_child_long(xmlDocGetRootElement(doc), "batch_id", &id);
    rc = boinc_xml_field_error(found, rpc, "batch_id", 1, err);
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
        if (!boinc_xml_is(c, "file_ref")) {
            int rc = collect_open_names(c, names, count, required, err);
            if (rc != BOINC_OK)
                return rc;
            continue;
        }
        xmlNode *open = boinc_xml_child(c, "open_name");
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
        grown[*count] = boinc_xml_text(open, 1);
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
    return boinc_xml_text(n, 1);
}

/* The <max_nbytes> of outt's <file_info> named like key; 0 when there is
 * none, it is no number or under 1 (BOINC reads 0 as "no limit"). */
static int info_max_nbytes(xmlNode *outt, const char *key, long long *max)
{
    *max = 0;
    for (xmlNode *c = outt->children; c != NULL; c = c->next) {
        xmlNode *name = boinc_xml_is(c, "file_info") ? boinc_xml_child(c, "name") : NULL;
        if (name == NULL)
            continue;
        char *k = file_key(name);
        if (k == NULL)
            return -1;
        int same = strcmp(k, key) == 0;
        free(k);
        double d = 0;
        if (same && boinc_xml_child_double(c, "max_nbytes", &d) == 1 && d >= 1)
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
        if (!boinc_xml_is(c, "file_ref")) {
            if (collect_max_nbytes(outt, c, out, cap, i) != 0)
                return -1;
            continue;
        }
        xmlNode *fname = boinc_xml_child(c, "file_name");
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
    int rc = boinc_xml_open_reply("get_templates", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode *templates = boinc_xml_find(xmlDocGetRootElement(doc), "templates");
    if (templates == NULL) {
        xmlFreeDoc(doc);
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to get_templates has no <templates>");
    }
    xmlNode *in = boinc_xml_find(templates, "input_template");
    xmlNode *outt = boinc_xml_find(templates, "output_template");
    size_t n_in_names = 0;
    if (in != NULL) {
        for (xmlNode *c = in->children; c != NULL; c = c->next)
            if (boinc_xml_is(c, "file_info"))
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
