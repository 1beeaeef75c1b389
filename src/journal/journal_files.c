/*
 * journal_files.c - the SQL of the input-file tables: batch_files (a
 * submit's inputs and their upload state), batch_file_queries (query_files
 * chunks announced and not answered yet), file_md5_cache, and
 * upload_limits, the limits learned per project (journal_files.h).
 *
 * Every statement is in the table below and runs through journal_run /
 * journal_query (journal_internal.h); writes run inside journal_txn.
 */
#include "journal/journal_files.h"

#include "journal/journal_batches.h"
#include "journal/journal_internal.h"

#include "base/strbuf.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/*
 * The batch's files (parameter ?1) with the state they are in: a 'hashed'
 * file that an unanswered query announcement names is 'query_sent'
 * (migration 0007).  Without announcements the IN list is empty and costs
 * one look-up of the batch_file_queries index.
 *
 * In insertion (rowid) order without a sort: a batch's files are inserted
 * in one transaction, so they are one run of rowids, read in order between
 * the batch's smallest and largest rowid (found in the primary key index);
 * a row of another batch in that run is skipped (+batch_id: no index).
 * Through the (batch_id, phys_name) index, the rows came in name order and
 * were sorted again: a third more instructions for 10,000 files.
 */
#define SQL_FILES_WITH_STATE \
    "SELECT phys_name, local_path, size, state, rid FROM (" \
    " SELECT rowid AS rid, phys_name, local_path, size," \
    "  CASE WHEN state = '" BFILE_HASHED "' AND phys_name IN" \
    "   (SELECT e.value FROM batch_file_queries q, json_each(q.names) e" \
    "    WHERE q.batch_id = ?1)" \
    "  THEN '" BFILE_QUERY_SENT "' ELSE state END AS state" \
    " FROM batch_files WHERE rowid BETWEEN" \
    "  (SELECT min(rowid) FROM batch_files WHERE batch_id = ?1) AND" \
    "  (SELECT max(rowid) FROM batch_files WHERE batch_id = ?1)" \
    "  AND +batch_id = ?1)"

/* One row of JSTMT_FILES_INSERT8 (?1 batch, ?2 time): name, path, size. */
#define FILE_ROW(a, b, c) "(?1, ?" #a ", ?" #b ", ?" #c ", '" BFILE_HASHED "', ?2)"
/* One row of JSTMT_MD5_STORE8 (?1 time): path, size, mtime, inode, md5. */
#define MD5_ROW(a, b, c, d, e) "(?" #a ", ?" #b ", ?" #c ", ?" #d ", ?" #e ", ?1)"

const journal_sql journal_sql_files[JSTMT_COUNT] = {
    /* ---- batch_files ---- */
    [JSTMT_FILE_INSERT] = { "batch files insert",
        "INSERT OR IGNORE INTO batch_files (batch_id, phys_name,"
        " local_path, size, state, updated_at)"
        " VALUES (?, ?, ?, ?, '" BFILE_HASHED "', ?)" },
    /* eight files a statement: see JSTMT_JOBS_INSERT8 (journal_batches.c) */
    [JSTMT_FILES_INSERT8] = { "batch files insert",
        "INSERT OR IGNORE INTO batch_files (batch_id, phys_name,"
        " local_path, size, state, updated_at) VALUES "
        FILE_ROW(3, 4, 5) "," FILE_ROW(6, 7, 8) "," FILE_ROW(9, 10, 11) ","
        FILE_ROW(12, 13, 14) "," FILE_ROW(15, 16, 17) "," FILE_ROW(18, 19, 20) ","
        FILE_ROW(21, 22, 23) "," FILE_ROW(24, 25, 26) },
    [JSTMT_FILES_LIST] = { "batch files list",
        SQL_FILES_WITH_STATE " WHERE ?2 IS NULL OR state = ?2 ORDER BY rid" },
    /* one file: the fallback of JSTMT_FILES_STATE (names_json) */
    [JSTMT_FILE_STATE] = { "batch files state",
        "UPDATE batch_files SET state = ?, updated_at = ?"
        " WHERE batch_id = ? AND phys_name = ?" },
    /* the names as a JSON array (names_json) */
    [JSTMT_FILES_STATE] = { "batch files state",
        "UPDATE batch_files SET state = ?1, updated_at = ?2"
        " WHERE batch_id = ?3 AND phys_name IN (SELECT value FROM json_each(?4))" },
    /* a run of consecutive row ids (?4 .. ?5), and a list of them as a
     * JSON array (file_ids_update): a seek in the table per run or id
     * instead of one in the name index per file.  +batch_id: through the
     * batch_id index the planner would scan the whole batch for each. */
    [JSTMT_FILES_STATE_RANGE] = { "batch files state",
        "UPDATE batch_files SET state = ?1, updated_at = ?2"
        " WHERE id BETWEEN ?4 AND ?5 AND +batch_id = ?3" },
    [JSTMT_FILES_STATE_IDS] = { "batch files state",
        "UPDATE batch_files SET state = ?1, updated_at = ?2"
        " WHERE id IN (SELECT value FROM json_each(?4)) AND +batch_id = ?3" },
    /* retention: the files of the batches that go (journal_prune.c) */
    [JSTMT_FILES_PRUNE] = { "prune batch files",
        "DELETE FROM batch_files WHERE batch_id IN (" JOURNAL_PRUNABLE_BATCHES ")" },

    /* ---- batch_file_queries ---- */
    [JSTMT_QUERY_INSERT] = { "query announcement",
        "INSERT INTO batch_file_queries (batch_id, names, sent_at) VALUES (?, ?, ?)" },
    [JSTMT_QUERY_ANSWERED] = { "query answered",
        "DELETE FROM batch_file_queries WHERE id = ?" },
    [JSTMT_QUERIES_FORGET] = { "query announcements forgotten",
        "DELETE FROM batch_file_queries WHERE batch_id = ?" },
    [JSTMT_QUERIES_PRUNE] = { "prune query announcements",
        "DELETE FROM batch_file_queries WHERE batch_id IN (" JOURNAL_PRUNABLE_BATCHES ")" },

    /* ---- file_md5_cache ---- */
    [JSTMT_MD5_FIND] = { "md5 cache lookup",
        "SELECT size, mtime_ns, inode, md5 FROM file_md5_cache WHERE path = ?" },
    [JSTMT_MD5_STORE] = { "md5 cache store",
        "INSERT OR REPLACE INTO file_md5_cache (path, size, mtime_ns, inode, md5,"
        " hashed_at) VALUES (?, ?, ?, ?, ?, ?)" },
    /* eight digests a statement, as JSTMT_FILES_INSERT8 */
    [JSTMT_MD5_STORE8] = { "md5 cache store",
        "INSERT OR REPLACE INTO file_md5_cache (path, size, mtime_ns, inode, md5,"
        " hashed_at) VALUES "
        MD5_ROW(2, 3, 4, 5, 6) "," MD5_ROW(7, 8, 9, 10, 11) ","
        MD5_ROW(12, 13, 14, 15, 16) "," MD5_ROW(17, 18, 19, 20, 21) ","
        MD5_ROW(22, 23, 24, 25, 26) "," MD5_ROW(27, 28, 29, 30, 31) ","
        MD5_ROW(32, 33, 34, 35, 36) "," MD5_ROW(37, 38, 39, 40, 41) },
    /* retention: digests older than the cutoff of files no batch names
     * any more (a file used again is simply hashed again) */
    [JSTMT_MD5_PRUNE] = { "prune md5 cache",
        "DELETE FROM file_md5_cache WHERE hashed_at < ?1"
        " AND path NOT IN (SELECT local_path FROM batch_files)" },

    /* ---- upload_limits ---- */
    [JSTMT_LIMITS_GET] = { "read upload limits",
        "SELECT max_files, max_bytes FROM upload_limits WHERE project_id = ?1" },
    /* a limit never rises */
    [JSTMT_LIMITS_LEARN] = { "learn upload limits",
        "INSERT INTO upload_limits(project_id, max_files, max_bytes, learned_at, reason)"
        " VALUES(?1, ?2, ?3, ?4, ?5)"
        " ON CONFLICT(project_id) DO UPDATE SET"
        "  max_files = min(max_files, excluded.max_files),"
        "  max_bytes = min(max_bytes, excluded.max_bytes),"
        "  learned_at = excluded.learned_at, reason = excluded.reason" },
};

/* ---- MD5 cache ----------------------------------------------------------- */

static long long mtime_ns(const files_stat_key *k)
{
    return k->mtime_sec * 1000000000LL + k->mtime_nsec;
}

typedef struct {
    const files_stat_key *const *keys;
    size_t n;
    const char *const *md5s;    /* the digests to store */
} md5_keys;

typedef struct {
    const char *const *paths;
    size_t n;
    files_stat_key *keys;
    char (*md5s)[33];
    unsigned char *found;
} md5_finds;

/* The cache row of path i, if any, into f's slot i. */
static int md5_find_one(journal *j, md5_finds *f, size_t i)
{
    f->found[i] = 0;
    int rc = journal_query(j, JSTMT_MD5_FIND, "t", f->paths[i]);
    if (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_MD5_FIND);
        const char *md5 = (const char *)sqlite3_column_text(st, 3);
        long long ns = sqlite3_column_int64(st, 1);
        if (md5 != NULL && strlen(md5) == 32 && ns >= 0) {
            files_stat_key *k = &f->keys[i];
            k->size = sqlite3_column_int64(st, 0);
            k->mtime_sec = ns / 1000000000LL;
            k->mtime_nsec = (long)(ns % 1000000000LL);
            k->inode = (unsigned long long)sqlite3_column_int64(st, 2);
            memcpy(f->md5s[i], md5, 33);
            f->found[i] = 1;
        }
    }
    journal_reset(j, JSTMT_MD5_FIND);
    return rc < 0 ? -1 : 0;
}

static int md5_find(journal *j, void *arg)
{
    md5_finds *f = arg;
    for (size_t i = 0; i < f->n; i++)
        if (md5_find_one(j, f, i) != 0)
            return -1;
    return 0;
}

/* One statement stepped for every path, inside ONE deferred (read)
 * transaction: one WAL snapshot and no per-path lock round, which is what
 * makes a resubmit of 10,000 cached inputs cheap. */
int journal_md5_find(journal *j, const char *const *paths, size_t n,
                     files_stat_key *keys, char (*md5s)[33], unsigned char *found)
{
    if (n == 0)
        return 0;
    md5_finds f = { paths, n, keys, md5s, found };
    return journal_read_txn(j, md5_find, &f) == 0 ? 0 : -1;
}

/* The five columns of key k for a digest row (MD5_ROW). */
#define MD5_ARGS(m, k) (m)->keys[k]->path, (long long)(m)->keys[k]->size, \
    mtime_ns((m)->keys[k]), (long long)(m)->keys[k]->inode, (m)->md5s[k]

static int md5_store(journal *j, void *arg)
{
    const md5_keys *m = arg;
    double now = journal_now();
    size_t i = 0;
    for (; i + 8 <= m->n; i += 8)
        if (journal_run(j, JSTMT_MD5_STORE8, "d" "tiiit" "tiiit" "tiiit" "tiiit"
                        "tiiit" "tiiit" "tiiit" "tiiit", now,
                        MD5_ARGS(m, i), MD5_ARGS(m, i + 1), MD5_ARGS(m, i + 2),
                        MD5_ARGS(m, i + 3), MD5_ARGS(m, i + 4), MD5_ARGS(m, i + 5),
                        MD5_ARGS(m, i + 6), MD5_ARGS(m, i + 7)) != 0)
            return -1;
    for (; i < m->n; i++) {
        const files_stat_key *k = m->keys[i];
        if (journal_run(j, JSTMT_MD5_STORE, "tiiitd", k->path, (long long)k->size,
                        mtime_ns(k), (long long)k->inode, m->md5s[i], now) != 0)
            return -1;
    }
    return 0;
}

int journal_md5_store(journal *j, const files_stat_key *const *keys,
                      const char *const *md5s, size_t n)
{
    if (n == 0)
        return 0;
    md5_keys m = { keys, n, md5s };
    return journal_txn(j, md5_store, &m);
}

/* ---- batch files ---------------------------------------------------------- */

typedef struct {
    long long batch_row;
    const journal_batch_file *files;
    size_t n;
} new_files;

/* The three columns of file k for a file row (FILE_ROW). */
#define FILE_ARGS(v, k) (v)[k].phys_name, (v)[k].local_path, (v)[k].size

static int files_insert(journal *j, void *arg)
{
    const new_files *f = arg;
    double now = journal_now();
    size_t i = 0;
    if (journal_parent_batch(j, f->batch_row) != 0)
        return -1;
    for (; i + 8 <= f->n; i += 8) {
        const journal_batch_file *v = f->files + i;
        if (journal_run(j, JSTMT_FILES_INSERT8, "id" "tti" "tti" "tti" "tti" "tti" "tti"
                        "tti" "tti", f->batch_row, now, FILE_ARGS(v, 0), FILE_ARGS(v, 1),
                        FILE_ARGS(v, 2), FILE_ARGS(v, 3), FILE_ARGS(v, 4), FILE_ARGS(v, 5),
                        FILE_ARGS(v, 6), FILE_ARGS(v, 7)) != 0)
            return -1;
    }
    for (; i < f->n; i++)
        if (journal_run(j, JSTMT_FILE_INSERT, "ittid", f->batch_row, f->files[i].phys_name,
                        f->files[i].local_path, f->files[i].size, now) != 0)
            return -1;
    return journal_run(j, JSTMT_BATCH_HASHED, "idii", (long long)BATCH_HASHED, now,
                       f->batch_row, (long long)BATCH_NEW);
}

int journal_batch_files_add(journal *j, long long batch_row,
                            const journal_batch_file *files, size_t n)
{
    new_files f = { batch_row, files, n };
    return journal_bulk_txn(j, files_insert, &f);
}

void journal_batch_files_free(journal_batch_file *f, size_t n)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        free(f[i].phys_name);
        free(f[i].local_path);
    }
    free(f);
}

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

/* The BFILE_* constant a row's state column names; NULL for any other
 * text (the table's CHECK allows none). */
static const char *state_const(sqlite3_stmt *st, int i)
{
    static const char *const known[] = { BFILE_HASHED, BFILE_QUERY_SENT, BFILE_ABSENT,
                                         BFILE_CONFIRMED, BFILE_UPLOAD_SENT, BFILE_UPLOADED };
    const unsigned char *t = sqlite3_column_text(st, i);
    for (size_t k = 0; t != NULL && k < sizeof known / sizeof known[0]; k++)
        if (strcmp((const char *)t, known[k]) == 0)
            return known[k];
    return NULL;
}

/* Append the file row st is on to *v (len, cap); -1 when out of memory or
 * the row's state is none of the known ones. */
static int add_file_row(sqlite3_stmt *st, journal_batch_file **v, size_t *len, size_t *cap)
{
    if (*len == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        journal_batch_file *nv = realloc(*v, ncap * sizeof *nv);
        if (nv == NULL)
            return -1;
        *v = nv;
        *cap = ncap;
    }
    journal_batch_file *f = &(*v)[*len];
    f->phys_name = dup_col(st, 0);
    f->local_path = dup_col(st, 1);
    f->size = sqlite3_column_int64(st, 2);
    f->state = state_const(st, 3);
    f->id = sqlite3_column_int64(st, 4);
    (*len)++;
    return f->phys_name == NULL || f->local_path == NULL || f->state == NULL ? -1 : 0;
}

int journal_batch_files_list(journal *j, long long batch_row, const char *state,
                             journal_batch_file **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    journal_batch_file *v = NULL;
    size_t len = 0, cap = 0;
    int rc = journal_query(j, JSTMT_FILES_LIST, "it", batch_row, state);
    while (rc == 1) {
        if (add_file_row(journal_row(j, JSTMT_FILES_LIST), &v, &len, &cap) != 0) {
            rc = journal_refuse(j, "batch files list", "out of memory or an unknown file state");
            break;
        }
        rc = journal_next(j, JSTMT_FILES_LIST);
    }
    journal_reset(j, JSTMT_FILES_LIST);
    if (rc != 0) {
        journal_batch_files_free(v, len);
        return -1;
    }
    *out = v;
    *n = len;
    return 0;
}

/*
 * The names as a JSON array for json_each(): one UPDATE per call instead
 * of one per file, which saves each file's statement overhead (the row
 * rewrites themselves remain; doc/performance.md).  -1 when a name holds a byte outside printable ASCII
 * (JSON would need \u escapes; physical names never do) or memory ran
 * out: the caller then updates row by row.
 */
static int names_json(strbuf *sb, const char *const *names, size_t n)
{
    if (strbuf_putc(sb, '[') != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if ((i > 0 && strbuf_putc(sb, ',') != 0) || strbuf_putc(sb, '"') != 0)
            return -1;
        /* runs without a quote or backslash in one append (a byte a
         * time was 85 M instructions of a 10,000-file submit) */
        const unsigned char *p = (const unsigned char *)names[i], *run = p;
        for (;; p++) {
            if (*p != '\0' && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x7f)
                continue;
            if (strbuf_append(sb, run, (size_t)(p - run)) != 0)
                return -1;
            if (*p == '\0')
                break;
            if (*p < 0x20 || *p >= 0x7f)
                return -1;
            if (strbuf_putc(sb, '\\') != 0 || strbuf_putc(sb, (char)*p) != 0)
                return -1;
            run = p + 1;
        }
        if (strbuf_putc(sb, '"') != 0)
            return -1;
    }
    return strbuf_putc(sb, ']');
}

/* Append v in decimal (a JSON number) to sb. */
static int put_id(strbuf *sb, long long v)
{
    char buf[24], *p = buf + sizeof buf;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        *--p = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--p = '-';
    return strbuf_append(sb, p, (size_t)(buf + sizeof buf - p));
}

/*
 * The group's files by row id.  A chunk is a slice of a list read in id
 * order, so its ids mostly come in runs of consecutive values: each run
 * of at least RUN_MIN ids is one range update (a seek and a walk along the
 * table), the rest one update through a JSON array of ids.
 */
#define RUN_MIN 8
static int update_by_ids(journal *j, long long batch_row, const journal_file_group *g,
                         double now)
{
    strbuf json = STRBUF_INIT;
    int rc = 0, nomem = strbuf_putc(&json, '[') != 0;
    size_t listed = 0;
    for (size_t i = 0; rc == 0 && !nomem && i < g->n;) {
        size_t e = i + 1;
        while (e < g->n && g->ids[e] == g->ids[e - 1] + 1)
            e++;
        if (e - i >= RUN_MIN) {
            rc = journal_run(j, JSTMT_FILES_STATE_RANGE, "tdiii", g->state, now, batch_row,
                             g->ids[i], g->ids[e - 1]);
            i = e;
        }
        for (; !nomem && i < e; i++)    /* a short run: into the list */
            nomem = (listed++ > 0 && strbuf_putc(&json, ',') != 0) ||
                    put_id(&json, g->ids[i]) != 0;
    }
    if (rc == 0 && !nomem && listed > 0) {
        nomem = strbuf_putc(&json, ']') != 0;
        if (!nomem)
            rc = journal_run(j, JSTMT_FILES_STATE_IDS, "tdit", g->state, now, batch_row,
                             strbuf_str(&json));
    }
    strbuf_free(&json);
    return nomem ? journal_refuse(j, "batch files state", "out of memory") : rc;
}

/* Set the state of the group's files, inside the caller's transaction. */
static int update_file_states(journal *j, long long batch_row, const journal_file_group *g,
                              double now)
{
    if (g->n == 0)
        return 0;
    if (g->ids != NULL)
        return update_by_ids(j, batch_row, g, now);
    strbuf json = STRBUF_INIT;
    int rc = 0;
    if (names_json(&json, g->names, g->n) == 0) {
        rc = journal_run(j, JSTMT_FILES_STATE, "tdit", g->state, now, batch_row,
                         strbuf_str(&json));
    } else {
        for (size_t i = 0; rc == 0 && i < g->n; i++)
            rc = journal_run(j, JSTMT_FILE_STATE, "tdit", g->state, now, batch_row,
                             g->names[i]);
    }
    strbuf_free(&json);
    return rc;
}

typedef struct {
    long long batch_row;
    const journal_file_group *groups;
    size_t ngroups;
    long long answered;
    const char *names_json;     /* NULL: no announcement */
    long long *announced;
} files_step;

static int advance_in_txn(journal *j, void *arg)
{
    const files_step *s = arg;
    double now = journal_now();
    for (size_t g = 0; g < s->ngroups; g++)
        if (update_file_states(j, s->batch_row, &s->groups[g], now) != 0)
            return -1;
    if (s->answered > 0 && journal_run(j, JSTMT_QUERY_ANSWERED, "i", s->answered) != 0)
        return -1;
    if (s->names_json == NULL)
        return 0;
    if (journal_run(j, JSTMT_QUERY_INSERT, "itd", s->batch_row, s->names_json, now) != 0)
        return -1;
    *s->announced = sqlite3_last_insert_rowid(journal_db(j));
    return 0;
}

int journal_batch_files_advance(journal *j, long long batch_row,
                                const journal_file_group *groups, size_t ngroups,
                                long long answered, const char *const *names, size_t n,
                                long long *announced)
{
    size_t changes = 0;
    for (size_t g = 0; g < ngroups; g++)
        changes += groups[g].n;
    if (changes == 0 && answered <= 0 && names == NULL)
        return 0;               /* nothing to journal: no empty transaction */
    strbuf json = STRBUF_INIT;
    if (names != NULL && names_json(&json, names, n) != 0) {
        strbuf_free(&json);     /* out of memory: physical names are plain ASCII */
        return journal_refuse(j, "query announcement", "out of memory");
    }
    files_step s = { batch_row, groups, ngroups, answered,
                     names != NULL ? strbuf_str(&json) : NULL, announced };
    int rc = journal_txn(j, advance_in_txn, &s);
    strbuf_free(&json);
    return rc;
}

int journal_batch_files_set_state(journal *j, long long batch_row,
                                  const char *const *phys_names, size_t n,
                                  const char *state)
{
    journal_file_group g = { phys_names, n, state, NULL };
    return journal_batch_files_advance(j, batch_row, &g, 1, 0, NULL, 0, NULL);
}

int journal_batch_file_queries_forget(journal *j, long long batch_row)
{
    /* a submit's recovery calls this outside a transaction: one of its own */
    return journal_in_txn(j) ? journal_run(j, JSTMT_QUERIES_FORGET, "i", batch_row)
                             : journal_run_txn(j, JSTMT_QUERIES_FORGET, "i", batch_row);
}

/* ---- upload limits -------------------------------------------------------- */

int journal_upload_limits_get(journal *j, long long project_id, long *max_files,
                              long long *max_bytes, int *found)
{
    *found = 0;
    int rc = journal_query(j, JSTMT_LIMITS_GET, "i", project_id);
    if (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_LIMITS_GET);
        *found = 1;
        *max_files = (long)sqlite3_column_int64(st, 0);
        *max_bytes = sqlite3_column_int64(st, 1);
    }
    journal_reset(j, JSTMT_LIMITS_GET);
    return rc < 0 ? -1 : 0;
}

int journal_upload_limits_learn(journal *j, long long project_id, long max_files,
                                long long max_bytes, const char *reason, double now)
{
    return journal_run_txn(j, JSTMT_LIMITS_LEARN, "iiidt", project_id, (long long)max_files,
                           max_bytes, now, reason);
}
