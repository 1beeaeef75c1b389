/*
 * exec_ctx.c - an executor context for one thread (exec_ctx.h).
 */
#include "exec/exec_ctx.h"

#include "base/strbuf.h"

#include <string.h>

int exec_ctx_open(exec_ctx *ctx, const gahp_config *cfg, const journal *journal_of,
                  int worker_index, char **err)
{
    boinc_options opts;
    boinc_options_default(&opts);
    opts.connect_timeout_ms = cfg->connect_timeout_s * 1000;
    opts.total_timeout_ms = cfg->http_timeout_s * 1000;
    opts.retry_budget_ms = cfg->retry_budget_s * 1000;
    opts.ca_file = cfg->ca_file;
    opts.ca_path = cfg->ca_path;
    opts.max_reply_bytes = cfg->max_reply_bytes;
    opts.max_download_bytes = cfg->max_output_bytes;
    memset(ctx, 0, sizeof *ctx);
    ctx->config = cfg;
    ctx->worker_index = worker_index;
    ctx->client = boinc_client_new(&opts);
    if (ctx->client == NULL) {
        *err = str_printf("cannot create BOINC client for worker %d", worker_index);
        return -1;
    }
    ctx->journal = journal_connect(journal_of, err);
    if (ctx->journal == NULL) {
        boinc_client_free(ctx->client);
        ctx->client = NULL;
        return -1;
    }
    return 0;
}

void exec_ctx_close(exec_ctx *ctx)
{
    journal_close(ctx->journal);
    boinc_client_free(ctx->client);
    memset(ctx, 0, sizeof *ctx);
}
