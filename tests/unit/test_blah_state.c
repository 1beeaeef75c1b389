/*
 * test_blah_state.c - the BLAH job state machine (src/journal/
 * blah_job_state.c; doc/blah-core.md, "The BLAH job states"):
 *
 *   the matrix      every state x every event against the legal list below
 *                   (written again here on purpose: a table entry changed
 *                   in the module is caught by the difference);
 *   server driven   every state that answers 1 or 2 has a way out driven
 *                   by the server, and from every state that is neither
 *                   final nor held a final or held state is reached by the
 *                   server's events alone ("answers 1 forever" cannot be);
 *   statuses        each state's JobStatus, and the derivation from the
 *                   journal's columns row by row of the doc's table;
 *   the journal     illegal transitions refused by journal_blah's writes
 *                   (a real SQLite file), the rows unchanged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tmp_journal.h"

#include "journal/blah_job_state.h"
#include "journal/journal.h"
#include "journal/journal_blah.h"
#include "journal/journal_internal.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the matrix --------------------------------------------------------------- */

/* Every legal (state, event) -> state; the same state: accepted, nothing
 * written.  Cancels are listed apart (every live or held state). */
static const struct { blah_job_state from; blah_job_event e; blah_job_state to; } legal[] = {
    { BJS_NONE, BJE_JOIN, BJS_GATHERING },
    { BJS_GATHERING, BJE_CLOSE, BJS_CLOSED },
    { BJS_GATHERING, BJE_HOLD, BJS_HELD_ALONE },
    { BJS_CLOSED, BJE_SUBMIT_START, BJS_SUBMITTING },
    { BJS_CLOSED, BJE_SUBMIT_TRANSIENT, BJS_SUBMIT_WAIT },
    { BJS_CLOSED, BJE_HOLD, BJS_HELD_ALONE },
    { BJS_SUBMITTING, BJE_SUBMITTED, BJS_SUBMITTED },
    { BJS_SUBMITTING, BJE_SUBMIT_TRANSIENT, BJS_SUBMIT_WAIT },
    { BJS_SUBMITTING, BJE_SUBMIT_BAD_INPUT, BJS_SPLITTING },
    { BJS_SUBMITTING, BJE_SUBMIT_FINAL, BJS_HELD_SUBMIT },
    { BJS_SUBMIT_WAIT, BJE_SUBMIT_START, BJS_SUBMITTING },
    { BJS_SPLITTING, BJE_SPLIT_MOVED, BJS_CLOSED },
    { BJS_SPLITTING, BJE_HOLD, BJS_HELD_ALONE },
    { BJS_SUBMITTED, BJE_SERVER_RUNNING, BJS_RUNNING },
    { BJS_SUBMITTED, BJE_SERVER_ENDED, BJS_ENDED },
    { BJS_RUNNING, BJE_SERVER_ENDED, BJS_ENDED },
    { BJS_ENDED, BJE_FETCH_START, BJS_FETCHING },
    { BJS_FETCHING, BJE_FETCH_START, BJS_FETCHING },
    { BJS_FETCHING, BJE_FETCH_FAILED, BJS_FETCHING },
    { BJS_FETCHING, BJE_FETCHED, BJS_COMPLETED },
    { BJS_FETCHING, BJE_FETCHED_ERROR, BJS_HELD_FAILED },
    { BJS_HELD_ALONE, BJE_HOLD, BJS_HELD_ALONE },
    { BJS_HELD_ALONE, BJE_CLOSE, BJS_HELD_ALONE },
    { BJS_COMPLETED, BJE_CANCEL, BJS_COMPLETED },
    { BJS_CANCELLED_OWED, BJE_CLOSE, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_HOLD, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_SPLIT_MOVED, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_CANCEL, BJS_CANCELLED_OWED },
    /* a fetch already running when the cancel came ends as a no-op: its
     * files are in Iwd, the job stays cancelled (a new fetch is refused) */
    { BJS_CANCELLED_OWED, BJE_FETCH_FAILED, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_FETCHED, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_FETCHED_ERROR, BJS_CANCELLED_OWED },
    { BJS_CANCELLED_OWED, BJE_ABORT_SENT, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_CLOSE, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_HOLD, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_SPLIT_MOVED, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_CANCEL, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_FETCH_FAILED, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_FETCHED, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_FETCHED_ERROR, BJS_CANCELLED_SENT },
    { BJS_CANCELLED_SENT, BJE_ABORT_SENT, BJS_CANCELLED_SENT },
};

static const blah_job_state cancellable[] = {
    BJS_GATHERING, BJS_CLOSED, BJS_SUBMITTING, BJS_SUBMIT_WAIT, BJS_SPLITTING,
    BJS_SUBMITTED, BJS_RUNNING, BJS_ENDED, BJS_FETCHING,
    BJS_HELD_ALONE, BJS_HELD_FAILED, BJS_HELD_SUBMIT,
};

static blah_job_state expected(blah_job_state s, blah_job_event e)
{
    for (size_t i = 0; i < sizeof legal / sizeof legal[0]; i++)
        if (legal[i].from == s && legal[i].e == e)
            return legal[i].to;
    if (e == BJE_CANCEL)
        for (size_t i = 0; i < sizeof cancellable / sizeof cancellable[0]; i++)
            if (cancellable[i] == s)
                return BJS_CANCELLED_OWED;
    return BJS_ILLEGAL;
}

static void test_matrix(void **state)
{
    (void)state;
    int failures = 0, cells = 0, legal_cells = 0;
    for (int s = 0; s < BJS_COUNT; s++)
        for (int e = 0; e < BJE_COUNT; e++) {
            blah_job_state got = blah_job_next((blah_job_state)s, (blah_job_event)e);
            blah_job_state want = expected((blah_job_state)s, (blah_job_event)e);
            cells++;
            legal_cells += want != BJS_ILLEGAL;
            if (got != want) {
                printf("cell %s x %s: got %s, want %s\n", blah_job_state_name(s),
                       blah_job_event_name(e), blah_job_state_name(got),
                       blah_job_state_name(want));
                failures++;
            }
        }
    printf("BLAH state matrix: %d cells, %d legal, %d wrong\n", cells, legal_cells, failures);
    assert_int_equal(failures, 0);
    /* out of range is refused, never read past the table */
    assert_int_equal(blah_job_next(BJS_COUNT, BJE_CANCEL), BJS_ILLEGAL);
    assert_int_equal(blah_job_next(BJS_GATHERING, BJE_COUNT), BJS_ILLEGAL);
    assert_string_equal(blah_job_state_name(BJS_COUNT), "?");
    assert_string_equal(blah_job_event_name(BJE_COUNT), "?");
}

static int held(blah_job_state s)
{
    return blah_job_status(s) == 5;
}

/* Final states are final: no event leads anywhere else. */
static void test_final_is_final(void **state)
{
    (void)state;
    for (int s = 0; s < BJS_COUNT; s++) {
        if (!blah_job_final(s))
            continue;
        for (int e = 0; e < BJE_COUNT; e++) {
            blah_job_state to = blah_job_next(s, e);
            if (to != BJS_ILLEGAL && to != s)
                fail_msg("final %s --%s--> %s", blah_job_state_name(s),
                         blah_job_event_name(e), blah_job_state_name(to));
        }
    }
}

/* 1 when from s a final or held state is reached by server events only. */
static int server_reaches_rest(blah_job_state s)
{
    int seen[BJS_COUNT] = { 0 }, queue[BJS_COUNT], head = 0, tail = 0;
    queue[tail++] = s;
    seen[s] = 1;
    while (head < tail) {
        blah_job_state at = queue[head++];
        if (blah_job_final(at) || held(at))
            return 1;
        for (int e = 0; e < BJE_COUNT; e++) {
            blah_job_state to = blah_job_next(at, e);
            if (blah_job_event_by_server(e) && to != BJS_ILLEGAL && !seen[to]) {
                seen[to] = 1;
                queue[tail++] = to;
            }
        }
    }
    return 0;
}

static void test_server_drives_every_waiting_state(void **state)
{
    (void)state;
    assert_false(blah_job_event_by_server(BJE_JOIN));
    assert_false(blah_job_event_by_server(BJE_CANCEL));
    assert_true(blah_job_event_by_server(BJE_CLOSE));
    for (int s = BJS_GATHERING; s < BJS_COUNT; s++) {
        int js = blah_job_status(s), out = 0;
        for (int e = 0; e < BJE_COUNT; e++) {
            blah_job_state to = blah_job_next(s, e);
            out |= blah_job_event_by_server(e) && to != BJS_ILLEGAL && to != s;
        }
        /* idle or running: the scheduler moves it, not only the client */
        if ((js == 1 || js == 2) && !out)
            fail_msg("%s answers %d and only the client moves it", blah_job_state_name(s), js);
        if (!blah_job_final(s) && !held(s) && !server_reaches_rest(s))
            fail_msg("from %s no final or held state by the server alone",
                     blah_job_state_name(s));
    }
    /* whether a release helps: only for the job's own cause */
    assert_true(blah_job_release_helps(BJS_HELD_ALONE));
    assert_true(blah_job_release_helps(BJS_HELD_FAILED));
    assert_false(blah_job_release_helps(BJS_HELD_SUBMIT));
    assert_false(blah_job_release_helps(BJS_RUNNING));
}

/* The events a scheduler pass brings about (blah_sched.c: a submit tried
 * again, a split, the refresh, the fetch). */
static int pass_event(blah_job_event e)
{
    switch (e) {
    case BJE_SUBMIT_START: case BJE_SPLIT_MOVED: case BJE_HOLD:
    case BJE_SERVER_RUNNING: case BJE_SERVER_ENDED:
    case BJE_FETCH_START: case BJE_FETCH_FAILED: case BJE_FETCHED: case BJE_FETCHED_ERROR:
        return 1;
    default:
        return 0;
    }
}

/* A status of a job the next pass may move paces the passes; exactly
 * those states are the ones a pass event leaves (the group's own worker
 * moves the gathering, closed and submitting ones). */
static void test_awaits_pass(void **state)
{
    (void)state;
    for (int s = BJS_GATHERING; s < BJS_COUNT; s++) {
        int moves = 0;
        for (int e = 0; e < BJE_COUNT; e++) {
            blah_job_state to = blah_job_next(s, e);
            moves |= pass_event(e) && to != BJS_ILLEGAL && to != s;
        }
        if (s == BJS_GATHERING || s == BJS_CLOSED || s == BJS_SUBMITTING)
            moves = 0;      /* their hold and submit are the group worker's, not a pass's */
        if (blah_job_awaits_pass(s) != moves)
            fail_msg("%s: awaits a pass %d, a pass moves it %d", blah_job_state_name(s),
                     blah_job_awaits_pass(s), moves);
    }
    assert_false(blah_job_awaits_pass(BJS_NONE));
    assert_false(blah_job_awaits_pass(BJS_COUNT));
}

/* ---- statuses: doc/blah-core.md's table, row by row ------------------------------ */

static void test_status_table(void **state)
{
    (void)state;
    static const struct {
        const char *row;
        blah_job_facts f;
        blah_job_state s;
        int status;
    } rows[] = {
        { "cancelled", { "closed", 7, 0, 0, "IN_PROGRESS", 1, 1, 0, 0, 0 },
          BJS_CANCELLED_OWED, 3 },
        { "cancelled, abort sent", { "closed", 7, 0, 0, NULL, 1, 2, 0, 0, 0 },
          BJS_CANCELLED_SENT, 3 },
        { "held alone", { "closed", 8, 1, 0, NULL, 0, 0, 1, 0, 0 }, BJS_HELD_ALONE, 5 },
        { "outputs fetched", { "closed", 7, 0, 0, "DONE", 0, 0, 0, 1, 1 }, BJS_COMPLETED, 4 },
        { "failed on the project, delivered", { "closed", 7, 0, 0, "ERROR", 0, 0, 0, 1, 1 },
          BJS_HELD_FAILED, 5 },
        { "group open", { "open", -1, 0, 0, NULL, 0, 0, 0, 0, 0 }, BJS_GATHERING, 1 },
        { "group closed, no batch", { "closed", -1, 0, 0, NULL, 0, 0, 0, 0, 0 }, BJS_CLOSED, 1 },
        { "batch on its way", { "closed", 3, 0, 0, NULL, 0, 0, 0, 0, 0 }, BJS_SUBMITTING, 1 },
        { "failed for one input", { "closed", 8, 0, 1, NULL, 0, 0, 0, 0, 0 }, BJS_SPLITTING, 1 },
        { "input not hashed", { "closed", 0, 0, 1, NULL, 0, 0, 0, 0, 0 }, BJS_SPLITTING, 1 },
        { "failed, may pass", { "closed", 8, 1, 0, NULL, 0, 0, 0, 0, 0 }, BJS_SUBMIT_WAIT, 1 },
        { "failed to submit", { "closed", 8, 0, 0, NULL, 0, 0, 0, 0, 0 }, BJS_HELD_SUBMIT, 5 },
        { "on the server, unknown", { "closed", 7, 0, 0, NULL, 0, 0, 0, 0, 0 },
          BJS_SUBMITTED, 1 },
        { "on the server, unsent", { "closed", 7, 0, 0, "UNSENT", 0, 0, 0, 0, 0 },
          BJS_SUBMITTED, 1 },
        { "IN_PROGRESS", { "closed", 7, 0, 0, "IN_PROGRESS", 0, 0, 0, 0, 0 }, BJS_RUNNING, 2 },
        { "DONE, not in Iwd", { "closed", 7, 0, 0, "DONE", 0, 0, 0, 0, 0 }, BJS_ENDED, 2 },
        { "DONE, fetch started", { "closed", 7, 0, 0, "DONE", 0, 0, 0, 0, 1 }, BJS_FETCHING, 2 },
        { "ERROR, not delivered", { "closed", 7, 0, 0, "ERROR", 0, 0, 0, 0, 0 }, BJS_ENDED, 2 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        blah_job_state s = blah_job_state_of(&rows[i].f);
        if (s != rows[i].s || blah_job_status(s) != rows[i].status)
            fail_msg("%s: %s (%d), want %s (%d)", rows[i].row, blah_job_state_name(s),
                     blah_job_status(s), blah_job_state_name(rows[i].s), rows[i].status);
    }
    assert_int_equal(blah_job_status(BJS_NONE), 0);
    assert_int_equal(blah_job_status(BJS_COUNT), 0);
}

/* ---- the journal refuses illegal transitions ---------------------------------- */

static int setup(void **state)
{
    (void)state;
    return tmp_journal_setup("test_blah_state");
}

static int teardown(void **state)
{
    (void)state;
    return tmp_journal_teardown();
}

/* One integer of the journal (0 when NULL or no row). */
static long long query_int(journal *j, const char *sql)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(journal_db(j), sql, -1, &st, NULL), SQLITE_OK);
    long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return v;
}

static void exec_sql(journal *j, const char *sql)
{
    assert_int_equal(sqlite3_exec(journal_db(j), sql, NULL, NULL, NULL), SQLITE_OK);
}

/* A new job of JobDirectory dir in group (0: a new one, batch). */
static long long join(journal *j, long long project, const char *dir, long long group,
                      const char *batch, long long *group_out)
{
    journal_blah_join_in in = { project, dir, "app", 1, group, batch, "spec", "fetch",
                                NULL, 0, 1.0 };
    journal_blah_join_out out;
    assert_int_equal(journal_blah_join(j, &in, &out), 0);
    assert_non_null(out.gahp_id);
    if (group_out != NULL)
        *group_out = out.group_id;
    journal_blah_job job;
    int found = 0;
    assert_int_equal(journal_blah_job_get(j, out.gahp_id, &job, &found), 0);
    assert_true(found);
    assert_int_equal(journal_blah_job_state(&job), BJS_GATHERING);
    long long row = job.row;
    journal_blah_job_free(&job);
    free(out.gahp_id);
    return row;
}

static blah_job_state state_of(journal *j, const char *gahp_id)
{
    journal_blah_job job;
    int found = 0;
    assert_int_equal(journal_blah_job_get(j, gahp_id, &job, &found), 0);
    assert_true(found);
    blah_job_state s = journal_blah_job_state(&job);
    journal_blah_job_free(&job);
    return s;
}

/* -1 and journal_errmsg names the job and the transition. */
static void refused(journal *j, int rc, const char *job, const char *arrow)
{
    assert_int_equal(rc, -1);
    const char *msg = journal_errmsg(j);
    if (strstr(msg, job) == NULL || strstr(msg, arrow) == NULL)
        fail_msg("refusal \"%s\" does not name %s and %s", msg, job, arrow);
}

static void test_journal_refuses_illegal(void **state)
{
    (void)state;
    char *err = NULL;
    journal *j = tmp_journal_open(&err);
    assert_non_null(j);
    long long project = 0, session = 0, ga = 0, gc = 0, request = 0;
    assert_int_equal(journal_session_begin(j, "1.0.0", &session), 0);
    assert_int_equal(journal_project_id(j, "http://127.0.0.1/p/", "k", &project), 0);
    long long a = join(j, project, "/d/a", 0, "bA", &ga);
    long long b = join(j, project, "/d/b", ga, NULL, NULL);
    long long c = join(j, project, "/d/c", 0, "bC", &gc);
    printf("(\"illegal transition\" errors are expected here)\n");
    fflush(stdout);     /* before the log's lines on stderr */

    /* a gathering job is not fetched */
    refused(j, journal_blah_fetch_started(j, a, 2.0), "bA-1", "gathering --fetch_start-->");
    assert_int_equal(query_int(j, "SELECT count(*) FROM blah_jobs"
                                  " WHERE fetch_started_at IS NOT NULL"), 0);
    /* cancelled: a new fetch is refused; the end of a fetch that was
     * already running is accepted and changes nothing (the row unchanged) */
    assert_int_equal(journal_blah_cancel(j, a, 3.0), 0);
    assert_int_equal(state_of(j, "bA-1"), BJS_CANCELLED_OWED);
    refused(j, journal_blah_fetch_started(j, a, 3.5), "bA-1",
            "cancelled_abort_owed --fetch_start-->");
    journal_blah_end end = { 1, 0, 1, 1, NULL };
    assert_int_equal(journal_blah_fetched(j, a, &end, 4.0), 0);
    assert_int_equal(state_of(j, "bA-1"), BJS_CANCELLED_OWED);
    assert_int_equal(query_int(j, "SELECT count(*) FROM blah_jobs WHERE fetched_at IS NOT NULL"
                                  " OR fetch_started_at IS NOT NULL OR exit_code IS NOT NULL"), 0);
    /* an abort only of a cancelled job */
    refused(j, journal_blah_abort_done(j, b), "bA-2", "gathering --abort_sent-->");
    assert_int_equal(journal_blah_abort_done(j, a), 0);
    assert_int_equal(state_of(j, "bA-1"), BJS_CANCELLED_SENT);

    /* the close moves the gathering job, leaves the cancelled one */
    assert_int_equal(journal_blah_group_close(j, ga, session, "BLAH_GROUP_SUBMIT", "x", project,
                                              1, 5.0, &request), 0);
    assert_true(request > 0);
    assert_int_equal(state_of(j, "bA-2"), BJS_CLOSED);
    assert_int_equal(state_of(j, "bA-1"), BJS_CANCELLED_SENT);
    refused(j, journal_blah_group_close(j, ga, session, "BLAH_GROUP_SUBMIT", "x", project, 1,
                                        6.0, &request), "bA-2", "closed --close-->");

    /* a completed job is not held, and a late cancel changes nothing */
    exec_sql(j, "UPDATE blah_jobs SET fetch_started_at = 7, fetched_at = 7,"
                " exit_code = 0, wall_s = 1, cpu_s = 1 WHERE gahp_id = 'bC-1'");
    assert_int_equal(state_of(j, "bC-1"), BJS_COMPLETED);
    refused(j, journal_blah_hold(j, "bC-1", "why", 8.0), "bC-1", "completed --hold-->");
    assert_int_equal(journal_blah_cancel(j, c, 9.0), 0);
    assert_int_equal(query_int(j, "SELECT count(*) FROM blah_jobs WHERE id = 3"
                                  " AND held_at IS NULL AND cancelled_at IS NULL"), 1);
    assert_int_equal(state_of(j, "bC-1"), BJS_COMPLETED);
    (void)c;

    /* a hold of a job cancelled first: accepted, nothing written */
    long long gd = 0;
    long long d = join(j, project, "/d/d", 0, "bD", &gd);
    assert_int_equal(journal_blah_cancel(j, d, 10.0), 0);
    assert_int_equal(journal_blah_hold(j, "bD-1", "why", 11.0), 0);
    assert_int_equal(query_int(j, "SELECT count(*) FROM blah_jobs WHERE held_at IS NOT NULL"), 0);
    /* and one gathering: held */
    join(j, project, "/d/e", gd, NULL, NULL);
    assert_int_equal(journal_blah_hold(j, "bD-2", "why", 12.0), 0);
    assert_int_equal(state_of(j, "bD-2"), BJS_HELD_ALONE);
    journal_close(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix),
        cmocka_unit_test(test_final_is_final),
        cmocka_unit_test(test_server_drives_every_waiting_state),
        cmocka_unit_test(test_awaits_pass),
        cmocka_unit_test(test_status_table),
        cmocka_unit_test_setup_teardown(test_journal_refuses_illegal, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
