/*
 * jobfile.c - job_file.php: query_files and upload_files, the
 * content-addressed input staging area (state-dir/download/).
 *
 * Faithful to the real script, which works file by file without a
 * transaction: a fatal duplicate-row error in the middle leaves the work
 * done for the earlier files in place and cuts the reply off.
 */
#include "emu.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"

static void fatal_duplicate(strbuf *sb, const char *entry, const char *key,
                            const char *frames)
{
    strbuf_printf(sb, "<br />\n<b>Fatal error</b>:  Uncaught mysqli_sql_exception: Duplicate entry "
                  "'%s' for key '%s' in /srv/boinc/projects/test/html/inc/db_conn.inc:67\n"
                  "Stack trace:\n"
                  "#0 /srv/boinc/projects/test/html/inc/db_conn.inc(67): mysqli-&gt;query()\n"
                  "#1 /srv/boinc/projects/test/html/inc/db_conn.inc(157): DbConn-&gt;do_query()\n"
                  "%s"
                  "  thrown in <b>/srv/boinc/projects/test/html/inc/db_conn.inc</b> on line <b>67</b><br />\n",
                  entry, key, frames);
}

static const char frames_qf_assoc[] =
    "#2 /srv/boinc/projects/test/html/inc/submit_db.inc(145): DbConn-&gt;insert()\n"
    "#3 /srv/boinc/projects/test/html/user/job_file.php(146): BoincBatchFileAssoc::insert()\n"
    "#4 /srv/boinc/projects/test/html/user/job_file.php(307): query_files()\n"
    "#5 {main}\n";
static const char frames_uf_file[] =
    "#2 /srv/boinc/projects/test/html/inc/submit_db.inc(124): DbConn-&gt;insert()\n"
    "#3 /srv/boinc/projects/test/html/user/job_file.php(256): BoincJobFile::insert()\n"
    "#4 /srv/boinc/projects/test/html/user/job_file.php(310): upload_files()\n"
    "#5 {main}\n";
static const char frames_uf_assoc[] =
    "#2 /srv/boinc/projects/test/html/inc/submit_db.inc(145): DbConn-&gt;insert()\n"
    "#3 /srv/boinc/projects/test/html/user/job_file.php(263): BoincBatchFileAssoc::insert()\n"
    "#4 /srv/boinc/projects/test/html/user/job_file.php(310): upload_files()\n"
    "#5 {main}\n";

static long long file_id(const char *name)
{
    static const char sql[] = "SELECT id FROM files WHERE name = ?";
    sqlite3_stmt *st = db_prep_kept(sql);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    long long id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return id;
}

static long long file_insert(const char *name, long long nbytes)
{
    static const char sql[] = "INSERT INTO files(name, nbytes, create_time) VALUES(?, ?, ?)";
    sqlite3_stmt *st = db_prep_kept(sql);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, nbytes);
    sqlite3_bind_double(st, 3, emu_now());
    long long id = sqlite3_step(st) == SQLITE_DONE ? sqlite3_last_insert_rowid(G.db) : 0;
    sqlite3_reset(st);
    return id;
}

/* 0 inserted, -1 the association already exists (a fatal error). */
static int assoc_insert(long long fid, long long batch_id)
{
    static const char sql[] = "INSERT INTO batch_file_assoc(file_id, batch_id) VALUES(?, ?)";
    sqlite3_stmt *st = db_prep_kept(sql);
    sqlite3_bind_int64(st, 1, fid);
    sqlite3_bind_int64(st, 2, batch_id);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_reset(st);
    return rc;
}

static char *text_of(xmlNode *n)
{
    xmlChar *t = xmlNodeGetContent(n);
    char *s = xstrdup(t ? (const char *)t : "");
    xmlFree(t);
    return s;
}

static long long child_ll(xmlNode *root, const char *name)
{
    for (xmlNode *c = root->children; c; c = c->next) {
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0) {
            char *s = text_of(c);
            long long v = strtoll(s, NULL, 10);     /* PHP (int) cast */
            free(s);
            return v;
        }
    }
    return 0;
}

static int count_phys_names(xmlNode *root)
{
    int n = 0;
    for (xmlNode *c = root->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "phys_name") == 0)
            n++;
    return n;
}

static int file_on_disk(const char *name)
{
    char *path = xasprintf("%s/%s", G.download_dir, name);
    struct stat st;
    int ok = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

static void query_files(xmlNode *root, strbuf *sb)
{
    long long batch_id = child_ll(root, "batch_id");
    strbuf absent = STRBUF_INIT;
    int i = 0;
    for (xmlNode *c = root->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "phys_name") != 0)
            continue;
        char *name = text_of(c);
        if (!valid_phys_name(name)) {
            free(name);
            strbuf_free(&absent);
            xml_error(sb, "bad filename");
            return;
        }
        long long fid = file_id(name);
        if (file_on_disk(name)) {
            if (fid == 0)
                fid = file_insert(name, 0);
            if (batch_id && assoc_insert(fid, batch_id) != 0) {
                char *entry = xasprintf("%lld-%lld", fid, batch_id);
                fatal_duplicate(sb, entry, "job_file_id", frames_qf_assoc);
                free(entry);
                free(name);
                strbuf_free(&absent);
                return;
            }
        } else {
            strbuf_printf(&absent, "<file>%d</file>\n", i);
        }
        free(name);
        i++;
    }
    strbuf_printf(sb, "<absent_files>\n%s</absent_files>\n", strbuf_str(&absent));
    strbuf_free(&absent);
    strbuf_puts(sb, "        </query_files>\n    ");
}

static void count_upload(const char *name, size_t len)
{
    G.files_uploaded++;
    G.bytes_uploaded += (long long)len;
    static const char sql[] = "INSERT INTO uploads(name, times) VALUES(?, 1) "
                              "ON CONFLICT(name) DO UPDATE SET times = times + 1";
    sqlite3_stmt *st = db_prep_kept(sql);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    db_run(st);
    sqlite3_reset(st);
}

/* 0 stored or identical, 1 differs (immutability), -1 I/O error */
static int store_file(const char *name, const emu_part *p)
{
    char *path = xasprintf("%s/%s", G.download_dir, name);
    char *old;
    size_t olen;
    int rc;
    if (read_file(path, &old, &olen) == 0) {
        rc = (olen == p->len && memcmp(old, p->data, olen) == 0) ? 0 : 1;
        free(old);
    } else if (p->tmp_path != NULL) {
        /* move_uploaded_file: PHP wrote the part before the script ran */
        rc = rename(p->tmp_path, path) == 0 ? 0 : -1;
    } else {
        static unsigned long seq;   /* callers hold emu_lock() */
        char *tmp = xasprintf("%s.tmp%lu", path, ++seq);
        rc = (write_file(tmp, p->data, p->len) == 0 && rename(tmp, path) == 0) ? 0 : -1;
        if (rc != 0)
            unlink(tmp);
        free(tmp);
    }
    free(path);
    return rc;
}

static void upload_each(xmlNode *root, strbuf *sb, const emu_part **files, long long batch_id);

static void upload_files(const emu_request *rq, xmlNode *root, strbuf *sb)
{
    long long batch_id = child_ll(root, "batch_id");
    const emu_part **files = xcalloc((size_t)rq->nparts + 1, sizeof *files);
    int nfiles = 0;
    for (int i = 0; i < rq->nparts; i++)
        if (strncmp(rq->parts[i].name, "file_", 5) == 0)
            files[nfiles++] = &rq->parts[i];
    int nnames = count_phys_names(root);
    if (nfiles != nnames) {
        char *m = xasprintf("# of uploaded files (%d) doesn't agree with request (%d)", nfiles, nnames);
        xml_error(sb, m);
        free(m);
        free(files);
        return;
    }
    upload_each(root, sb, files, batch_id);
    free(files);
}

static void upload_each(xmlNode *root, strbuf *sb, const emu_part **files, long long batch_id)
{
    int i = 0;
    for (xmlNode *c = root->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "phys_name") != 0)
            continue;
        char *name = text_of(c);
        const emu_part *p = files[i++];
        if (!valid_phys_name(name)) {
            free(name);
            xml_error(sb, "bad filename");
            return;
        }
        if (p->upload_error) {
            /* PHP's UPLOAD_ERR_INI_SIZE as job_file.php reports it; the
             * files before this one stay stored (no transaction). */
            char *m = xasprintf("%s upload failed because: The uploaded file exceeds "
                                "upload_max_filesize of php.ini.", name);
            xml_error(sb, m);
            free(m);
            free(name);
            return;
        }
        count_upload(name, p->len);
        int rc = store_file(name, p);
        if (rc != 0) {
            char *m = rc > 0 ? xasprintf("file immutability violation for %s", name)
                             : xasprintf("could not move uploaded file to %s/%s", G.download_dir, name);
            xml_error(sb, m);
            free(m);
            free(name);
            return;
        }
        if (file_id(name) != 0) {
            /* the job_file row exists: a real server dies on the insert */
            fatal_duplicate(sb, name, "jf_name", frames_uf_file);
            free(name);
            return;
        }
        long long fid = file_insert(name, (long long)p->len);
        if (batch_id && assoc_insert(fid, batch_id) != 0) {
            char *entry = xasprintf("%lld-%lld", fid, batch_id);
            fatal_duplicate(sb, entry, "job_file_id", frames_uf_assoc);
            free(entry);
            free(name);
            return;
        }
        free(name);
    }
    strbuf_puts(sb, "<success/>\n        </upload_files>\n    ");
}

static int check_auth(xmlNode *root, strbuf *sb)
{
    char *a = NULL;
    for (xmlNode *c = root->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "authenticator") == 0)
            a = text_of(c);
    if (a == NULL || *a == '\0') {
        free(a);
        xml_error(sb, "no authenticator");
        return -1;
    }
    sqlite3_stmt *st = db_prep("SELECT submit FROM users WHERE authenticator = ?");
    sqlite3_bind_text(st, 1, a, -1, SQLITE_TRANSIENT);
    int found = sqlite3_step(st) == SQLITE_ROW;
    int submit = found ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    free(a);
    if (!found) {
        xml_error(sb, "bad authenticator");
        return -1;
    }
    if (!submit) {
        xml_error(sb, "no file access");
        return -1;
    }
    return 0;
}

void handle_job_file(const emu_request *rq, emu_reply *r, int *kind)
{
    size_t len;
    const char *x = request_xml(rq, &len);
    strbuf *sb = &r->body;
    reply_xml_begin(r);
    xmlDoc *doc = len ? xmlReadMemory(x, (int)len, NULL, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                      XML_PARSE_HUGE)
                      : NULL;
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    emu_lock();
    /* One transaction per request, committed whatever happened: what the
     * real script did file by file before an error stays done, as there;
     * only the number of SQLite commits (one per file and table) shrinks. */
    db_begin();
    if (root == NULL) {
        strbuf m = STRBUF_INIT;
        strbuf_puts(&m, "can't parse request message: ");
        html_escape(&m, x, len);
        xml_error(sb, strbuf_str(&m));
        strbuf_free(&m);
    } else if (strcmp((const char *)root->name, "query_files") == 0 ||
               strcmp((const char *)root->name, "upload_files") == 0) {
        int q = root->name[0] == 'q';
        *kind = q ? RPC_QUERY_FILES : RPC_UPLOAD_FILES;
        strbuf_printf(sb, "<%s>\n", (const char *)root->name);
        if (check_auth(root, sb) != 0)
            strbuf_printf(sb, "</%s>\n", (const char *)root->name);
        else {
            size_t before = sb->len;
            if (q)
                query_files(root, sb);
            else
                upload_files(rq, root, sb);
            const char *tail = "</error>\n";
            size_t tl = strlen(tail);
            if (sb->len > before && sb->len >= tl && strcmp(sb->data + sb->len - tl, tail) == 0)
                strbuf_printf(sb, "</%s>\n", (const char *)root->name);
        }
    } else {
        xml_error(sb, "no such action");
    }
    db_commit();
    emu_unlock();
    if (doc)
        xmlFreeDoc(doc);
}
