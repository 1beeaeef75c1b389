/*
 * test_classad.c - unit tests for src/wire/classad.c (the ClassAd record
 * the grid manager of HTCondor 10.0-25.x sends with BLAH_JOB_SUBMIT, V2
 * arguments, file lists) and src/wire/blah_submit_ad.c (the ad's fields),
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
    char *why = NULL;
    assert_int_equal(classad_parse(real_ad, &ad, &why), 0);
    assert_int_equal(ad.n, 12);
    assert_string_equal(classad_string(&ad, "iwd"), "/home/htcgrid25/jobs/complete");
    assert_string_equal(classad_string(&ad, "Environment"), "");
    assert_null(classad_string(&ad, "TransferOutput"));
    classad_free(&ad);
}

/* White space around the record, as a hand-written ad or an old client's
 * long form has it (issue 42: two sampled mutants that dropped the
 * skipping of white space before [ and after ] survived every net). */
static void test_white_space_around_the_record(void **state)
{
    (void)state;
    const char *ads[] = { "  [ a = \"x\"; b = 2 ]", "[ a = \"x\"; b = 2 ]  ",
                          "\t\n[ a = \"x\"; b = 2 ]\r\n" };
    for (size_t i = 0; i < sizeof ads / sizeof ads[0]; i++) {
        classad ad;
        char *why = NULL;
        assert_int_equal(classad_parse(ads[i], &ad, &why), 0);
        assert_null(why);
        assert_int_equal(ad.n, 2);
        assert_string_equal(classad_string(&ad, "a"), "x");
        classad_free(&ad);
    }
}

static void test_values_strings_and_expressions(void **state)
{
    (void)state;
    classad ad;
    char *why = NULL;
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
        char *why = NULL;
        assert_int_equal(classad_parse(bad[i], &ad, &why), -1);
        assert_non_null(why);
        assert_int_equal(ad.n, 0);
        free(why);
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
    char *why = NULL;
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

/* ---- the string grammar of HTCondor's lexer (lexer.cpp, util.cpp) ------- */

/* The value of a = <literal>; NULL when the record is refused (*why set). */
static char *value_of(const char *literal, char **why)
{
    strbuf sb = STRBUF_INIT;
    assert_int_equal(strbuf_printf(&sb, "[ a = %s ]", literal), 0);
    classad ad;
    *why = NULL;
    char *v = NULL;
    if (classad_parse(sb.data, &ad, why) == 0) {
        const char *s = classad_string(&ad, "a");
        assert_non_null(s);
        v = strdup(s);
        assert_non_null(v);
        classad_free(&ad);
    }
    strbuf_free(&sb);
    return v;
}

static void test_every_escape(void **state)
{
    (void)state;
    static const struct { const char *literal, *value; } cases[] = {
        { "\"\\a\\b\\f\\n\\r\\t\\v\"", "\a\b\f\n\r\t\v" },
        { "\"\\\\ \\\" \\' \\?\"", "\\ \" ' ?" },
        /* octal: what the unparser writes for every byte isprint refuses */
        { "\"h\\303\\251llo\"", "h\xc3\xa9llo" },
        { "\"\\1\\01\\001x\"", "\x01\x01\x01x" },
        { "\"\\12\\123\"", "\nS" },
        /* a third digit only when the first two make less than 040 */
        { "\"\\477\"", "'7" },
        { "\"\\400\"", " 0" },
        { "\"\\3777\"", "\xff" "7" },
        { "\"\\8\\9\"", "89" },
        /* before any other character the backslash is dropped */
        { "\"\\x41\\u00e9\\q\"", "x41u00e9q" },
        /* raw bytes pass as they are: UTF-8, control characters */
        { "\"jos\xc3\xa9\t\x01\"", "jos\xc3\xa9\t\x01" },
        /* adjacent literals are one, joined before the escapes are read */
        { "\"ab\" \"cd\"", "abcd" },
        { "\"a\"\"b\"", "ab" },
        { "\"\\1\"  \"23\"", "S" },
        { "\"a\\\\\" \"b\"", "a\\b" },
        { "\"\"", "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *why = NULL;
        char *v = value_of(cases[i].literal, &why);
        if (v == NULL)
            fail_msg("%s: %s", cases[i].literal, why);
        assert_string_equal(v, cases[i].value);
        free(v);
    }
}

/* A \0 cannot be a C string: refused, naming the attribute, never cut. */
static void test_a_nul_is_refused_naming_the_attribute(void **state)
{
    (void)state;
    static const char *const ads[] = {
        "[ Iwd = \"/w\"; Arguments = \"a\\0b\" ]",
        "[ Iwd = \"/w\"; Arguments = \"a\\00\" ]",
        "[ Iwd = \"/w\"; Arguments = \"\\000b\" ]",
        "[ Iwd = \"/w\"; Arguments = strcat(\"x\", \"\\0\") ]",
    };
    for (size_t i = 0; i < sizeof ads / sizeof ads[0]; i++) {
        classad ad;
        char *why = NULL;
        assert_int_equal(classad_parse(ads[i], &ad, &why), -1);
        assert_non_null(why);
        assert_non_null(strstr(why, "attribute Arguments: "));
        assert_non_null(strstr(why, "NUL"));
        free(why);
        gahp_blah_submit s;
        assert_int_equal(gahp_blah_submit_from_ad(ads[i], &s, &why), 1);
        assert_non_null(strstr(why, "Arguments"));
        free(why);
        gahp_blah_submit_free(&s);
    }
    /* \0 followed by more digits is \0 as well; \08 is \0 then 8 */
    char *why = NULL;
    assert_null(value_of("\"\\08\"", &why));
    free(why);
}

static void test_quoted_attribute_names(void **state)
{
    (void)state;
    const char *text = "[ 'my attr' = 1; 'jos\\303\\251' = \"x\"; 'it\\'s' = \"y\"; "
                       "'true' = 2; parent = 3; 'a]b;c' = 'a]b;c' + 1; '\\\\' = 4; "
                       "'x' 'y' = 5 ]";
    classad ad;
    char *why = NULL;
    assert_int_equal(classad_parse(text, &ad, &why), 0);
    assert_int_equal(ad.n, 8);
    assert_string_equal(ad.attrs[0].name, "my attr");
    assert_string_equal(classad_find(&ad, "MY ATTR")->value, "1");
    assert_string_equal(classad_string(&ad, "jos\xc3\xa9"), "x");
    assert_string_equal(classad_string(&ad, "it's"), "y");
    assert_string_equal(classad_find(&ad, "true")->value, "2");
    assert_string_equal(classad_find(&ad, "parent")->value, "3");
    /* a quoted name in an expression is read as one token */
    assert_string_equal(classad_find(&ad, "a]b;c")->value, "'a]b;c' + 1");
    assert_string_equal(classad_find(&ad, "\\")->value, "4");
    assert_string_equal(classad_find(&ad, "xy")->value, "5");
    classad_free(&ad);
    /* what the real lexer refuses */
    static const char *const bad[] = {
        "[ '' = 1 ]", "[ 'a\\0' = 1 ]", "[ 'open = 1 ]", "[ true = 1 ]",
        "[ Undefined = 1 ]", "[ is = 1 ]", "[ isnt = 1 ]", "[ error = 1 ]",
        "[ FALSE = 1 ]", "[ a = 'open ]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(classad_parse(bad[i], &ad, &why), -1);
        assert_non_null(why);
        free(why);
    }
}

/* What sink.cpp writes: classad_put_string and classad_put_name. */
static void test_written_as_the_unparser_writes(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    assert_int_equal(classad_put_string(&sb, "h\xc3\xa9llo \a\b\f\n\r\t\v\\\"'\x7f\x1b~"), 0);
    assert_string_equal(sb.data, "\"h\\303\\251llo \\a\\b\\f\\n\\r\\t\\v\\\\\\\"'\\177\\033~\"");
    static const struct { const char *name, *text; } names[] = {
        { "Iwd", "Iwd" }, { "_x1", "_x1" }, { "my attr", "'my attr'" },
        { "it's", "'it\\'s'" }, { "a\"b", "'a\"b'" }, { "1a", "'1a'" },
        { "true", "'true'" }, { "TRUE", "'TRUE'" }, { "parent", "'parent'" },
        { "isnt", "'isnt'" }, { "jos\xc3\xa9", "'jos\\303\\251'" }, { "a\\b", "'a\\\\b'" },
        { "truex", "truex" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        strbuf_reset(&sb);
        assert_int_equal(classad_put_name(&sb, names[i].name), 0);
        assert_string_equal(sb.data, names[i].text);
    }
    strbuf_free(&sb);
}

/* Every byte but NUL, written and read back, in a value and in a name. */
static void test_every_byte_round_trips(void **state)
{
    (void)state;
    char all[256];
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = '\0';
    strbuf sb = STRBUF_INIT;
    assert_int_equal(strbuf_puts(&sb, "[ "), 0);
    assert_int_equal(classad_put_name(&sb, all), 0);
    assert_int_equal(strbuf_puts(&sb, " = "), 0);
    assert_int_equal(classad_put_string(&sb, all), 0);
    assert_int_equal(strbuf_puts(&sb, " ]"), 0);
    /* only printable ASCII on the wire */
    for (size_t i = 0; i < sb.len; i++)
        assert_true(sb.data[i] >= 0x20 && sb.data[i] < 0x7f);
    classad ad;
    char *why = NULL;
    assert_int_equal(classad_parse(sb.data, &ad, &why), 0);
    assert_int_equal(ad.n, 1);
    assert_string_equal(ad.attrs[0].name, all);
    assert_string_equal(ad.attrs[0].value, all);
    classad_free(&ad);
    strbuf_free(&sb);
}

/* The issue 39 ad: UTF-8 Iwd, file names and arguments, as the 25.0.13
 * grid manager writes them, reach the submit byte for byte. */
static void test_utf8_ad_as_a_submit(void **state)
{
    (void)state;
    const char *ad = "[ In = \"in\\303\\251.txt\"; Cmd = \"/bin/true\"; "
                     "Err = \"\\303\\251rr.txt\"; Iwd = \"/home/u/jos\\303\\251\"; "
                     "Out = \"out.txt\"; Queue = \"uppercase\"; gridtype = \"boinc\"; "
                     "Arguments = \"h\\303\\251llo 'a b'\"; Environment = \"\"; "
                     "GridResource = \"batch boinc\"; 'my attr' = \"x\"; "
                     "JobDirectory = \"home_bl_127.0.0.1_9618_s_1.0_1\" ]";
    gahp_blah_submit s;
    char *why = NULL;
    assert_int_equal(gahp_blah_submit_from_ad(ad, &s, &why), 0);
    assert_null(why);
    assert_string_equal(s.iwd, "/home/u/jos\xc3\xa9");
    assert_string_equal(s.err, "\xc3\xa9rr.txt");
    assert_int_equal(s.ninputs, 1);
    assert_string_equal(s.inputs[0], "/home/u/jos\xc3\xa9/in\xc3\xa9.txt");
    assert_int_equal(s.nargs, 2);
    assert_string_equal(s.args[0], "h\xc3\xa9llo");
    assert_string_equal(s.args[1], "a b");
    gahp_blah_submit_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_real_ad_parses),
        cmocka_unit_test(test_white_space_around_the_record),
        cmocka_unit_test(test_values_strings_and_expressions),
        cmocka_unit_test(test_bad_records_are_refused),
        cmocka_unit_test(test_put_string_round_trips),
        cmocka_unit_test(test_v2_arguments),
        cmocka_unit_test(test_the_real_ad_as_a_submit),
        cmocka_unit_test(test_outputs_remaps_and_memory),
        cmocka_unit_test(test_ads_that_cannot_be_submitted),
        cmocka_unit_test(test_every_escape),
        cmocka_unit_test(test_a_nul_is_refused_naming_the_attribute),
        cmocka_unit_test(test_quoted_attribute_names),
        cmocka_unit_test(test_written_as_the_unparser_writes),
        cmocka_unit_test(test_every_byte_round_trips),
        cmocka_unit_test(test_utf8_ad_as_a_submit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
