/*
 * test_blah_asks.c - the memory of HTCondor's statuses that paces the
 * BLAH scheduler (src/blah/blah_asks.c):
 *
 *   repeat        a job's second ask returns the first's time, a job never
 *                 asked -1, each job on its own;
 *   memory        an ask older than two memories is forgotten, one within
 *                 a memory never is (the generations rotate);
 *   many          100,000 jobs (the times array grows past the set's
 *                 first sizes) each read back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "blah/blah_asks.h"

#include <stdio.h>

static void test_repeat(void **state)
{
    (void)state;
    blah_asks *a = blah_asks_new();
    assert_non_null(a);
    assert_true(blah_asks_note(a, "j1", 100.0, 30.0) == -1);
    assert_true(blah_asks_note(a, "j2", 101.0, 30.0) == -1);
    assert_true(blah_asks_note(a, "j1", 105.0, 30.0) == 100.0);
    assert_true(blah_asks_note(a, "j1", 110.0, 30.0) == 105.0);
    assert_true(blah_asks_note(a, "j2", 111.0, 30.0) == 101.0);
    blah_asks_free(a);
    blah_asks_free(NULL);
}

static void test_memory(void **state)
{
    (void)state;
    blah_asks *a = blah_asks_new();
    assert_non_null(a);
    /* asked at 0; every 5 s another job is asked, so the generations
     * rotate at 10, 20 ... (memory 10): j asked again within one memory is
     * remembered, whichever generation holds it */
    assert_true(blah_asks_note(a, "j", 0.0, 10.0) == -1);
    assert_true(blah_asks_note(a, "k", 5.0, 10.0) == -1);
    assert_true(blah_asks_note(a, "k", 12.0, 10.0) == 5.0);    /* rotated at 12 */
    assert_true(blah_asks_note(a, "j", 13.0, 10.0) == 0.0);    /* in the older one */
    /* rotated twice since its last ask: gone */
    assert_true(blah_asks_note(a, "k", 23.0, 10.0) == 12.0);   /* rotated at 23 */
    assert_true(blah_asks_note(a, "m", 34.0, 10.0) == -1);     /* rotated at 34 */
    assert_true(blah_asks_note(a, "j", 35.0, 10.0) == -1);     /* 13 is two ago */
    blah_asks_free(a);
}

static void test_many(void **state)
{
    (void)state;
    blah_asks *a = blah_asks_new();
    assert_non_null(a);
    char id[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(id, sizeof id, "bgahp_x-%d", i);
        assert_true(blah_asks_note(a, id, 1000.0 + i * 1e-4, 3600.0) == -1);
    }
    for (int i = 0; i < 100000; i++) {
        snprintf(id, sizeof id, "bgahp_x-%d", i);
        double t = blah_asks_note(a, id, 2000.0, 3600.0);
        if (t != 1000.0 + i * 1e-4)
            fail_msg("%s: %f", id, t);
    }
    blah_asks_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeat),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
