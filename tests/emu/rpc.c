/*
 * rpc.c - submit_rpc_handler.php: the remote job submission RPCs, with the
 * exact reply layout, error texts and quirks of a real BOINC 8.3 server
 * (as captured from one).
 *
 * Layout rules copied from the server: a reply starts with the XML
 * declaration and the request's element; success ends with
 * "        </tag>\n    "; an <error> ends the reply right away with
 * "</tag>\n"; error texts are not XML-escaped.
 */
#include "emu.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"

const char *const rpc_names[RPC_COUNT] = {
    "ping", "get_templates", "create_batch", "submit_batch", "query_batch2",
    "query_completed_job", "abort_jobs", "retire_batch", "set_expire_time",
    "query_batches", "query_batch", "abort_batch", "estimate_batch",
    "query_files", "upload_files", "get_output", "other"
};

static const char php_warning_text[] =
    "<br />\n<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_success "
    "is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line "
    "<b>187</b><br />\n"
    "<br />\n<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_in_prog "
    "is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line "
    "<b>188</b><br />\n";

/* query_completed_job on a stock server, job without canonical result. */
static const char qcj_fatal_text[] =
    "<br />\n<b>Warning</b>:  Undefined variable $job_id in "
    "<b>/srv/boinc/projects/test/html/user/submit_rpc_handler.php</b> on line <b>890</b><br />\n"
    "<br />\n<b>Fatal error</b>:  Uncaught mysqli_sql_exception: You have an error in your SQL "
    "syntax; check the manual that corresponds to your MariaDB server version for the right "
    "syntax to use near '' at line 1 in /srv/boinc/projects/test/html/inc/db_conn.inc:67\n"
    "Stack trace:\n"
    "#0 /srv/boinc/projects/test/html/inc/db_conn.inc(67): mysqli-&gt;query()\n"
    "#1 /srv/boinc/projects/test/html/inc/db_conn.inc(119): DbConn-&gt;do_query()\n"
    "#2 /srv/boinc/projects/test/html/inc/db_conn.inc(137): DbConn-&gt;enum_general()\n"
    "#3 /srv/boinc/projects/test/html/inc/db_conn.inc(141): DbConn-&gt;enum_fields()\n"
    "#4 /srv/boinc/projects/test/html/inc/boinc_db.inc(379): DbConn-&gt;enum()\n"
    "#5 /srv/boinc/projects/test/html/user/submit_rpc_handler.php(890): BoincResult::enum()\n"
    "#6 /srv/boinc/projects/test/html/user/submit_rpc_handler.php(1120): query_completed_job()\n"
    "#7 {main}\n"
    "  thrown in <b>/srv/boinc/projects/test/html/inc/db_conn.inc</b> on line <b>67</b><br />\n";

void php_warnings(strbuf *sb)
{
    if (G.quirk_php_warnings)
        strbuf_puts(sb, php_warning_text);
}

void xml_error(strbuf *sb, const char *msg)
{
    strbuf_printf(sb, "<error>\n    <error_num>-1</error_num>\n    <error_msg>%s</error_msg>\n</error>\n", msg);
}

/* ---- request helpers ---- */

/* Root element name of the request without a full parse. */
int rpc_kind_of_request(const emu_request *rq, int job_file)
{
    size_t len;
    const char *x = request_xml(rq, &len);
    const char *p = x, *end = x + len;
    while (p < end) {
        p = memchr(p, '<', (size_t)(end - p));
        if (p == NULL || p + 1 >= end)
            return RPC_OTHER;
        if (p[1] == '?' || p[1] == '!') {
            p++;
            continue;
        }
        break;
    }
    if (p == NULL)
        return RPC_OTHER;
    p++;
    size_t n = 0;
    while (p + n < end && (p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z') ||
                           (p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9')))
        n++;
    for (int k = 0; k < RPC_OTHER; k++) {
        if (strlen(rpc_names[k]) == n && strncmp(rpc_names[k], p, n) == 0) {
            int is_jf = k == RPC_QUERY_FILES || k == RPC_UPLOAD_FILES;
            if (is_jf == job_file && k != RPC_GET_OUTPUT)
                return k;
        }
    }
    return RPC_OTHER;
}

static xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0)
            return c;
    return NULL;
}

/* Trimmed text of a child element; NULL if absent.  Caller frees. */
static char *child_text(xmlNode *n, const char *name)
{
    xmlNode *c = child(n, name);
    if (c == NULL)
        return NULL;
    xmlChar *t = xmlNodeGetContent(c);
    const char *s = t ? (const char *)t : "";
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
        s++;
    char *r = xstrdup(s);
    size_t k = strlen(r);
    while (k > 0 && (r[k - 1] == ' ' || r[k - 1] == '\n' || r[k - 1] == '\t' || r[k - 1] == '\r'))
        r[--k] = '\0';
    xmlFree(t);
    return r;
}

static double child_double(xmlNode *n, const char *name)
{
    char *s = child_text(n, name);
    double v = 0;
    if (s && parse_double(s, &v) != 0)
        v = 0;      /* PHP's (double) cast of junk is 0 */
    free(s);
    return v;
}

static long long child_ll(xmlNode *n, const char *name)
{
    char *s = child_text(n, name);
    long v = 0;
    if (s && parse_long(s, &v) != 0)
        v = strtol(s, NULL, 10);    /* PHP's (int) cast: leading digits */
    free(s);
    return v;
}

/* Look the authenticator up; on failure append the error and return -1. */
static int authenticate(xmlNode *root, strbuf *sb, emu_user *u)
{
    char *a = child_text(root, "authenticator");
    if (a == NULL || *a == '\0') {
        free(a);
        xml_error(sb, "no authenticator");
        return -1;
    }
    sqlite3_stmt *st = db_prep("SELECT id, submit FROM users WHERE authenticator = ?");
    sqlite3_bind_text(st, 1, a, -1, SQLITE_TRANSIENT);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        u->id = sqlite3_column_int64(st, 0);
        u->submit = sqlite3_column_int(st, 1);
        rc = 0;
    }
    sqlite3_finalize(st);
    free(a);
    if (rc != 0)
        xml_error(sb, "bad authenticator");
    return rc;
}

/* Users without a submit record may not touch batches or files. */
static int need_file_access(const emu_user *u, strbuf *sb)
{
    if (!u->submit) {
        xml_error(sb, "no file access");
        return -1;
    }
    return 0;
}

typedef struct {
    long long id, user_id;
    char *name, *app;
    int state;
    double create_time, expire_time, completion_time;
} batch_row;

static int batch_load(sqlite3_stmt *st, batch_row *b)
{
    if (sqlite3_step(st) != SQLITE_ROW)
        return -1;
    b->id = sqlite3_column_int64(st, 0);
    b->user_id = sqlite3_column_int64(st, 1);
    b->name = xstrdup((const char *)sqlite3_column_text(st, 2));
    b->app = xstrdup((const char *)sqlite3_column_text(st, 3));
    b->state = sqlite3_column_int(st, 4);
    b->create_time = sqlite3_column_double(st, 5);
    b->expire_time = sqlite3_column_double(st, 6);
    b->completion_time = sqlite3_column_double(st, 7);
    return 0;
}

#define BATCH_COLS "id, user_id, name, app, state, create_time, expire_time, completion_time"

static int batch_by_id(long long id, batch_row *b)
{
    sqlite3_stmt *st = db_prep("SELECT " BATCH_COLS " FROM batches WHERE id = ?");
    sqlite3_bind_int64(st, 1, id);
    int rc = batch_load(st, b);
    sqlite3_finalize(st);
    return rc;
}

/* Batch names are not unique: like the real server, the OLDEST wins. */
static int batch_by_name(const char *name, batch_row *b)
{
    sqlite3_stmt *st = db_prep("SELECT " BATCH_COLS " FROM batches WHERE name = ? ORDER BY id LIMIT 1");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    int rc = batch_load(st, b);
    sqlite3_finalize(st);
    return rc;
}

static void batch_free(batch_row *b)
{
    free(b->name);
    free(b->app);
    b->name = b->app = NULL;
}

/* <batch_id> or <batch_name>: 0 found, -1 error appended. */
static int batch_from_request(xmlNode *root, const emu_user *u, strbuf *sb, batch_row *b)
{
    long long id = child_ll(root, "batch_id");
    char *name = child_text(root, "batch_name");
    int rc;
    if (id > 0)
        rc = batch_by_id(id, b);
    else if (name != NULL && *name != '\0')
        rc = batch_by_name(name, b);
    else {
        free(name);
        xml_error(sb, "batch not specified");
        return -1;
    }
    free(name);
    if (rc != 0) {
        xml_error(sb, "no such batch");
        return -1;
    }
    if (b->user_id != u->id) {
        batch_free(b);
        xml_error(sb, "not owner of batch");
        return -1;
    }
    return 0;
}

static void print_batch_params(strbuf *sb, const batch_row *b)
{
    long long njobs = db_int("SELECT COUNT(*) FROM jobs WHERE batch_id = ?", b->id, 0);
    long long ndone = db_int("SELECT COUNT(*) FROM jobs WHERE batch_id = ? AND canonical_resultid != 0", b->id, 0);
    long long nerr = db_int("SELECT COUNT(*) FROM jobs WHERE batch_id = ? AND canonical_resultid = 0 "
                            "AND error_mask != 0", b->id, 0);
    double frac = njobs ? (double)(ndone + nerr) / (double)njobs : 0;
    strbuf_printf(sb, "\n        <id>%lld</id>\n        <create_time>", b->id);
    php_float(sb, floor(b->create_time));
    strbuf_puts(sb, "</create_time>\n        <expire_time>");
    php_float(sb, b->expire_time);
    strbuf_puts(sb, "</expire_time>\n        <est_completion_time>0</est_completion_time>\n");
    strbuf_printf(sb, "        <njobs>%lld</njobs>\n        <fraction_done>", njobs);
    php_float(sb, frac);
    strbuf_printf(sb, "</fraction_done>\n        <nerror_jobs>%lld</nerror_jobs>\n"
                  "        <state>%d</state>\n        <completion_time>", nerr, b->state);
    php_float(sb, floor(b->completion_time));
    strbuf_printf(sb, "</completion_time>\n        <credit_estimate>0</credit_estimate>\n"
                  "        <credit_canonical>0</credit_canonical>\n        <name>%s</name>\n"
                  "        <app_name>%s</app_name>\n", b->name, b->app);
}

static void success_end(strbuf *sb, const char *tag)
{
    strbuf_printf(sb, "        </%s>\n    ", tag);
}

/* ---- the RPCs ---- */

static void rpc_ping(strbuf *sb)
{
    strbuf_puts(sb, "<success>1</success>\n");
    success_end(sb, "ping");
}

static void rpc_get_templates(xmlNode *root, strbuf *sb)
{
    emu_user u;
    if (authenticate(root, sb, &u) != 0)
        return;
    char *app_name = child_text(root, "app_name");
    char *job_name = child_text(root, "job_name");
    const emu_app *app = NULL;
    if (app_name != NULL) {
        app = app_find(app_name);
        if (app == NULL) {
            char *m = xasprintf("app not found: %s", app_name);
            xml_error(sb, m);
            free(m);
        }
    } else if (job_name != NULL) {
        sqlite3_stmt *st = db_prep("SELECT app FROM jobs WHERE name = ?");
        sqlite3_bind_text(st, 1, job_name, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW)
            app = app_find((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        if (app == NULL) {
            char *m = xasprintf("job not found: %s", job_name);
            xml_error(sb, m);
            free(m);
        }
    } else {
        xml_error(sb, "app not found: ");
    }
    free(app_name);
    free(job_name);
    if (app == NULL)
        return;
    strbuf_printf(sb, "<templates>\n%s\n%s\n</templates>\n", app->in_template, app->out_template);
    success_end(sb, "get_templates");
}

static long long insert_batch(long long user_id, const char *name, const char *app, double expire)
{
    sqlite3_stmt *st = db_prep("INSERT INTO batches(user_id, name, app, state, create_time, expire_time) "
                               "VALUES(?, ?, ?, 0, ?, ?)");
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, app, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 4, emu_now());
    sqlite3_bind_double(st, 5, expire);
    long long id = sqlite3_step(st) == SQLITE_DONE ? sqlite3_last_insert_rowid(G.db) : -1;
    sqlite3_finalize(st);
    if (id > 0 && *name == '\0') {
        /* an empty name gets one made up from the id */
        char *n = xasprintf("batch_%lld", id);
        sqlite3_stmt *u = db_prep("UPDATE batches SET name = ? WHERE id = ?");
        sqlite3_bind_text(u, 1, n, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(u, 2, id);
        db_run(u);
        sqlite3_finalize(u);
        free(n);
    }
    return id;
}

static const emu_app *app_or_error(const char *name, strbuf *sb)
{
    const emu_app *app = app_find(name ? name : "");
    if (app == NULL) {
        char *m = xasprintf("app not found: %s", name ? name : "");
        xml_error(sb, m);
        free(m);
    }
    return app;
}

static void rpc_create_batch(xmlNode *root, strbuf *sb)
{
    emu_user u;
    if (authenticate(root, sb, &u) != 0)
        return;
    char *app_name = child_text(root, "app_name");
    char *name = child_text(root, "batch_name");
    const emu_app *app = app_or_error(app_name, sb);
    if (app != NULL) {
        if (!u.submit) {
            xml_error(sb, "no submit access");
        } else {
            long long id = insert_batch(u.id, name ? name : "", app->name,
                                        child_double(root, "expire_time"));
            if (id < 0) {
                xml_error(sb, "can't create batch");
            } else {
                strbuf_printf(sb, "<batch_id>%lld</batch_id>\n", id);
                success_end(sb, "create_batch");
            }
        }
    }
    free(app_name);
    free(name);
}

typedef struct {
    char *name;
    char *cmdline;
    char **inputs;
    int ninputs;
} job_spec;

static void job_specs_free(job_spec *js, int n)
{
    for (int i = 0; i < n; i++) {
        free(js[i].name);
        free(js[i].cmdline);
        for (int k = 0; k < js[i].ninputs; k++)
            free(js[i].inputs[k]);
        free(js[i].inputs);
    }
    free(js);
}

/* The text a real server's create_work produces for a duplicate name: the
 * raw SQL of the batch insert, with unescaped <file_info> markup. */
static void duplicate_job_message(strbuf *m, const char *dup, const job_spec *js, int n,
                                  const emu_app *app, long long batch_id, double delay_bound)
{
    long long now = (long long)emu_now();
    strbuf_printf(m, "create_work failed: Database error: Duplicate entry '%s' for key 'name'\n"
                  "query=insert into workunit values ", dup);
    for (int i = 0; i < n; i++) {
        strbuf_printf(m, "%s(0, %lld, 1, '%s', '", i ? "," : "", now, js[i].name);
        for (int k = 0; k < js[i].ninputs; k++)
            strbuf_printf(m, "<file_info>\n    <name>%s</name>\n"
                          "    <url>%sdownload/%s</url>\n</file_info>\n",
                          js[i].inputs[k], G.project_url, js[i].inputs[k]);
        strbuf_printf(m, "<workunit>\n<command_line>\n%s\n</command_line>\n",
                      js[i].cmdline ? js[i].cmdline : "");
        for (int k = 0; k < js[i].ninputs && k < app->ninputs; k++)
            strbuf_printf(m, "<file_ref>\n    <file_name>%s</file_name>\n"
                          "    <open_name>%s</open_name>\n    <copy_file/>\n</file_ref>\n",
                          js[i].inputs[k], app->inputs[k]);
        strbuf_printf(m, "</workunit>', %lld, %.15g, 1, %d, %d, %d, %d, %d, 'templates/%s_out' )",
                      batch_id, delay_bound, app->min_quorum, app->target_nresults,
                      app->max_error_results, app->max_total_results,
                      app->max_success_results, app->name);
    }
    strbuf_printf(m, "\nwu.insert_batch() failed: 1\nMySQL error: Duplicate entry '%s' for key 'name'\n", dup);
}

static int name_exists(const char *name)
{
    static const char sql[] = "SELECT 1 FROM jobs WHERE name = ?";
    sqlite3_stmt *st = db_prep_kept(sql);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_reset(st);
    return found;
}

static int parse_jobs(xmlNode *batch, const emu_app *app, strbuf *sb, job_spec **out, int *nout)
{
    int n = 0, cap = 0;
    job_spec *js = NULL;
    for (xmlNode *c = batch->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "job") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            job_spec *nj = realloc(js, (size_t)cap * sizeof *nj);
            if (nj == NULL)
                abort();
            js = nj;
        }
        job_spec *j = &js[n++];
        memset(j, 0, sizeof *j);
        j->name = child_text(c, "name");
        j->cmdline = child_text(c, "command_line");
        for (xmlNode *f = c->children; f; f = f->next) {
            if (f->type != XML_ELEMENT_NODE || strcmp((const char *)f->name, "input_file") != 0)
                continue;
            char *mode = child_text(f, "mode");
            char *src = child_text(f, "source");
            char **ni = realloc(j->inputs, (size_t)(j->ninputs + 1) * sizeof *ni);
            if (ni == NULL)
                abort();
            j->inputs = ni;
            j->inputs[j->ninputs++] = src ? src : xstrdup("");
            if (mode && strcmp(mode, "local_staged") != 0) {
                char *m = xasprintf("create_work failed: input mode %s is not supported by the emulator", mode);
                xml_error(sb, m);
                free(m);
                free(mode);
                *out = js;
                *nout = n;
                return -1;
            }
            free(mode);
        }
        if (j->ninputs != app->ninputs) {
            char *m = xasprintf("wrong # of input files for job %d: need %d, got %d",
                                n - 1, app->ninputs, j->ninputs);
            xml_error(sb, m);
            free(m);
            *out = js;
            *nout = n;
            return -1;
        }
    }
    *out = js;
    *nout = n;
    return 0;
}

static int check_staged_files(const job_spec *js, int n, strbuf *sb)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < js[i].ninputs; k++) {
            const char *src = js[i].inputs[k];
            /* a file the previous job had in the same slot was checked
             * (a shared input would be stat'ed once per job) */
            if (i > 0 && k < js[i - 1].ninputs && strcmp(src, js[i - 1].inputs[k]) == 0)
                continue;
            char *path = xasprintf("%s/%s", G.download_dir, src);
            struct stat stt;
            int ok = valid_phys_name(src) && stat(path, &stt) == 0 && S_ISREG(stt.st_mode);
            if (!ok) {
                char *m = xasprintf("create_work failed: md5_file: can't open %s\n"
                                    "md5_file: No such file or directory\n"
                                    "process_input_template: md5_file fopen() failed\n"
                                    "process_input_template(): fopen() failed\n"
                                    "create_work() failed: -108\n", path);
                xml_error(sb, m);
                free(m);
                free(path);
                return -1;
            }
            free(path);
        }
    }
    return 0;
}

static int insert_jobs(const job_spec *js, int n, const emu_app *app, long long batch_id,
                       double delay_bound)
{
    double now = emu_now();
    sqlite3_stmt *st = db_prep(
        "INSERT INTO jobs(name, batch_id, app, command_line, delay_bound, min_quorum, "
        "target_nresults, max_error_results, max_total_results, max_success_results, "
        "transition_time, mod_time, create_time) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)");
    sqlite3_stmt *in = db_prep("INSERT INTO job_inputs(job_id, idx, phys_name) VALUES(?,?,?)");
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, js[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, batch_id);
        sqlite3_bind_text(st, 3, app->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, js[i].cmdline ? js[i].cmdline : "", -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 5, delay_bound);
        sqlite3_bind_int(st, 6, app->min_quorum);
        sqlite3_bind_int(st, 7, app->target_nresults);
        sqlite3_bind_int(st, 8, app->max_error_results);
        sqlite3_bind_int(st, 9, app->max_total_results);
        sqlite3_bind_int(st, 10, app->max_success_results);
        sqlite3_bind_double(st, 11, now);
        sqlite3_bind_int64(st, 12, (long long)floor(now));
        sqlite3_bind_double(st, 13, now);
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = -1;
            break;
        }
        long long jid = sqlite3_last_insert_rowid(G.db);
        for (int k = 0; k < js[i].ninputs; k++) {
            sqlite3_reset(in);
            sqlite3_bind_int64(in, 1, jid);
            sqlite3_bind_int(in, 2, k);
            sqlite3_bind_text(in, 3, js[i].inputs[k], -1, SQLITE_STATIC);
            if (sqlite3_step(in) != SQLITE_DONE)
                rc = -1;
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(in);
    return rc;
}

static int cmp_name_index(const void *a, const void *b)
{
    const job_spec *const *x = a, *const *y = b;
    int c = strcmp((*x)->name, (*y)->name);
    return c ? c : (*x < *y ? -1 : *x > *y);
}

/* The name create_work fails on first, going through the jobs in order:
 * the first job whose name is already in the database or repeats an
 * earlier job's.  Sorted, not pairwise: a 10,000-job batch made 50 million
 * strcmp calls. */
static const char *first_duplicate_name(const job_spec *js, int n)
{
    const job_spec **by_name = xcalloc((size_t)n + 1, sizeof *by_name);
    for (int i = 0; i < n; i++)
        by_name[i] = &js[i];
    qsort(by_name, (size_t)n, sizeof *by_name, cmp_name_index);
    /* equal names sort by position: any but the first of a run repeats */
    int first_repeat = n;
    for (int i = 1; i < n; i++)
        if (strcmp(by_name[i]->name, by_name[i - 1]->name) == 0 && by_name[i] - js < first_repeat)
            first_repeat = (int)(by_name[i] - js);
    free(by_name);
    for (int i = 0; i < first_repeat; i++)
        if (name_exists(js[i].name))
            return js[i].name;
    return first_repeat < n ? js[first_repeat].name : NULL;
}

static void rpc_submit_batch(xmlNode *root, strbuf *sb)
{
    emu_user u;
    if (authenticate(root, sb, &u) != 0)
        return;
    xmlNode *batch = child(root, "batch");
    char *app_name = child_text(batch, "app_name");
    const emu_app *app = app_or_error(app_name, sb);
    free(app_name);
    if (app == NULL)
        return;
    if (!u.submit) {
        xml_error(sb, "no submit access");
        return;
    }
    long long batch_id = child_ll(batch, "batch_id");
    if (batch_id > 0) {
        batch_row b;
        if (batch_by_id(batch_id, &b) != 0) {
            char *m = xasprintf("no batch %lld", batch_id);
            xml_error(sb, m);
            free(m);
            return;
        }
        int owner = b.user_id == u.id, init = b.state == BATCH_INIT;
        batch_free(&b);
        if (!owner) {
            xml_error(sb, "not owner of batch");
            return;
        }
        if (!init) {
            xml_error(sb, "batch not in init state");
            return;
        }
    }
    job_spec *js = NULL;
    int n = 0;
    if (parse_jobs(batch, app, sb, &js, &n) != 0 || check_staged_files(js, n, sb) != 0) {
        job_specs_free(js, n);
        return;
    }
    /* create_work's job line and SQL (creatework.c); all or nothing */
    for (int i = 0; i < n; i++) {
        if (js[i].name != NULL && *js[i].name != '\0' &&
            create_work_check(i, &js[i].name, &js[i].cmdline, js[i].inputs, js[i].ninputs, sb) != 0) {
            job_specs_free(js, n);
            return;
        }
    }
    double delay_bound = app->delay_bound;
    xmlNode *params = child(batch, "job_params");
    double db = child_double(params, "delay_bound");
    if (db > 0)
        delay_bound = db;
    db_begin();
    if (batch_id <= 0) {
        char *name = child_text(batch, "batch_name");
        batch_id = insert_batch(u.id, name ? name : "", app->name, 0);
        free(name);
    }
    /* auto-named jobs, then the unique-name check over the whole batch */
    for (int i = 0; i < n; i++)
        if (js[i].name == NULL || *js[i].name == '\0') {
            free(js[i].name);
            js[i].name = xasprintf("%s_%lld_%d", app->name, batch_id, i);
        }
    const char *dup = first_duplicate_name(js, n);
    if (dup != NULL) {
        strbuf m = STRBUF_INIT;
        duplicate_job_message(&m, dup, js, n, app, batch_id, delay_bound);
        xml_error(sb, strbuf_str(&m));
        strbuf_free(&m);
        db_commit();    /* a batch made by this call stays, like on a real server */
        job_specs_free(js, n);
        return;
    }
    if (insert_jobs(js, n, app, batch_id, delay_bound) != 0) {
        db_exec("ROLLBACK");
        xml_error(sb, "create_work failed: database error");
        job_specs_free(js, n);
        return;
    }
    sqlite3_stmt *st = db_prep("UPDATE batches SET state = 1 WHERE id = ?");
    sqlite3_bind_int64(st, 1, batch_id);
    db_run(st);
    sqlite3_finalize(st);
    db_commit();
    job_specs_free(js, n);
    strbuf_printf(sb, "<batch_id>%lld</batch_id>\n", batch_id);
    success_end(sb, "submit_batch");
}

static const char *job_status(long long canonical, long long mask, long long nsent)
{
    if (canonical)
        return "DONE";
    if (mask)
        return "ERROR";
    return nsent ? "IN_PROGRESS" : "UNSENT";
}

static void rpc_query_batch2(xmlNode *root, strbuf *sb)
{
    emu_user u;
    if (authenticate(root, sb, &u) != 0 || need_file_access(&u, sb) != 0)
        return;
    double mmt = child_double(root, "min_mod_time");
    long long *ids = NULL;
    int nb = 0, cap = 0;
    for (xmlNode *c = root->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "batch_name") != 0)
            continue;
        xmlChar *t = xmlNodeGetContent(c);
        const char *name = t ? (const char *)t : "";
        batch_row b;
        int rc = batch_by_name(name, &b);
        if (rc != 0 || b.user_id != u.id) {
            char *m = xasprintf(rc != 0 ? "no batch named %s" : "not owner of %s", name);
            xml_error(sb, m);
            free(m);
            if (rc == 0)
                batch_free(&b);
            xmlFree(t);
            free(ids);
            return;
        }
        xmlFree(t);
        batch_free(&b);
        if (nb == cap) {
            cap = cap ? cap * 2 : 16;
            long long *n = realloc(ids, (size_t)cap * sizeof *n);
            if (n == NULL)
                abort();
            ids = n;
        }
        ids[nb++] = b.id;
    }
    strbuf_puts(sb, "<server_time>");
    php_float(sb, emu_now());
    strbuf_puts(sb, "</server_time>\n");
    sqlite3_stmt *st = db_prep(
        "SELECT name, canonical_resultid, error_mask, "
        " (SELECT COUNT(*) FROM instances i WHERE i.job_id = jobs.id AND i.sent_time > 0) "
        "FROM jobs WHERE batch_id = ?1 AND (?2 = 0 OR mod_time > ?2) ORDER BY id");
    strbuf jobs = STRBUF_INIT;
    for (int i = 0; i < nb; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, ids[i]);
        sqlite3_bind_double(st, 2, mmt);
        int count = 0;
        strbuf_reset(&jobs);
        while (sqlite3_step(st) == SQLITE_ROW) {
            count++;
            strbuf_printf(&jobs, "    <job>\n        <job_name>%s</job_name>\n"
                          "        <status>%s</status>\n    </job>\n",
                          (const char *)sqlite3_column_text(st, 0),
                          job_status(sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                                     sqlite3_column_int64(st, 3)));
        }
        G.query_batch2_jobs += count;   /* server load, for benchmarks (G.lock held) */
        strbuf_printf(sb, "   <batch_size>%d</batch_size>\n", count);
        strbuf_append(sb, jobs.data ? jobs.data : "", jobs.len);
    }
    strbuf_free(&jobs);
    sqlite3_finalize(st);
    free(ids);
    strbuf_puts(sb, "</query_batch2>\n");
}

static void print_instance_details(strbuf *sb, sqlite3_stmt *st)
{
    strbuf_printf(sb, "   <exit_status>%d</exit_status>\n   <elapsed_time>", sqlite3_column_int(st, 1));
    php_float(sb, sqlite3_column_double(st, 2));
    strbuf_puts(sb, "</elapsed_time>\n   <cpu_time>");
    php_float(sb, sqlite3_column_double(st, 3));
    strbuf_puts(sb, "</cpu_time>\n   <stderr_out><![CDATA[\n");
    const char *err = (const char *)sqlite3_column_text(st, 4);
    html_escape(sb, err ? err : "", err ? strlen(err) : 0);
    strbuf_puts(sb, "   ]]></stderr_out>\n");
}

static void rpc_query_completed_job(xmlNode *root, strbuf *sb)
{
    emu_user u;
    if (authenticate(root, sb, &u) != 0 || need_file_access(&u, sb) != 0)
        return;
    char *name = child_text(root, "job_name");
    sqlite3_stmt *st = db_prep("SELECT j.id, j.error_mask, j.canonical_resultid, b.user_id "
                               "FROM jobs j LEFT JOIN batches b ON b.id = j.batch_id WHERE j.name = ?");
    sqlite3_bind_text(st, 1, name ? name : "", -1, SQLITE_TRANSIENT);
    free(name);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        xml_error(sb, "no such job");
        return;
    }
    long long jid = sqlite3_column_int64(st, 0), mask = sqlite3_column_int64(st, 1);
    long long canon = sqlite3_column_int64(st, 2), owner = sqlite3_column_int64(st, 3);
    sqlite3_finalize(st);
    if (owner != u.id) {
        xml_error(sb, "not owner");
        return;
    }
    strbuf_printf(sb, "<completed_job>\n   <error_mask>%lld</error_mask>\n", mask);
    const char *cols = "SELECT id, exit_status, elapsed, cpu, stderr_out FROM instances ";
    if (canon) {
        char *q = xasprintf("%sWHERE id = ?", cols);
        st = db_prep(q);
        free(q);
        sqlite3_bind_int64(st, 1, canon);
        if (sqlite3_step(st) == SQLITE_ROW) {
            strbuf_printf(sb, "   <canonical_resultid>%lld</canonical_resultid>\n", canon);
            print_instance_details(sb, st);
        }
        sqlite3_finalize(st);
    } else if (G.quirk_qcj_stock) {
        /* the stock server dies here: reply cut off, no closing tags */
        strbuf_puts(sb, qcj_fatal_text);
        return;
    } else {
        /* fixed server: the latest instance that came back with an error */
        char *q = xasprintf("%sWHERE job_id = ? AND server_state = 5 AND received_time > 0 "
                            "ORDER BY (outcome = 3) DESC, id DESC LIMIT 1", cols);
        st = db_prep(q);
        free(q);
        sqlite3_bind_int64(st, 1, jid);
        if (sqlite3_step(st) == SQLITE_ROW) {
            strbuf_printf(sb, "   <error_resultid>%lld</error_resultid>\n", sqlite3_column_int64(st, 0));
            print_instance_details(sb, st);
        }
        sqlite3_finalize(st);
    }
    strbuf_puts(sb, "</completed_job>\n");
    success_end(sb, "query_completed_job");
}

static void rpc_abort_jobs(xmlNode *root, strbuf *sb)
{
    emu_user u;
    if (authenticate(root, sb, &u) != 0 || need_file_access(&u, sb) != 0)
        return;
    for (xmlNode *c = root->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "job_name") != 0)
            continue;
        xmlChar *t = xmlNodeGetContent(c);
        const char *name = t ? (const char *)t : "";
        sqlite3_stmt *st = db_prep("SELECT j.id, j.batch_id, b.user_id FROM jobs j "
                                   "LEFT JOIN batches b ON b.id = j.batch_id WHERE j.name = ?");
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        char *err = NULL;
        long long jid = 0;
        if (sqlite3_step(st) != SQLITE_ROW)
            err = xasprintf("no job %s", name);
        else if (sqlite3_column_int64(st, 1) == 0)
            err = xasprintf("job %s is not part of a batch", name);
        else if (sqlite3_column_int64(st, 2) != u.id)
            err = xstrdup("not owner");
        else
            jid = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (err) {
            xml_error(sb, err);
            free(err);
            xmlFree(t);
            return;
        }
        /* the real handler echoes this malformed line */
        strbuf_printf(sb, "<aborted %s>\n", name);
        xmlFree(t);
        abort_job(jid);
    }
    strbuf_puts(sb, "<success>1</success>\n");
    success_end(sb, "abort_jobs");
}

static void abort_batch_jobs(long long batch_id)
{
    sqlite3_stmt *st = db_prep("SELECT id FROM jobs WHERE batch_id = ? AND canonical_resultid = 0 "
                               "AND (error_mask & 16) = 0");
    sqlite3_bind_int64(st, 1, batch_id);
    long long *ids = NULL;
    size_t n = 0, cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            long long *ni = realloc(ids, cap * sizeof *ni);
            if (ni == NULL)
                abort();
            ids = ni;
        }
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < n; i++)
        abort_job(ids[i]);
    free(ids);
}

static void set_batch_state(long long id, int state)
{
    sqlite3_stmt *st = db_prep("UPDATE batches SET state = ?, retired = (retired OR ? = 4) WHERE id = ?");
    sqlite3_bind_int(st, 1, state);
    sqlite3_bind_int(st, 2, state);
    sqlite3_bind_int64(st, 3, id);
    db_run(st);
    sqlite3_finalize(st);
}

static void rpc_retire_batch(xmlNode *root, strbuf *sb)
{
    emu_user u;
    batch_row b;
    if (authenticate(root, sb, &u) != 0 || need_file_access(&u, sb) != 0 ||
        batch_from_request(root, &u, sb, &b) != 0)
        return;
    php_warnings(sb);
    db_begin();
    abort_batch_jobs(b.id);
    set_batch_state(b.id, BATCH_RETIRED);
    db_commit();
    batch_free(&b);
    strbuf_puts(sb, "<success>1</success>\n");
    success_end(sb, "retire_batch");
}

static void rpc_abort_batch(xmlNode *root, strbuf *sb)
{
    emu_user u;
    batch_row b;
    if (authenticate(root, sb, &u) != 0 || need_file_access(&u, sb) != 0 ||
        batch_from_request(root, &u, sb, &b) != 0)
        return;
    db_begin();
    abort_batch_jobs(b.id);
    if (b.state != BATCH_RETIRED)
        set_batch_state(b.id, BATCH_ABORTED);
    db_commit();
    batch_free(&b);
    strbuf_puts(sb, "<success>1</success>\n");
    success_end(sb, "abort_batch");
}

static void rpc_set_expire_time(xmlNode *root, strbuf *sb)
{
    emu_user u;
    batch_row b;
    if (authenticate(root, sb, &u) != 0 || need_file_access(&u, sb) != 0 ||
        batch_from_request(root, &u, sb, &b) != 0)
        return;
    sqlite3_stmt *st = db_prep("UPDATE batches SET expire_time = ? WHERE id = ?");
    sqlite3_bind_double(st, 1, child_double(root, "expire_time"));
    sqlite3_bind_int64(st, 2, b.id);
    db_run(st);
    sqlite3_finalize(st);
    batch_free(&b);
    strbuf_puts(sb, "<success>1</success></set_expire_time>\n");
}

static void rpc_query_batches(xmlNode *root, strbuf *sb)
{
    emu_user u;
    if (authenticate(root, sb, &u) != 0 || need_file_access(&u, sb) != 0)
        return;
    sqlite3_stmt *st = db_prep("SELECT " BATCH_COLS " FROM batches WHERE user_id = ? AND state != 4 "
                               "ORDER BY id");
    sqlite3_bind_int64(st, 1, u.id);
    batch_row b;
    while (batch_load(st, &b) == 0) {
        php_warnings(sb);
        strbuf_puts(sb, "    <batch>\n");
        print_batch_params(sb, &b);
        strbuf_puts(sb, "   </batch>\n");
        batch_free(&b);
    }
    sqlite3_finalize(st);
    strbuf_puts(sb, "</query_batches>\n");
}

/* An errored job's failed instances (client errors), one <exit_status>
 * each, oldest first: what a real server lists with get_job_details. */
static void print_failed_exit_statuses(strbuf *sb, long long job_id)
{
    sqlite3_stmt *st = db_prep("SELECT exit_status FROM instances WHERE job_id = ? "
                               "AND outcome = ? ORDER BY id");
    sqlite3_bind_int64(st, 1, job_id);
    sqlite3_bind_int(st, 2, OUTCOME_CLIENT_ERROR);
    while (sqlite3_step(st) == SQLITE_ROW)
        strbuf_printf(sb, "            <exit_status>%lld</exit_status>\n",
                      sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
}

static void rpc_query_batch(xmlNode *root, strbuf *sb)
{
    emu_user u;
    batch_row b;
    if (authenticate(root, sb, &u) != 0 || need_file_access(&u, sb) != 0 ||
        batch_from_request(root, &u, sb, &b) != 0)
        return;
    int details = child_ll(root, "get_job_details") != 0;
    php_warnings(sb);
    print_batch_params(sb, &b);
    sqlite3_stmt *st = db_prep(
        "SELECT id, name, canonical_resultid, error_mask, app, "
        " (SELECT COUNT(*) FROM instances i WHERE i.job_id = jobs.id AND i.sent_time > 0) "
        "FROM jobs WHERE batch_id = ? ORDER BY id");
    sqlite3_bind_int64(st, 1, b.id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        long long canon = sqlite3_column_int64(st, 2);
        strbuf_printf(sb, "        <job>\n        <id>%lld</id>\n        <name>%s</name>\n"
                      "        <canonical_instance_id>%lld</canonical_instance_id>\n",
                      sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1), canon);
        if (canon) {
            const emu_app *app = app_find((const char *)sqlite3_column_text(st, 4));
            strbuf_printf(sb, "        <n_outfiles>%d</n_outfiles>\n", app ? app->noutputs : 0);
        }
        if (details) {
            const char *status = canon ? "done"
                               : sqlite3_column_int64(st, 3) ? "error"
                               : sqlite3_column_int64(st, 5) ? "in_progress" : "queued";
            strbuf_printf(sb, "            <status>%s</status>\n", status);
            if (!canon && sqlite3_column_int64(st, 3))
                print_failed_exit_statuses(sb, sqlite3_column_int64(st, 0));
        }
        strbuf_puts(sb, "        </job>\n");
    }
    sqlite3_finalize(st);
    batch_free(&b);
    strbuf_puts(sb, "</query_batch>\n");
}

static void rpc_estimate_batch(xmlNode *root, strbuf *sb)
{
    emu_user u;
    if (authenticate(root, sb, &u) != 0)
        return;
    int n = 0;
    xmlNode *batch = child(root, "batch");
    for (xmlNode *c = batch ? batch->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "job") == 0)
            n++;
    strbuf_puts(sb, "<seconds>");
    php_float(sb, n * (G.run_seconds > 0 ? G.run_seconds : 1));
    strbuf_puts(sb, "</seconds>\n");
    success_end(sb, "estimate_batch");
}

/* simplexml's complaint about a request that is not XML */
static void unparseable(strbuf *sb, const char *x, size_t len)
{
    if (len > 0) {
        const xmlError *e = xmlGetLastError();
        strbuf_puts(sb, "<br />\n<b>Warning</b>:  simplexml_load_string(): Entity: line 1: parser error : ");
        const char *msg = (e && e->message) ? e->message : "Start tag expected, '<' not found\n";
        size_t ml = strlen(msg);
        while (ml > 0 && msg[ml - 1] == '\n')
            ml--;
        html_escape(sb, msg, ml);
        strbuf_puts(sb, " in <b>/srv/boinc/projects/test/html/inc/util_basic.inc</b> on line <b>325</b><br />\n");
        const char *nl = memchr(x, '\n', len);
        size_t l1 = nl ? (size_t)(nl - x) : len;
        strbuf_puts(sb, "<br />\n<b>Warning</b>:  simplexml_load_string(): ");
        html_escape(sb, x, l1);
        strbuf_puts(sb, " in <b>/srv/boinc/projects/test/html/inc/util_basic.inc</b> on line <b>325</b><br />\n");
        strbuf_puts(sb, "<br />\n<b>Warning</b>:  simplexml_load_string(): ^ in "
                    "<b>/srv/boinc/projects/test/html/inc/util_basic.inc</b> on line <b>325</b><br />\n");
    }
    strbuf m = STRBUF_INIT;
    strbuf_puts(&m, "can't parse request message: ");
    html_escape(&m, x, len);
    xml_error(sb, strbuf_str(&m));
    strbuf_free(&m);
}

void handle_submit_rpc(const emu_request *rq, emu_reply *r, int *kind)
{
    size_t len;
    const char *x = request_xml(rq, &len);
    strbuf *sb = &r->body;
    reply_xml_begin(r);
    xmlResetLastError();
    xmlDoc *doc = len ? xmlReadMemory(x, (int)len, NULL, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                      XML_PARSE_HUGE)
                      : NULL;
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    emu_lock();
    if (root == NULL) {
        unparseable(sb, x, len);
    } else if (root->children == NULL && root->properties == NULL) {
        /* simplexml_load_string() of an element without content (e.g.
         * <ping></ping>) is an empty object, which PHP treats as false */
        strbuf m = STRBUF_INIT;
        strbuf_puts(&m, "can't parse request message: ");
        html_escape(&m, x, len);
        xml_error(sb, strbuf_str(&m));
        strbuf_free(&m);
    } else {
        const char *tag = (const char *)root->name;
        int k = RPC_OTHER;
        for (int i = 0; i < RPC_OTHER; i++)
            if (strcmp(tag, rpc_names[i]) == 0 && i != RPC_QUERY_FILES &&
                i != RPC_UPLOAD_FILES && i != RPC_GET_OUTPUT)
                k = i;
        *kind = k;
        if (k == RPC_OTHER) {
            xml_error(sb, "bad command");
        } else {
            size_t mark = sb->len;
            strbuf_printf(sb, "<%s>\n", tag);
            switch (k) {
            case RPC_PING: rpc_ping(sb); break;
            case RPC_GET_TEMPLATES: rpc_get_templates(root, sb); break;
            case RPC_CREATE_BATCH: rpc_create_batch(root, sb); break;
            case RPC_SUBMIT_BATCH: rpc_submit_batch(root, sb); break;
            case RPC_QUERY_BATCH2: rpc_query_batch2(root, sb); break;
            case RPC_QUERY_COMPLETED_JOB: rpc_query_completed_job(root, sb); break;
            case RPC_ABORT_JOBS: rpc_abort_jobs(root, sb); break;
            case RPC_RETIRE_BATCH: rpc_retire_batch(root, sb); break;
            case RPC_SET_EXPIRE_TIME: rpc_set_expire_time(root, sb); break;
            case RPC_QUERY_BATCHES: rpc_query_batches(root, sb); break;
            case RPC_QUERY_BATCH: rpc_query_batch(root, sb); break;
            case RPC_ABORT_BATCH: rpc_abort_batch(root, sb); break;
            case RPC_ESTIMATE_BATCH: rpc_estimate_batch(root, sb); break;
            default: break;
            }
            /* every error path appends </error> last: close the element */
            const char *tail = "</error>\n";
            size_t tl = strlen(tail);
            if (sb->len >= tl && sb->len > mark && strcmp(sb->data + sb->len - tl, tail) == 0)
                strbuf_printf(sb, "</%s>\n", tag);
        }
    }
    emu_unlock();
    if (doc)
        xmlFreeDoc(doc);
}
