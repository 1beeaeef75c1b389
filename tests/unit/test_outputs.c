/*
 * test_outputs.c - unit tests for src/fetch/outputs.c on real files in a mkdtemp
 * directory and real zip archives built here with libzip: name safety,
 * temp + commit, abort, path resolution, unzip (good and hostile
 * archives), stderr appending and stale temp removal.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zip.h>

#include "base/files.h"
#include "fetch/outputs.h"

static char root_dir[] = "/tmp/boinc_gahp_test_outputs.XXXXXX";
static char *test_dir;      /* fresh subdirectory of root_dir per test */
static int test_seq;

static char *join(const char *a, const char *b)
{
    size_t len = strlen(a) + 1 + strlen(b) + 1;
    char *p = malloc(len);
    assert_non_null(p);
    int n = snprintf(p, len, "%s/%s", a, b);
    assert_true(n > 0 && (size_t)n < len);
    return p;
}

static char *tpath(const char *name)
{
    return join(test_dir, name);
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(files_write_all(fd, data, len), 0);
    assert_int_equal(close(fd), 0);
}

/* malloc'd content of path (NUL-terminated), length in *len */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size >= 0);
    rewind(f);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    buf[size] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)size;
    return buf;
}

/* Number of entries in dir other than . and .. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    }
    closedir(d);
    return n;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

static int group_setup(void **state)
{
    (void)state;
    umask(022);
    return mkdtemp(root_dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return nftw(root_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup(void **state)
{
    (void)state;
    char name[32];
    snprintf(name, sizeof name, "t%d", ++test_seq);
    test_dir = join(root_dir, name);
    return mkdir(test_dir, 0755);
}

static int teardown(void **state)
{
    (void)state;
    free(test_dir);
    test_dir = NULL;
    return 0;
}

static void test_name_safety(void **state)
{
    (void)state;
    static const struct { const char *name; int safe; } cases[] = {
        { "out.txt", 1 }, { "a", 1 }, { "..foo", 1 }, { "a..b", 1 },
        { "foo..", 1 }, { ".hidden", 1 }, { "with space", 1 },
        { "back\\slash", 1 }, { "caf\xc3\xa9", 1 },
        { "", 0 }, { ".", 0 }, { "..", 0 }, { "/", 0 }, { "/abs", 0 },
        { "a/b", 0 }, { "../evil", 0 }, { "a/../b", 0 }, { "dir/", 0 },
        { "./x", 0 }, { "x/..", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (outputs_name_is_safe(cases[i].name) != cases[i].safe)
            fail_msg("name \"%s\": expected %d", cases[i].name, cases[i].safe);
    }
    assert_false(outputs_name_is_safe(NULL));
    char longname[257];
    memset(longname, 'n', 256);
    longname[256] = '\0';
    assert_false(outputs_name_is_safe(longname));
    longname[255] = '\0';
    assert_true(outputs_name_is_safe(longname));
}

static void expect_resolve(const char *iwd, const char *path, const char *want)
{
    char *got = files_resolve(iwd, path);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_resolve(void **state)
{
    (void)state;
    expect_resolve("/home/u/job", "out.txt", "/home/u/job/out.txt");
    expect_resolve("/home/u/job/", "out.txt", "/home/u/job/out.txt");
    expect_resolve("/home/u/job", "/abs/out.txt", "/abs/out.txt");
    expect_resolve(NULL, "/abs/out.txt", "/abs/out.txt");
    expect_resolve("/", "x", "/x");
    expect_resolve("rel", "sub/x", "rel/sub/x");
    errno = 0;
    assert_null(files_resolve("/iwd", ""));
    assert_int_equal(errno, EINVAL);
    assert_null(files_resolve("", "x"));
    assert_null(files_resolve(NULL, "x"));
    assert_null(files_resolve("/iwd", NULL));

    /* no fixed buffer: a 10,000-byte path survives intact */
    char *longdir = malloc(10001);
    assert_non_null(longdir);
    memset(longdir, 'd', 10000);
    longdir[0] = '/';
    longdir[10000] = '\0';
    char *got = files_resolve(longdir, "f");
    assert_non_null(got);
    assert_int_equal(strlen(got), 10002);
    assert_string_equal(got + 10000, "/f");
    free(got);
    free(longdir);
}

static void test_temp_commit(void **state)
{
    (void)state;
    char *dest = tpath("result.txt");
    int fd = -1;
    char *tmp = NULL, *err = NULL;
    assert_int_equal(outputs_open_temp(dest, &fd, &tmp, &err), 0);
    assert_true(fd >= 0);
    assert_non_null(tmp);
    /* the temp file sits in the destination's directory, named for it */
    char *prefix = tpath(".result.txt.boinc_gahp.");
    assert_int_equal(strncmp(tmp, prefix, strlen(prefix)), 0);
    assert_int_equal(strlen(tmp), strlen(prefix) + 6);
    struct stat st;
    assert_int_equal(stat(tmp, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);     /* umask 022 */
    assert_int_equal(access(dest, F_OK), -1);      /* nothing under the final name yet */

    assert_int_equal(files_write_all(fd, "hello\n", 6), 0);
    char *tmp_copy = strdup(tmp);
    assert_non_null(tmp_copy);
    assert_int_equal(outputs_commit_temp(fd, tmp, dest, &err), 0);
    assert_null(err);
    char *content = read_all(dest, NULL);
    assert_string_equal(content, "hello\n");
    free(content);
    assert_int_equal(access(tmp_copy, F_OK), -1);
    assert_int_equal(count_entries(test_dir), 1);

    /* replace an existing file */
    assert_int_equal(outputs_write_file(dest, "second", 6, &err), 0);
    content = read_all(dest, NULL);
    assert_string_equal(content, "second");
    free(content);
    assert_int_equal(count_entries(test_dir), 1);

    /* a relative destination without a directory gets a relative temp */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(test_dir), 0);
    assert_int_equal(outputs_write_file("plain.txt", "p", 1, &err), 0);
    assert_int_equal(chdir(cwd), 0);
    char *plain = tpath("plain.txt");
    content = read_all(plain, NULL);
    assert_string_equal(content, "p");
    free(content);
    assert_int_equal(count_entries(test_dir), 2);

    free(plain);
    free(tmp_copy);
    free(prefix);
    free(dest);
}

static void test_temp_long_basename(void **state)
{
    (void)state;
    char base[251];
    memset(base, 'b', 250);
    base[250] = '\0';
    char *dest = tpath(base);
    assert_int_equal(outputs_write_file(dest, "x", 1, NULL), 0);
    char *content = read_all(dest, NULL);
    assert_string_equal(content, "x");
    free(content);
    assert_int_equal(count_entries(test_dir), 1);
    free(dest);
}

static void test_temp_abort(void **state)
{
    (void)state;
    char *dest = tpath("keep.txt");
    write_bytes(dest, "original", 8);
    int fd;
    char *tmp = NULL;
    assert_int_equal(outputs_open_temp(dest, &fd, &tmp, NULL), 0);
    assert_int_equal(files_write_all(fd, "half", 4), 0);
    assert_int_equal(count_entries(test_dir), 2);
    outputs_abort_temp(fd, tmp);
    assert_int_equal(count_entries(test_dir), 1);
    char *content = read_all(dest, NULL);
    assert_string_equal(content, "original");
    free(content);
    outputs_abort_temp(-1, NULL);   /* harmless */
    free(dest);
}

static void test_temp_failures(void **state)
{
    (void)state;
    /* destination directory missing */
    char *dest = tpath("missing-dir/out.txt");
    int fd = 7;
    char *tmp = (char *)"x", *err = NULL;
    assert_int_equal(outputs_open_temp(dest, &fd, &tmp, &err), -1);
    assert_int_equal(fd, -1);
    assert_null(tmp);
    assert_non_null(err);
    char want[4096];
    snprintf(want, sizeof want, "cannot create temporary file for output %s: %s",
             dest, strerror(ENOENT));
    assert_string_equal(err, want);
    free(err);
    free(dest);

    /* path naming a directory */
    err = NULL;
    assert_int_equal(outputs_open_temp("/tmp/", &fd, &tmp, &err), -1);
    assert_non_null(err);
    free(err);

    /* rename onto a non-empty directory fails: temp removed, dir intact */
    char *d = tpath("occupied");
    assert_int_equal(mkdir(d, 0755), 0);
    char *inside = join(d, "f");
    write_bytes(inside, "f", 1);
    err = NULL;
    assert_int_equal(outputs_write_file(d, "data", 4, &err), -1);
    assert_non_null(err);
    assert_non_null(strstr(err, "cannot create output file"));
    free(err);
    assert_int_equal(count_entries(test_dir), 1);
    assert_int_equal(count_entries(d), 1);
    free(inside);
    free(d);
}

/* ---- zip archives ------------------------------------------------------ */

typedef struct {
    const char *name;
    const char *data;
    size_t len;
    unsigned unix_mode;     /* 0: leave libzip's default attributes */
} member;

static void make_zip(const char *path, const member *m, size_t n)
{
    int zerr = 0;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    assert_non_null(za);
    for (size_t i = 0; i < n; i++) {
        zip_source_t *src = zip_source_buffer(za, m[i].data, m[i].len, 0);
        assert_non_null(src);
        zip_int64_t idx = zip_file_add(za, m[i].name, src, ZIP_FL_ENC_UTF_8);
        if (idx < 0)
            fail_msg("zip_file_add %s: %s", m[i].name, zip_strerror(za));
        if (m[i].unix_mode) {
            assert_int_equal(zip_file_set_external_attributes(
                za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX,
                (zip_uint32_t)m[i].unix_mode << 16), 0);
        }
    }
    if (zip_close(za) != 0)
        fail_msg("zip_close: %s", zip_strerror(za));
}

static void test_unzip_good(void **state)
{
    (void)state;
    size_t biglen = 300000;
    char *big = malloc(biglen);
    assert_non_null(big);
    for (size_t i = 0; i < biglen; i++)
        big[i] = (char)('a' + (i * 7) % 26);
    const member m[] = {
        { "out.txt", "hello world\n", 12, S_IFREG | 0644 },
        { "empty", "", 0, 0 },
        { "big.dat", big, biglen, S_IFREG | 0600 },
        { "..weird but ok", "w", 1, 0 },
    };
    char *zip = join(root_dir, "good.zip");
    make_zip(zip, m, 4);
    char *dest = tpath("dest");
    assert_int_equal(mkdir(dest, 0755), 0);
    char **names = NULL, *err = NULL;
    size_t n = 0;
    if (outputs_unzip(zip, dest, 1000000, &names, &n, &err) != 0)
        fail_msg("unzip: %s", err);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(names[i], m[i].name);
        char *p = join(dest, m[i].name);
        size_t len = 0;
        char *content = read_all(p, &len);
        assert_int_equal(len, m[i].len);
        assert_memory_equal(content, m[i].data, len);
        free(content);
        free(p);
    }
    assert_int_equal(count_entries(dest), 4);   /* no temp left */
    outputs_free_names(names, n);

    /* unpacking again replaces the files */
    assert_int_equal(outputs_unzip(zip, dest, 1000000, &names, &n, NULL), 0);
    assert_int_equal(count_entries(dest), 4);
    outputs_free_names(names, n);

    /* an empty archive: no names */
    char *empty = join(root_dir, "empty.zip");
    make_zip(empty, NULL, 0);
    names = (char **)1;
    n = 9;
    /* libzip writes no file for an empty archive: create one by hand */
    if (access(empty, F_OK) != 0) {
        static const unsigned char eocd[22] = { 0x50, 0x4b, 0x05, 0x06 };
        write_bytes(empty, eocd, sizeof eocd);
    }
    assert_int_equal(outputs_unzip(empty, dest, 10, &names, &n, NULL), 0);
    assert_null(names);
    assert_int_equal(n, 0);

    free(empty);
    free(dest);
    free(zip);
    free(big);
}

/* The archive must be refused with a message containing `why`, and
 * nothing may be written anywhere under test_dir. */
static void expect_unzip_refused(const member *m, size_t n, long long max_total,
                                 const char *why)
{
    char *zip = join(root_dir, "hostile.zip");
    make_zip(zip, m, n);
    char *dest = tpath("d");
    assert_int_equal(mkdir(dest, 0755), 0);
    char **names = (char **)1, *err = NULL;
    size_t count = 9;
    assert_int_equal(outputs_unzip(zip, dest, max_total, &names, &count, &err), -1);
    assert_null(names);
    assert_int_equal(count, 0);
    assert_non_null(err);
    if (!strstr(err, why))
        fail_msg("message \"%s\" lacks \"%s\"", err, why);
    assert_non_null(strstr(err, zip));
    free(err);
    assert_int_equal(count_entries(dest), 0);
    assert_int_equal(count_entries(test_dir), 1);   /* only d itself */
    assert_int_equal(rmdir(dest), 0);
    assert_int_equal(unlink(zip), 0);
    free(dest);
    free(zip);
}

static void test_unzip_hostile(void **state)
{
    (void)state;
    /* a good member first: it must not be written either */
    const member dotdot[] = { { "ok.txt", "ok", 2, 0 }, { "../evil", "x", 1, 0 } };
    expect_unzip_refused(dotdot, 2, 1000, "member ../evil: unsafe member name");
    const member abs[] = { { "ok.txt", "ok", 2, 0 }, { "/tmp/abs-evil", "x", 1, 0 } };
    expect_unzip_refused(abs, 2, 1000, "unsafe member name");
    const member sub[] = { { "a/b.txt", "x", 1, 0 } };
    expect_unzip_refused(sub, 1, 1000, "member a/b.txt: unsafe");
    const member dot[] = { { "..", "x", 1, 0 } };
    expect_unzip_refused(dot, 1, 1000, "unsafe member name");
    const member link[] = { { "ok.txt", "ok", 2, 0 },
                            { "link", "/etc/passwd", 11, S_IFLNK | 0777 } };
    expect_unzip_refused(link, 2, 1000, "member link: member is not a regular file");
    const member dev[] = { { "dev", "", 0, S_IFCHR | 0644 } };
    expect_unzip_refused(dev, 1, 1000, "not a regular file");
    const member big[] = { { "a", "0123456789", 10, 0 }, { "b", "0123456789", 10, 0 } };
    expect_unzip_refused(big, 2, 19, "member b: archive larger than the allowed total size");
    expect_unzip_refused(big, 2, 0, "allowed total size");
    /* exactly at the bound is fine */
    char *zip = join(root_dir, "bound.zip");
    make_zip(zip, big, 2);
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(outputs_unzip(zip, test_dir, 20, &names, &n, NULL), 0);
    assert_int_equal(n, 2);
    outputs_free_names(names, n);
    free(zip);
    /* nothing escaped into the parent */
    char *evil = join(root_dir, "evil");
    assert_int_equal(access(evil, F_OK), -1);
    assert_int_equal(access("/tmp/abs-evil", F_OK), -1);
    free(evil);
}

static void test_unzip_not_a_zip(void **state)
{
    (void)state;
    char *bogus = tpath("bogus.zip");
    write_bytes(bogus, "ERROR: no workunit x", 20);
    char **names = NULL, *err = NULL;
    size_t n = 0;
    assert_int_equal(outputs_unzip(bogus, test_dir, 1000, &names, &n, &err), -1);
    assert_non_null(err);
    assert_int_equal(strncmp(err, "cannot unpack zip archive ", 26), 0);
    free(err);
    char *missing = tpath("missing.zip");
    err = NULL;
    assert_int_equal(outputs_unzip(missing, test_dir, 1000, &names, &n, &err), -1);
    assert_non_null(err);
    free(err);
    assert_int_equal(count_entries(test_dir), 1);
    free(missing);
    free(bogus);
}

static void test_unzip_missing_dest(void **state)
{
    (void)state;
    const member m[] = { { "a", "1", 1, 0 }, { "b", "2", 1, 0 } };
    char *zip = join(root_dir, "dest.zip");
    make_zip(zip, m, 2);
    char *dest = tpath("nope");
    char **names = NULL, *err = NULL;
    size_t n = 0;
    assert_int_equal(outputs_unzip(zip, dest, 1000, &names, &n, &err), -1);
    assert_non_null(err);
    assert_non_null(strstr(err, "nope/a"));
    free(err);
    assert_null(names);
    free(dest);
    free(zip);
}

static void test_append_stderr(void **state)
{
    (void)state;
    char *p = tpath("job.err");
    char *err = NULL;
    assert_int_equal(outputs_append_stderr(p, "first line\n", &err), 0);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(outputs_append_stderr(p, "second\n", &err), 0);
    assert_int_equal(outputs_append_stderr(p, "", &err), 0);
    char *content = read_all(p, NULL);
    assert_string_equal(content, "first line\nsecond\n");
    free(content);

    /* A fetch run again after a crash appends nothing twice: the file
     * already ends with the text.  Other text is still appended. */
    assert_int_equal(outputs_append_stderr(p, "second\n", &err), 0);
    content = read_all(p, NULL);
    assert_string_equal(content, "first line\nsecond\n");
    free(content);
    assert_int_equal(outputs_append_stderr(p, "third\n", &err), 0);
    content = read_all(p, NULL);
    assert_string_equal(content, "first line\nsecond\nthird\n");
    free(content);
    /* No temp file is left beside it. */
    char *dir = tpath("");
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        assert_null(strstr(e->d_name, ".boinc_gahp."));
    closedir(d);
    free(dir);

    /* Not a regular file: appended in place (HTCondor's /dev/null). */
    assert_int_equal(outputs_append_stderr("/dev/null", "discarded\n", &err), 0);
    char *link = tpath("link.err");
    assert_int_equal(symlink(p, link), 0);
    assert_int_equal(outputs_append_stderr(link, "via link\n", &err), 0);
    struct stat lst;
    assert_int_equal(lstat(link, &lst), 0);
    assert_true(S_ISLNK(lst.st_mode));
    content = read_all(p, NULL);
    assert_string_equal(content, "first line\nsecond\nthird\nvia link\n");
    free(content);
    free(link);

    char *bad = tpath("no-dir/job.err");
    assert_int_equal(outputs_append_stderr(bad, "x", &err), -1);
    char want[4096];
    snprintf(want, sizeof want, "cannot write stderr file %s: ", bad);
    assert_non_null(err);
    assert_int_equal(strncmp(err, want, strlen(want)), 0);
    assert_non_null(strstr(err, strerror(ENOENT)));
    free(err);
    free(bad);
    free(p);
}

static void test_remove_stale_temps(void **state)
{
    (void)state;
    int fd;
    char *tmp = NULL;
    char *dest = tpath("out.txt");
    assert_int_equal(outputs_open_temp(dest, &fd, &tmp, NULL), 0);
    assert_int_equal(close(fd), 0);     /* simulate a crash: temp left behind */
    const char *keep[] = { "out.txt.boinc_gahp.abcdef", ".x.boinc_gahp.abc",
                           ".x.boinc_gahp.abc$ef", "normal.txt", ".hidden" };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        char *p = tpath(keep[i]);
        write_bytes(p, "k", 1);
        free(p);
    }
    /* a directory with a temp-like name is left alone */
    char *dirlike = tpath(".d.boinc_gahp.ABC123");
    assert_int_equal(mkdir(dirlike, 0755), 0);
    assert_int_equal(outputs_remove_stale_before(test_dir, NULL, NULL), 1);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(count_entries(test_dir), 6);
    assert_int_equal(outputs_remove_stale_before(test_dir, NULL, NULL), 0);

    char *err = NULL;
    char *missing = tpath("missing");
    assert_int_equal(outputs_remove_stale_before(missing, NULL, &err), -1);
    assert_non_null(err);
    free(err);
    free(missing);
    free(dirlike);
    free(tmp);
    free(dest);
}

/* An append in place that succeeds is a success whatever errno held
 * before (issue 42: a sampled mutant that took every fsync for a failure
 * survived test_append_stderr, where the /dev/null append just before the
 * symlink's left errno at EINVAL, one of the two errors it forgives). */
static void test_append_in_place_ignores_a_stale_errno(void **state)
{
    (void)state;
    char *p = tpath("target.err");
    char *link = tpath("via.err");
    write_bytes(p, "old\n", 4);
    assert_int_equal(symlink(p, link), 0);
    char *err = NULL;
    errno = EIO;
    assert_int_equal(outputs_append_stderr(link, "new\n", &err), 0);
    assert_null(err);
    char *content = read_all(p, NULL);
    assert_string_equal(content, "old\nnew\n");
    free(content);
    free(link);
    free(p);
}

/* The cutoff of a stale-temporary sweep (issue 42: the test above passes
 * NULL only, and a sampled mutant that took "modified in the cutoff's
 * second" for "before the cutoff" survived).  Temporaries stamped just
 * before, at and just after the cutoff, to the nanosecond: only those
 * strictly before it go. */
static void test_remove_stale_temps_before_the_cutoff(void **state)
{
    (void)state;
    const struct timespec cutoff = { 1700000000, 500000000 };
    const struct { const char *name; struct timespec mtime; int gone; } t[] = {
        { ".a.boinc_gahp.AAAAAA", { 1699999999, 900000000 }, 1 },
        { ".b.boinc_gahp.BBBBBB", { 1700000000, 499999999 }, 1 },
        { ".c.boinc_gahp.CCCCCC", { 1700000000, 500000000 }, 0 },
        { ".d.boinc_gahp.DDDDDD", { 1700000000, 500000001 }, 0 },
        { ".e.boinc_gahp.EEEEEE", { 1700000001, 0 }, 0 },
    };
    size_t n = sizeof t / sizeof t[0];
    for (size_t i = 0; i < n; i++) {
        char *p = tpath(t[i].name);
        write_bytes(p, "t", 1);
        struct timespec times[2] = { t[i].mtime, t[i].mtime };
        assert_int_equal(utimensat(AT_FDCWD, p, times, 0), 0);
        free(p);
    }
    assert_int_equal(outputs_remove_stale_before(test_dir, &cutoff, NULL), 2);
    for (size_t i = 0; i < n; i++) {
        char *p = tpath(t[i].name);
        if (t[i].gone)
            assert_int_equal(access(p, F_OK), -1);
        else
            assert_int_equal(access(p, F_OK), 0);
        free(p);
    }
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_name_safety),
        T(test_resolve),
        T(test_temp_commit),
        T(test_temp_long_basename),
        T(test_temp_abort),
        T(test_temp_failures),
        T(test_unzip_good),
        T(test_unzip_hostile),
        T(test_unzip_not_a_zip),
        T(test_unzip_missing_dest),
        T(test_append_stderr),
        T(test_append_in_place_ignores_a_stale_errno),
        T(test_remove_stale_temps),
        T(test_remove_stale_temps_before_the_cutoff),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
