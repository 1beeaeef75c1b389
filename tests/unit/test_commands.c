/*
 * test_commands.c - every async command parser (src/wire/request.c) with good
 * and bad inputs: field counts, numbers, names, request ids.
 */
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/command.h"
#include "wire/request.h"
#include "base/num.h"
#include "wire/gahp_text.h"

#include <stdlib.h>
#include <string.h>

/* Parse an (escaped) request line; returns 0/-1 and the request. */
static int parse_line(const char *text, gahp_request **req)
{
    char *copy = strdup(text);
    assert_non_null(copy);
    gahp_args a = { 0 };
    assert_int_equal(gahp_tokenize(copy, strlen(copy), &a), GAHP_TOK_OK);
    const char *why = NULL;
    int rc = command_parse_request(a.argv, a.argc, req, &why);
    if (rc != 0)
        assert_non_null(why);
    gahp_args_free(&a);
    free(copy);
    return rc;
}

static void ok(const char *text)
{
    gahp_request *r = NULL;
    if (parse_line(text, &r) != 0)
        fail_msg("rejected: %s", text);
    gahp_request_free(r);
}

static void bad(const char *text)
{
    gahp_request *r = NULL;
    if (parse_line(text, &r) == 0)
        fail_msg("accepted: %s", text);
    assert_null(r);
}

/* Well framed, but a field has a bad value: parsed (the client gets S)
 * with an error that names the field and the value. */
static void bad_value(const char *text, const char *message)
{
    gahp_request *r = NULL;
    if (parse_line(text, &r) != 0)
        fail_msg("not well framed: %s", text);
    assert_non_null(r->value_error);
    assert_string_equal(r->value_error, message);
    gahp_request_free(r);
}

static void test_ping(void **state)
{
    (void)state;
    gahp_request *r;
    assert_int_equal(parse_line("boinc_ping 7", &r), 0);
    assert_int_equal(r->cmd, GAHP_CMD_PING);
    assert_int_equal(r->id, 7);
    assert_string_equal(r->args_text, "");
    gahp_request_free(r);
    ok("BOINC_PING 2147483647");
    bad("BOINC_PING");
    bad("BOINC_PING 0");
    bad("BOINC_PING -1");
    bad("BOINC_PING 2147483648");
    bad("BOINC_PING 1x");
    bad("BOINC_PING +1");
    bad("BOINC_PING 1 extra");
    bad("BOINC_PING ");
    bad("BOINC_PONG 1");
}

static void test_submit(void **state)
{
    (void)state;
    gahp_request *r;
    assert_int_equal(parse_line("BOINC_SUBMIT 3 condor#s#1#17 uppercase 2 "
                                "condor#s#1#17#1.0 2 -v a\\ b 1 /tmp/in\\ 1.txt in.txt "
                                "condor#s#1#17#1.1 0 0 "
                                "1e12 NULL 5.5e8 NULL 86400 7", &r), 0);
    gahp_submit *s = &r->u.submit;
    assert_string_equal(s->batch, "condor#s#1#17");
    assert_string_equal(s->app, "uppercase");
    assert_int_equal(s->njobs, 2);
    assert_string_equal(s->jobs[0].name, "condor#s#1#17#1.0");
    assert_int_equal(s->jobs[0].nargs, 2);
    assert_string_equal(s->jobs[0].args[1], "a b");
    assert_int_equal(s->jobs[0].ninputs, 1);
    assert_string_equal(s->jobs[0].inputs[0].src_path, "/tmp/in 1.txt");
    assert_string_equal(s->jobs[0].inputs[0].dst_name, "in.txt");
    assert_int_equal(s->jobs[1].nargs, 0);
    assert_true(s->has_params);
    assert_int_equal(s->params_set, GAHP_P_FPOPS_EST | GAHP_P_MEMORY_BOUND |
                     GAHP_P_DELAY_BOUND | GAHP_P_APP_VERSION);
    assert_true(s->params.rsc_fpops_est == 1e12);
    assert_int_equal(s->params.app_version_num, 7);
    /* canonical args keep escapes */
    assert_non_null(strstr(r->args_text, "a\\ b"));
    gahp_request_free(r);

    ok("BOINC_SUBMIT 1 b app 1 j 0 0");                      /* no params */
    ok("BOINC_SUBMIT 1 b app 1 j 1  0");                     /* empty job arg */
    ok("BOINC_SUBMIT 1 b app 0");
    ok("BOINC_SUBMIT 1 b app 1 j 0 0 NULL NULL NULL NULL NULL NULL");
    bad("BOINC_SUBMIT 1 b");
    bad("BOINC_SUBMIT 1 b app");
    bad("BOINC_SUBMIT 1 b app 2 j 0 0");                      /* too few jobs */
    bad("BOINC_SUBMIT 1 b app 1 j 0 0 k 0 0");                /* extra */
    bad("BOINC_SUBMIT 1 b app 1 j 2 x 0");                    /* nargs mismatch */
    bad("BOINC_SUBMIT 1 b app 1 j 0 1 /a");                   /* half a pair */
    bad("BOINC_SUBMIT 1 b app 1 j 0 1 /a ");                  /* empty dst */
    bad("BOINC_SUBMIT 1  app 1 j 0 0");                       /* empty batch */
    bad("BOINC_SUBMIT 1 b app x j 0 0");
    bad("BOINC_SUBMIT 1 b app -1");
    bad("BOINC_SUBMIT 1 b app 999999999 j 0 0");              /* count too big */
    bad("BOINC_SUBMIT 1 b app 1 j 0 0 1 2 3 4 5");            /* 5 of 6 */
    bad("BOINC_SUBMIT 1 b app 1 j 0 0 1 2 3 4 5 6 7");
    bad_value("BOINC_SUBMIT 1 b app 1 j 0 0 x NULL NULL NULL NULL NULL",
              "rsc_fpops_est x is not a number");
    bad_value("BOINC_SUBMIT 1 b app 1 j 0 0 inf NULL NULL NULL NULL NULL",
              "rsc_fpops_est inf is not a number");
    bad_value("BOINC_SUBMIT 1 b app 1 j 0 0 nan NULL NULL NULL NULL NULL",
              "rsc_fpops_est nan is not a number");
    bad_value("BOINC_SUBMIT 1 b app 1 j 0 0 1e999 NULL NULL NULL NULL NULL",
              "rsc_fpops_est 1e999 is not a number");
    bad_value("BOINC_SUBMIT 1 b app 1 j 0 0 NULL NULL NULL NULL NULL 1.5",
              "app_version_num 1.5 is not an integer");
    /* HTCondor users write +rsc_memory_bound = "2GB": the first bad field
     * is named, quotes and all */
    bad_value("BOINC_SUBMIT 1 b app 1 j 0 0 NULL NULL \"2GB\" 2GB NULL NULL",
              "rsc_memory_bound \"2GB\" is not a number");
    /* raw TAB and other control bytes are ordinary bytes inside tokens */
    gahp_request *t = NULL;
    assert_int_equal(parse_line("BOINC_SUBMIT 1 b app 1 j 1 a\tb\x01 0", &t), 0);
    assert_string_equal(t->u.submit.jobs[0].args[0], "a\tb\x01");
    gahp_request_free(t);
}

static void test_query(void **state)
{
    (void)state;
    gahp_request *r;
    assert_int_equal(parse_line("BOINC_QUERY_BATCHES 9 1700000000.123456 2 b1 b2", &r), 0);
    assert_string_equal(r->u.query.min_mod_time, "1700000000.123456");
    assert_int_equal(r->u.query.nbatches, 2);
    assert_string_equal(r->u.query.batches[1], "b2");
    gahp_request_free(r);
    ok("BOINC_QUERY_BATCHES 9 0 1 b");
    bad("BOINC_QUERY_BATCHES 9 0 2 b");
    bad("BOINC_QUERY_BATCHES 9 0 1 b c");
    bad("BOINC_QUERY_BATCHES 9 x 1 b");
    bad("BOINC_QUERY_BATCHES 9 -5 1 b");
    bad("BOINC_QUERY_BATCHES 9 0");
    bad("BOINC_QUERY_BATCHES 9 0 1 ");
}

static void test_fetch(void **state)
{
    (void)state;
    gahp_request *r;
    assert_int_equal(parse_line("BOINC_FETCH_OUTPUT 4 j /home/u/run err.txt SOME 1 out.txt /tmp/o", &r), 0);
    assert_int_equal(r->u.fetch.all, 0);
    assert_string_equal(r->u.fetch.specs[0].dst, "/tmp/o");
    gahp_request_free(r);
    ok("BOINC_FETCH_OUTPUT 4 j /iwd err ALL 0");
    bad("BOINC_FETCH_OUTPUT 4 j /iwd err all 0");
    bad("BOINC_FETCH_OUTPUT 4 j /iwd err ALL 1 a");
    bad("BOINC_FETCH_OUTPUT 4 j /iwd err ALL");
    bad("BOINC_FETCH_OUTPUT 4 j /iwd");
    bad("BOINC_FETCH_OUTPUT 4 j /iwd err ALL 0 x");
}

static void test_abort_retire_lease(void **state)
{
    (void)state;
    gahp_request *r;
    assert_int_equal(parse_line("BOINC_ABORT_JOBS 5 j1 j2 j3", &r), 0);
    assert_int_equal(r->u.abort_jobs.njobs, 3);
    gahp_request_free(r);
    bad("BOINC_ABORT_JOBS 5");
    bad("BOINC_ABORT_JOBS 5 j1 ");
    ok("BOINC_RETIRE_BATCH 6 b");
    bad("BOINC_RETIRE_BATCH 6");
    bad("BOINC_RETIRE_BATCH 6 b c");
    assert_int_equal(parse_line("BOINC_SET_LEASE 7 b 1700000000", &r), 0);
    assert_true(r->u.lease.lease_time == 1700000000LL);
    gahp_request_free(r);
    bad("BOINC_SET_LEASE 1 b");
    bad_value("BOINC_SET_LEASE 1 b 1.5", "lease time 1.5 is not a non-negative integer");
    bad_value("BOINC_SET_LEASE 1 b 99999999999999999999",
              "lease time 99999999999999999999 is not a non-negative integer");
    bad("BOINC_SET_LEASE 1 b 5 6");
}

/* A journaled record is parsed as its request line was (recovery and the
 * BLAH dialect's internal requests): the fields, the escapes and the
 * canonical text come back, with the record's project; a record that does
 * not parse says why.  An internal request built typed has no text. */
static void test_a_journaled_record_becomes_its_request(void **state)
{
    (void)state;
    const char *why = NULL;
    gahp_journal_record rec = { "BOINC_FETCH_OUTPUT", 9, "j\\ 1 /iwd err SOME 1 a\\ b /tmp/o",
                                4, "http://p/", NULL };
    gahp_request *r = gahp_request_from_record(GAHP_CMD_FETCH_OUTPUT, gahp_parse_fetch, &rec,
                                               &why);
    assert_non_null(r);
    assert_int_equal(r->id, 9);
    assert_string_equal(r->u.fetch.job, "j 1");
    assert_string_equal(r->u.fetch.specs[0].src, "a b");
    assert_string_equal(r->args_text, rec.args_text);
    assert_true(r->project_id == 4);
    assert_string_equal(r->project_url, "http://p/");
    assert_string_equal(r->authenticator, "");
    gahp_request_free(r);
    gahp_journal_record none = { "BOINC_RETIRE_BATCH", 1, "b", 0, NULL, NULL };
    r = gahp_request_from_record(GAHP_CMD_RETIRE_BATCH, gahp_parse_retire, &none, &why);
    assert_non_null(r);
    assert_null(r->project_url);
    gahp_request_free(r);
    gahp_journal_record bad_rec = { "BOINC_RETIRE_BATCH", 1, "b c", 0, NULL, NULL };
    why = NULL;
    assert_null(gahp_request_from_record(GAHP_CMD_RETIRE_BATCH, gahp_parse_retire, &bad_rec, &why));
    assert_string_equal(why, "extra fields");
    gahp_request *lead = gahp_request_new(GAHP_CMD_BLAH_LEAD, 1);
    assert_non_null(lead);
    lead->u.blah_group = 12;
    assert_int_equal(gahp_request_set_project(lead, 3, "http://q/", "k"), 0);
    assert_string_equal(lead->authenticator, "k");
    assert_null(lead->args_text);
    gahp_request_free(lead);
}

/* Out of memory's token is its message escaped (exec/exec.h). */
static void test_nomem_token_is_the_message_escaped(void **state)
{
    (void)state;
    char *tok = gahp_escape(EXEC_NOMEM_MSG);
    assert_non_null(tok);
    assert_string_equal(tok, EXEC_NOMEM_RESULT);
    free(tok);
    tok = exec_nomem_result();
    assert_non_null(tok);
    assert_string_equal(tok, "out\\ of\\ memory");
    free(tok);
}

/* A parsed request has one holder: its first free frees it, and each
 * gahp_request_ref adds a holder that a free takes away (issue 42: a
 * sampled mutant starting the count at one leaked every request, which
 * only a leak checker saw). */
static void test_a_request_has_one_holder(void **state)
{
    (void)state;
    gahp_request *r = NULL;
    assert_int_equal(parse_line("BOINC_PING 7", &r), 0);
    assert_int_equal(atomic_load(&r->extra_refs), 0);
    assert_ptr_equal(gahp_request_ref(r), r);
    assert_int_equal(atomic_load(&r->extra_refs), 1);
    gahp_request_free(r);           /* the second holder lets go */
    assert_int_equal(atomic_load(&r->extra_refs), 0);
    gahp_request_free(r);           /* the first: freed */
}

static void test_numbers(void **state)
{
    (void)state;
    long l;
    double d;
    long long ll;
    assert_int_equal(num_parse_long("42", 0, 100, &l), 0);
    assert_int_equal(l, 42);
    assert_int_equal(num_parse_long("101", 0, 100, &l), -1);
    assert_int_equal(num_parse_long(" 1", 0, 100, &l), -1);
    assert_int_equal(num_parse_long("", 0, 100, &l), -1);
    assert_int_equal(num_parse_llong("-9223372036854775809", &ll), -1);
    /* an ordinary negative number (issue 42: a sampled mutant made every
     * negative number LLONG_MIN, and only the edge was tried) */
    assert_int_equal(num_parse_llong("-5", &ll), 0);
    assert_true(ll == -5);
    assert_int_equal(num_parse_long("-7", -10, 10, &l), 0);
    assert_int_equal(l, -7);
    assert_int_equal(num_parse_double("1.5e3", &d), 0);
    assert_true(d == 1500.0);
    assert_int_equal(num_parse_double(".5", &d), 0);
    assert_int_equal(num_parse_double("0x10", &d), -1);
    assert_int_equal(num_parse_double("1.5 ", &d), -1);
    assert_int_equal(num_parse_double("infinity", &d), -1);
    /* the edges of long long, and the forms strtol would let through */
    assert_int_equal(num_parse_llong("-9223372036854775808", &ll), 0);
    assert_true(ll == LLONG_MIN);
    assert_int_equal(num_parse_llong("9223372036854775807", &ll), 0);
    assert_true(ll == LLONG_MAX);
    assert_int_equal(num_parse_llong("9223372036854775808", &ll), -1);
    assert_int_equal(num_parse_llong("+1", &ll), -1);
    assert_int_equal(num_parse_llong("-", &ll), -1);
    assert_int_equal(num_parse_llong("1 ", &ll), -1);
    /* blanks around a reply's number; the span ends where n says */
    assert_int_equal(num_parse_long_blanks(" 12\n", 4, 0, 100, &l), 0);
    assert_int_equal(l, 12);
    assert_int_equal(num_parse_long_blanks("12)", 2, 0, 100, &l), 0);
    assert_int_equal(num_parse_long_blanks("1 2", 3, 0, 100, &l), -1);
    assert_int_equal(num_parse_long_blanks("  ", 2, 0, 100, &l), -1);
    assert_int_equal(num_parse_double_blanks(" 1.5\t", 5, &d), 0);
    assert_true(d == 1.5);
    assert_int_equal(num_parse_double_blanks("1.5 2", 3, &d), 0);
    assert_int_equal(num_parse_double_blanks("1.52", 3, &d), -1);  /* runs on */
    assert_int_equal(num_parse_double_blanks("nan", 3, &d), -1);
    /* digits: base 10 or 16, at most max, no sign */
    unsigned long long u;
    assert_int_equal(num_parse_digits("10FFFF", 6, 16, 0x10FFFF, &u), 0);
    assert_true(u == 0x10FFFF);
    assert_int_equal(num_parse_digits("110000", 6, 16, 0x10FFFF, &u), -1);
    assert_int_equal(num_parse_digits("18446744073709551615", 20, 10, ULLONG_MAX, &u), 0);
    assert_true(u == ULLONG_MAX);
    assert_int_equal(num_parse_digits("18446744073709551616", 20, 10, ULLONG_MAX, &u), -1);
    assert_int_equal(num_parse_digits("1a", 2, 10, 100, &u), -1);
    assert_int_equal(num_parse_digits("-1", 2, 10, 100, &u), -1);
    assert_int_equal(num_parse_digits("", 0, 10, 100, &u), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping),
        cmocka_unit_test(test_submit),
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_fetch),
        cmocka_unit_test(test_abort_retire_lease),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_a_request_has_one_holder),
        cmocka_unit_test(test_a_journaled_record_becomes_its_request),
        cmocka_unit_test(test_nomem_token_is_the_message_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
