/*
 * test_protocol.c - escaping, tokenising and line splitting of the GAHP
 * line protocol (src/server/protocol.c), including hostile input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/gahp_text.h"
#include "server/protocol.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Tokenise a copy of s (length n); returns status, args filled. */
static gahp_tok_status tok(const char *s, size_t n, gahp_args *a, char **buf)
{
    *buf = malloc(n + 1);
    assert_non_null(*buf);
    memcpy(*buf, s, n);
    (*buf)[n] = '\0';
    return gahp_tokenize(*buf, n, a);
}

static void test_escape_basic(void **state)
{
    (void)state;
    char *e = gahp_escape("a b\\c\rd\ne");
    assert_string_equal(e, "a\\ b\\\\c\\\rd\\\ne");
    free(e);
    e = gahp_escape("");
    assert_string_equal(e, "");
    free(e);
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *samples[] = { "plain", "with space", "back\\slash", "trail\\",
                              "cr\r", "lf\nin middle", "  lead", "#.@-_/x",
                              "\\\\ \\ ", "caf\xc3\xa9" };
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        strbuf line = STRBUF_INIT;
        assert_int_equal(strbuf_puts(&line, "CMD "), 0);
        assert_int_equal(gahp_escape_append(&line, samples[i]), 0);
        assert_int_equal(strbuf_puts(&line, " "), 0);
        assert_int_equal(gahp_escape_append(&line, samples[i]), 0);
        gahp_args a = { 0 };
        assert_int_equal(gahp_tokenize(line.data, line.len, &a), GAHP_TOK_OK);
        assert_int_equal(a.argc, 3);
        assert_string_equal(a.argv[0], "CMD");
        assert_string_equal(a.argv[1], samples[i]);
        assert_string_equal(a.argv[2], samples[i]);
        gahp_args_free(&a);
        strbuf_free(&line);
    }
}

static void test_tokenize_edges(void **state)
{
    (void)state;
    gahp_args a = { 0 };
    char *b;
    assert_int_equal(tok("A  B", 4, &a, &b), GAHP_TOK_OK);      /* empty arg */
    assert_int_equal(a.argc, 3);
    assert_string_equal(a.argv[1], "");
    free(b);
    assert_int_equal(tok("A B ", 4, &a, &b), GAHP_TOK_OK);      /* trailing space */
    assert_int_equal(a.argc, 3);
    assert_string_equal(a.argv[2], "");
    free(b);
    assert_int_equal(tok("A B\\", 4, &a, &b), GAHP_TOK_TRAILING_ESCAPE);
    free(b);
    assert_int_equal(tok("", 0, &a, &b), GAHP_TOK_EMPTY);
    free(b);
    assert_int_equal(tok("A\0B", 3, &a, &b), GAHP_TOK_BAD_CHAR);   /* NUL */
    free(b);
    /* HTCondor sends TAB and other control bytes raw: ordinary bytes */
    assert_int_equal(tok("A\tB", 3, &a, &b), GAHP_TOK_OK);
    assert_int_equal(a.argc, 1);
    assert_string_equal(a.argv[0], "A\tB");
    free(b);
    assert_int_equal(tok("A\rB", 3, &a, &b), GAHP_TOK_OK);          /* bare CR */
    assert_string_equal(a.argv[0], "A\rB");
    free(b);
    assert_int_equal(tok("A\\\0", 3, &a, &b), GAHP_TOK_BAD_CHAR);  /* escaped NUL */
    free(b);
    assert_int_equal(tok("A \x7f\x01", 4, &a, &b), GAHP_TOK_OK);
    assert_string_equal(a.argv[1], "\x7f\x01");
    free(b);
    assert_int_equal(tok("A x\\\ry\\\nz", 9, &a, &b), GAHP_TOK_OK);
    assert_int_equal(a.argc, 2);
    assert_string_equal(a.argv[1], "x\ry\nz");
    free(b);
    assert_int_equal(tok("A \\q", 4, &a, &b), GAHP_TOK_OK);        /* lenient */
    assert_string_equal(a.argv[1], "q");
    free(b);
    gahp_args_free(&a);
}

/* Feed bytes through a pipe and collect the lines. */
static size_t split_max(const char *input, size_t n, char out[][64], size_t max,
                        size_t line_max)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    /* a writer process: input larger than the pipe arrives in many reads */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        for (size_t off = 0; off < n;) {
            ssize_t w = write(fds[1], input + off, n - off);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    line_reader lr;
    line_reader_init(&lr, line_max);
    size_t k = 0;
    char *line;
    size_t len;
    for (;;) {
        int kind;
        while ((kind = line_reader_next(&lr, &line, &len)) != 0) {
            assert_true(k < max);
            if (kind == 2) {        /* over line_max: "<dropped N>" */
                snprintf(out[k++], 64, "<dropped %zu>", len);
                continue;
            }
            assert_true(len < 64);
            memcpy(out[k], line, len);
            out[k++][len] = '\0';
        }
        line_reader_compact(&lr);
        int r = line_reader_fill(&lr, fds[0]);
        assert_true(r >= 0);
        if (r == 0)
            break;
    }
    if (line_reader_rest(&lr, &line, &len)) {
        assert_true(len < 64);
        memcpy(out[k], line, len);
        out[k++][len] = '\0';
    }
    line_reader_free(&lr);
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return k;
}

static size_t split(const char *input, size_t n, char out[][64], size_t max)
{
    return split_max(input, n, out, max, 0);
}

/* Issue 29 #6: a line over the limit is one "dropped" line of its full
 * length, whether it arrives in one read or many, an escaped LF inside
 * it does not end it, and the lines around it are intact. */
static void test_overlong_line_dropped(void **state)
{
    (void)state;
    char out[8][64];
    const char in[] = "A\n0123456789\\\n0123456789\r\nB\n0123456789\nC";
    size_t k = split_max(in, sizeof in - 1, out, 8, 10);
    assert_int_equal(k, 5);
    assert_string_equal(out[0], "A");
    assert_string_equal(out[1], "<dropped 23>");       /* CR counted, LF not */
    assert_string_equal(out[2], "B");
    assert_string_equal(out[3], "0123456789");         /* exactly the limit */
    assert_string_equal(out[4], "C");

    /* a line far longer than one read, over many reads */
    size_t n = 1024 * 1024;
    char *big = malloc(n + 4);
    assert_non_null(big);
    memset(big, 'x', n);
    memcpy(big + n, "\nD\n", 3);
    k = split_max(big, n + 3, out, 8, 4096);
    free(big);
    assert_int_equal(k, 2);
    snprintf(out[7], 64, "<dropped %zu>", n);
    assert_string_equal(out[0], out[7]);
    assert_string_equal(out[1], "D");
}

static void test_line_splitting(void **state)
{
    (void)state;
    char out[8][64];
    const char in[] = "A\nB\r\nC\\\nD\nE\\\r\nF\\\\\nG";
    size_t k = split(in, sizeof in - 1, out, 8);
    assert_int_equal(k, 6);
    assert_string_equal(out[0], "A");
    assert_string_equal(out[1], "B");                  /* CRLF */
    assert_string_equal(out[2], "C\\\nD");             /* escaped LF stays */
    assert_string_equal(out[3], "E\\\r");              /* escaped CR stays */
    assert_string_equal(out[4], "F\\\\");              /* escaped backslash, LF ends */
    assert_string_equal(out[5], "G");                  /* unterminated at EOF */
}

/* A long line arriving in many reads is assembled without loss. */
static void test_long_line(void **state)
{
    (void)state;
    size_t n = 3 * 1024 * 1024;
    char *big = malloc(n + 2);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\n';
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        size_t off = 0;
        while (off < n + 1) {
            ssize_t w = write(fds[1], big + off, n + 1 - off);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    line_reader lr;
    line_reader_init(&lr, 0);
    char *line;
    size_t len = 0;
    int got = 0;
    while (!got) {
        got = line_reader_next(&lr, &line, &len);
        if (!got)
            assert_int_equal(line_reader_fill(&lr, fds[0]), 1);
    }
    assert_int_equal(len, n);
    assert_memory_equal(line, big, n);
    line_reader_free(&lr);
    close(fds[0]);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_basic),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_overlong_line_dropped),
        cmocka_unit_test(test_tokenize_edges),
        cmocka_unit_test(test_line_splitting),
        cmocka_unit_test(test_long_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
