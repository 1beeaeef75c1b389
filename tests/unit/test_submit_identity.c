/*
 * test_submit_identity.c - the job-set fingerprint of BOINC_SUBMIT
 * (src/submit/submit.c): the same set in any order is the same submit,
 * any change to a job's name, arguments or inputs, the batch name or the
 * app is another one, and the journaled argument text gives the same
 * fingerprint as the parsed request.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "submit/submit.h"

static char *a_args[] = { "-n", "1" };
static char *b_args[] = { "x y" };
static gahp_input_file a_in[] = { { "/iwd/a.txt", "in" } };
static gahp_input_file b_in[] = { { "/iwd/b.txt", "in" }, { "/iwd/c.txt", "extra" } };

static void make_jobs(gahp_submit_job jobs[2], int swap)
{
    gahp_submit_job a = { "batch#1.0", 2, a_args, 1, a_in };
    gahp_submit_job b = { "batch#1.1", 1, b_args, 2, b_in };
    jobs[swap ? 1 : 0] = a;
    jobs[swap ? 0 : 1] = b;
}

static void fingerprint(gahp_submit_job *jobs, const char *batch, const char *app,
                        double fpops, char out[SUBMIT_IDENTITY_LEN])
{
    gahp_submit s;
    memset(&s, 0, sizeof s);
    s.batch = (char *)batch;
    s.app = (char *)app;
    s.njobs = 2;
    s.jobs = jobs;
    s.has_params = 1;
    s.params_set = GAHP_P_FPOPS_EST;
    s.params.rsc_fpops_est = fpops;
    assert_int_equal(submit_identity_of(&s, out), 0);
    assert_int_equal(strlen(out), SUBMIT_IDENTITY_LEN - 1);
}

static void test_order_and_trailing_fields_do_not_count(void **state)
{
    (void)state;
    gahp_submit_job j1[2], j2[2];
    char f1[SUBMIT_IDENTITY_LEN], f2[SUBMIT_IDENTITY_LEN];
    make_jobs(j1, 0);
    make_jobs(j2, 1);
    fingerprint(j1, "batch", "app", 1e9, f1);
    fingerprint(j2, "batch", "app", 5e12, f2);
    assert_string_equal(f1, f2);
}

/* Fingerprints are journaled: the encoding must never change.  The value
 * was computed apart from this code (Python's hashlib over the encoding
 * of submit.c's header: "<len>:<bytes>," fields, "a<n>,",
 * "i<n>,", sorted job digests after the batch, the app and "n<jobs>,"). */
static void test_fingerprint_is_stable(void **state)
{
    (void)state;
    gahp_submit_job jobs[2];
    char f[SUBMIT_IDENTITY_LEN];
    make_jobs(jobs, 0);
    fingerprint(jobs, "batch", "app", 1e9, f);
    assert_string_equal(f, "442c22b199a7ecbe7321308b89bc4739");
}

/* A large submit's jobs are digested in slices on the hash pool: the
 * fingerprint is the same (computed apart as above, for 3,000 jobs
 * "big#<i>.0" with arguments "-n" "<i>" and input "/iwd/in<i>.txt" as
 * "in"). */
static void test_large_submit_fingerprint_is_stable(void **state)
{
    (void)state;
    enum { N = 3000 };
    static gahp_submit_job jobs[N];
    static char names[N][24], nums[N][16], srcs[N][32];
    static char *args[N][2];
    static gahp_input_file ins[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "big#%d.0", i);
        snprintf(nums[i], sizeof nums[i], "%d", i);
        snprintf(srcs[i], sizeof srcs[i], "/iwd/in%d.txt", i);
        args[i][0] = "-n";
        args[i][1] = nums[i];
        ins[i] = (gahp_input_file){ srcs[i], "in" };
        jobs[i] = (gahp_submit_job){ names[i], 2, args[i], 1, &ins[i] };
    }
    gahp_submit s;
    memset(&s, 0, sizeof s);
    s.batch = "big";
    s.app = "app";
    s.njobs = N;
    s.jobs = jobs;
    char f[SUBMIT_IDENTITY_LEN];
    assert_int_equal(submit_identity_of(&s, f), 0);
    assert_string_equal(f, "eaa039934310195feffc817cfea1cd32");
}

static void test_every_job_field_counts(void **state)
{
    (void)state;
    gahp_submit_job j[2];
    char base[SUBMIT_IDENTITY_LEN], other[SUBMIT_IDENTITY_LEN];
    make_jobs(j, 0);
    fingerprint(j, "batch", "app", 0, base);
    fingerprint(j, "batch2", "app", 0, other);
    assert_string_not_equal(base, other);
    fingerprint(j, "batch", "app2", 0, other);
    assert_string_not_equal(base, other);
    char *args2[] = { "-n", "2" };
    j[0].args = args2;
    fingerprint(j, "batch", "app", 0, other);
    assert_string_not_equal(base, other);
    make_jobs(j, 0);
    j[1].ninputs = 1;               /* one input fewer */
    fingerprint(j, "batch", "app", 0, other);
    assert_string_not_equal(base, other);
    make_jobs(j, 0);
    char *joined[] = { "-n1" };     /* the same bytes, split otherwise */
    j[0].args = joined;
    j[0].nargs = 1;
    fingerprint(j, "batch", "app", 0, other);
    assert_string_not_equal(base, other);
}

static void test_journaled_text_gives_the_same_fingerprint(void **state)
{
    (void)state;
    char from_text[SUBMIT_IDENTITY_LEN], direct[SUBMIT_IDENTITY_LEN];
    const char *text = "batch app 2 batch#1.1 1 x\\ y 2 /iwd/b.txt in /iwd/c.txt extra"
                       " batch#1.0 2 -n 1 1 /iwd/a.txt in NULL NULL NULL NULL NULL NULL";
    assert_int_equal(submit_identity_of_args(text, from_text), 0);
    gahp_submit_job j[2];
    make_jobs(j, 0);
    fingerprint(j, "batch", "app", 0, direct);
    assert_string_equal(from_text, direct);
    assert_int_equal(submit_identity_of_args("batch app 3 only-one", from_text), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_trailing_fields_do_not_count),
        cmocka_unit_test(test_fingerprint_is_stable),
        cmocka_unit_test(test_large_submit_fingerprint_is_stable),
        cmocka_unit_test(test_every_job_field_counts),
        cmocka_unit_test(test_journaled_text_gives_the_same_fingerprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
