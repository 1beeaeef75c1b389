/*
 * test_gridmanager.c - unit tests for src/config/gridmanager.c (the journal
 * suffix of a selection value, and the /proc walk from a real process tree)
 * and src/base/fskind.c (network file system magic numbers, and /tmp seen
 * as local).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fskind.h"
#include "config/gridmanager.h"

static void test_suffix_cleans_and_hashes(void **state)
{
    (void)state;
    char *a = gridmanager_journal_suffix("a b");
    char *b = gridmanager_journal_suffix("a_b");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(strncmp(a, "a_b-", 4), 0);
    assert_int_equal(strlen(a), 3 + 1 + 8);
    assert_string_not_equal(a, b);  /* same cleaned text, other hash */
    char *again = gridmanager_journal_suffix("a b");
    assert_string_equal(a, again);  /* stable: found again after a restart */
    free(a);
    free(b);
    free(again);
}

static void test_suffix_is_bounded(void **state)
{
    (void)state;
    char value[300];
    memset(value, '/', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    char *s = gridmanager_journal_suffix(value);
    assert_non_null(s);
    assert_int_equal(strlen(s), 40 + 1 + 8);
    assert_null(strchr(s, '/'));
    free(s);
}

/* A child whose argv[0] is condor_gridmanager (sh under another name) with
 * the given "-A" value, and a grandchild of it: the walk from the
 * grandchild finds the value; from ourselves it finds nothing. */
static void test_walk_finds_ancestor(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t gm = fork();
    assert_true(gm >= 0);
    if (gm == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        int devnull = open("/dev/null", O_WRONLY);  /* sh's "Killed" */
        if (devnull >= 0)
            dup2(devnull, 2);
        /* The grandchild (a second sh) prints its pid and waits. */
        execl("/bin/sh", "/usr/sbin/condor_gridmanager", "-c",
              "sh -c 'echo $$; sleep 30'; :", "-f", "-A", "group one", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char line[32] = "";
    FILE *in = fdopen(fds[0], "r");
    assert_non_null(in);
    assert_non_null(fgets(line, sizeof line, in));
    long grandchild = strtol(line, NULL, 10);
    assert_true(grandchild > 1);
    char *value = gridmanager_selection_value_of(grandchild);
    assert_non_null(value);
    assert_string_equal(value, "group one");
    free(value);
    assert_null(gridmanager_selection_value_of((long)getpid()));
    assert_null(gridmanager_selection_value_of(1));
    kill(grandchild, SIGKILL);
    fclose(in);
    int status;
    waitpid(gm, &status, 0);
}

static void test_network_magic(void **state)
{
    (void)state;
    assert_string_equal(fskind_network_name_of_magic(0x6969UL), "nfs");
    assert_string_equal(fskind_network_name_of_magic(0xFF534D42UL), "cifs");
    assert_null(fskind_network_name_of_magic(0xEF53UL));      /* ext4 */
    assert_null(fskind_network_name_of_magic(0x01021994UL));  /* tmpfs */
    assert_null(fskind_network_name("/tmp"));
    assert_null(fskind_network_name("/nonexistent/dir"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suffix_cleans_and_hashes),
        cmocka_unit_test(test_suffix_is_bounded),
        cmocka_unit_test(test_walk_finds_ancestor),
        cmocka_unit_test(test_network_magic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
