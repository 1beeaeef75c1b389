/*
 * control.c - the test-only control API under /control/: counters, state
 * dump, users, virtual time, host behaviours, fault injection and quirks.
 * Parameters come in the query string; replies are JSON.
 */
#include "emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_error(emu_reply *r, int status, const char *msg)
{
    r->status = status;
    strbuf_reset(&r->body);
    strbuf_puts(&r->body, "{\"error\": ");
    json_str(&r->body, msg);
    strbuf_puts(&r->body, "}\n");
}

static void json_map_query(strbuf *sb, const char *sql)
{
    sqlite3_stmt *st = db_prep(sql);
    strbuf_putc(sb, '{');
    int first = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (!first)
            strbuf_puts(sb, ", ");
        first = 0;
        json_str(sb, (const char *)sqlite3_column_text(st, 0));
        strbuf_printf(sb, ": %lld", sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
    strbuf_putc(sb, '}');
}

static void counters(emu_reply *r)
{
    strbuf *sb = &r->body;
    emu_lock();
    strbuf_puts(sb, "{\"rpc\": {");
    for (int i = 0; i < RPC_COUNT; i++)
        strbuf_printf(sb, "%s\"%s\": %ld", i ? ", " : "", rpc_names[i], G.rpc_count[i]);
    strbuf_printf(sb, "}, \"files_uploaded\": %ld, \"bytes_uploaded\": %lld, "
                  "\"php_limits\": {\"over_post_max_size\": %ld, \"over_max_file_uploads\": %ld, "
                  "\"over_upload_max_filesize\": %ld, \"largest_post\": %lld, "
                  "\"most_files_in_post\": %ld}, \"uploads_by_name\": ",
                  G.files_uploaded, G.bytes_uploaded, G.over_post_max, G.over_file_uploads,
                  G.over_upload_filesize, G.largest_post, G.most_files_in_post);
    json_map_query(sb, "SELECT name, times FROM uploads ORDER BY name");
    strbuf_puts(sb, ", \"batches_by_name\": ");
    json_map_query(sb, "SELECT name, COUNT(*) FROM batches GROUP BY name ORDER BY name");
    strbuf_puts(sb, ", \"jobs_by_name\": ");
    json_map_query(sb, "SELECT name, COUNT(*) FROM jobs GROUP BY name ORDER BY name");
    strbuf_printf(sb, ", \"query_batch2_jobs\": %lld", G.query_batch2_jobs);
    strbuf_printf(sb, ", \"http_requests\": %ld, \"most_in_flight\": %ld}\n", G.http_requests,
                  G.most_in_flight);
    emu_unlock();
}

static const char *status_of(long long canon, long long mask, long long nsent)
{
    return canon ? "DONE" : mask ? "ERROR" : nsent ? "IN_PROGRESS" : "UNSENT";
}

static void state(emu_reply *r)
{
    strbuf *sb = &r->body;
    emu_lock();
    strbuf_puts(sb, "{\"time\": ");
    strbuf_printf(sb, "%.6f", emu_now());
    strbuf_puts(sb, ", \"batches\": [");
    sqlite3_stmt *st = db_prep("SELECT id, name, app, state, expire_time, retired, "
                               "(SELECT COUNT(*) FROM jobs j WHERE j.batch_id = batches.id), user_id "
                               "FROM batches ORDER BY id");
    int first = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        strbuf_printf(sb, "%s{\"id\": %lld, \"name\": ", first ? "" : ", ", sqlite3_column_int64(st, 0));
        json_str(sb, (const char *)sqlite3_column_text(st, 1));
        strbuf_puts(sb, ", \"app\": ");
        json_str(sb, (const char *)sqlite3_column_text(st, 2));
        strbuf_printf(sb, ", \"state\": %d, \"njobs\": %lld, \"expire_time\": %.6f, \"retired\": %s, "
                      "\"user_id\": %lld}",
                      sqlite3_column_int(st, 3), sqlite3_column_int64(st, 6),
                      sqlite3_column_double(st, 4), sqlite3_column_int(st, 5) ? "true" : "false",
                      sqlite3_column_int64(st, 7));
        first = 0;
    }
    sqlite3_finalize(st);
    strbuf_puts(sb, "], \"jobs\": [");
    st = db_prep("SELECT id, name, batch_id, error_mask, canonical_resultid, mod_time, "
                 "(SELECT COUNT(*) FROM instances i WHERE i.job_id = jobs.id AND i.sent_time > 0) "
                 "FROM jobs ORDER BY id");
    sqlite3_stmt *is = db_prep("SELECT id, name, server_state, outcome, validate_state, host, exit_status, "
                               "behaviour FROM instances WHERE job_id = ? ORDER BY id");
    first = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        long long canon = sqlite3_column_int64(st, 4), mask = sqlite3_column_int64(st, 3);
        strbuf_puts(sb, first ? "{\"name\": " : ", {\"name\": ");
        first = 0;
        json_str(sb, (const char *)sqlite3_column_text(st, 1));
        strbuf_printf(sb, ", \"id\": %lld, \"batch_id\": %lld, \"status\": \"%s\", \"error_mask\": %lld, "
                      "\"canonical_resultid\": %lld, \"mod_time\": %lld, \"instances\": [",
                      sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 2),
                      status_of(canon, mask, sqlite3_column_int64(st, 6)), mask, canon,
                      sqlite3_column_int64(st, 5));
        sqlite3_reset(is);
        sqlite3_bind_int64(is, 1, sqlite3_column_int64(st, 0));
        int f2 = 1;
        while (sqlite3_step(is) == SQLITE_ROW) {
            strbuf_printf(sb, "%s{\"id\": %lld, \"name\": ", f2 ? "" : ", ", sqlite3_column_int64(is, 0));
            json_str(sb, (const char *)sqlite3_column_text(is, 1));
            int beh = sqlite3_column_int(is, 7);
            strbuf_printf(sb, ", \"server_state\": %d, \"outcome\": %d, \"validate_state\": %d, "
                          "\"host\": %d, \"exit_status\": %d, \"behaviour\": \"%s\"}",
                          sqlite3_column_int(is, 2), sqlite3_column_int(is, 3), sqlite3_column_int(is, 4),
                          sqlite3_column_int(is, 5), sqlite3_column_int(is, 6),
                          beh >= 0 && beh < BEH_COUNT ? behaviour_names[beh] : "?");
            f2 = 0;
        }
        strbuf_puts(sb, "]}");
    }
    sqlite3_finalize(is);
    sqlite3_finalize(st);
    strbuf_puts(sb, "], \"files\": [");
    st = db_prep("SELECT name FROM files ORDER BY id");
    first = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (!first)
            strbuf_puts(sb, ", ");
        first = 0;
        json_str(sb, (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    strbuf_puts(sb, "]}\n");
    emu_unlock();
}

static void users(emu_reply *r)
{
    strbuf *sb = &r->body;
    emu_lock();
    sqlite3_stmt *st = db_prep("SELECT id, name, authenticator, submit FROM users ORDER BY id");
    strbuf_puts(sb, "{\"users\": [");
    int first = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        strbuf_printf(sb, "%s{\"id\": %lld, \"name\": ", first ? "" : ", ", sqlite3_column_int64(st, 0));
        json_str(sb, (const char *)sqlite3_column_text(st, 1));
        strbuf_puts(sb, ", \"authenticator\": ");
        json_str(sb, (const char *)sqlite3_column_text(st, 2));
        strbuf_printf(sb, ", \"submit\": %s}", sqlite3_column_int(st, 3) ? "true" : "false");
        first = 0;
    }
    sqlite3_finalize(st);
    strbuf_puts(sb, "]}\n");
    emu_unlock();
}

static void time_reply(emu_reply *r, double t)
{
    strbuf_printf(&r->body, "{\"time\": %.6f}\n", t);
}

static void advance(const emu_request *rq, emu_reply *r, int run)
{
    const char *arg = req_arg(rq, run ? "max_seconds" : "seconds");
    double s = run ? 86400.0 * 365 : 0;
    if (arg != NULL && (parse_double(arg, &s) != 0 || s < 0)) {
        json_error(r, 400, run ? "max_seconds must be a number >= 0" : "seconds must be a number >= 0");
        return;
    }
    if (arg == NULL && !run) {
        json_error(r, 400, "missing parameter: seconds");
        return;
    }
    /* run?max_runs=N: at most N app runs in this call (a bench that needs
     * only N finished jobs out of many); -1: no limit */
    long long max_runs = -1;
    const char *mr = run ? req_arg(rq, "max_runs") : NULL;
    if (mr != NULL) {
        long v;
        if (parse_long(mr, &v) != 0 || v < 0) {
            json_error(r, 400, "max_runs must be an integer >= 0");
            return;
        }
        max_runs = v;
    }
    double t = backend_advance(s, run, max_runs);
    emu_lock();
    long long left = unfinished_jobs();
    emu_unlock();
    strbuf_printf(&r->body, "{\"time\": %.6f, \"unfinished_jobs\": %lld}\n", t, left);
}

static void behaviour(const emu_request *rq, emu_reply *r)
{
    const char *dflt = req_arg(rq, "default");
    const char *job = req_arg(rq, "job");
    const char *b = req_arg(rq, "behaviour");
    if (dflt != NULL) {
        int v = behaviour_parse(dflt);
        if (v < 0) {
            json_error(r, 400, "unknown behaviour (succeed, crash, no_reply, wrong, slow, detach)");
            return;
        }
        emu_lock();
        G.default_behaviour = v;
        emu_unlock();
        strbuf_puts(&r->body, "{\"ok\": true}\n");
        return;
    }
    int v = behaviour_parse(b);
    if (job == NULL || *job == '\0' || v < 0) {
        json_error(r, 400, "need job=NAME and behaviour=B (succeed, crash, no_reply, wrong, slow, detach)");
        return;
    }
    long seq = -1;
    const char *inst = req_arg(rq, "instance");
    if (inst != NULL && (parse_long(inst, &seq) != 0 || seq < 0)) {
        json_error(r, 400, "instance must be an integer >= 0");
        return;
    }
    emu_lock();
    sqlite3_stmt *st = db_prep("INSERT OR REPLACE INTO behaviours(job_name, seq, behaviour) VALUES(?,?,?)");
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_int(st, 3, v);
    db_run(st);
    sqlite3_finalize(st);
    emu_unlock();
    strbuf_puts(&r->body, "{\"ok\": true}\n");
}

static int fault_kind(const char *s)
{
    static const char *const names[] = {
        "", "http500", "http503", "delay", "drop", "truncate", "malformed", "html_error"
    };
    for (int i = 1; i < (int)(sizeof names / sizeof names[0]); i++)
        if (s && strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static int known_endpoint(const char *e)
{
    if (strcmp(e, "*") == 0 || strcmp(e, "submit_rpc_handler.php") == 0 ||
        strcmp(e, "job_file.php") == 0 || strcmp(e, "get_output.php") == 0)
        return 1;
    for (int i = 0; i < RPC_COUNT; i++)
        if (strcmp(e, rpc_names[i]) == 0)
            return 1;
    return 0;
}

static void fault(const emu_request *rq, emu_reply *r)
{
    const char *ep = req_arg(rq, "endpoint");
    int kind = fault_kind(req_arg(rq, "kind"));
    if (ep == NULL || !known_endpoint(ep)) {
        json_error(r, 400, "endpoint must be a script name, an RPC name or *");
        return;
    }
    if (kind < 0) {
        json_error(r, 400, "kind must be http500, http503, delay, drop, truncate, malformed or html_error");
        return;
    }
    emu_fault f = { NULL, kind, 1, 1.0, 0, 0 };
    const char *c = req_arg(rq, "count"), *p = req_arg(rq, "probability");
    const char *d = req_arg(rq, "delay_ms"), *a = req_arg(rq, "after");
    long v;
    if (c != NULL) {
        if (parse_long(c, &v) != 0 || v < 1) {
            json_error(r, 400, "count must be an integer >= 1");
            return;
        }
        f.count = v;
    } else if (p != NULL) {
        if (parse_double(p, &f.probability) != 0 || f.probability < 0 || f.probability > 1) {
            json_error(r, 400, "probability must be between 0 and 1");
            return;
        }
        f.count = -1;
    }
    if (d != NULL) {
        if (parse_long(d, &v) != 0 || v < 0 || v > 600000) {
            json_error(r, 400, "delay_ms must be an integer between 0 and 600000");
            return;
        }
        f.delay_ms = v;
    } else if (kind == FAULT_DELAY) {
        f.delay_ms = 1000;
    }
    if (a != NULL) {
        if (parse_long(a, &v) != 0 || (v != 0 && v != 1)) {
            json_error(r, 400, "after must be 0 or 1");
            return;
        }
        f.after = (int)v;
    }
    f.endpoint = xstrdup(ep);
    emu_lock();
    emu_fault *nf = realloc(G.faults, (size_t)(G.nfaults + 1) * sizeof *nf);
    if (nf == NULL)
        abort();
    G.faults = nf;
    G.faults[G.nfaults++] = f;
    emu_unlock();
    strbuf_puts(&r->body, "{\"ok\": true}\n");
}

static void clear_faults(emu_reply *r)
{
    emu_lock();
    for (int i = 0; i < G.nfaults; i++)
        free(G.faults[i].endpoint);
    G.nfaults = 0;
    emu_unlock();
    strbuf_puts(&r->body, "{\"ok\": true}\n");
}

/* "php-warnings,qcj-stock,sql-backslash"; "" or "none" = no quirks. */
int quirks_set(const char *list)
{
    int w = 0, q = 0, b = 0;
    char *copy = xstrdup(list), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (strcmp(t, "php-warnings") == 0) w = 1;
        else if (strcmp(t, "qcj-stock") == 0) q = 1;
        else if (strcmp(t, "sql-backslash") == 0) b = 1;
        else if (strcmp(t, "none") != 0) rc = -1;
    }
    free(copy);
    if (rc == 0) {
        G.quirk_php_warnings = w;
        G.quirk_qcj_stock = q;
        G.quirk_sql_backslash = b;
    }
    return rc;
}

static void quirks(const emu_request *rq, emu_reply *r)
{
    const char *set = req_arg(rq, "set");
    if (set != NULL) {
        emu_lock();
        int rc = quirks_set(set);
        emu_unlock();
        if (rc != 0) {
            json_error(r, 400, "quirks are php-warnings, qcj-stock, sql-backslash (comma-separated) "
                       "or none");
            return;
        }
    }
    emu_lock();
    strbuf_printf(&r->body, "{\"php-warnings\": %s, \"qcj-stock\": %s, \"sql-backslash\": %s}\n",
                  G.quirk_php_warnings ? "true" : "false", G.quirk_qcj_stock ? "true" : "false",
                  G.quirk_sql_backslash ? "true" : "false");
    emu_unlock();
}

/* limits?post_max_bytes=N&max_file_uploads=N&upload_max_filesize=N
 * (0 = no limit), or limits?set=stock|none */
static void limits(const emu_request *rq, emu_reply *r)
{
    static const char *const names[] = { "post_max_bytes", "max_file_uploads",
                                         "upload_max_filesize", "set" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = req_arg(rq, names[i]);
        if (v == NULL)
            continue;
        /* post_max_bytes is post_max_size in bytes */
        char *spec = i == 3 ? xstrdup(v)
                   : xasprintf("%s=%s", i == 0 ? "post_max_size" : names[i], v);
        emu_lock();
        int rc = php_limits_set(spec);
        emu_unlock();
        free(spec);
        if (rc != 0) {
            json_error(r, 400, "limits are post_max_bytes, max_file_uploads, upload_max_filesize "
                               "(sizes >= 0, 0 = none) or set=stock|none");
            return;
        }
    }
    emu_lock();
    strbuf_printf(&r->body, "{\"post_max_bytes\": %lld, \"max_file_uploads\": %ld, "
                  "\"upload_max_filesize\": %lld}\n", G.post_max_bytes, G.max_file_uploads,
                  G.upload_max_filesize);
    emu_unlock();
}

void handle_control(const emu_request *rq, emu_reply *r)
{
    const char *what = rq->path + strlen("/control/");
    int post = strcmp(rq->method, "POST") == 0;
    if (strcmp(what, "counters") == 0)
        counters(r);
    else if (strcmp(what, "state") == 0)
        state(r);
    else if (strcmp(what, "users") == 0)
        users(r);
    else if (strcmp(what, "time") == 0) {
        emu_lock();
        double t = emu_now();
        emu_unlock();
        time_reply(r, t);
    } else if (!post && (strcmp(what, "advance") == 0 || strcmp(what, "run") == 0 ||
                         strcmp(what, "behaviour") == 0 || strcmp(what, "fault") == 0 ||
                         strcmp(what, "clear_faults") == 0))
        json_error(r, 405, "use POST");
    else if (strcmp(what, "advance") == 0)
        advance(rq, r, 0);
    else if (strcmp(what, "run") == 0)
        advance(rq, r, 1);
    else if (strcmp(what, "behaviour") == 0)
        behaviour(rq, r);
    else if (strcmp(what, "fault") == 0)
        fault(rq, r);
    else if (strcmp(what, "clear_faults") == 0)
        clear_faults(r);
    else if (strcmp(what, "quirks") == 0)
        quirks(rq, r);
    else if (strcmp(what, "limits") == 0)
        limits(rq, r);
    else
        json_error(r, 404, "unknown control endpoint");
}
