/*
 * boinc_xml_jobs.c - the parsers of the BOINC replies about batches and
 * jobs: query_batch2 (as a tree; the streaming parser is boinc_batch2.c),
 * query_completed_job, query_batches, query_batch's job list, a job's
 * details and the absent-file answers.  The three stages every reply goes
 * through, and the tree helpers, are boinc_xml.c's (boinc_xml_tree.h).
 */
#include "boinc/boinc_internal.h"
#include "boinc/boinc_xml_tree.h"
#include "base/num.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Collect, in document order, the <batch_size> and <job> elements below n
 * (not looking inside a <job>). */
static int collect_batch2_items(xmlNode *n, xmlNode ***items, size_t *count,
                                size_t *cap)
{
    for (xmlNode *c = n->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (boinc_xml_is(c, "batch_size") || boinc_xml_is(c, "job")) {
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
    char *text = boinc_xml_text(n, 1);
    if (text == NULL)
        return NULL;
    char *kept = boinc_strpool_copy(&b->strings, text, strlen(text));
    free(text);
    return kept;
}

static int fill_job_status(xmlNode *job, boinc_batch_status *b,
                           boinc_job_status *out, boinc_error *err)
{
    xmlNode *name = boinc_xml_child(job, "job_name");
    xmlNode *status = boinc_xml_child(job, "status");
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
        if (boinc_xml_is(items[i], "batch_size")) {
            if (b != NULL && filled != b->njobs)
                break;
            if ((size_t)(bi + 1) >= nbatches)
                return boinc_fail(err, BOINC_E_PARSE, 200,
                                  "reply to query_batch2: more <batch_size> "
                                  "than the %zu batches asked for", nbatches);
            char *text = boinc_xml_text(items[i], 1);
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
    int rc = boinc_xml_open_reply("query_batch2", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode *root = xmlDocGetRootElement(doc);
    xmlNode *st = boinc_xml_find(root, "server_time");
    xmlNode **items = NULL;
    size_t nitems = 0, cap = 0;
    if (st == NULL) {
        rc = boinc_fail(err, BOINC_E_PARSE, 200,
                        "reply to query_batch2 has no <server_time>");
    } else if ((out->server_time = boinc_xml_text(st, 1)) == NULL ||
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
        else if (boinc_xml_is(root, "batch_size") || boinc_xml_is(root, "job"))
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
    int rc = boinc_xml_open_reply(rpc, body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode *job = boinc_xml_find(xmlDocGetRootElement(doc), "completed_job");
    if (job == NULL) {
        xmlFreeDoc(doc);
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to %s has no <completed_job>", rpc);
    }
    long exit_status = 0;
    int has_exit = 0;
    rc = boinc_xml_field_error(boinc_xml_child_long(job, "error_mask", &out->error_mask), rpc,
                     "error_mask", 1, err);
    if (rc == BOINC_OK)
        rc = boinc_xml_field_error(boinc_xml_child_long(job, "canonical_resultid",
                                    &out->canonical_resultid),
                         rpc, "canonical_resultid", 0, err);
    if (rc == BOINC_OK)
        rc = boinc_xml_field_error(boinc_xml_child_long(job, "error_resultid",
                                    &out->error_resultid),
                         rpc, "error_resultid", 0, err);
    if (rc == BOINC_OK) {
        has_exit = boinc_xml_child_long(job, "exit_status", &exit_status);
        rc = boinc_xml_field_error(has_exit, rpc, "exit_status", 0, err);
    }
    if (rc == BOINC_OK)
        rc = boinc_xml_field_error(boinc_xml_child_double(job, "elapsed_time", &out->elapsed_time),
                         rpc, "elapsed_time", 0, err);
    if (rc == BOINC_OK)
        rc = boinc_xml_field_error(boinc_xml_child_double(job, "cpu_time", &out->cpu_time), rpc,
                         "cpu_time", 0, err);
    if (rc == BOINC_OK && (exit_status < INT_MIN || exit_status > INT_MAX))
        rc = boinc_fail(err, BOINC_E_PARSE, 200,
                        "reply to %s: exit_status out of range", rpc);
    out->has_exit_status = has_exit == 1;
    out->exit_status = (int)exit_status;
    xmlNode *se = rc == BOINC_OK ? boinc_xml_child(job, "stderr_out") : NULL;
    if (se != NULL) {
        /* The CDATA content is itself HTML-escaped: decode it once. */
        char *raw = boinc_xml_text(se, 0);
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
    int rc = boinc_xml_field_error(boinc_xml_child_long(b, "id", &info->id), rpc, "id", 1, err);
    if (rc == BOINC_OK)
        rc = boinc_xml_field_error(boinc_xml_child_long(b, "state", &state), rpc, "state", 0, err);
    if (rc == BOINC_OK)
        rc = boinc_xml_field_error(boinc_xml_child_long(b, "njobs", &info->njobs), rpc, "njobs",
                         0, err);
    if (rc == BOINC_OK)
        rc = boinc_xml_field_error(boinc_xml_child_double(b, "create_time", &info->create_time),
                         rpc, "create_time", 0, err);
    if (rc == BOINC_OK)
        rc = boinc_xml_field_error(boinc_xml_child_double(b, "expire_time", &info->expire_time),
                         rpc, "expire_time", 0, err);
    if (rc != BOINC_OK)
        return rc;
    info->state = state >= INT_MIN && state <= INT_MAX ? (int)state : -1;
    xmlNode *name = boinc_xml_child(b, "name");
    xmlNode *app = boinc_xml_child(b, "app_name");
    if (name == NULL)
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to %s: <batch> without <name>", rpc);
    info->name = boinc_xml_text(name, 1);
    info->app_name = app ? boinc_xml_text(app, 1) : strdup("");
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
        if (boinc_xml_is(c, name)) {
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
    int rc = boinc_xml_open_reply("query_batches", body, len, &doc, err);
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
    int rc = boinc_xml_open_reply("query_batch", body, len, &doc, err);
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
            xmlNode *name = boinc_xml_child(items[i], "name");
            if (name == NULL)
                rc = boinc_fail(err, BOINC_E_PARSE, 200,
                                "reply to query_batch: <job> without <name>");
            else if ((list[i] = boinc_xml_text(name, 1)) == NULL)
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
        char *text = boinc_xml_text(c, 1);
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
    int rc = boinc_xml_open_reply("query_batch", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode **items = NULL;
    size_t count = 0, cap = 0;
    if (collect_named(xmlDocGetRootElement(doc), "job", &items, &count, &cap) != 0)
        rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
    for (size_t i = 0; i < count && rc == BOINC_OK && !*found; i++) {
        xmlNode *name = boinc_xml_child(items[i], "name");
        char *text = name ? boinc_xml_text(name, 1) : NULL;
        if (name != NULL && text == NULL) {
            rc = boinc_fail(err, BOINC_E_NOMEM, 200, "out of memory");
        } else if (text != NULL && strcmp(text, job_name) == 0) {
            *found = 1;
            xmlNode *status = boinc_xml_child(items[i], "status");
            if (boinc_xml_child_long(items[i], "canonical_instance_id", &out->canonical_instance_id) < 0)
                rc = boinc_fail(err, BOINC_E_PARSE, 200,
                                "reply to query_batch: bad <canonical_instance_id>");
            else if (status != NULL && (out->status = boinc_xml_text(status, 1)) == NULL)
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
    int rc = boinc_xml_open_reply("query_files", body, len, &doc, err);
    if (rc != BOINC_OK)
        return rc;
    xmlNode *list = boinc_xml_find(xmlDocGetRootElement(doc), "absent_files");
    if (list == NULL) {
        xmlFreeDoc(doc);
        return boinc_fail(err, BOINC_E_PARSE, 200,
                          "reply to query_files has no <absent_files>");
    }
    if (n > 0)
        memset(absent, 0, n);
    for (xmlNode *c = list->children; c != NULL && rc == BOINC_OK;
         c = c->next) {
        if (!boinc_xml_is(c, "file"))
            continue;
        char *text = boinc_xml_text(c, 1);
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
