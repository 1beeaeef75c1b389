/*
 * test_classad.c - unit tests for src/wire/classad.c (the ClassAd record
 * the grid manager of HTCondor 10.0-25.x sends with BLAH_JOB_SUBMIT, V2
 * arguments, file lists) and src/wire/blah_request.c (the ad's fields),
 * on the ad the real 25.0.13 grid manager sent
 * (doc/htcondor.md) and on edge cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire/classad.h"
#include "wire/request.h"

/* Verbatim (unescaped) from the 25.0.13 grid manager's first submit. */
static const char real_ad[] =
    "[ In = \"/dev/null\"; Cmd = \"/bin/true\"; Err = \"err.txt\"; "
    "Iwd = \"/home/htcgrid25/jobs/complete\"; Out = \"out.txt\"; Queue = \"uppercase\"; "
    "gridtype = \"boinc\"; Arguments = \"a b\"; Environment = \"\"; "
    "GridResource = \"batch boinc\"; "
    "JobDirectory = \"home_bl_127.0.0.1_29625_htc25_vm_1.0_1795751136\"; "
    "TransferInput = \"in.txt\" ]";

static void test_the_real_ad_parses(void **state)
{
    (void)state;
    classad ad;
    const char *why = NULL;
    assert_int_equal(classad_parse(real_ad, &ad, &why), 0);
    assert_int_equal(ad.n, 12);
    assert_string_equal(classad_string(&ad, "iwd"), "/home/htcgrid25/jobs/complete");
    assert_string_equal(classad_string(&ad, "Environment"), "");
    assert_null(classad_string(&ad, "TransferOutput"));
    classad_free(&ad);
}

static void test_values_strings_and_expressions(void **state)
{
    (void)state;
    classad ad;
    const char *why = NULL;
    const char *text = "[a = \"x\\\"y\\\\z\\n\"; b = 12; c = true; d = (1 + 2) * 3;"
                       " e = [ f = \"]\"; g = {1, \";\"} ]; h = \"p\" + \"q\"; a = \"last\" ]";
    assert_int_equal(classad_parse(text, &ad, &why), 0);
    /* the last definition wins */
    assert_string_equal(classad_string(&ad, "a"), "last");
    assert_string_equal(ad.attrs[0].value, "x\"y\\z\n");
    const classad_attr *b = classad_find(&ad, "B");
    assert_non_null(b);
    assert_false(b->is_string);
    assert_string_equal(b->value, "12");
    assert_string_equal(classad_find(&ad, "d")->value, "(1 + 2) * 3");
    assert_string_equal(classad_find(&ad, "e")->value, "[ f = \"]\"; g = {1, \";\"} ]");
    /* a string in an expression is not a string value */
    assert_null(classad_string(&ad, "h"));
    assert_string_equal(classad_find(&ad, "h")->value, "\"p\" + \"q\"");
    classad_free(&ad);
}

static void test_bad_records_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "a = 1", "[ a = \"open ]", "[ a = 1", "[ = 1 ]", "[ a 1 ]", "[ a = ]",
        "[ a = 1 ] tail", "[ 1a = 2 ]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        classad ad;
        const char *why = NULL;
        assert_int_equal(classad_parse(bad[i], &ad, &why), -1);
        assert_non_null(why);
        assert_int_equal(ad.n, 0);
    }
}

static void test_put_string_round_trips(void **state)
{
    (void)state;
    const char *v = "say \"hi\"\\ \n\tthere";
    strbuf sb = STRBUF_INIT;
    assert_int_equal(strbuf_puts(&sb, "[ r = "), 0);
    assert_int_equal(classad_put_string(&sb, v), 0);
    assert_int_equal(strbuf_puts(&sb, " ]"), 0);
    classad ad;
    const char *why = NULL;
    assert_int_equal(classad_parse(sb.data, &ad, &why), 0);
    assert_string_equal(classad_string(&ad, "r"), v);
    classad_free(&ad);
    strbuf_free(&sb);
}

static void test_v2_arguments(void **state)
{
    (void)state;
    char **v = NULL;
    size_t n = 0;
    const char *why = NULL;
    assert_int_equal(classad_split_args("  one 'two words' 'it''s' a'b'c ''  ", &v, &n, &why), 0);
    assert_int_equal(n, 5);
    assert_string_equal(v[0], "one");
    assert_string_equal(v[1], "two words");
    assert_string_equal(v[2], "it's");
    assert_string_equal(v[3], "abc");
    assert_string_equal(v[4], "");
    strv_free(v, n);
    assert_int_equal(classad_split_args("a 'b", &v, &n, &why), -1);
    assert_non_null(why);
    assert_int_equal(classad_split_list(" a, b  c,,d ", &v, &n), 0);
    assert_int_equal(n, 4);
    assert_string_equal(v[3], "d");
    strv_free(v, n);
}

static void test_the_real_ad_as_a_submit(void **state)
{
    (void)state;
    gahp_blah_submit s;
    char *why = NULL;
    assert_int_equal(gahp_blah_submit_from_ad(real_ad, &s, &why), 0);
    assert_null(why);
    assert_string_equal(s.job_dir, "home_bl_127.0.0.1_29625_htc25_vm_1.0_1795751136");
    assert_string_equal(s.app, "uppercase");
    assert_int_equal(s.nargs, 2);
    assert_string_equal(s.args[1], "b");
    /* In = /dev/null is no input; TransferInput relative to Iwd */
    assert_int_equal(s.ninputs, 1);
    assert_string_equal(s.inputs[0], "/home/htcgrid25/jobs/complete/in.txt");
    assert_string_equal(s.out, "out.txt");
    assert_true(s.outputs_all);
    gahp_blah_submit_free(&s);
}

static void test_outputs_remaps_and_memory(void **state)
{
    (void)state;
    const char *ad = "[ Iwd = \"/w/\"; JobDirectory = \"j\"; In = \"in0\"; "
                     "TransferInput = \"/abs/in1, in2\"; TransferOutput = \"out, log\"; "
                     "TransferOutputRemaps = \"out = res/out.7 ; other=x\"; "
                     "RequestMemory = 512; Args = \"-v  x\"; Out = \"/dev/null\" ]";
    gahp_blah_submit s;
    char *why = NULL;
    assert_int_equal(gahp_blah_submit_from_ad(ad, &s, &why), 0);
    assert_int_equal(s.ninputs, 3);
    assert_string_equal(s.inputs[0], "/w/in0");
    assert_string_equal(s.inputs[1], "/abs/in1");
    assert_string_equal(s.inputs[2], "/w/in2");
    assert_false(s.outputs_all);
    assert_int_equal(s.noutputs, 2);
    assert_string_equal(s.outputs[0].dst, "res/out.7");
    assert_string_equal(s.outputs[1].dst, "log");
    assert_true(s.memory_mb == 512.0);
    assert_int_equal(s.nargs, 2);           /* V1: white space only */
    assert_null(s.out);
    gahp_blah_submit_free(&s);
}

static void test_ads_that_cannot_be_submitted(void **state)
{
    (void)state;
    static const struct { const char *ad, *word; } cases[] = {
        { "[ Iwd = \"/w\" ]", "JobDirectory" },
        { "[ JobDirectory = \"j\" ]", "Iwd" },
        { "[ JobDirectory = \"j\"; Iwd = \"rel\" ]", "Iwd" },
        { "[ JobDirectory = \"j\"; Iwd = \"/w\"; Arguments = \"'x\" ]", "quote" },
        { "[ JobDirectory = \"j\"; Iwd = \"/w\"; TransferInput = \"http://h/x\" ]", "URL" },
        { "[ JobDirectory = ", "cannot be read" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gahp_blah_submit s;
        char *why = NULL;
        assert_int_equal(gahp_blah_submit_from_ad(cases[i].ad, &s, &why), 1);
        assert_non_null(why);
        assert_non_null(strstr(why, cases[i].word));
        free(why);
        gahp_blah_submit_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_real_ad_parses),
        cmocka_unit_test(test_values_strings_and_expressions),
        cmocka_unit_test(test_bad_records_are_refused),
        cmocka_unit_test(test_put_string_round_trips),
        cmocka_unit_test(test_v2_arguments),
        cmocka_unit_test(test_the_real_ad_as_a_submit),
        cmocka_unit_test(test_outputs_remaps_and_memory),
        cmocka_unit_test(test_ads_that_cannot_be_submitted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
