/*
 * journal_blah.c - tables blah_groups and blah_jobs: the BLAH dialect's
 * jobs, the groups that become BOINC batches, cancels and fetched outputs
 * (see journal_blah.h; doc/journal.md).
 *
 * A job's BOINC state is not copied here: its status is the jobs row of
 * the group's batch (recorded by the status queries), and whether the
 * group reached the server is its batch row's submit state.
 */
#include "journal/journal_blah.h"

#include "journal/journal_claims.h"
#include "journal/journal_internal.h"
#include "base/strbuf.h"

#include <stdio.h>

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* The URL with its password (migration 0006 keeps it apart), as the
 * recovery scan rebuilds it. */
#define PROJECT_URL_SQL \
    " CASE WHEN p.url_password IS NULL OR instr(p.url, ':***@') = 0 THEN p.url" \
    " ELSE substr(p.url, 1, instr(p.url, ':***@')) || p.url_password" \
    " || substr(p.url, instr(p.url, ':***@') + 4) END"

/* One job with what its state is derived from (read_job's columns):
 * its group, its group's newest batch and its BOINC job row. */
#define BLAH_JOB_SQL(where) \
    "SELECT bj.id, bj.group_id, g.project_id, bj.gahp_id, g.batch_name, g.state," \
    " bj.fetch_args, bj.cancelled_at IS NOT NULL, bj.abort_state," \
    " bj.fetched_at IS NOT NULL, bj.fetch_result, coalesce(b.state, -1), " \
    BLAH_BATCH_ERROR_SQL ", jb.status," \
    PROJECT_URL_SQL ", p.authenticator, coalesce(b.may_pass, 0), bj.held_reason," \
    " b.bad_input IS NOT NULL, bj.fetch_started_at IS NOT NULL, bj.held_at IS NOT NULL," \
    " bj.exit_code IS NOT NULL, coalesce(bj.exit_code, 0), coalesce(bj.wall_s, 0)," \
    " coalesce(bj.cpu_s, 0)" \
    " FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id" \
    " JOIN projects p ON p.id = g.project_id" \
    " LEFT JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name" \
    " LEFT JOIN jobs jb ON jb.batch_id = b.id AND jb.name = bj.gahp_id" \
    " WHERE " where " ORDER BY b.id DESC LIMIT 1"

/* Closed groups with a job HTCondor still waits for whose submit ended in
 * a failure that may pass, to be submitted again by the scheduler
 * (doc/blah-core.md): the project did not answer (batches.may_pass), or
 * the submit stopped before its batch was final - no batch row yet, or a
 * batch left between new and submit_batch - because the journal or memory
 * failed (found by the BLAH fault sweep: such a group answered 1 forever).
 * Its request has ended (no submit of it runs) and its batch was not
 * refused for one input (the split below takes those).  The submit engine
 * resumes from the batch's journaled state and never creates a batch or
 * job twice. */
#define BLAH_RETRY_GROUPS_SQL \
    "SELECT g.id FROM blah_groups g" \
    " LEFT JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name" \
    " JOIN requests r ON r.id = g.request_id" \
    " WHERE g.state = 'closed' AND r.state IN ('completed', 'delivered')" \
    " AND (b.id IS NULL OR (b.state < 7 AND b.bad_input IS NULL)" \
    "      OR (b.state = 8 AND b.may_pass = 1))" \
    " AND EXISTS (SELECT 1 FROM blah_jobs bj WHERE bj.group_id = g.id" \
    "             AND bj.cancelled_at IS NULL AND bj.held_at IS NULL)"

/* Closed groups whose submit was refused for one input (batches.bad_input)
 * before submit_batch (no job of it was made; at state new, when the
 * input could not even be hashed, nothing was sent), its request ended (no
 * submit of it runs), with a job neither cancelled nor held: the scheduler
 * holds the jobs that gave the input and submits the others as a new
 * batch (doc/blah-core.md, "Per-job isolation"). */
#define BLAH_SPLIT_GROUPS_SQL \
    "SELECT g.id FROM blah_groups g JOIN batches b" \
    " ON b.project_id = g.project_id AND b.name = g.batch_name" \
    " JOIN requests r ON r.id = g.request_id" \
    " WHERE g.state = 'closed' AND b.bad_input IS NOT NULL" \
    " AND ((b.state = 8 AND b.may_pass = 0 AND b.resume_state < 6) OR b.state = 0)" \
    " AND r.state IN ('completed', 'delivered')" \
    " AND EXISTS (SELECT 1 FROM blah_jobs bj WHERE bj.group_id = g.id" \
    "             AND bj.cancelled_at IS NULL AND bj.held_at IS NULL)"

/* A failed batch's error as plain text (batches.error_msg); a row
 * journaled before migration 0019 has only the escaped token, which is
 * not un-escaped here: a plain reason of its own, that says where the
 * error is. */
#define BLAH_BATCH_ERROR_SQL \
    "CASE WHEN b.error IS NULL THEN NULL ELSE coalesce(b.error_msg, 'the batch''s submit " \
    "failed (recorded by an earlier boinc_gahp; the journal''s audit_batches view has " \
    "its error)') END"

const journal_sql journal_sql_blah[JSTMT_COUNT] = {
    /* A JobDirectory's live job: the newest not cancelled. */
    [JSTMT_BLAH_LIVE_JOB] = { "find BLAH job",
        "SELECT bj.gahp_id FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id"
        " WHERE bj.job_dir = ?1 AND g.project_id = ?2 AND bj.cancelled_at IS NULL"
        " AND bj.held_at IS NULL"
        " ORDER BY bj.id DESC LIMIT 1" },
    [JSTMT_BLAH_GROUP_INSERT] = { "insert BLAH group",
        "INSERT INTO blah_groups (project_id, app, memory_mb, batch_name, state, opened_at)"
        " VALUES (?1, ?2, ?3, ?4, 'open', ?5)" },
    [JSTMT_BLAH_GROUP_JOIN] = { "join BLAH group",
        "UPDATE blah_groups SET njobs = njobs + 1 WHERE id = ?1 AND state = 'open'" },
    [JSTMT_BLAH_GROUP_SEQ] = { "read BLAH group",
        "SELECT njobs, batch_name FROM blah_groups WHERE id = ?1" },
    [JSTMT_BLAH_JOB_INSERT] = { "insert BLAH job",
        "INSERT INTO blah_jobs (group_id, job_dir, gahp_id, spec, fetch_args, submitted_at)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6)" },
    [JSTMT_BLAH_GROUP_JOBS] = { "read BLAH group jobs",
        "SELECT gahp_id, spec FROM blah_jobs WHERE group_id = ?1 AND cancelled_at IS NULL"
        " AND held_at IS NULL ORDER BY id" },
    [JSTMT_BLAH_GROUP_CLOSE] = { "close BLAH group",
        "UPDATE blah_groups SET state = 'closed', closed_at = ?2, request_id = ?3"
        " WHERE id = ?1 AND state = 'open'" },
    [JSTMT_BLAH_GROUP_EMPTY] = { "close empty BLAH group",
        "UPDATE blah_groups SET state = 'empty', closed_at = ?2 WHERE id = ?1 AND state = 'open'" },
    [JSTMT_BLAH_JOB_GET] = { "read BLAH job", BLAH_JOB_SQL("bj.gahp_id = ?1") },
    /* the same by row: the state a transition is checked from */
    [JSTMT_BLAH_JOB_GET_ROW] = { "read BLAH job state", BLAH_JOB_SQL("bj.id = ?1") },
    [JSTMT_BLAH_JOB_CANCEL] = { "cancel BLAH job",
        "UPDATE blah_jobs SET cancelled_at = coalesce(cancelled_at, ?2),"
        " abort_state = CASE WHEN abort_state = 0 THEN 1 ELSE abort_state END WHERE id = ?1" },
    /* Settled: the group's batch was submitted (7) or failed (8), or the
     * group closed empty, or the job was held alone (no server batch holds
     * it, whatever its group's batch does); in_batch: the server batch
     * holds the job. */
    [JSTMT_BLAH_ABORTS_PENDING] = { "read BLAH aborts",
        "SELECT bj.id, bj.gahp_id, g.batch_name,"
        " coalesce(b.state = 7 AND EXISTS (SELECT 1 FROM jobs jb WHERE jb.batch_id = b.id"
        "                                  AND jb.name = bj.gahp_id), 0)"
        " FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id"
        " LEFT JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name"
        " WHERE bj.abort_state = 1 AND g.project_id = ?1"
        "   AND (g.state = 'empty' OR bj.held_at IS NOT NULL"
        "        OR (g.state = 'closed' AND b.state IN (7, 8)))" },
    [JSTMT_BLAH_ABORT_DONE] = { "record BLAH abort",
        "UPDATE blah_jobs SET abort_state = 2 WHERE id = ?1" },
    [JSTMT_BLAH_FETCHED] = { "record BLAH outputs",
        "UPDATE blah_jobs SET fetched_at = ?2, fetch_result = ?3 WHERE id = ?1" },
    [JSTMT_BLAH_FETCHED_NUMBERS] = { "record BLAH fetch numbers",
        "UPDATE blah_jobs SET fetched_at = ?2, exit_code = ?3, wall_s = ?4, cpu_s = ?5"
        " WHERE id = ?1" },
    [JSTMT_BLAH_FETCH_START] = { "record BLAH fetch start",
        "UPDATE blah_jobs SET fetch_started_at = ?2 WHERE id = ?1" },
    [JSTMT_BLAH_INTERRUPTED_FETCHES] = { "read interrupted BLAH fetches",
        "SELECT gahp_id, fetch_args FROM blah_jobs"
        " WHERE fetch_started_at IS NOT NULL AND fetched_at IS NULL" },
    [JSTMT_BLAH_LIVE_BATCHES] = { "read BLAH batches",
        "SELECT g.batch_name, coalesce(b.lease, 0) FROM blah_groups g"
        " JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name AND b.state = 7"
        " WHERE g.project_id = ?1 AND g.state = 'closed'"
        " AND EXISTS (SELECT 1 FROM blah_jobs bj WHERE bj.group_id = g.id"
        "             AND bj.fetched_at IS NULL AND bj.cancelled_at IS NULL"
        "             AND bj.held_at IS NULL)"
        " ORDER BY g.id" },
    /* Submitted batches none of whose jobs HTCondor waits for: retired.
     * So is a batch created on the server and then refused for one input,
     * once its group was split (its jobs held or cancelled): it stays
     * empty, and retired it leaves the project's list of live batches. */
    [JSTMT_BLAH_DONE_BATCHES] = { "read finished BLAH batches",
        "SELECT g.batch_name, 0 FROM blah_groups g"
        " JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name"
        "  AND b.retired = 0 AND (b.state = 7 OR (b.state = 8 AND b.may_pass = 0"
        "  AND b.bad_input IS NOT NULL AND b.server_batch_id > 0))"
        " WHERE g.project_id = ?1 AND g.state = 'closed'"
        " AND NOT EXISTS (SELECT 1 FROM blah_jobs bj WHERE bj.group_id = g.id"
        "                 AND ((bj.fetched_at IS NULL AND bj.cancelled_at IS NULL"
        "                       AND bj.held_at IS NULL)"
        "                      OR bj.abort_state = 1))" },
    [JSTMT_BLAH_OPEN_GROUPS] = { "read open BLAH groups",
        "SELECT g.id, g.project_id," PROJECT_URL_SQL ", p.authenticator, g.app,"
        " g.batch_name, g.memory_mb FROM blah_groups g JOIN projects p ON p.id = g.project_id"
        " WHERE g.state = 'open' ORDER BY g.id" },
    /* Projects the BLAH scheduler has work for: a submitted batch not
     * retired, or an abort owed (the refresher's pass, doc/blah-core.md). */
    [JSTMT_BLAH_WORK_PROJECTS] = { "read BLAH projects with work",
        "SELECT p.id," PROJECT_URL_SQL ", p.authenticator FROM projects p"
        " WHERE EXISTS (SELECT 1 FROM blah_groups g JOIN batches b"
        "               ON b.project_id = g.project_id AND b.name = g.batch_name"
        "               WHERE g.project_id = p.id AND g.state = 'closed'"
        "               AND b.state = 7 AND b.retired = 0)"
        " OR EXISTS (SELECT 1 FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id"
        "            WHERE g.project_id = p.id AND bj.abort_state = 1)"
        " OR EXISTS (" BLAH_RETRY_GROUPS_SQL " AND g.project_id = p.id)"
        " OR EXISTS (" BLAH_SPLIT_GROUPS_SQL " AND g.project_id = p.id)"
        " ORDER BY p.id" },
    [JSTMT_BLAH_RETRY_GROUPS] = { "read BLAH groups to submit again",
        "SELECT g.id, g.batch_name, r.id, r.args FROM (" BLAH_RETRY_GROUPS_SQL
        " AND g.project_id = ?1) AS t JOIN blah_groups g ON g.id = t.id"
        " JOIN requests r ON r.id = g.request_id ORDER BY g.id" },
    /* Jobs the server reports ended (DONE or ERROR) whose end is not
     * delivered yet (outputs or stderr in Iwd, exit code journaled). */
    [JSTMT_BLAH_DONE_UNFETCHED] = { "read finished BLAH jobs",
        "SELECT DISTINCT bj.id, bj.gahp_id, bj.fetch_args, jb.status = 'ERROR' FROM blah_jobs bj"
        " JOIN blah_groups g ON g.id = bj.group_id"
        " JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name AND b.state = 7"
        " JOIN jobs jb ON jb.batch_id = b.id AND jb.name = bj.gahp_id"
        " WHERE g.project_id = ?1 AND g.state = 'closed' AND jb.status IN ('DONE', 'ERROR')"
        " AND bj.fetched_at IS NULL AND bj.cancelled_at IS NULL ORDER BY bj.id" },
    [JSTMT_BLAH_SPLIT_GROUPS] = { "read BLAH groups to split",
        "SELECT g.id, g.batch_name, g.app, g.memory_mb, b.bad_input,"
        " coalesce(b.bad_input_why, 'input file ' || b.bad_input || ' was refused')"
        " FROM (" BLAH_SPLIT_GROUPS_SQL " AND g.project_id = ?1) AS t"
        " JOIN blah_groups g ON g.id = t.id"
        " JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name"
        " ORDER BY g.id" },
    [JSTMT_BLAH_SPLIT_CHECK] = { "check BLAH group to split",
        "SELECT 1 FROM (" BLAH_SPLIT_GROUPS_SQL " AND g.id = ?1)" },
    [JSTMT_BLAH_JOB_HOLD] = { "hold BLAH job",
        "UPDATE blah_jobs SET held_at = ?2, held_reason = ?3 WHERE id = ?1 AND held_at IS NULL" },
    /* the rest of a split group: closed at once (it never gathers) */
    [JSTMT_BLAH_SPLIT_INSERT] = { "insert BLAH split group",
        "INSERT INTO blah_groups (project_id, app, memory_mb, batch_name, state, opened_at,"
        " closed_at, njobs) SELECT project_id, app, memory_mb, ?2, 'closed', ?3, ?3, ?4"
        " FROM blah_groups WHERE id = ?1" },
    [JSTMT_BLAH_GROUP_SET_REQUEST] = { "record BLAH group request",
        "UPDATE blah_groups SET request_id = ?2 WHERE id = ?1" },
    [JSTMT_BLAH_JOB_MOVE] = { "move BLAH job",
        "UPDATE blah_jobs SET group_id = ?3 WHERE gahp_id = ?1 AND group_id = ?2"
        " AND held_at IS NULL" },
    [JSTMT_BLAH_JOBS_PRUNE] = { "prune BLAH jobs",
        "DELETE FROM blah_jobs WHERE (fetched_at IS NOT NULL AND fetched_at < ?1)"
        " OR (cancelled_at IS NOT NULL AND cancelled_at < ?1 AND abort_state <> 1)"
        /* a job held alone is on no server; HTCondor forgets it once it is
         * removed or released (a release makes a new job) */
        " OR (held_at IS NOT NULL AND held_at < ?1 AND abort_state <> 1)" },
    [JSTMT_BLAH_GROUPS_PRUNE] = { "prune BLAH groups",
        "DELETE FROM blah_groups WHERE state <> 'open' AND coalesce(closed_at, opened_at) < ?1"
        " AND NOT EXISTS (SELECT 1 FROM blah_jobs bj WHERE bj.group_id = blah_groups.id)" },
};

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

/*
 * The rows of statement id, whose journal_query returned rc, copied into a
 * malloc'd array (*out, *n elements of size bytes) and the read ended:
 * the callers' fn sends RPCs or writes the journal, which must not happen
 * while a statement holds its read.  copy(st, elem) fills one element: 0,
 * or -1 out of memory (having freed what it took).  0, or -1 with the
 * rows copied so far still in *out for the caller to free.
 */
typedef int (*row_copy_fn)(sqlite3_stmt *st, void *elem);
static int copy_rows(journal *j, jstmt id, int rc, size_t size, row_copy_fn copy, void **out,
                     size_t *n)
{
    char *v = NULL;
    size_t cap = 0;
    *n = 0;
    while (rc == 1) {
        if (*n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            char *nv = realloc(v, ncap * size);
            if (nv == NULL) {
                rc = journal_refuse(j, "copy BLAH rows", "out of memory");
                break;
            }
            v = nv;
            cap = ncap;
        }
        if (copy(journal_row(j, id), v + *n * size) != 0) {
            rc = journal_refuse(j, "copy BLAH rows", "out of memory");
            break;
        }
        (*n)++;
        rc = journal_next(j, id);
    }
    journal_reset(j, id);
    *out = v;
    return rc < 0 ? -1 : 0;
}

/* ---- joining ------------------------------------------------------------- */

typedef struct {
    const journal_blah_join_in *in;
    journal_blah_join_out *out;
} join_txn;

static int find_live(journal *j, long long project_id, const char *job_dir, char **gahp_id)
{
    int rc = journal_query(j, JSTMT_BLAH_LIVE_JOB, "ti", job_dir, project_id);
    if (rc == 1 && (*gahp_id = dup_col(journal_row(j, JSTMT_BLAH_LIVE_JOB), 0)) == NULL)
        rc = journal_refuse(j, "find BLAH job", "out of memory");
    journal_reset(j, JSTMT_BLAH_LIVE_JOB);
    return rc;
}

/* The job's id: its group's batch name and its place in the group. */
static int next_id(journal *j, long long group_id, char **gahp_id)
{
    if (journal_run(j, JSTMT_BLAH_GROUP_JOIN, "i", group_id) != 0)
        return -1;
    if (sqlite3_changes(journal_db(j)) != 1)
        return journal_refuse(j, "join BLAH group", "the group is no longer open");
    int rc = journal_query(j, JSTMT_BLAH_GROUP_SEQ, "i", group_id);
    if (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_BLAH_GROUP_SEQ);
        *gahp_id = str_printf("%s-%lld", (const char *)sqlite3_column_text(st, 1),
                              (long long)sqlite3_column_int64(st, 0));
        rc = *gahp_id != NULL ? 0 : journal_refuse(j, "join BLAH group", "out of memory");
    } else if (rc == 0) {
        rc = journal_refuse(j, "join BLAH group", "no such group");
    }
    journal_reset(j, JSTMT_BLAH_GROUP_SEQ);
    return rc;
}

static int join(journal *j, void *arg)
{
    join_txn *t = arg;
    const journal_blah_join_in *in = t->in;
    int rc = find_live(j, in->project_id, in->job_dir, &t->out->gahp_id);
    if (rc != 0) {
        t->out->existing = rc == 1;
        return rc == 1 ? 0 : -1;
    }
    long long group = in->group_id;
    if (group == 0) {
        if (journal_run(j, JSTMT_BLAH_GROUP_INSERT, "itdtd", in->project_id, in->app,
                        in->memory_mb, in->new_batch, in->now) != 0)
            return -1;
        group = sqlite3_last_insert_rowid(journal_db(j));
    }
    if (next_id(j, group, &t->out->gahp_id) != 0 ||
        journal_run(j, JSTMT_BLAH_JOB_INSERT, "ittttd", group, in->job_dir, t->out->gahp_id,
                    in->spec, in->fetch_args, in->now) != 0)
        return -1;
    /* the job's output paths, in the transaction that accepts it: a
     * conflict rolls the whole join back */
    rc = journal_claims_take(j, t->out->gahp_id, in->claims, in->nclaims, in->now, in->now, 1,
                             &t->out->conflict);
    if (rc != 0)
        return rc;
    t->out->group_id = group;
    return 0;
}

int journal_blah_join(journal *j, const journal_blah_join_in *in, journal_blah_join_out *out)
{
    memset(out, 0, sizeof *out);
    join_txn t = { in, out };
    int rc = journal_txn(j, join, &t);
    if (rc != 0) {
        journal_claim_conflict c = out->conflict;
        free(out->gahp_id);
        memset(out, 0, sizeof *out);
        if (rc == 1) {
            out->conflict = c;     /* refused: nothing was recorded */
            return 0;
        }
        journal_claim_conflict_free(&c);
    }
    return rc;
}

/* ---- closing ------------------------------------------------------------- */

/* The rows of statement id, whose journal_query returned rc: fn(column 0,
 * column 1) for each, until fn fails.  0 or -1. */
static int each_pair(journal *j, jstmt id, int rc, journal_blah_job_fn fn, void *arg)
{
    while (rc == 1) {
        sqlite3_stmt *st = journal_row(j, id);
        if (fn((const char *)sqlite3_column_text(st, 0),
               (const char *)sqlite3_column_text(st, 1), arg) != 0) {
            rc = -1;
            break;
        }
        rc = journal_next(j, id);
    }
    journal_reset(j, id);
    return rc < 0 ? -1 : 0;
}

int journal_blah_group_jobs(journal *j, long long group_id, journal_blah_job_fn fn, void *arg)
{
    return each_pair(j, JSTMT_BLAH_GROUP_JOBS,
                     journal_query(j, JSTMT_BLAH_GROUP_JOBS, "i", group_id), fn, arg);
}

typedef struct {
    long long group_id, session_id, project_id;
    const char *command, *args;
    size_t njobs;
    double now;
    long long *request_row;
} close_txn;

/* What a transition is checked from: the job's row and its states. */
typedef struct {
    long long row;
    int error_on_project;       /* its BOINC job ended in ERROR */
    blah_job_state from, to;
} job_step;
static int step_job(journal *j, long long row, const char *gahp_id, blah_job_event e,
                    job_step *st);

/* each_pair's fn: a job of a closing group may close (checked). */
static int close_check(const char *gahp_id, const char *spec, void *arg)
{
    (void)spec;
    job_step st;
    return step_job(arg, 0, gahp_id, BJE_CLOSE, &st) < 0 ? -1 : 0;
}

static int close_group(journal *j, void *arg)
{
    close_txn *c = arg;
    *c->request_row = 0;
    if (each_pair(j, JSTMT_BLAH_GROUP_JOBS,
                  journal_query(j, JSTMT_BLAH_GROUP_JOBS, "i", c->group_id), close_check, j) != 0)
        return -1;
    if (c->njobs == 0)
        return journal_run(j, JSTMT_BLAH_GROUP_EMPTY, "id", c->group_id, c->now);
    long long row;
    if (journal_request_insert(j, c->session_id, (long)c->group_id, c->command, c->args,
                               c->project_id, c->now, &row) != 0 ||
        journal_run(j, JSTMT_BLAH_GROUP_CLOSE, "idi", c->group_id, c->now, row) != 0)
        return -1;
    if (sqlite3_changes(journal_db(j)) != 1)
        return journal_refuse(j, "close BLAH group", "the group is no longer open");
    *c->request_row = row;
    return 0;
}

int journal_blah_group_close(journal *j, long long group_id, long long session_id,
                             const char *command, const char *args, long long project_id,
                             size_t njobs, double now, long long *request_row)
{
    close_txn c = { group_id, session_id, project_id, command, args, njobs, now, request_row };
    return journal_txn(j, close_group, &c);
}

/* ---- one job --------------------------------------------------------------- */

void journal_blah_job_free(journal_blah_job *job)
{
    free(job->gahp_id);
    free(job->batch);
    free(job->group_state);
    free(job->fetch_args);
    free(job->fetch_result);
    free(job->batch_error_msg);
    free(job->boinc_status);
    free(job->held_reason);
    free(job->project_url);
    if (job->authenticator != NULL)
        memset(job->authenticator, 0, strlen(job->authenticator));
    free(job->authenticator);
    memset(job, 0, sizeof *job);
}

static int read_job(sqlite3_stmt *st, journal_blah_job *out)
{
    out->row = sqlite3_column_int64(st, 0);
    out->group_id = sqlite3_column_int64(st, 1);
    out->project_id = sqlite3_column_int64(st, 2);
    out->gahp_id = dup_col(st, 3);
    out->batch = dup_col(st, 4);
    out->group_state = dup_col(st, 5);
    out->fetch_args = dup_col(st, 6);
    out->cancelled = sqlite3_column_int(st, 7);
    out->abort_state = sqlite3_column_int(st, 8);
    out->fetched = sqlite3_column_int(st, 9);
    out->fetch_result = dup_col(st, 10);
    out->batch_state = sqlite3_column_int(st, 11);
    out->batch_error_msg = dup_col(st, 12);
    out->boinc_status = dup_col(st, 13);
    out->project_url = dup_col(st, 14);
    out->authenticator = dup_col(st, 15);
    out->batch_may_pass = sqlite3_column_int(st, 16);
    out->held_reason = dup_col(st, 17);
    out->batch_bad_input = sqlite3_column_int(st, 18);
    out->fetch_started = sqlite3_column_int(st, 19);
    out->held = sqlite3_column_int(st, 20);
    out->has_numbers = sqlite3_column_int(st, 21);
    out->exit_code = (long)sqlite3_column_int64(st, 22);   /* written from a long */
    out->wall_s = sqlite3_column_double(st, 23);
    out->cpu_s = sqlite3_column_double(st, 24);
    /* NOT NULL columns: a NULL copy is out of memory */
    return out->gahp_id && out->batch && out->group_state && out->fetch_args &&
           out->project_url && out->authenticator ? 0 : -1;
}

int journal_blah_job_get(journal *j, const char *gahp_id, journal_blah_job *out, int *found)
{
    memset(out, 0, sizeof *out);
    *found = 0;
    int rc = journal_query(j, JSTMT_BLAH_JOB_GET, "t", gahp_id);
    if (rc == 1) {
        *found = 1;
        if (read_job(journal_row(j, JSTMT_BLAH_JOB_GET), out) != 0)
            rc = journal_refuse(j, "read BLAH job", "out of memory");
    }
    journal_reset(j, JSTMT_BLAH_JOB_GET);
    if (rc < 0) {
        journal_blah_job_free(out);
        *found = 0;
        return -1;
    }
    return 0;
}

blah_job_state journal_blah_job_state(const journal_blah_job *job)
{
    blah_job_facts f = { job->group_state, job->batch_state, job->batch_may_pass,
                         job->batch_bad_input, job->boinc_status, job->cancelled,
                         job->abort_state, job->held, job->fetched, job->fetch_started };
    return blah_job_state_of(&f);
}

/* ---- checked transitions (journal/blah_job_state.h) ----------------------- */


static int refuse_step(journal *j, const char *gahp_id, blah_job_state from, blah_job_event e)
{
    char why[256];
    snprintf(why, sizeof why, "illegal transition of job %s: %s --%s--> refused, not journaled",
             gahp_id, blah_job_state_name(from), blah_job_event_name(e));
    return journal_refuse(j, "BLAH job state", why);
}

/*
 * Inside a write transaction: read the job (by row, or by gahp_id when row
 * is 0) and where event e takes it.  1 with *st when legal, 0 when there
 * is no such job, -1 when the event is illegal from its state (refused:
 * journal_errmsg names the job, the state and the event) or on error.
 * The read is the status's own (journal_blah_job_state), so what a job
 * answers and what it may do next agree.
 */
static int step_job(journal *j, long long row, const char *gahp_id, blah_job_event e,
                    job_step *st)
{
    journal_blah_job job;
    memset(&job, 0, sizeof job);
    jstmt id = row > 0 ? JSTMT_BLAH_JOB_GET_ROW : JSTMT_BLAH_JOB_GET;
    int rc = row > 0 ? journal_query(j, id, "i", row) : journal_query(j, id, "t", gahp_id);
    if (rc == 1 && read_job(journal_row(j, id), &job) != 0)
        rc = journal_refuse(j, "read BLAH job state", "out of memory");
    journal_reset(j, id);
    if (rc == 1) {
        st->row = job.row;
        st->error_on_project = job.boinc_status != NULL &&
                               strcmp(job.boinc_status, "ERROR") == 0;
        if (e == BJE_FETCHED && st->error_on_project)
            e = BJE_FETCHED_ERROR;
        st->from = journal_blah_job_state(&job);
        st->to = blah_job_next(st->from, e);
        if (st->to == BJS_ILLEGAL)
            rc = refuse_step(j, job.gahp_id, st->from, e);
    }
    journal_blah_job_free(&job);
    return rc;
}

typedef struct {
    long long row;
    double now;
    const journal_blah_end *fetched;    /* NULL: a cancel */
} end_txn;

/* The fetched job's end: its numbers, or the plain reason. */
static int write_fetched(journal *j, long long row, double now, const journal_blah_end *e)
{
    if (e->has_numbers)
        return journal_run(j, JSTMT_BLAH_FETCHED_NUMBERS, "ididd", row, now,
                           (long long)e->exit_code, e->wall_s, e->cpu_s);
    return journal_run(j, JSTMT_BLAH_FETCHED, "idt", row, now, e->reason);
}

/* A job's end (outputs delivered, or cancelled) releases its output paths
 * in the same transaction. */
static int end_job(journal *j, void *arg)
{
    end_txn *t = arg;
    job_step st;
    int rc = step_job(j, t->row, NULL, t->fetched != NULL ? BJE_FETCHED : BJE_CANCEL, &st);
    if (rc <= 0 || st.to == st.from)
        return rc < 0 ? -1 : 0;      /* no such job, refused, or nothing changes */
    rc = t->fetched != NULL
                 ? write_fetched(j, t->row, t->now, t->fetched)
                 : journal_run(j, JSTMT_BLAH_JOB_CANCEL, "id", t->row, t->now);
    return rc != 0 ? -1 : journal_claims_release_blah(j, t->row, t->now);
}

int journal_blah_cancel(journal *j, long long row, double now)
{
    end_txn t = { row, now, NULL };
    return journal_txn(j, end_job, &t);
}

typedef struct { long long row; char *id, *batch; int in_batch; } abort_row;

static int copy_abort(sqlite3_stmt *st, void *elem)
{
    abort_row *a = elem;
    *a = (abort_row){ sqlite3_column_int64(st, 0), dup_col(st, 1), dup_col(st, 2),
                      sqlite3_column_int(st, 3) };
    if (a->id != NULL && a->batch != NULL)
        return 0;
    free(a->id);
    free(a->batch);
    return -1;
}

int journal_blah_aborts(journal *j, long long project_id, journal_blah_abort_fn fn, void *arg)
{
    void *p;
    size_t n;
    int rc = copy_rows(j, JSTMT_BLAH_ABORTS_PENDING,
                       journal_query(j, JSTMT_BLAH_ABORTS_PENDING, "i", project_id),
                       sizeof(abort_row), copy_abort, &p, &n);
    abort_row *v = p;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && fn(v[i].row, v[i].id, v[i].batch, v[i].in_batch, arg) != 0)
            rc = -1;
        free(v[i].id);
        free(v[i].batch);
    }
    free(v);
    return rc;
}

/* One checked change of a job by row whose write is one statement. */
typedef struct {
    long long row;
    blah_job_event event;
    jstmt write;
    double now;
} row_txn;

static int row_step(journal *j, void *arg)
{
    const row_txn *t = arg;
    job_step st;
    int rc = step_job(j, t->row, NULL, t->event, &st);
    if (rc <= 0 || st.to == st.from)
        return rc < 0 ? -1 : 0;
    return t->write == JSTMT_BLAH_ABORT_DONE ? journal_run(j, t->write, "i", t->row)
                                             : journal_run(j, t->write, "id", t->row, t->now);
}

int journal_blah_abort_done(journal *j, long long row)
{
    row_txn t = { row, BJE_ABORT_SENT, JSTMT_BLAH_ABORT_DONE, 0 };
    return journal_txn(j, row_step, &t);
}

int journal_blah_fetched(journal *j, long long row, const journal_blah_end *end, double now)
{
    end_txn t = { row, now, end };
    return journal_txn(j, end_job, &t);
}

static int batch_names(journal *j, jstmt id, long long project_id, journal_blah_name_fn fn,
                       void *arg)
{
    int rc = journal_query(j, id, "i", project_id);
    while (rc == 1) {
        sqlite3_stmt *st = journal_row(j, id);
        if (fn((const char *)sqlite3_column_text(st, 0), sqlite3_column_double(st, 1),
               arg) != 0) {
            rc = -1;
            break;
        }
        rc = journal_next(j, id);
    }
    journal_reset(j, id);
    return rc < 0 ? -1 : 0;
}

int journal_blah_live_batches(journal *j, long long project_id, journal_blah_name_fn fn,
                              void *arg)
{
    return batch_names(j, JSTMT_BLAH_LIVE_BATCHES, project_id, fn, arg);
}

int journal_blah_done_batches(journal *j, long long project_id, journal_blah_name_fn fn,
                              void *arg)
{
    return batch_names(j, JSTMT_BLAH_DONE_BATCHES, project_id, fn, arg);
}

int journal_blah_open_groups(journal *j, journal_blah_group_fn fn, void *arg)
{
    int rc = journal_query(j, JSTMT_BLAH_OPEN_GROUPS, "");
    while (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_BLAH_OPEN_GROUPS);
        journal_blah_group g = {
            sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
            (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
            (const char *)sqlite3_column_text(st, 4), (const char *)sqlite3_column_text(st, 5),
            sqlite3_column_double(st, 6) };
        if (fn(&g, arg) != 0) {
            rc = -1;
            break;
        }
        rc = journal_next(j, JSTMT_BLAH_OPEN_GROUPS);
    }
    journal_reset(j, JSTMT_BLAH_OPEN_GROUPS);
    return rc < 0 ? -1 : 0;
}

int journal_blah_prune(journal *j, double cutoff, long long *deleted)
{
    if (journal_run(j, JSTMT_BLAH_JOBS_PRUNE, "d", cutoff) != 0)
        return -1;
    *deleted += sqlite3_changes(journal_db(j));
    if (journal_run(j, JSTMT_BLAH_GROUPS_PRUNE, "d", cutoff) != 0)
        return -1;
    *deleted += sqlite3_changes(journal_db(j));
    return journal_claims_prune(j, cutoff, deleted);
}

int journal_blah_fetch_started(journal *j, long long row, double now)
{
    row_txn t = { row, BJE_FETCH_START, JSTMT_BLAH_FETCH_START, now };
    return journal_txn(j, row_step, &t);
}

int journal_blah_interrupted_fetches(journal *j, journal_blah_job_fn fn, void *arg)
{
    return each_pair(j, JSTMT_BLAH_INTERRUPTED_FETCHES,
                     journal_query(j, JSTMT_BLAH_INTERRUPTED_FETCHES, ""), fn, arg);
}

int journal_blah_work_projects(journal *j, journal_blah_project_fn fn, void *arg)
{
    int rc = journal_query(j, JSTMT_BLAH_WORK_PROJECTS, "");
    while (rc == 1) {
        sqlite3_stmt *st = journal_row(j, JSTMT_BLAH_WORK_PROJECTS);
        const char *url = (const char *)sqlite3_column_text(st, 1);
        const char *auth = (const char *)sqlite3_column_text(st, 2);
        if (fn(sqlite3_column_int64(st, 0), url ? url : "", auth ? auth : "", arg) != 0) {
            rc = -1;
            break;
        }
        rc = journal_next(j, JSTMT_BLAH_WORK_PROJECTS);
    }
    journal_reset(j, JSTMT_BLAH_WORK_PROJECTS);
    return rc < 0 ? -1 : 0;
}

typedef struct { long long row; char *id, *fetch_args; int failed; } done_row;

static int copy_done(sqlite3_stmt *st, void *elem)
{
    done_row *d = elem;
    *d = (done_row){ sqlite3_column_int64(st, 0), dup_col(st, 1), dup_col(st, 2),
                     sqlite3_column_int(st, 3) };
    if (d->id != NULL && d->fetch_args != NULL)
        return 0;
    free(d->id);
    free(d->fetch_args);
    return -1;
}

int journal_blah_done_unfetched(journal *j, long long project_id, journal_blah_done_fn fn,
                                void *arg)
{
    void *p;
    size_t n;
    int rc = copy_rows(j, JSTMT_BLAH_DONE_UNFETCHED,
                       journal_query(j, JSTMT_BLAH_DONE_UNFETCHED, "i", project_id),
                       sizeof(done_row), copy_done, &p, &n);
    done_row *v = p;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && fn(v[i].row, v[i].id, v[i].fetch_args, v[i].failed, arg) != 0)
            rc = -1;
        free(v[i].id);
        free(v[i].fetch_args);
    }
    free(v);
    return rc;
}

int journal_blah_live_job(journal *j, long long project_id, const char *job_dir, char **gahp_id)
{
    *gahp_id = NULL;
    return find_live(j, project_id, job_dir, gahp_id);
}

typedef struct { long long group, request; char *batch, *args; } retry_row;

static int copy_retry(sqlite3_stmt *st, void *elem)
{
    retry_row *r = elem;
    *r = (retry_row){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 2),
                      dup_col(st, 1), dup_col(st, 3) };
    if (r->batch != NULL && r->args != NULL)
        return 0;
    free(r->batch);
    free(r->args);
    return -1;
}

int journal_blah_retry_groups(journal *j, long long project_id, journal_blah_retry_fn fn,
                              void *arg)
{
    void *p;
    size_t n;
    int result = copy_rows(j, JSTMT_BLAH_RETRY_GROUPS,
                           journal_query(j, JSTMT_BLAH_RETRY_GROUPS, "i", project_id),
                           sizeof(retry_row), copy_retry, &p, &n);
    retry_row *v = p;
    for (size_t i = 0; i < n; i++) {
        if (result == 0)
            result = fn(v[i].group, v[i].batch, v[i].request, v[i].args, arg);
        free(v[i].batch);
        free(v[i].args);
    }
    free(v);
    return result;
}

/* ---- per-job isolation (doc/blah-core.md) ---------------------------------- */

/* Inside a write transaction: hold the live job gahp_id (none: nothing). */
static int hold_one(journal *j, const char *gahp_id, const char *reason, double now)
{
    job_step st;
    int rc = step_job(j, 0, gahp_id, BJE_HOLD, &st);
    if (rc <= 0 || st.to == st.from)
        return rc < 0 ? -1 : 0;      /* none, refused, or cancelled (or held) first */
    /* held: its output paths are free for the job a release makes */
    if (journal_run(j, JSTMT_BLAH_JOB_HOLD, "idt", st.row, now, reason) != 0)
        return -1;
    return journal_claims_release_blah(j, st.row, now);
}

typedef struct {
    const char *gahp_id, *reason;
    double now;
} hold_txn;

static int hold_txn_run(journal *j, void *arg)
{
    const hold_txn *t = arg;
    return hold_one(j, t->gahp_id, t->reason, t->now);
}

int journal_blah_hold(journal *j, const char *gahp_id, const char *reason, double now)
{
    hold_txn t = { gahp_id, reason, now };
    return journal_txn(j, hold_txn_run, &t);
}

static void split_group_free(journal_blah_split_group *g)
{
    free((char *)g->batch);
    free((char *)g->app);
    free((char *)g->bad_input);
    free((char *)g->why);
}

static int copy_split(sqlite3_stmt *st, void *elem)
{
    journal_blah_split_group *g = elem;
    *g = (journal_blah_split_group){ sqlite3_column_int64(st, 0), dup_col(st, 1),
                                     dup_col(st, 2), sqlite3_column_double(st, 3),
                                     dup_col(st, 4), dup_col(st, 5) };
    if (g->batch != NULL && g->app != NULL && g->bad_input != NULL && g->why != NULL)
        return 0;
    split_group_free(g);
    return -1;
}

int journal_blah_split_groups(journal *j, long long project_id, journal_blah_split_fn fn,
                              void *arg)
{
    void *p;
    size_t n;
    int result = copy_rows(j, JSTMT_BLAH_SPLIT_GROUPS,
                           journal_query(j, JSTMT_BLAH_SPLIT_GROUPS, "i", project_id),
                           sizeof(journal_blah_split_group), copy_split, &p, &n);
    journal_blah_split_group *v = p;
    for (size_t i = 0; i < n; i++) {
        if (result == 0)
            result = fn(&v[i], arg);
        split_group_free(&v[i]);
    }
    free(v);
    return result;
}

typedef struct {
    const journal_blah_split_in *in;
    long long *request_row;
    int *split;
} split_txn;

/* The moved jobs' new group, closed with its request at once. */
static int split_rest(journal *j, const journal_blah_split_in *in, long long *request_row)
{
    if (journal_run(j, JSTMT_BLAH_SPLIT_INSERT, "itdi", in->group_id, in->new_batch, in->now,
                    (long long)in->nmoved) != 0)
        return -1;
    long long group = sqlite3_last_insert_rowid(journal_db(j)), row = 0;
    for (size_t i = 0; i < in->nmoved; i++) {
        /* a job cancelled since moves too (its state stays): its abort is
         * owed whichever group it is in */
        job_step st;
        if (step_job(j, 0, in->moved[i], BJE_SPLIT_MOVED, &st) < 0 ||
            journal_run(j, JSTMT_BLAH_JOB_MOVE, "tii", in->moved[i], in->group_id, group) != 0)
            return -1;
    }
    if (journal_request_insert(j, in->session_id, (long)group, in->command, in->args,
                               in->project_id, in->now, &row) != 0 ||
        journal_run(j, JSTMT_BLAH_GROUP_SET_REQUEST, "ii", group, row) != 0)
        return -1;
    *request_row = row;
    return 0;
}

static int split_run(journal *j, void *arg)
{
    split_txn *t = arg;
    const journal_blah_split_in *in = t->in;
    *t->request_row = 0;
    *t->split = 0;
    /* checked again inside the transaction: a group is split once */
    int rc = journal_query(j, JSTMT_BLAH_SPLIT_CHECK, "i", in->group_id);
    journal_reset(j, JSTMT_BLAH_SPLIT_CHECK);
    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < in->nheld; i++)
        if (hold_one(j, in->held[i], in->reason, in->now) != 0)
            return -1;
    if (in->nmoved > 0 && split_rest(j, in, t->request_row) != 0)
        return -1;
    *t->split = 1;
    return 0;
}

int journal_blah_split(journal *j, const journal_blah_split_in *in, long long *request_row,
                       int *split)
{
    split_txn t = { in, request_row, split };
    return journal_txn(j, split_run, &t);
}
