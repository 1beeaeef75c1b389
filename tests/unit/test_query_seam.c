/*
 * test_query_seam.c - BOINC_QUERY_BATCHES (src/cmd/query.c), with the
 * BOINC_ABORT_JOBS it must honour, run the way a worker runs them
 * (command_dispatch, seam.h) with the scripted BOINC client
 * (scripted_client.h) and a real journal.
 *
 * The journal has batch qb (jobs q1, q2, q3) that a submit of this
 * journal left; the scripted server has qb with the jobs' statuses and
 * modification times, answers query_batch2 with the jobs modified after
 * min_mod_time (a partial reply), and "no batch named NAME" for a name it
 * does not know.  Each test checks the line the client would get from
 * RESULTS, what query_batch2 was asked (min_mod_time, names), and the
 * journal: the stored (transient) result, the jobs' recorded statuses,
 * change numbers and aborts, the batch's recorded server_time and the
 * session in which the client took it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "seam.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "journal/journal_batches.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static seam S;

/* ---- helpers ----------------------------------------------------------------- */

/* Run one request line; its RESULTS line must be want, and the journal
 * must hold the same tail as the request's result. */
static void run_expect(const char *line, const char *want)
{
    char *got = seam_run(&S, line);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n  gave %s\n  expected %s", line, got, want);
    char *stored = seam_stored(seam_last_request());
    char *want_stored = str_printf("completed: %s", strchr(want, ' ') + 1);
    assert_string_equal(stored, want_stored);
    free(stored);
    free(want_stored);
    free(got);
}

static void assert_sql(const char *sql, const char *want)
{
    char *got = seam_sql("%s", sql);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n  gave %s\n  expected %s", sql, got, want);
    free(got);
}

/* The journal's jobs of batch b: "name=status/status_seq[/aborted]". */
static void assert_jobs(const char *b, const char *want)
{
    char *sql = str_printf("SELECT group_concat(name || '=' || COALESCE(status, '-') || '/' || "
                           "status_seq || CASE aborted WHEN 1 THEN '/aborted' ELSE '' END, ' ') "
                           "FROM (SELECT j.* FROM jobs j JOIN batches b ON b.id = j.batch_id "
                           "WHERE b.name = '%s' ORDER BY j.id)", b);
    assert_sql(sql, want);
    free(sql);
}

/* The batch's recorded server_time and client session ("NULL": none). */
static void assert_batch(const char *b, const char *server_time, const char *client_session)
{
    char *sql = str_printf("SELECT COALESCE(CAST(CAST(status_server_time AS INTEGER) AS TEXT), "
                           "'NULL') || ' ' || COALESCE(client_session, 'NULL') FROM batches "
                           "WHERE name = '%s'", b);
    char *want = str_printf("%s %s", server_time, client_session);
    assert_sql(sql, want);
    free(want);
    free(sql);
}

static void assert_project_seq(const char *want)
{
    assert_sql("SELECT status_seq FROM projects", want);
}

/* query_batch2 call i of the last run: "<min_mod_time>: <names>". */
static void assert_q2(size_t i, const char *want)
{
    if (i >= S.w.nq2)
        fail_msg("query_batch2 call %zu of %zu", i + 1, S.w.nq2);
    char got[300];
    snprintf(got, sizeof got, "%s: %s", S.w.q2[i].mmt, S.w.q2[i].names);
    assert_string_equal(got, want);
}

/* The session the tests run in, as text. */
static char session[32];

/* The client took qb as submitted in this session (its submit's NULL). */
static void confirm(const char *b)
{
    assert_int_equal(journal_batch_set_client_session(S.j, S.project, b, S.session), 0);
}

static void server_batch(size_t i, const char *name, const char *const *jobs,
                         const char *const *statuses, size_t n)
{
    sc_qbatch *b = &S.w.qbatches[i];
    b->name = name;
    b->njobs = n;
    for (size_t k = 0; k < n; k++) {
        b->jobs[k].name = jobs[k];
        b->jobs[k].status = statuses[k];
        b->jobs[k].mod_time = S.w.server_time;
    }
}

static int setup(void **state)
{
    (void)state;
    seam_open(&S, "test_query_seam");
    snprintf(session, sizeof session, "%lld", S.session);
    static const char *const jobs[] = { "q1", "q2", "q3" };
    static const char *const statuses[] = { "IN_PROGRESS", "DONE", "UNSENT" };
    seam_batch(&S, "qb", "qapp", 55, jobs, 3);
    S.w.server_time = 1000;
    server_batch(0, "qb", jobs, statuses, 3);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    seam_close(&S);
    return 0;
}

/* ---- the tests ----------------------------------------------------------------- */

/* Recording the statuses fails (main arms the first "update job status"
 * statement of the process to fail, so this test runs first): the answer
 * still gives the server's statuses over the journal's, the journal keeps
 * none of the reply (one transaction), and the client gets its own
 * number back, so the same changes are listed again. */
static void test_recording_fails(void **state)
{
    (void)state;
    confirm("qb");
    printf("(an injected \"update job status\" failure is expected here)\n");
    fflush(stdout);
    run_expect("BOINC_QUERY_BATCHES 5 0 1 qb", "5 NULL 0 3 q1 IN_PROGRESS q2 DONE q3 IN_PROGRESS");
    assert_jobs("qb", "q1=UNSENT/0 q2=UNSENT/0 q3=UNSENT/0");
    assert_batch("qb", "NULL", session);
    assert_project_seq("0");
    /* the next query records them */
    run_expect("BOINC_QUERY_BATCHES 6 0 1 qb", "6 NULL 1 3 q1 IN_PROGRESS q2 DONE q3 IN_PROGRESS");
    assert_jobs("qb", "q1=IN_PROGRESS/1 q2=DONE/1 q3=UNSENT/0");
}

/* A batch the client is not known to have taken in this session (after a
 * restart, say) gets its full job list in submit order, whatever number
 * the client sends; the server is asked for every job (min_mod_time 0:
 * nothing recorded yet); the statuses are recorded with change numbers,
 * the reply's server_time with the batch, and the batch as the client's;
 * the client gets its own number back (it stops reading at such a batch).
 * UNSENT, never changed, is IN_PROGRESS and keeps change number 0. */
static void test_unconfirmed_batch_gets_every_job(void **state)
{
    (void)state;
    run_expect("BOINC_QUERY_BATCHES 5 0 1 qb", "5 NULL 0 3 q1 IN_PROGRESS q2 DONE q3 IN_PROGRESS");
    assert_int_equal(S.w.nq2, 1);
    assert_q2(0, "0: qb");
    assert_jobs("qb", "q1=IN_PROGRESS/1 q2=DONE/1 q3=UNSENT/0");
    assert_batch("qb", "1000", session);
    assert_project_seq("1");
    assert_int_equal(S.w.seen[K_OTHER], 0);
}

/* A batch the client took in this session: a partial query (the number
 * the client was handed) lists only the jobs changed since, "0" when
 * none; the server is asked from a margin below the recorded
 * server_time, and its reply lists only the jobs it modified since then
 * (a job it does not list keeps its recorded status). */
static void test_partial_replies(void **state)
{
    (void)state;
    confirm("qb");
    run_expect("BOINC_QUERY_BATCHES 5 0 1 qb", "5 NULL 1 3 q1 IN_PROGRESS q2 DONE q3 IN_PROGRESS");
    assert_q2(0, "0: qb");
    assert_project_seq("1");

    /* nothing changed: an empty group, the same number */
    S.w.server_time = 1010;
    run_expect("BOINC_QUERY_BATCHES 6 1 1 qb", "6 NULL 1 0");
    assert_q2(0, "995: qb");

    /* q1 finishes: the server lists q1 only (q2, q3 not modified since
     * 1005); the client gets q1 and a new number */
    S.w.server_time = 1020;
    sc_qjob_set(&S.w, "qb", "q1", "DONE");
    run_expect("BOINC_QUERY_BATCHES 7 1 1 qb", "7 NULL 2 1 q1 DONE");
    assert_q2(0, "1005: qb");
    assert_jobs("qb", "q1=DONE/2 q2=DONE/1 q3=UNSENT/0");
    assert_batch("qb", "1020", session);

    /* a client that missed reply 7 asks with its older number: q1 again */
    run_expect("BOINC_QUERY_BATCHES 8 1 1 qb", "8 NULL 2 1 q1 DONE");
    /* a full query ("0") lists every job with its latest status */
    run_expect("BOINC_QUERY_BATCHES 9 0 1 qb", "9 NULL 2 3 q1 DONE q2 DONE q3 IN_PROGRESS");
    /* a number from the future (a journal from a backup) is "0" */
    run_expect("BOINC_QUERY_BATCHES 10 99 1 qb", "10 NULL 2 3 q1 DONE q2 DONE q3 IN_PROGRESS");
    assert_jobs("qb", "q1=DONE/2 q2=DONE/1 q3=UNSENT/0");
}

/* A job named by BOINC_ABORT_JOBS is never listed again, not even with
 * the ERROR the abort causes on the server, in full and partial queries
 * alike; the journal marks it aborted before the RPC. */
static void test_aborted_jobs(void **state)
{
    (void)state;
    confirm("qb");
    run_expect("BOINC_QUERY_BATCHES 5 0 1 qb", "5 NULL 1 3 q1 IN_PROGRESS q2 DONE q3 IN_PROGRESS");
    S.w.server_time = 1010;
    run_expect("BOINC_ABORT_JOBS 6 1 q1", "6 NULL");
    assert_int_equal(S.w.seen[K_ABORT], 1);
    assert_jobs("qb", "q1=IN_PROGRESS/1/aborted q2=DONE/1 q3=UNSENT/0");

    run_expect("BOINC_QUERY_BATCHES 7 1 1 qb", "7 NULL 2 0");
    assert_jobs("qb", "q1=ERROR/2/aborted q2=DONE/1 q3=UNSENT/0");
    run_expect("BOINC_QUERY_BATCHES 8 0 1 qb", "8 NULL 2 2 q2 DONE q3 IN_PROGRESS");
}

/* A batch the server no longer knows: the server's error, ending with the
 * exact requested name (HTCondor resubmits the batch of that name), even
 * when the client module squashed it (double spaces); nothing recorded. */
static void test_batch_the_server_does_not_know(void **state)
{
    (void)state;
    run_expect("BOINC_QUERY_BATCHES 5 0 2 qb gone",
               "5 query_batch2\\ failed:\\ server\\ error:\\ no\\ batch\\ named\\ gone");
    run_expect("BOINC_QUERY_BATCHES 6 0 1 odd\\ \\ name",
               "6 query_batch2\\ failed:\\ server\\ error:\\ no\\ batch\\ named\\ odd\\ \\ name");
    assert_jobs("qb", "q1=UNSENT/0 q2=UNSENT/0 q3=UNSENT/0");
    assert_batch("qb", "NULL", "NULL");
    assert_project_seq("0");
}

/* A batch the journal does not know (another client's): the server's
 * group as it is, every job asked for; nothing recorded of it. */
static void test_batch_the_journal_does_not_know(void **state)
{
    (void)state;
    static const char *const jobs[] = { "f1", "f2" };
    static const char *const statuses[] = { "DONE", "UNSENT" };
    server_batch(1, "foreign", jobs, statuses, 2);
    run_expect("BOINC_QUERY_BATCHES 5 7 1 foreign", "5 NULL 0 2 f1 DONE f2 IN_PROGRESS");
    assert_q2(0, "0: foreign");
    assert_sql("SELECT count(*) FROM batches WHERE name = 'foreign'", "0");
    assert_project_seq("0");
}

/* A batch already recorded and a new one go to two query_batch2 calls
 * (the new one does not make the server list every job of the other);
 * one group each, in request order.  The client stops reading at the new
 * batch (not taken in this session): the groups after it are not taken
 * as read, so the client gets its own number back. */
static void test_recorded_and_new_batches(void **state)
{
    (void)state;
    confirm("qb");
    run_expect("BOINC_QUERY_BATCHES 5 0 1 qb", "5 NULL 1 3 q1 IN_PROGRESS q2 DONE q3 IN_PROGRESS");

    static const char *const jobs[] = { "n1", "n2" };
    static const char *const statuses[] = { "UNSENT", "IN_PROGRESS" };
    seam_batch(&S, "nb", "qapp", 56, jobs, 2);
    S.w.server_time = 1010;
    server_batch(1, "nb", jobs, statuses, 2);
    run_expect("BOINC_QUERY_BATCHES 6 1 2 qb nb", "6 NULL 1 0 2 n1 IN_PROGRESS n2 IN_PROGRESS");
    assert_int_equal(S.w.nq2, 2);
    assert_q2(0, "0: nb");
    assert_q2(1, "995: qb");
    assert_batch("nb", "1010", session);       /* its non-empty group was read */
    assert_jobs("nb", "n1=UNSENT/0 n2=IN_PROGRESS/2");

    /* nb first, unconfirmed before: now both are the client's */
    run_expect("BOINC_QUERY_BATCHES 7 2 2 nb qb", "7 NULL 2 0 0");
}

/* Replies that would break the token count or lose a batch, and a
 * failed RPC: the error, nothing recorded. */
static void test_bad_replies(void **state)
{
    (void)state;
    S.w.q2_short = 1;
    run_expect("BOINC_QUERY_BATCHES 5 0 1 qb",
               "5 query_batch2\\ failed:\\ reply\\ does\\ not\\ answer\\ every\\ batch");
    S.w.q2_short = 0;
    S.w.q2_no_time = 1;
    run_expect("BOINC_QUERY_BATCHES 6 0 1 qb",
               "6 query_batch2\\ failed:\\ reply\\ has\\ no\\ server_time");
    S.w.q2_no_time = 0;
    sc_fault f = { K_QUERY2, 1, O_UNKNOWN };
    sc_world_script(&S.w, &f, 1);
    run_expect("BOINC_QUERY_BATCHES 7 0 1 qb",
               "7 query_batch2\\ failed:\\ HTTP\\ error:\\ scripted:\\ bad\\ gateway");
    assert_jobs("qb", "q1=UNSENT/0 q2=UNSENT/0 q3=UNSENT/0");
    assert_batch("qb", "NULL", "NULL");
    assert_project_seq("0");
}

/* Statuses the protocol does not know are IN_PROGRESS (recorded as sent). */
static void test_status_words(void **state)
{
    (void)state;
    sc_qjob_set(&S.w, "qb", "q1", "ERROR");
    sc_qjob_set(&S.w, "qb", "q3", "SOMETHING_NEW");
    run_expect("BOINC_QUERY_BATCHES 5 0 1 qb", "5 NULL 0 3 q1 ERROR q2 DONE q3 IN_PROGRESS");
    assert_jobs("qb", "q1=ERROR/1 q2=DONE/1 q3=SOMETHING_NEW/1");
}

int main(void)
{
    setenv("BOINC_GAHP_TEST_FAULT_AT", "step.update job status:1", 1);
    log_open(NULL, LOG_ERROR, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_recording_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unconfirmed_batch_gets_every_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_replies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_aborted_jobs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_the_server_does_not_know, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_the_journal_does_not_know, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recorded_and_new_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_replies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_words, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
