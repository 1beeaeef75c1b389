/*
 * exec_ctx.c - an executor context for one thread (exec_ctx.h).
 */
#include "exec/exec_ctx.h"

#include "base/strbuf.h"

#include <string.h>

/* The server's client source: a libcurl client with the configured
 * transport options (the defaults without a configuration). */
static boinc_client *libcurl_client(const gahp_config *cfg, void *arg)
{
    (void)arg;
    boinc_options opts;
    boinc_options_default(&opts);
    if (cfg != NULL) {
        opts.connect_timeout_ms = cfg->connect_timeout_s * 1000;
        opts.total_timeout_ms = cfg->http_timeout_s * 1000;
        opts.retry_budget_ms = cfg->retry_budget_s * 1000;
        opts.ca_file = cfg->ca_file;
        opts.ca_path = cfg->ca_path;
        opts.max_reply_bytes = cfg->max_reply_bytes;
        opts.max_download_bytes = cfg->max_output_bytes;
    }
    return boinc_client_new(&opts);
}

static const exec_client_source libcurl_clients = { libcurl_client, NULL };

int exec_ctx_open(exec_ctx *ctx, exec_shared *shared, const gahp_config *cfg,
                  const journal *journal_of, int worker_index, char **err)
{
    return exec_ctx_open_with(ctx, shared, cfg, journal_of, worker_index, &libcurl_clients,
                              err);
}

int exec_ctx_open_with(exec_ctx *ctx, exec_shared *shared, const gahp_config *cfg,
                       const journal *journal_of, int worker_index,
                       const exec_client_source *clients, char **err)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->shared = shared;
    ctx->config = cfg;
    ctx->worker_index = worker_index;
    ctx->clients = *clients;
    ctx->client = clients->make(cfg, clients->arg);
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

int exec_ctx_open_like(exec_ctx *ctx, const exec_ctx *like, char **err)
{
    /* a context filled by hand, without a source, has the server's */
    const exec_client_source *clients =
        like->clients.make != NULL ? &like->clients : &libcurl_clients;
    if (exec_ctx_open_with(ctx, like->shared, like->config, like->journal, like->worker_index,
                           clients, err) != 0)
        return -1;
    ctx->session_id = like->session_id;
    return 0;
}

void exec_ctx_close(exec_ctx *ctx)
{
    journal_close(ctx->journal);
    boinc_client_free(ctx->client);
    memset(ctx, 0, sizeof *ctx);
}
