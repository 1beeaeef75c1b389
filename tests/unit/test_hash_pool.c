/*
 * test_hash_pool.c - the bounded pool runs every item exactly once, for
 * item counts around the thread count, and files_md5_hex_kept on many
 * threads gives the digests and keys of a serial pass; the kept-bytes
 * budget of a submit shrinks for big batches (input_hold_budget).
 */
#include "base/files.h"
#include "submit/submit_inputs.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    atomic_int *runs;
} count_arg;

static void count_item(size_t i, void *arg)
{
    count_arg *c = arg;
    atomic_fetch_add(&c->runs[i], 1);
}

static void test_every_item_runs_exactly_once(void **state)
{
    (void)state;
    static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 17, 1000 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        atomic_int *runs = calloc(n ? n : 1, sizeof *runs);
        assert_non_null(runs);
        count_arg c = { runs };
        hash_pool_run(n, count_item, &c);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(atomic_load(&runs[i]), 1);
        free(runs);
    }
}

static void test_thread_count_is_bounded(void **state)
{
    (void)state;
    assert_int_equal(hash_pool_threads(0), 1);
    assert_int_equal(hash_pool_threads(1), 1);
    assert_true(hash_pool_threads(100000) <= HASH_POOL_MAX_THREADS);
    assert_true(hash_pool_threads(100000) >= 1);
}

#define NFILES 40

typedef struct {
    char paths[NFILES][64];
    char md5[NFILES][FILES_MD5_HEX_LEN + 1];
    files_stat_key keys[NFILES];
    int rc[NFILES];
} hash_arg;

static void hash_item(size_t i, void *arg)
{
    hash_arg *h = arg;
    h->rc[i] = files_md5_hex_kept(h->paths[i], h->md5[i], NULL, &h->keys[i], NULL, NULL, NULL, NULL);
}

static void test_threaded_md5_equals_serial(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_hash_pool.XXXXXX";
    assert_non_null(mkdtemp(dir));
    hash_arg *h = calloc(1, sizeof *h);
    assert_non_null(h);
    for (int i = 0; i < NFILES; i++) {
        snprintf(h->paths[i], sizeof h->paths[i], "%s/f%d", dir, i);
        FILE *f = fopen(h->paths[i], "wb");
        assert_non_null(f);
        size_t len = (size_t)(i % 7 == 0 ? 3000000 : 100 + i);   /* > 1 read buffer */
        for (size_t k = 0; k < len; k++)
            fputc((int)((k * 31 + (size_t)i) & 0xff), f);
        assert_int_equal(fclose(f), 0);
    }
    hash_pool_run(NFILES, hash_item, h);
    for (int i = 0; i < NFILES; i++) {
        char serial[FILES_MD5_HEX_LEN + 1];
        files_stat_key key = { 0 };
        assert_int_equal(h->rc[i], 0);
        assert_int_equal(files_md5_hex_kept(h->paths[i], serial, NULL, NULL, NULL, NULL, NULL, NULL), 0);
        assert_string_equal(h->md5[i], serial);
        assert_int_equal(files_stat(h->paths[i], &key, NULL), 0);
        assert_true(files_stat_key_equal(&key, &h->keys[i]));
        files_stat_key_free(&key);
        files_stat_key_free(&h->keys[i]);
        unlink(h->paths[i]);
    }
    free(h);
    rmdir(dir);
}

/* Full up to INPUT_HOLD_FULL_FILES new files, then falling with the
 * square of the batch's size, never above the process-wide budget. */
static void test_hold_budget_scales_down_for_big_batches(void **state)
{
    (void)state;
    assert_int_equal(input_hold_budget(0), INPUT_HOLD_TOTAL_MAX);
    assert_int_equal(input_hold_budget(INPUT_HOLD_FULL_FILES), INPUT_HOLD_TOTAL_MAX);
    assert_int_equal(input_hold_budget(2 * INPUT_HOLD_FULL_FILES), INPUT_HOLD_TOTAL_MAX / 4);
    assert_int_equal(input_hold_budget(10 * INPUT_HOLD_FULL_FILES), INPUT_HOLD_TOTAL_MAX / 100);
    long long last = INPUT_HOLD_TOTAL_MAX;
    for (size_t n = INPUT_HOLD_FULL_FILES; n <= 1000000; n += 7919) {
        long long b = input_hold_budget(n);
        assert_true(b <= last && b >= 0);
        last = b;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_item_runs_exactly_once),
        cmocka_unit_test(test_thread_count_is_bounded),
        cmocka_unit_test(test_threaded_md5_equals_serial),
        cmocka_unit_test(test_hold_budget_scales_down_for_big_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
