/*
 * output.c - get_output.php: output file download (GET), with the real
 * script's error behaviour: HTTP 200 text/html "ERROR: ..." bodies, a full
 * HTML page for missing parameters, and a lying Content-Length for an
 * out-of-range file number.
 */
#include "emu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void error_page(strbuf *sb, const char *param);

static void die_text(emu_reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The script's error(): "ERROR: " + message, no newline, HTTP 200. */
static void die_text(emu_reply *r, const char *fmt, ...)
{
    snprintf(r->content_type, sizeof r->content_type, "text/html; charset=UTF-8");
    strbuf_puts(&r->body, "ERROR: ");
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&r->body, fmt, ap);
    va_end(ap);
}

static void bad_param(emu_reply *r, const char *param)
{
    snprintf(r->content_type, sizeof r->content_type, "text/html; charset=utf-8");
    reply_header(r, "Expires", "Mon, 26 Jul 1997 05:00:00 UTC");
    reply_header(r, "Cache-Control", "no-cache, must-revalidate, post-check=0, pre-check=0");
    reply_header(r, "Pragma", "no-cache");
    error_page(&r->body, param);
}

static void download_headers(emu_reply *r, const char *filename)
{
    char *d = xasprintf("attachment; filename=%s", filename);
    reply_header(r, "Content-Description", "File Transfer");
    reply_header(r, "Content-Disposition", d);
    reply_header(r, "Content-Transfer-Encoding", "binary");
    reply_header(r, "Expires", "0");
    reply_header(r, "Cache-Control", "must-revalidate, post-check=0, pre-check=0");
    reply_header(r, "Pragma", "public");
    snprintf(r->content_type, sizeof r->content_type, "application/octet-stream");
    free(d);
}

/* PHP reading past the end of the file list: warnings sent as the file,
 * announced as 4096 bytes, then the connection ends. */
static void out_of_range(emu_reply *r, long file_num)
{
    download_headers(r, "d9");
    strbuf_printf(&r->body,
                  "<br />\n<b>Warning</b>:  Undefined array key %ld in "
                  "<b>/srv/boinc/projects/test/html/user/get_output.php</b> on line <b>153</b><br />\n"
                  "<br />\n<b>Deprecated</b>:  md5(): Passing null to parameter #1 ($string) of type "
                  "string is deprecated in <b>/srv/boinc/projects/test/html/inc/dir_hier.inc</b> on "
                  "line <b>22</b><br />\n"
                  "<br />\n<b>Notice</b>:  readfile(): Read of 8192 bytes failed with errno=21 Is a "
                  "directory in <b>/srv/boinc/projects/test/html/inc/util.inc</b> on line "
                  "<b>1112</b><br />\n", file_num);
    r->declared_len = 4096;
    r->send_len = r->body.len;
    r->cut = 1;
}

static void send_output(emu_reply *r, long long instance_id, long file_num)
{
    sqlite3_stmt *st = db_prep("SELECT file_name FROM instance_outputs WHERE instance_id = ? AND idx = ?");
    sqlite3_bind_int64(st, 1, instance_id);
    sqlite3_bind_int64(st, 2, file_num);
    char *fname = NULL;
    if (sqlite3_step(st) == SQLITE_ROW)
        fname = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (fname == NULL) {
        out_of_range(r, file_num);
        return;
    }
    char *path = xasprintf("%s/%s", G.upload_dir, fname);
    char *data;
    size_t len;
    if (read_file(path, &data, &len) != 0) {
        die_text(r, "no such file: %s", path);
    } else {
        download_headers(r, fname);
        strbuf_append(&r->body, data, len);
        free(data);
    }
    free(path);
    free(fname);
}

static int parse_file_num(const emu_request *rq, emu_reply *r, long *out)
{
    const char *fn = req_arg(rq, "file_num");
    if (fn == NULL || parse_long(fn, out) != 0) {
        bad_param(r, "file_num");
        return -1;
    }
    return 0;
}

/* The parameters both file forms need, checked in the server's order: the
 * object's name (param_name, as named in the error page), file_num,
 * auth_str.  0, or -1 with the error page already in r. */
static int output_params(const emu_request *rq, emu_reply *r, const char *name,
                         const char *param_name, long *file_num, const char **auth)
{
    if (name == NULL || *name == '\0') {
        bad_param(r, param_name);
        return -1;
    }
    if (parse_file_num(rq, r, file_num) != 0)
        return -1;
    *auth = req_arg(rq, "auth_str");
    if (*auth == NULL) {
        bad_param(r, "auth_str");
        return -1;
    }
    return 0;
}

static void workunit_file(const emu_request *rq, emu_reply *r)
{
    const char *wu = req_arg(rq, "wu_name");
    long file_num;
    const char *auth;
    if (output_params(rq, r, wu, "wu_name", &file_num, &auth) != 0)
        return;
    sqlite3_stmt *st = db_prep("SELECT j.canonical_resultid, u.authenticator FROM jobs j "
                               "LEFT JOIN batches b ON b.id = j.batch_id "
                               "LEFT JOIN users u ON u.id = b.user_id WHERE j.name = ?");
    sqlite3_bind_text(st, 1, wu, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        die_text(r, "no workunit %s", wu);
        return;
    }
    long long canon = sqlite3_column_int64(st, 0);
    const char *owner_auth = (const char *)sqlite3_column_text(st, 1);
    int auth_ok = owner_auth && strcmp(owner_auth, auth) == 0;
    sqlite3_finalize(st);
    if (!auth_ok) {
        die_text(r, "%s", "bad authenticator");
        return;
    }
    if (canon == 0) {
        die_text(r, "no canonical result for wu %s", wu);
        return;
    }
    send_output(r, canon, file_num);
}

/* cmd=result_file: any instance's output; auth_str = md5(authenticator
 * + instance name). */
static void result_file(const emu_request *rq, emu_reply *r)
{
    const char *name = req_arg(rq, "result_name");
    if (name == NULL)
        name = req_arg(rq, "instance_name");
    long file_num;
    const char *auth;
    if (output_params(rq, r, name, "result_name", &file_num, &auth) != 0)
        return;
    sqlite3_stmt *st = db_prep("SELECT i.id, u.authenticator FROM instances i "
                               "JOIN jobs j ON j.id = i.job_id "
                               "LEFT JOIN batches b ON b.id = j.batch_id "
                               "LEFT JOIN users u ON u.id = b.user_id WHERE i.name = ?");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        die_text(r, "no job instance %s", name);
        return;
    }
    long long iid = sqlite3_column_int64(st, 0);
    char *concat = xasprintf("%s%s", (const char *)sqlite3_column_text(st, 1), name);
    sqlite3_finalize(st);
    char md5[33];
    md5_hex(concat, strlen(concat), md5);
    free(concat);
    if (strcmp(md5, auth) != 0) {
        die_text(r, "%s", "bad auth str");
        return;
    }
    send_output(r, iid, file_num);
}

void handle_get_output(const emu_request *rq, emu_reply *r)
{
    const char *cmd = req_arg(rq, "cmd");
    emu_lock();
    if (cmd == NULL || *cmd == '\0') {
        bad_param(r, "cmd");
    } else if (strcmp(cmd, "workunit_file") == 0) {
        workunit_file(rq, r);
    } else if (strcmp(cmd, "result_file") == 0) {
        result_file(rq, r);
    } else {
        snprintf(r->content_type, sizeof r->content_type, "text/html; charset=UTF-8");
        strbuf_puts(&r->body, "bad command\n");
    }
    emu_unlock();
}
