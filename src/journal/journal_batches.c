/*
 * journal_batches.c - the SQL of the tables batches and jobs: a submit's
 * batch and its progress, the jobs it created and their last known
 * status, retired batches and leases, and which server batch and app a
 * job belongs to (journal_batches.h).
 *
 * Every statement is in the table below and runs through journal_run /
 * journal_query (journal_internal.h); writes run inside journal_txn.
 */
#include "journal/journal_batches.h"

#include "journal/journal_internal.h"
#include "base/strbuf.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/*
 * A job is recorded at submit with the status a server gives a job it has
 * just created, UNSENT (reference: a real server's query_batch2 of a new
 * batch), so that the first status query finds it unchanged and writes no
 * row; the batch's unchanged_seq stands in for the change number that
 * query would have given it (migration 0013, record_batch below).
 */
#define JOB_STATUS_AT_SUBMIT "'UNSENT'"
/* batches.state of a submitted batch in the statements' text.  A batch's
 * jobs count (status queries, fetch, abort) only once it is submitted: a
 * submit journals them while its submit_batch is in flight
 * (journal_jobs_record_early). */
#define BATCH_SUBMITTED_SQL "7"
_Static_assert(BATCH_SUBMITTED == 7, "BATCH_SUBMITTED_SQL is batch_state's BATCH_SUBMITTED");
/* One row of JSTMT_JOBS_INSERT8: its name is parameter n. */
#define JOB_ROW(n) "(?1, ?" #n ", " JOB_STATUS_AT_SUBMIT ", ?2)"

const journal_sql journal_sql_batches[JSTMT_COUNT] = {
    /* ---- batches ---- */
    [JSTMT_BATCH_FIND] = { "batch lookup",
        "SELECT id, project_id, name, app, server_batch_id, state, resume_state,"
        " error, spec_md5, njobs, request_id, job_set_md5, error_msg FROM batches"
        " WHERE project_id = ?1 AND name = ?2" },
    [JSTMT_BATCH_EXISTS] = { "batch check",
        "SELECT 1 FROM batches WHERE id = ?1" },
    [JSTMT_BATCH_INSERT] = { "batch insert",
        "INSERT INTO batches (project_id, name, app, state, njobs, spec_md5,"
        " request_id, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)" },
    [JSTMT_BATCH_SET_STATE] = { "batch state",
        "UPDATE batches SET state = ?1, resume_state = NULL, error = NULL, error_msg = NULL,"
        " may_pass = 0,"
        " bad_input = NULL, bad_input_why = NULL,"
        " server_batch_id = CASE WHEN ?2 > 0 THEN ?2 ELSE server_batch_id END,"
        " updated_at = ?3 WHERE id = ?4" },
    [JSTMT_BATCH_SET_FAILED] = { "batch failed",
        "UPDATE batches SET state = ?1, resume_state = ?2,"
        " error = ?3, updated_at = ?4, may_pass = ?6, bad_input = ?7, bad_input_why = ?8,"
        " error_msg = ?9 WHERE id = ?5" },
    [JSTMT_BATCH_SET_OWNER] = { "batch owner",
        "UPDATE batches SET request_id = ?1, updated_at = ?2 WHERE id = ?3" },
    [JSTMT_BATCH_SET_JOB_SET] = { "batch job set",
        "UPDATE batches SET job_set_md5 = ?1 WHERE id = ?2" },
    /* with its files recorded, a new batch is hashed (journal_files.c) */
    /* (and an error noted at state new, below, is over) */
    [JSTMT_BATCH_HASHED] = { "batch state",
        "UPDATE batches SET state = ?, error = NULL, error_msg = NULL, updated_at = ?"
        " WHERE id = ? AND state = ?" },
    /* A submit that failed before its inputs were hashed (a missing or
     * unreadable input): nothing to resume from, the batch stays new, but
     * its error is kept so that audit_batches shows it failed at 'new'
     * (issue 19). */
    [JSTMT_BATCH_NOTE_ERROR] = { "batch error",
        "UPDATE batches SET error = ?1, updated_at = ?2, bad_input = ?4, bad_input_why = ?5,"
        " error_msg = ?6 WHERE id = ?3 AND state = 0" },
    [JSTMT_BATCHES_PRUNE] = { "prune batches",
        "DELETE FROM batches WHERE id IN (" JOURNAL_PRUNABLE_BATCHES ")" },
    [JSTMT_BATCH_SUBMITTED] = { "batch submitted",
        "UPDATE batches SET state = ?, resume_state = NULL,"
        " error = NULL, error_msg = NULL, updated_at = ? WHERE id = ?" },
    [JSTMT_BATCH_SERVER_ID_KNOWN] = { "server batch lookup",
        "SELECT 1 FROM batches WHERE project_id = ? AND server_batch_id = ?" },
    [JSTMT_BATCH_SET_SERVER_TIME] = { "record batch server time",
        "UPDATE batches SET status_server_time = ?3"
        " WHERE project_id = ?1 AND name = ?2 AND state = " BATCH_SUBMITTED_SQL
        "   AND EXISTS (SELECT 1 FROM jobs WHERE jobs.batch_id = batches.id)" },
    /* Whether the batch has job rows, not how many: count(*) read every
     * index entry of the batch at every poll. */
    [JSTMT_BATCH_POLL_STATE] = { "batch poll state",
        "SELECT b.state = " BATCH_SUBMITTED_SQL
        "       AND EXISTS (SELECT 1 FROM jobs WHERE jobs.batch_id = b.id),"
        "       b.status_server_time, b.client_session"
        "  FROM batches b WHERE b.project_id = ?1 AND b.name = ?2" },
    [JSTMT_BATCH_RETIRE] = { "mark batch retired",
        "UPDATE batches SET retired = 1, updated_at = ?3"
        " WHERE project_id = ?1 AND name = ?2" },
    [JSTMT_BATCH_LEASE] = { "record batch lease",
        "UPDATE batches SET lease = ?4, updated_at = ?3"
        " WHERE project_id = ?1 AND name = ?2" },
    [JSTMT_BATCH_CLIENT_SESSION] = { "record the client's batch",
        "UPDATE batches SET client_session = ?3"
        " WHERE project_id = ?1 AND name = ?2"
        "   AND client_session IS NOT ?3" },
    /* The newest batch of the project created on the server that holds a
     * job of that name (job names are unique on a server, but a journal
     * may span server resets).  Probes (batch_id, name) in the jobs'
     * unique index for each batch of the project, newest first: no full
     * scan of jobs, which holds every job ever submitted (a fetch looks
     * its job up). */
    [JSTMT_BATCH_OF_JOB] = { "read job batch",
        "SELECT b.server_batch_id, b.app FROM batches b"
        " JOIN jobs ON jobs.batch_id = b.id AND jobs.name = ?2"
        " WHERE b.project_id = ?1 AND b.server_batch_id > 0"
        "   AND b.state = " BATCH_SUBMITTED_SQL " ORDER BY b.id DESC LIMIT 1" },

    /* ---- jobs ---- */
    [JSTMT_JOB_INSERT] = { "jobs insert",
        "INSERT OR IGNORE INTO jobs (batch_id, name, status, updated_at)"
        " VALUES (?, ?, " JOB_STATUS_AT_SUBMIT ", ?)" },
    /* Eight jobs a statement (?1 batch, ?2 time, ?3..?10 names): a
     * statement's own work (its cursors on the table and both indexes,
     * its end) was more than half of a job's insert: 10,000 jobs took
     * 159 M instructions one a statement, 70 M eight a statement
     * (callgrind, SQLite 3.40; doc/performance.md, issue 22).  The rows
     * go in in VALUES order, so jobs.id keeps the client's order. */
    [JSTMT_JOBS_INSERT8] = { "jobs insert",
        "INSERT OR IGNORE INTO jobs (batch_id, name, status, updated_at) VALUES "
        JOB_ROW(3) "," JOB_ROW(4) "," JOB_ROW(5) "," JOB_ROW(6) ","
        JOB_ROW(7) "," JOB_ROW(8) "," JOB_ROW(9) "," JOB_ROW(10) },
    /* Rows journaled early (journal_jobs_record_early) for a submit_batch
     * that failed; never those of a submitted batch. */
    [JSTMT_JOBS_FORGET_UNSUBMITTED] = { "forget unsubmitted jobs",
        "DELETE FROM jobs WHERE batch_id = ?1 AND NOT EXISTS"
        " (SELECT 1 FROM batches WHERE id = ?1 AND state = " BATCH_SUBMITTED_SQL ")" },
    [JSTMT_JOBS_PRUNE] = { "prune jobs",
        "DELETE FROM jobs WHERE batch_id IN (" JOURNAL_PRUNABLE_BATCHES ")" },
    [JSTMT_JOB_ABORTED] = { "mark job aborted",
        "UPDATE jobs SET aborted = 1"
        " WHERE aborted = 0 AND name = ?2 AND batch_id IN"
        "   (SELECT id FROM batches WHERE project_id = ?1 AND state = " BATCH_SUBMITTED_SQL ")" },
    /* Every row, in insertion order: the batch's rows are one run of row
     * ids (batches.job_lo .. job_hi, migration 0012), read by a rowid
     * range that needs no sort (through an index, ORDER BY jobs.id built
     * a temporary b-tree of the batch: 23 M instructions per 10,000 jobs).
     * ?1..?2 the range, ?3 the batch. */
    [JSTMT_JOBS_ALL] = { "job list",
        "SELECT name, status FROM jobs"
        " WHERE id BETWEEN ?1 AND ?2 AND +batch_id = ?3 AND aborted = 0"
        " ORDER BY id" },
    /* The same for a batch whose range is not recorded (rows written by
     * another program): through the batch_id index, then a sort. */
    [JSTMT_JOBS_ALL_SORTED] = { "job list",
        "SELECT name, status FROM jobs WHERE batch_id = ?1 AND aborted = 0"
        " ORDER BY id" },
    /* Rows of batch ?1 changed after number ?2: through the (batch_id,
     * status_seq) index, which reads only those. */
    [JSTMT_JOBS_CHANGED] = { "job list",
        "SELECT name, status FROM jobs"
        " WHERE batch_id = ?1 AND status_seq > ?2 AND aborted = 0" },
    /* The same when the batch's unchanged jobs (status_seq 0) carry a
     * number after ?2 (batches.unchanged_seq, 0013): they are listed too,
     * through the same index (two ranges of it). */
    [JSTMT_JOBS_CHANGED_OR_UNCHANGED] = { "job list",
        "SELECT name, status FROM jobs"
        " WHERE batch_id = ?1 AND (status_seq = 0 OR status_seq > ?2) AND aborted = 0" },

    /* ---- batches and jobs: status recording (issue 22) ---- */
    /* The batch a reply's group is recorded into: its id, its job rows'
     * range, and whether the reply (server_time ?3; <= 0: none) is at
     * least as new as the one recorded (two queries crossing). */
    [JSTMT_BATCH_STATUS_TARGET] = { "batch reply check",
        "SELECT id, job_lo, job_hi,"
        "       (?3 <= 0 OR status_server_time IS NULL OR status_server_time <= ?3),"
        "       unchanged_seq"
        "  FROM batches WHERE project_id = ?1 AND name = ?2"
        "   AND state = " BATCH_SUBMITTED_SQL },
    /* The first recorded group of a batch's jobs gives its unchanged jobs
     * the reply's change number ?2 (0013). */
    [JSTMT_BATCH_UNCHANGED_SEQ] = { "batch unchanged jobs",
        "UPDATE batches SET unchanged_seq = ?2 WHERE id = ?1 AND unchanged_seq IS NULL" },
    /* After a submit's inserts: the range its job rows span. */
    [JSTMT_BATCH_JOB_RANGE] = { "batch job range",
        "UPDATE batches SET job_lo = (SELECT min(id) FROM jobs WHERE batch_id = ?1),"
        "                   job_hi = (SELECT max(id) FROM jobs WHERE batch_id = ?1)"
        " WHERE id = ?1" },
    /* A batch's rows with their recorded status, in row id order (the
     * order the server lists them in): compared in C with the reply. */
    [JSTMT_JOBS_STATUS_READ] = { "job statuses",
        "SELECT id, name, status FROM jobs"
        " WHERE id BETWEEN ?1 AND ?2 AND +batch_id = ?3 ORDER BY id" },
    /* The same without a recorded range, in the index's order (the
     * comparison finds a row's reply job by name when out of order). */
    [JSTMT_JOBS_STATUS_READ_BATCH] = { "job statuses",
        "SELECT id, name, status FROM jobs WHERE batch_id = ?1" },
    /* The rows (a JSON array of row ids, ?4) that took status ?1: one
     * statement per chunk of changed rows of one status, not one per job
     * (a statement per job, finding its row by name and its batch and
     * change number by subqueries, was 25,000 instructions a job). */
    [JSTMT_JOBS_STATUS_SET] = { "update job status",
        "UPDATE jobs SET status = ?1, updated_at = ?2, status_seq = ?3"
        " WHERE id IN (SELECT value FROM json_each(?4))" },
    /* The same for a run of consecutive row ids ?4..?5 (every job of a
     * batch that changed alike): no list to parse and no temporary table
     * of its ids. */
    [JSTMT_JOBS_STATUS_SET_RUN] = { "update job status",
        "UPDATE jobs SET status = ?1, updated_at = ?2, status_seq = ?3"
        " WHERE id BETWEEN ?4 AND ?5" },
};

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

/* ---- batches ------------------------------------------------------------- */

void journal_batch_free(journal_batch *b)
{
    if (b == NULL)
        return;
    free(b->name);
    free(b->app);
    free(b->error);
    free(b->error_msg);
    free(b->spec_md5);
    free(b->job_set_md5);
    memset(b, 0, sizeof *b);
}

/* The batch row st is on; -1 when out of memory (out freed). */
static int batch_from_row(sqlite3_stmt *st, journal_batch *out)
{
    out->id = sqlite3_column_int64(st, 0);
    out->project_id = sqlite3_column_int64(st, 1);
    out->name = dup_col(st, 2);
    out->app = dup_col(st, 3);
    out->server_batch_id = sqlite3_column_int64(st, 4);
    out->state = (batch_state)sqlite3_column_int(st, 5);
    out->resume_state = sqlite3_column_type(st, 6) == SQLITE_NULL
                            ? out->state
                            : (batch_state)sqlite3_column_int(st, 6);
    out->error = dup_col(st, 7);
    out->spec_md5 = dup_col(st, 8);
    out->njobs = (long)sqlite3_column_int64(st, 9);
    out->request_id = sqlite3_column_int64(st, 10);
    out->job_set_md5 = dup_col(st, 11);     /* NULL before migration 0004 */
    out->error_msg = dup_col(st, 12);       /* NULL before migration 0019 */
    if (out->name == NULL || out->app == NULL || out->spec_md5 == NULL) {
        journal_batch_free(out);
        return -1;
    }
    return 0;
}

int journal_batch_find(journal *j, long long project_id, const char *name,
                       journal_batch *out, int *found)
{
    memset(out, 0, sizeof *out);
    *found = 0;
    int rc = journal_query(j, JSTMT_BATCH_FIND, "it", project_id, name);
    if (rc == 1) {
        if (batch_from_row(journal_row(j, JSTMT_BATCH_FIND), out) == 0)
            *found = 1;
        else
            rc = journal_refuse(j, "batch lookup", "out of memory");
    }
    journal_reset(j, JSTMT_BATCH_FIND);
    return rc < 0 ? -1 : 0;
}

typedef struct {
    long long project_id;
    const char *name, *app, *spec_md5;
    long njobs;
    long long request_id;
    long long *batch_row;
} batch_new;

static int batch_insert(journal *j, void *arg)
{
    const batch_new *b = arg;
    double now = journal_now();
    if (journal_run(j, JSTMT_BATCH_INSERT, "ittiitidd", b->project_id, b->name, b->app,
                    (long long)BATCH_NEW, (long long)b->njobs, b->spec_md5, b->request_id,
                    now, now) != 0)
        return -1;
    *b->batch_row = sqlite3_last_insert_rowid(journal_db(j));
    return 0;
}

int journal_batch_create(journal *j, long long project_id, const char *name,
                         const char *app, long njobs, const char *spec_md5,
                         long long request_id, long long *batch_row)
{
    batch_new b = { project_id, name, app, spec_md5, njobs, request_id, batch_row };
    return journal_txn(j, batch_insert, &b);
}

int journal_batch_set_state(journal *j, long long batch_row, batch_state state,
                            long long server_batch_id)
{
    return journal_run_txn(j, JSTMT_BATCH_SET_STATE, "iidi", (long long)state,
                           server_batch_id, journal_now(), batch_row);
}

int journal_batch_set_failed(journal *j, long long batch_row,
                             batch_state resume_state, const journal_batch_error *e)
{
    return journal_run_txn(j, JSTMT_BATCH_SET_FAILED, "iitdiittt", (long long)BATCH_FAILED,
                           (long long)resume_state, e->error, journal_now(), batch_row,
                           (long long)(e->may_pass != 0), e->bad_input, e->bad_input_why,
                           e->error_msg);
}

int journal_batch_set_owner(journal *j, long long batch_row, long long request_id)
{
    return journal_run_txn(j, JSTMT_BATCH_SET_OWNER, "idi", request_id, journal_now(),
                           batch_row);
}

int journal_batch_set_job_set(journal *j, long long batch_row, const char *job_set_md5)
{
    return journal_run_txn(j, JSTMT_BATCH_SET_JOB_SET, "ti", job_set_md5, batch_row);
}

int journal_parent_batch(journal *j, long long batch_row)
{
    int rc = journal_query(j, JSTMT_BATCH_EXISTS, "i", batch_row);
    journal_reset(j, JSTMT_BATCH_EXISTS);
    if (rc < 0)
        return -1;
    return rc == 1 ? 0 : journal_refuse(j, "batch rows", "no such batch");
}

int journal_server_batch_known(journal *j, long long project_id,
                               long long server_batch_id, int *known)
{
    int rc = journal_query(j, JSTMT_BATCH_SERVER_ID_KNOWN, "ii", project_id,
                           server_batch_id);
    journal_reset(j, JSTMT_BATCH_SERVER_ID_KNOWN);
    if (rc < 0)
        return -1;
    *known = rc == 1;
    return 0;
}

typedef struct {
    long long batch_row;
    const char *const *names;
    size_t n;
} batch_jobs;

/* The job rows (OR IGNORE: those already there stay), after the one check
 * of their batch that journal_bulk_txn leaves to its caller. */
static int job_rows_insert(journal *j, const batch_jobs *b, double now)
{
    size_t i = 0;
    if (journal_parent_batch(j, b->batch_row) != 0)
        return -1;
    for (; i + 8 <= b->n; i += 8) {
        const char *const *m = b->names + i;
        if (journal_run(j, JSTMT_JOBS_INSERT8, "idtttttttt", b->batch_row, now, m[0], m[1],
                        m[2], m[3], m[4], m[5], m[6], m[7]) != 0)
            return -1;
    }
    for (; i < b->n; i++)
        if (journal_run(j, JSTMT_JOB_INSERT, "itd", b->batch_row, b->names[i], now) != 0)
            return -1;
    return 0;
}

static int jobs_insert_early(journal *j, void *arg)
{
    return job_rows_insert(j, arg, journal_now());
}

int journal_jobs_record_early(journal *j, long long batch_row,
                              const char *const *job_names, size_t n)
{
    batch_jobs b = { batch_row, job_names, n };
    return journal_bulk_txn(j, jobs_insert_early, &b);
}

int journal_jobs_forget_unsubmitted(journal *j, long long batch_row)
{
    return journal_run_txn(j, JSTMT_JOBS_FORGET_UNSUBMITTED, "i", batch_row);
}

static int jobs_insert(journal *j, void *arg)
{
    const batch_jobs *b = arg;
    double now = journal_now();
    if (job_rows_insert(j, b, now) != 0)
        return -1;
    if (journal_run(j, JSTMT_BATCH_SUBMITTED, "idi", (long long)BATCH_SUBMITTED, now,
                    b->batch_row) != 0 ||
        journal_run(j, JSTMT_BATCH_JOB_RANGE, "i", b->batch_row) != 0)
        return -1;
    /* answered announcements are deleted with their answer; one a crash
     * left after its files were resolved is harmless (its files are no
     * longer 'hashed') and goes here */
    return journal_run(j, JSTMT_QUERIES_FORGET, "i", b->batch_row);
}

int journal_batch_set_submitted(journal *j, long long batch_row,
                                const char *const *job_names, size_t n)
{
    batch_jobs b = { batch_row, job_names, n };
    /* rows written early (n = 0): a state change, no bulk insert */
    return n > 0 ? journal_bulk_txn(j, jobs_insert, &b) : journal_txn(j, jobs_insert, &b);
}

/* ---- job statuses (queries) ---------------------------------------------- */

/* Rows whose status changes: their id and the reply's status. */
typedef struct {
    long long id;
    const char *status;
} status_change;

typedef struct {
    long long project_id;
    const journal_batch_report *reports;
    size_t nreports;
    double server_time, now;
    long long seq;                      /* the change number rows take */
    long long changed;                  /* job rows changed */
    int numbered;                       /* seq given to a batch's unchanged jobs */
    status_change *ch;                  /* one batch's changed rows */
    size_t nch, cap;
    const journal_job_status **index;   /* one batch's reply by name, lazily */
    strbuf json;
} status_reply;

static int cmp_status_ptr(const void *a, const void *b)
{
    const journal_job_status *x = *(const journal_job_status *const *)a;
    const journal_job_status *y = *(const journal_job_status *const *)b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x < y ? -1 : x > y);
}

/* The reply's job named `name`, or NULL.  The server lists a batch's jobs
 * in submit order, which is the rows' order, so the job after the last
 * one found is tried first; a row out of that order looks it up in the
 * reply sorted by name (built once).  -1: out of memory. */
static int reply_job(status_reply *s, const journal_batch_report *rep, size_t *next,
                     const char *name, const journal_job_status **job)
{
    *job = NULL;
    if (*next < rep->njobs && strcmp(rep->jobs[*next].name, name) == 0) {
        *job = &rep->jobs[(*next)++];
        return 0;
    }
    if (s->index == NULL) {
        if ((s->index = malloc(rep->njobs * sizeof *s->index)) == NULL)
            return -1;
        for (size_t i = 0; i < rep->njobs; i++)
            s->index[i] = &rep->jobs[i];
        qsort(s->index, rep->njobs, sizeof *s->index, cmp_status_ptr);
    }
    size_t lo = 0, hi = rep->njobs;     /* the first of that name */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->index[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < rep->njobs && strcmp(s->index[lo]->name, name) == 0) {
        *job = s->index[lo];
        *next = (size_t)(*job - rep->jobs) + 1;
    }
    return 0;
}

static int add_change(status_reply *s, long long id, const char *status)
{
    if (s->nch == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        status_change *ch = realloc(s->ch, cap * sizeof *ch);
        if (ch == NULL)
            return -1;
        s->ch = ch;
        s->cap = cap;
    }
    s->ch[s->nch].id = id;
    s->ch[s->nch++].status = status;
    return 0;
}

/* A batch as a status query sees it (JSTMT_BATCH_STATUS_TARGET). */
typedef struct {
    int found;                  /* the journal knows it */
    int current;                /* the reply is at least as new as its record */
    long long id;
    int ranged;                 /* job_lo .. job_hi recorded (0012) */
    long long lo, hi;
    long long unchanged_seq;    /* of its jobs with status_seq 0; -1: none yet (0013) */
} batch_target;

static int target_of(journal *j, long long project_id, const char *batch,
                     double server_time, batch_target *t)
{
    memset(t, 0, sizeof *t);
    int rc = journal_query(j, JSTMT_BATCH_STATUS_TARGET, "itd", project_id, batch,
                           server_time);
    if (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_BATCH_STATUS_TARGET);
        t->found = 1;
        t->id = sqlite3_column_int64(st, 0);
        t->ranged = sqlite3_column_type(st, 1) != SQLITE_NULL &&
                    sqlite3_column_type(st, 2) != SQLITE_NULL;
        t->lo = sqlite3_column_int64(st, 1);
        t->hi = sqlite3_column_int64(st, 2);
        t->current = sqlite3_column_int(st, 3) != 0;
        t->unchanged_seq = sqlite3_column_type(st, 4) == SQLITE_NULL
                               ? -1 : sqlite3_column_int64(st, 4);
    }
    journal_reset(j, JSTMT_BATCH_STATUS_TARGET);
    return rc < 0 ? -1 : 0;
}

/* Compare the batch's rows with the reply in C: the rows whose recorded
 * status differs go to s->ch. */
static int find_changes(journal *j, status_reply *s, const journal_batch_report *rep,
                        const batch_target *t)
{
    size_t next = 0;
    jstmt id = t->ranged ? JSTMT_JOBS_STATUS_READ : JSTMT_JOBS_STATUS_READ_BATCH;
    int rc = t->ranged ? journal_query(j, id, "iii", t->lo, t->hi, t->id)
                       : journal_query(j, id, "i", t->id);
    while (rc == 1) {
        sqlite3_stmt *st = journal_row(j, id);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *old = (const char *)sqlite3_column_text(st, 2);
        const journal_job_status *job = NULL;
        if (name != NULL && reply_job(s, rep, &next, name, &job) != 0)
            rc = journal_refuse(j, "job statuses", "out of memory");
        else if (job != NULL && (old == NULL || strcmp(old, job->status) != 0) &&
                 add_change(s, sqlite3_column_int64(st, 0), job->status) != 0)
            rc = journal_refuse(j, "job statuses", "out of memory");
        else
            rc = journal_next(j, id);
    }
    journal_reset(j, id);
    return rc < 0 ? -1 : 0;
}

static int cmp_change(const void *a, const void *b)
{
    const status_change *x = a, *y = b;
    int c = strcmp(x->status, y->status);
    return c != 0 ? c : (x->id > y->id) - (x->id < y->id);
}

/* Rows per UPDATE of a list: bounds the JSON text (about 8 bytes a row). */
#define STATUS_CHUNK 4096
/* A run of at least this many consecutive row ids is one UPDATE by range. */
#define STATUS_RUN 8

/* Append ",<id>" (the first without the comma) to the JSON list. */
static int json_id(strbuf *sb, long long id)
{
    char num[24], *p = num + sizeof num;
    unsigned long long v = id < 0 ? 0 : (unsigned long long)id;    /* row ids are > 0 */
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    if (sb->len > 1 && strbuf_putc(sb, ',') != 0)
        return -1;
    return strbuf_append(sb, p, (size_t)(num + sizeof num - p));
}

/* UPDATE the rows listed in s->json (then empty it) to status. */
static int flush_list(journal *j, status_reply *s, const char *status)
{
    if (s->json.len <= 1)
        return 0;
    if (strbuf_putc(&s->json, ']') != 0)
        return journal_refuse(j, "update job status", "out of memory");
    if (journal_run(j, JSTMT_JOBS_STATUS_SET, "tdit", status, s->now, s->seq,
                    s->json.data) != 0)
        return -1;
    s->changed += sqlite3_changes(journal_db(j));
    s->json.len = 0;
    return strbuf_putc(&s->json, '[') == 0 ? 0 : journal_refuse(j, "update job status",
                                                              "out of memory");
}

/* Write the changes ch[0..n) (one status, ids ascending): runs of
 * consecutive ids by range, the other rows by lists. */
static int write_status(journal *j, status_reply *s, const status_change *ch, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t end = i + 1;
        while (end < n && ch[end].id == ch[end - 1].id + 1)
            end++;
        if (end - i >= STATUS_RUN) {
            if (journal_run(j, JSTMT_JOBS_STATUS_SET_RUN, "tdiii", ch[i].status, s->now,
                            s->seq, ch[i].id, ch[end - 1].id) != 0)
                return -1;
            s->changed += sqlite3_changes(journal_db(j));
        } else {
            for (size_t k = i; k < end; k++)
                if (json_id(&s->json, ch[k].id) != 0)
                    return journal_refuse(j, "update job status", "out of memory");
            if ((s->json.len >= 8 * STATUS_CHUNK || end == n) &&
                flush_list(j, s, ch[i].status) != 0)
                return -1;
        }
        i = end;
    }
    return flush_list(j, s, ch[0].status);
}

/* Write s->ch: the rows that take each status. */
static int write_changes(journal *j, status_reply *s)
{
    int grouped = 1;        /* the common case: every change one status */
    for (size_t i = 1; grouped && i < s->nch; i++)
        grouped = strcmp(s->ch[i - 1].status, s->ch[i].status) <= 0 &&
                  (s->ch[i - 1].id < s->ch[i].id ||
                   strcmp(s->ch[i - 1].status, s->ch[i].status) != 0);
    if (!grouped)
        qsort(s->ch, s->nch, sizeof *s->ch, cmp_change);
    s->json.len = 0;
    if (strbuf_putc(&s->json, '[') != 0)
        return journal_refuse(j, "update job status", "out of memory");
    for (size_t i = 0; i < s->nch;) {
        size_t end = i + 1;
        while (end < s->nch && strcmp(s->ch[end].status, s->ch[i].status) == 0)
            end++;
        if (write_status(j, s, s->ch + i, end - i) != 0)
            return -1;
        i = end;
    }
    return 0;
}

/* One batch's group: skipped for a batch the journal does not know and
 * for a reply older than the one recorded; else the reply's server_time
 * is recorded and the rows whose status changed are written. */
static int record_batch(journal *j, status_reply *s, const journal_batch_report *rep)
{
    batch_target t;
    if (target_of(j, s->project_id, rep->batch, s->server_time, &t) != 0)
        return -1;
    if (!t.found || !t.current)
        return 0;
    if (s->server_time > 0 && journal_run(j, JSTMT_BATCH_SET_SERVER_TIME, "itd",
                                          s->project_id, rep->batch, s->server_time) != 0)
        return -1;
    if (rep->njobs == 0)
        return 0;
    /* The batch's first recorded group: its jobs unchanged since the
     * submit take this reply's number, as a rewrite of each would give
     * them, so the client's next partial query lists them once. */
    if (t.unchanged_seq < 0) {
        if (journal_run(j, JSTMT_BATCH_UNCHANGED_SEQ, "ii", t.id, s->seq) != 0)
            return -1;
        s->numbered |= sqlite3_changes(journal_db(j)) > 0;
    }
    s->nch = 0;
    free(s->index);
    s->index = NULL;
    if (find_changes(j, s, rep, &t) != 0)
        return -1;
    return write_changes(j, s);
}

static int record_reply(journal *j, void *arg)
{
    status_reply *s = arg;
    s->changed = 0;
    s->numbered = 0;
    /* Every row changed by this reply takes the project's next number;
     * the counter itself moves once, after the rows. */
    int rc = journal_query(j, JSTMT_PROJECT_STATUS_SEQ, "i", s->project_id);
    s->seq = rc == 1 ? sqlite3_column_int64(journal_row(j, JSTMT_PROJECT_STATUS_SEQ), 0) + 1 : 1;
    journal_reset(j, JSTMT_PROJECT_STATUS_SEQ);
    if (rc < 0)
        return -1;
    for (size_t b = 0; b < s->nreports; b++)
        if (record_batch(j, s, &s->reports[b]) != 0)
            return -1;
    /* An unchanged poll writes nothing here. */
    if (s->changed > 0 || s->numbered)
        return journal_run(j, JSTMT_PROJECT_STATUS_SEQ_ADVANCE, "i", s->project_id);
    return 0;
}

int journal_jobs_record_statuses(journal *j, long long project_id,
                                 const journal_batch_report *reports,
                                 size_t nreports, double server_time,
                                 double now, long long *changed)
{
    status_reply s = { project_id, reports, nreports, server_time, now, 0, 0, 0,
                       NULL, 0, 0, NULL, STRBUF_INIT };
    if (changed != NULL)
        *changed = 0;
    int rc = journal_txn(j, record_reply, &s);
    if (rc == 0 && changed != NULL)
        *changed = s.changed;
    free(s.ch);
    free(s.index);
    strbuf_free(&s.json);
    return rc;
}

int journal_jobs_poll_state(journal *j, long long project_id, const char *batch,
                            journal_batch_poll *out)
{
    memset(out, 0, sizeof *out);
    int rc = journal_query(j, JSTMT_BATCH_POLL_STATE, "it", project_id, batch);
    if (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_BATCH_POLL_STATE);
        out->njobs = sqlite3_column_int64(st, 0);
        out->has_server_time = sqlite3_column_type(st, 1) != SQLITE_NULL;
        out->server_time = sqlite3_column_double(st, 1);
        out->client_session = sqlite3_column_int64(st, 2);
    }
    journal_reset(j, JSTMT_BATCH_POLL_STATE);
    return rc < 0 ? -1 : 0;
}

/* Start the statement that lists batch (project_id, batch)'s rows, *id:
 * since < 0, all, by the batch's row id range (sorted without one); else
 * the ones changed after since, the unchanged ones too when the batch's
 * number for them is after since.  journal_query's result (0 for a batch
 * the journal does not know). */
static int jobs_list(journal *j, long long project_id, const char *batch, long long since,
                     jstmt *id)
{
    *id = JSTMT_JOBS_CHANGED;
    batch_target t;
    if (target_of(j, project_id, batch, 0, &t) != 0)
        return -1;
    if (!t.found)
        return 0;
    if (since >= 0) {
        if (t.unchanged_seq > since)
            *id = JSTMT_JOBS_CHANGED_OR_UNCHANGED;
        return journal_query(j, *id, "ii", t.id, since);
    }
    *id = t.ranged ? JSTMT_JOBS_ALL : JSTMT_JOBS_ALL_SORTED;
    return t.ranged ? journal_query(j, *id, "iii", t.lo, t.hi, t.id)
                    : journal_query(j, *id, "i", t.id);
}

int journal_jobs_each(journal *j, long long project_id, const char *batch,
                      long long since, journal_job_visit_fn visit, void *arg, size_t *n)
{
    jstmt id;
    *n = 0;
    int rc = jobs_list(j, project_id, batch, since, &id);
    int stopped = 0;
    while (rc == 1) {
        sqlite3_stmt *st = journal_row(j, id);
        const unsigned char *name = sqlite3_column_text(st, 0);
        const unsigned char *status = sqlite3_column_text(st, 1);
        stopped = visit(arg, name ? (const char *)name : "", (const char *)status);
        if (stopped != 0)
            break;
        (*n)++;
        rc = journal_next(j, id);
    }
    journal_reset(j, id);
    if (stopped != 0)
        return stopped;
    return rc < 0 ? -1 : 0;
}

/* ---- retire, lease, abort, the client's batch ---------------------------- */

typedef struct {
    jstmt id;
    long long project_id;
    const char *batch;
    double now, lease;
    int changed;
} batch_update;

static int update_batch(journal *j, void *arg)
{
    batch_update *u = arg;
    int rc = u->id == JSTMT_BATCH_LEASE
                 ? journal_run(j, u->id, "itdd", u->project_id, u->batch, u->now, u->lease)
                 : journal_run(j, u->id, "itd", u->project_id, u->batch, u->now);
    u->changed = rc == 0 && sqlite3_changes(journal_db(j)) > 0;
    return rc;
}

/* One UPDATE of the batch (project_id, name) in its own transaction;
 * *found (may be NULL) = whether it changed a row. */
static int update_batch_txn(journal *j, batch_update *u, int *found)
{
    if (found != NULL)
        *found = 0;
    int rc = journal_txn(j, update_batch, u);
    if (rc == 0 && found != NULL)
        *found = u->changed;
    return rc;
}

int journal_batch_mark_retired(journal *j, long long project_id,
                               const char *batch, double now, int *found)
{
    batch_update u = { JSTMT_BATCH_RETIRE, project_id, batch, now, 0, 0 };
    return update_batch_txn(j, &u, found);
}

int journal_batch_set_lease(journal *j, long long project_id,
                            const char *batch, double lease, double now,
                            int *found)
{
    batch_update u = { JSTMT_BATCH_LEASE, project_id, batch, now, lease, 0 };
    return update_batch_txn(j, &u, found);
}

int journal_jobs_mark_aborted(journal *j, long long project_id, const char *job)
{
    return journal_run_txn(j, JSTMT_JOB_ABORTED, "it", project_id, job);
}

typedef struct {
    long long project_id, session_id;
    const char *batch;
} client_batch;

static int client_batch_in_txn(journal *j, void *arg)
{
    const client_batch *c = arg;
    if (journal_run(j, JSTMT_BATCH_CLIENT_SESSION, "iti", c->project_id, c->batch,
                    c->session_id) != 0)
        return -1;
    /* An earlier run's submit of this batch is answered now (issue 19). */
    return journal_run(j, JSTMT_REQUEST_CONFIRM, "iti", c->project_id, c->batch,
                       c->session_id);
}

int journal_batch_set_client_session(journal *j, long long project_id, const char *batch,
                                     long long session_id)
{
    client_batch c = { project_id, session_id, batch };
    return journal_txn(j, client_batch_in_txn, &c);
}

int journal_batch_note_error(journal *j, long long batch_row, const journal_batch_error *e)
{
    return journal_run_txn(j, JSTMT_BATCH_NOTE_ERROR, "tdittt", e->error, journal_now(),
                           batch_row, e->bad_input, e->bad_input_why, e->error_msg);
}

/* ---- a job's batch (fetch) ----------------------------------------------- */

/* The server id and (app != NULL) app, malloc'd, of the batch of job. */
static int job_batch(journal *j, long long project_id, const char *job,
                     long long *server_batch_id, char **app, int *found)
{
    *found = 0;
    if (app != NULL)
        *app = NULL;
    int rc = journal_query(j, JSTMT_BATCH_OF_JOB, "it", project_id, job);
    if (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_BATCH_OF_JOB);
        if (server_batch_id != NULL)
            *server_batch_id = sqlite3_column_int64(st, 0);
        if (app != NULL && (*app = dup_col(st, 1)) == NULL)
            rc = -1;            /* out of memory (a NOT NULL column) */
        else
            *found = 1;
    }
    journal_reset(j, JSTMT_BATCH_OF_JOB);
    return rc < 0 ? -1 : 0;
}

int journal_job_server_batch(journal *j, long long project_id, const char *job,
                             long long *server_batch_id, int *found)
{
    return job_batch(j, project_id, job, server_batch_id, NULL, found);
}

int journal_job_app(journal *j, long long project_id, const char *job,
                    char **app, int *found)
{
    return job_batch(j, project_id, job, NULL, app, found);
}
