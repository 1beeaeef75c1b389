/*
 * fuzz_reply.c - libFuzzer harness for the BOINC reply parsers
 * (boinc_xml.c): one input is one HTTP reply body, handed to every parser
 * in turn (the error check, success, batch id, templates, query_batch2,
 * query_completed_job, query_batches, query_batch, query_files, and the
 * get_output error page), and a differential check of the streaming
 * query_batch2 SAX pass against the tree parser (abort() on any
 * difference), fed in its usual 64 KiB pieces and in pieces of 1..16
 * bytes.  The first input byte picks the number of batches / files the
 * caller asked for (low 4 bits) and the small piece size (high 4 bits).  Built and run by `make fuzz`;
 * seeds in tests/fuzz/corpus/reply.
 */
#include "boinc/boinc_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_result(const boinc_query_result *a, const boinc_query_result *b)
{
    if (strcmp(a->server_time, b->server_time) != 0 || a->nbatches != b->nbatches)
        return 0;
    for (size_t i = 0; i < a->nbatches; i++) {
        const boinc_batch_status *x = &a->batches[i], *y = &b->batches[i];
        if (x->njobs != y->njobs)
            return 0;
        for (size_t j = 0; j < x->njobs; j++)
            if (strcmp(x->jobs[j].name, y->jobs[j].name) != 0 ||
                strcmp(x->jobs[j].status, y->jobs[j].status) != 0)
                return 0;
    }
    return 1;
}

/* Differential check: whatever the streaming query_batch2 pass accepts,
 * the tree parser must read to the very same result; and the pass fed in
 * small pieces accepts exactly what it accepts whole, with that result. */
static void check_batch2_stream(const char *body, size_t len, size_t n,
                                size_t piece)
{
    boinc_error err = { 0 };
    boinc_query_result s, t, p;
    int whole = boinc_parse_query_batch2_stream(body, len, n, &s);
    int pieces = boinc_parse_query_batch2_chunked(body, len, n, &p, piece);
    if (whole != pieces || (whole == BOINC_OK && !same_result(&s, &p)))
        abort();
    if (pieces == BOINC_OK)
        boinc_query_result_free(&p);
    if (whole != BOINC_OK ||
        boinc_reply_check("query_batch2", body, len, &err) != BOINC_OK) {
        if (whole == BOINC_OK)
            boinc_query_result_free(&s);
        boinc_error_clear(&err);
        return;
    }
    if (boinc_parse_query_batch2_tree(body, len, n, &t, &err) != BOINC_OK ||
        !same_result(&s, &t))
        abort();
    boinc_query_result_free(&s);
    boinc_query_result_free(&t);
    boinc_error_clear(&err);
}

static void run_parsers(const char *body, size_t len, size_t n, size_t piece)
{
    boinc_error err = { 0 };
    long id = 0;
    boinc_parse_success("ping", body, len, &err);
    boinc_parse_batch_id("create_batch", body, len, &id, &err);

    boinc_templates t;
    memset(&t, 0, sizeof t);
    if (boinc_parse_templates(body, len, &t, &err) == BOINC_OK)
        boinc_templates_free(&t);

    boinc_query_result q;
    if (boinc_parse_query_batch2(body, len, n, &q, &err) == BOINC_OK)
        boinc_query_result_free(&q);
    check_batch2_stream(body, len, n, piece);

    boinc_completed_job cj;
    if (boinc_parse_completed_job(body, len, &cj, &err) == BOINC_OK)
        boinc_completed_job_free(&cj);

    boinc_batch_info *b = NULL;
    size_t nb = 0;
    if (boinc_parse_query_batches(body, len, &b, &nb, &err) == BOINC_OK)
        boinc_batch_info_free(b, nb);

    char **names = NULL;
    size_t nn = 0;
    if (boinc_parse_batch_jobs(body, len, &names, &nn, &err) == BOINC_OK)
        boinc_names_free(names, nn);

    unsigned char absent[16];
    boinc_parse_absent_files(body, len, n, absent, &err);
    boinc_output_error(200, "text/html", body, len, &err);
    boinc_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t n = data[0] % 16;        /* absent[] has 16 slots */
    size_t piece = 1 + (size_t)(data[0] >> 4);
    /* Bodies arrive NUL-terminated from the transport (strbuf). */
    char *body = malloc(size);
    if (body == NULL)
        return 0;
    memcpy(body, data + 1, size - 1);
    body[size - 1] = '\0';
    run_parsers(body, size - 1, n, piece);
    free(body);
    return 0;
}
