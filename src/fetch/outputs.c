/*
 * outputs.c - placing output files: name checks, temp file + fsync +
 * rename, iwd resolution, zip unpacking with libzip, stderr appending and
 * stale temp clean-up.  Never a shell, never a fixed-size path buffer.
 */
#include "fetch/outputs.h"

#include "base/files.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/strset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#define OUTPUTS_NAME_MAX 255
/* Temp names are ".<base>" + OUTPUTS_TEMP_TAG + 6 random characters; the
 * base is cut so the whole name stays within NAME_MAX (255). */
#define OUTPUTS_TEMP_TAG ".boinc_gahp."
#define OUTPUTS_TEMP_RANDOM 6
#define OUTPUTS_TEMP_BASE_MAX 200
#define OUTPUTS_TEMP_TRIES 100
#define OUTPUTS_COPY_CHUNK (64 * 1024)
/* An existing stderr file is read whole to append to it: bounded. */
#define OUTPUTS_STDERR_MAX_BYTES ((size_t)64 << 20)

int outputs_name_is_safe(const char *name)
{
    if (!name || name[0] == '\0')
        return 0;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return 0;
    if (strchr(name, '/'))
        return 0;
    /* Control characters (LF, CR, TAB, ESC, DEL ...) in a file name break
     * every line-oriented tool and log that shows it (issue 10 #8). */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 0;
    return strlen(name) <= OUTPUTS_NAME_MAX;
}

/* Split dest_path into a malloc'd directory ("." when there is no '/') and
 * a pointer to its basename.  NULL with errno EISDIR for a path ending in
 * '/', ENOMEM, or EINVAL for an empty path. */
static char *outputs_split_dir(const char *dest_path, const char **base)
{
    if (!dest_path || dest_path[0] == '\0') {
        errno = EINVAL;
        return NULL;
    }
    const char *slash = strrchr(dest_path, '/');
    *base = slash ? slash + 1 : dest_path;
    if (**base == '\0') {
        errno = EISDIR;
        return NULL;
    }
    if (!slash)
        return strdup(".");
    size_t dlen = slash == dest_path ? 1 : (size_t)(slash - dest_path);
    return strndup(dest_path, dlen);
}

/* Fill out[0..n) with random characters from [A-Za-z0-9]. */
static int outputs_random_suffix(char *out, size_t n)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char raw[OUTPUTS_TEMP_RANDOM];
    if (n > sizeof raw || getentropy(raw, n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[raw[i] % (sizeof alphabet - 1)];
    return 0;
}

/*
 * mkstemp() would create the file 0600 and reading the umask to widen it is
 * not thread-safe, so we do mkstemp's job with open(O_CREAT|O_EXCL, 0644),
 * which applies the umask itself.
 */
int outputs_open_temp(const char *dest_path, int *fd, char **tmp_path,
                      char **errmsg)
{
    *fd = -1;
    *tmp_path = NULL;
    const char *base = NULL;
    char *dir = outputs_split_dir(dest_path, &base);
    if (!dir) {
        str_set_err(errmsg, "cannot create output file %s: %s",
                        dest_path ? dest_path : "(null)", strerror(errno));
        return -1;
    }
    int baselen = (int)strnlen(base, OUTPUTS_TEMP_BASE_MAX);
    int has_dir = strchr(dest_path, '/') != NULL;
    strbuf sb = STRBUF_INIT;
    int err = 0;
    for (int attempt = 0; attempt < OUTPUTS_TEMP_TRIES; attempt++) {
        char suffix[OUTPUTS_TEMP_RANDOM + 1];
        if (outputs_random_suffix(suffix, OUTPUTS_TEMP_RANDOM) != 0) {
            err = errno ? errno : EIO;
            break;
        }
        suffix[OUTPUTS_TEMP_RANDOM] = '\0';
        strbuf_reset(&sb);
        const char *sep = strcmp(dir, "/") == 0 ? "" : "/";
        if (strbuf_printf(&sb, "%s%s.%.*s" OUTPUTS_TEMP_TAG "%s",
                          has_dir ? dir : "", has_dir ? sep : "",
                          baselen, base, suffix) != 0) {
            err = ENOMEM;
            break;
        }
        int tfd = open(strbuf_str(&sb), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (tfd >= 0) {
            *tmp_path = strdup(strbuf_str(&sb));
            if (!*tmp_path) {
                err = ENOMEM;
                close(tfd);
                unlink(strbuf_str(&sb));    /* ours: just created with O_EXCL */
                break;
            }
            *fd = tfd;
            strbuf_free(&sb);
            free(dir);
            return 0;
        }
        err = errno;
        if (err != EEXIST)
            break;
    }
    if (err == 0)
        err = EEXIST;
    str_set_err(errmsg, "cannot create temporary file for output %s: %s",
                    dest_path, strerror(err));
    strbuf_free(&sb);
    free(dir);
    return -1;
}

void outputs_abort_temp(int fd, char *tmp_path)
{
    if (fd >= 0)
        close(fd);
    if (tmp_path) {
        unlink(tmp_path);
        free(tmp_path);
    }
}

/* fsync + close fd.  Returns 0 or -1 with errno set; fd is closed either way. */
static int outputs_sync_close(int fd)
{
    if (fsync(fd) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return close(fd);
}

/*
 * fsync the directory holding path so the rename itself survives a power
 * loss.  A failure here is logged, not returned: the file is already
 * complete under its final name, only its durability is in doubt, and some
 * file systems refuse fsync on directories.
 */
void outputs_sync_parent(const char *path)
{
    const char *base = NULL;
    char *dir = outputs_split_dir(path, &base);
    if (!dir) {
        log_warn("cannot sync directory of %s: %s", path, strerror(errno));
        return;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0)
        log_warn("cannot sync directory %s: %s", dir, strerror(errno));
    if (dfd >= 0)
        close(dfd);
    free(dir);
}

/*
 * rename(src, dest), unless dest exists and is not a regular file or a
 * symbolic link: a device, FIFO or socket is never replaced.  rename()
 * would swap the directory entry, and a server run as root that "wrote"
 * an output to /dev/null would replace the device node itself.
 * (rename replaces a symlink without following it, and fails on a
 * directory by itself.)  0, or -1 with errno set.
 */
int outputs_place(const char *src, const char *dest)
{
    struct stat st;
    if (lstat(dest, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode) &&
        !S_ISDIR(st.st_mode)) {
        errno = EEXIST;
        return -1;
    }
    return rename(src, dest);
}

int outputs_commit_temp(int fd, char *tmp_path, const char *dest_path,
                        char **errmsg)
{
    if (outputs_sync_close(fd) != 0) {
        str_set_err(errmsg, "cannot write output file %s: %s", dest_path, strerror(errno));
        outputs_abort_temp(-1, tmp_path);
        return -1;
    }
    if (outputs_place(tmp_path, dest_path) != 0) {
        str_set_err(errmsg, "cannot create output file %s: %s", dest_path,
                        errno == EEXIST ? "it exists and is not a regular file"
                                        : strerror(errno));
        outputs_abort_temp(-1, tmp_path);
        return -1;
    }
    free(tmp_path);
    outputs_sync_parent(dest_path);
    return 0;
}

int outputs_write_file(const char *dest_path, const void *data, size_t len,
                       char **errmsg)
{
    int fd;
    char *tmp;
    if (outputs_open_temp(dest_path, &fd, &tmp, errmsg) != 0)
        return -1;
    if (files_write_all(fd, data, len) != 0) {
        str_set_err(errmsg, "cannot write output file %s: %s", dest_path, strerror(errno));
        outputs_abort_temp(fd, tmp);
        return -1;
    }
    return outputs_commit_temp(fd, tmp, dest_path, errmsg);
}

void outputs_free_names(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* ---- zip unpacking ---------------------------------------------------- */

/* DOS attribute bit for a directory, used when a member has no Unix mode. */
#define OUTPUTS_DOS_DIRECTORY 0x10u

/* Why member i of za may not be unpacked, or NULL if it may.  *size gets
 * its uncompressed size. */
static const char *outputs_member_refusal(zip_t *za, zip_uint64_t i,
                                          const char **name, zip_uint64_t *size)
{
    zip_stat_t st;
    zip_stat_init(&st);
    *name = "?";
    if (zip_stat_index(za, i, 0, &st) != 0)
        return zip_strerror(za);
    if (!(st.valid & ZIP_STAT_NAME) || !st.name)
        return "member has no name";
    *name = st.name;
    if (!outputs_name_is_safe(st.name))
        return "unsafe member name (empty, '.', '..', too long, or containing '/' or a control character)";
    if (!(st.valid & ZIP_STAT_SIZE))
        return "member size unknown";
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
        return "member is encrypted";
    zip_uint8_t opsys = 0;
    zip_uint32_t attr = 0;
    if (zip_file_get_external_attributes(za, i, 0, &opsys, &attr) != 0)
        return zip_strerror(za);
    if (opsys == ZIP_OPSYS_UNIX) {
        mode_t type = (mode_t)(attr >> 16) & S_IFMT;
        if (type != 0 && type != S_IFREG)
            return "member is not a regular file (symlink, directory or device)";
    } else if (attr & OUTPUTS_DOS_DIRECTORY) {
        return "member is a directory";
    }
    *size = st.size;
    return NULL;
}

/* Check every member before anything is written.  Returns the member
 * count, or -1 with the message set. */
static zip_int64_t outputs_zip_check(zip_t *za, const char *zip_path,
                                     long long max_total_bytes, char **errmsg)
{
    zip_int64_t count = zip_get_num_entries(za, 0);
    if (count < 0) {
        str_set_err(errmsg, "cannot unpack zip archive %s: %s", zip_path, zip_strerror(za));
        return -1;
    }
    strset *seen = strset_new((size_t)count);
    if (!seen) {
        str_set_err(errmsg, "cannot unpack zip archive %s: %s", zip_path, strerror(ENOMEM));
        return -1;
    }
    zip_uint64_t total = 0;
    zip_uint64_t limit = max_total_bytes > 0 ? (zip_uint64_t)max_total_bytes : 0;
    for (zip_uint64_t i = 0; i < (zip_uint64_t)count; i++) {
        const char *name = "?";
        zip_uint64_t size = 0;
        const char *why = outputs_member_refusal(za, i, &name, &size);
        int added = why ? 0 : strset_add(seen, name);
        if (!why && added < 0)
            why = strerror(ENOMEM);
        else if (!why && added == 0)
            why = "duplicate member name";
        else if (!why && size > limit - total)
            why = "archive larger than the allowed total size "
                  "(--max-unzip-bytes, --max-unzip-ratio)";
        if (why) {
            str_set_err(errmsg, "cannot unpack zip archive %s: member %s: %s",
                            zip_path, name, why);
            strset_free(seen);
            return -1;
        }
        total += size;
    }
    strset_free(seen);
    return count;
}

/* Copy member i into the open temp fd, checking the byte count against
 * expected.  Returns 0 or -1 with the message set. */
static int outputs_zip_copy(zip_t *za, zip_uint64_t i, zip_uint64_t expected,
                            int fd, const char *zip_path, const char *name,
                            char **errmsg)
{
    zip_file_t *zf = zip_fopen_index(za, i, 0);
    if (!zf) {
        str_set_err(errmsg, "cannot unpack zip archive %s: member %s: %s",
                        zip_path, name, zip_strerror(za));
        return -1;
    }
    unsigned char *buf = malloc(OUTPUTS_COPY_CHUNK);
    int rc = -1;
    zip_uint64_t done = 0;
    if (!buf) {
        str_set_err(errmsg, "cannot unpack zip archive %s: member %s: %s",
                        zip_path, name, strerror(ENOMEM));
        goto out;
    }
    for (;;) {
        zip_int64_t r = zip_fread(zf, buf, OUTPUTS_COPY_CHUNK);
        if (r < 0) {    /* includes libzip's CRC check at end of member */
            str_set_err(errmsg, "cannot unpack zip archive %s: member %s: %s",
                            zip_path, name, zip_file_strerror(zf));
            goto out;
        }
        if (r == 0)
            break;
        if ((zip_uint64_t)r > expected - done) {
            str_set_err(errmsg, "cannot unpack zip archive %s: member %s: more data than its stated size",
                            zip_path, name);
            goto out;
        }
        if (files_write_all(fd, buf, (size_t)r) != 0) {
            str_set_err(errmsg, "cannot unpack zip archive %s: member %s: %s",
                            zip_path, name, strerror(errno));
            goto out;
        }
        done += (zip_uint64_t)r;
    }
    if (done != expected) {
        str_set_err(errmsg, "cannot unpack zip archive %s: member %s: shorter than its stated size",
                        zip_path, name);
        goto out;
    }
    rc = 0;
out:
    free(buf);
    zip_fclose(zf);
    return rc;
}

/* Write member i to a synced, closed temp file next to its destination.
 * On success *dest and *tmp are malloc'd paths. */
static int outputs_zip_stage(zip_t *za, zip_uint64_t i, const char *dest_dir,
                             const char *zip_path, char **dest, char **tmp,
                             char **errmsg)
{
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za, i, 0, &st) != 0) {
        str_set_err(errmsg, "cannot unpack zip archive %s: %s", zip_path, zip_strerror(za));
        return -1;
    }
    *dest = files_resolve(dest_dir, st.name);
    if (!*dest) {
        str_set_err(errmsg, "cannot unpack zip archive %s: member %s: %s",
                        zip_path, st.name, strerror(errno));
        return -1;
    }
    int fd;
    if (outputs_open_temp(*dest, &fd, tmp, errmsg) != 0) {
        free(*dest);
        *dest = NULL;
        return -1;
    }
    if (outputs_zip_copy(za, i, st.size, fd, zip_path, st.name, errmsg) != 0) {
        outputs_abort_temp(fd, *tmp);
        *tmp = NULL;
        free(*dest);
        *dest = NULL;
        return -1;
    }
    if (outputs_sync_close(fd) != 0) {
        str_set_err(errmsg, "cannot write output file %s: %s", *dest, strerror(errno));
        outputs_abort_temp(-1, *tmp);
        *tmp = NULL;
        free(*dest);
        *dest = NULL;
        return -1;
    }
    return 0;
}

/* Abandon staged temp files: unlink and free every pair from `from` on. */
static void outputs_unstage(char **dests, char **tmps, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++) {
        outputs_abort_temp(-1, tmps[i]);
        tmps[i] = NULL;
        free(dests[i]);
        dests[i] = NULL;
    }
}

/* Rename every staged member into place.  If one rename fails, the rest
 * are removed and the error is returned; members already renamed stay. */
static int outputs_zip_publish(char **dests, char **tmps, size_t n, char **errmsg)
{
    for (size_t i = 0; i < n; i++) {
        if (outputs_place(tmps[i], dests[i]) != 0) {
            str_set_err(errmsg, "cannot create output file %s: %s", dests[i],
                            errno == EEXIST ? "it exists and is not a regular file"
                                            : strerror(errno));
            outputs_unstage(dests, tmps, i, n);
            return -1;
        }
        free(tmps[i]);
        tmps[i] = NULL;
    }
    if (n > 0)
        outputs_sync_parent(dests[0]);  /* all members share dest_dir */
    return 0;
}

static int outputs_zip_names(zip_t *za, size_t n, char ***names, char **errmsg,
                             const char *zip_path)
{
    *names = NULL;
    if (n == 0)
        return 0;
    char **out = calloc(n, sizeof *out);
    if (!out)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
        out[i] = name ? strdup(name) : NULL;
        if (!out[i]) {
            outputs_free_names(out, n);
            goto nomem;
        }
    }
    *names = out;
    return 0;
nomem:
    str_set_err(errmsg, "cannot unpack zip archive %s: %s", zip_path, strerror(ENOMEM));
    return -1;
}

int outputs_unzip(const char *zip_path, const char *dest_dir,
                  long long max_total_bytes, char ***names, size_t *n,
                  char **errmsg)
{
    *names = NULL;
    *n = 0;
    int zerr = 0;
    zip_t *za = zip_open(zip_path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        str_set_err(errmsg, "cannot unpack zip archive %s: %s", zip_path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return -1;
    }
    int rc = -1;
    char **dests = NULL, **tmps = NULL;
    size_t cnt = 0;
    zip_int64_t count = outputs_zip_check(za, zip_path, max_total_bytes, errmsg);
    if (count < 0)
        goto out;
    cnt = (size_t)count;
    if (cnt > 0) {
        dests = calloc(cnt, sizeof *dests);
        tmps = calloc(cnt, sizeof *tmps);
        if (!dests || !tmps) {
            str_set_err(errmsg, "cannot unpack zip archive %s: %s", zip_path, strerror(ENOMEM));
            goto out;
        }
    }
    for (size_t i = 0; i < cnt; i++) {
        if (outputs_zip_stage(za, i, dest_dir, zip_path, &dests[i], &tmps[i], errmsg) != 0) {
            outputs_unstage(dests, tmps, 0, i);
            goto out;
        }
    }
    /* Collect names before publishing, so an allocation failure cannot
     * strike after files are already in place. */
    if (outputs_zip_names(za, cnt, names, errmsg, zip_path) != 0) {
        outputs_unstage(dests, tmps, 0, cnt);
        goto out;
    }
    if (outputs_zip_publish(dests, tmps, cnt, errmsg) != 0) {
        outputs_free_names(*names, cnt);
        *names = NULL;
        goto out;
    }
    *n = cnt;
    rc = 0;
out:
    if (dests) {
        for (size_t i = 0; i < cnt; i++)
            free(dests[i]);
    }
    free(dests);
    free(tmps);
    zip_discard(za);    /* read-only: nothing to write back */
    return rc;
}

/* ---- stderr and stale temps ------------------------------------------- */

/* Read all of path into *sb: 0, 1 when it does not exist, -1 (errno). */
static int read_existing(const char *path, strbuf *sb)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    char buf[OUTPUTS_COPY_CHUNK];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int err = errno;
            close(fd);
            errno = err;
            return n == 0 ? 0 : -1;
        }
        if (sb->len + (size_t)n > OUTPUTS_STDERR_MAX_BYTES) {
            close(fd);
            errno = EFBIG;
            return -1;
        }
        if (strbuf_append(sb, buf, (size_t)n) != 0) {
            close(fd);
            errno = ENOMEM;
            return -1;
        }
    }
}

/* The plain O_APPEND write, for a stderr path that is not a regular file
 * of its own (/dev/null, a FIFO, a symlink: a rename would replace the
 * link or fail on the device); fsync'd where the target allows it. */
static int append_in_place(const char *path, const char *text, char **errmsg)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        str_set_err(errmsg, "cannot write stderr file %s: %s", path, strerror(errno));
        return -1;
    }
    if (files_write_all(fd, text, strlen(text)) != 0 ||
        (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)) {
        int err = errno;
        close(fd);
        str_set_err(errmsg, "cannot write stderr file %s: %s", path, strerror(err));
        return -1;
    }
    if (close(fd) != 0) {
        str_set_err(errmsg, "cannot write stderr file %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/*
 * The stderr text is appended by replacing the file with its old content
 * plus the text (temp file, fsync, rename, directory fsync: what every
 * output gets), not by an O_APPEND write: after a power loss the file has
 * the text whole or not at all, never torn, and the fetch's result is
 * committed only after the text is durable.  A fetch re-run after a crash
 * (its result never committed) finds the file already ending with the
 * text and leaves it: the text is appended once.
 */
int outputs_append_stderr(const char *path, const char *text, char **errmsg)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return append_in_place(path, text, errmsg);
    strbuf sb = STRBUF_INIT;
    size_t tlen = strlen(text);
    int rc = read_existing(path, &sb);
    if (rc < 0) {
        int err = errno;
        strbuf_free(&sb);
        str_set_err(errmsg, "cannot write stderr file %s: %s", path,
                        err == EFBIG ? "it is over 64 MiB" : strerror(err));
        return -1;
    }
    if (sb.len >= tlen && tlen > 0 && memcmp(sb.data + sb.len - tlen, text, tlen) == 0) {
        strbuf_free(&sb);       /* appended by an earlier run of this fetch */
        return 0;
    }
    if (strbuf_append(&sb, text, tlen) != 0) {
        strbuf_free(&sb);
        str_set_err(errmsg, "cannot write stderr file %s: %s", path, strerror(ENOMEM));
        return -1;
    }
    char *werr = NULL;
    rc = outputs_write_file(path, sb.len ? sb.data : "", sb.len, &werr);
    strbuf_free(&sb);
    if (rc != 0) {
        str_set_err(errmsg, "cannot write stderr file %s: %s", path,
                        werr != NULL ? werr : "out of memory");
        free(werr);
        return -1;
    }
    return 0;
}

/* 1 if name looks like one of our temp files: ".<base>.boinc_gahp.XXXXXX". */
static int outputs_is_temp_name(const char *name)
{
    size_t len = strlen(name);
    size_t tag = strlen(OUTPUTS_TEMP_TAG);
    if (name[0] != '.' || len < 1 + tag + OUTPUTS_TEMP_RANDOM)
        return 0;
    const char *suffix = name + len - OUTPUTS_TEMP_RANDOM;
    if (memcmp(suffix - tag, OUTPUTS_TEMP_TAG, tag) != 0)
        return 0;
    for (size_t i = 0; i < OUTPUTS_TEMP_RANDOM; i++) {
        char c = suffix[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

/* 1 if name is a zip work directory of exec_fetch: ".boinc_gahp.zip.XXXXXX". */
static int outputs_is_zip_dir_name(const char *name)
{
    static const char prefix[] = ".boinc_gahp.zip.";
    size_t plen = sizeof prefix - 1;
    if (strncmp(name, prefix, plen) != 0 || strlen(name) != plen + 6)
        return 0;
    for (size_t i = plen; name[i] != '\0'; i++) {
        char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

/* Remove the plain files of directory dfd's entry name (opened without
 * following symlinks), then the directory itself.  depth 1 also enters
 * subdirectories one level down (the zip work directory's "members").
 * Best effort; 0 if the directory is gone afterwards. */
static int outputs_remove_tree(int parent, const char *name, int depth)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth > 0)
                outputs_remove_tree(fd, de->d_name, depth - 1);
        } else {
            unlinkat(fd, de->d_name, 0);
        }
    }
    closedir(d);
    return unlinkat(parent, name, AT_REMOVEDIR);
}

/* Was st last modified before cutoff (NULL = always)? */
static int outputs_older(const struct stat *st, const struct timespec *cutoff)
{
    if (cutoff == NULL)
        return 1;
    return st->st_mtim.tv_sec < cutoff->tv_sec ||
           (st->st_mtim.tv_sec == cutoff->tv_sec &&
            st->st_mtim.tv_nsec < cutoff->tv_nsec);
}

long outputs_remove_stale_before(const char *dir, const struct timespec *cutoff,
                                 char **errmsg)
{
    DIR *d = opendir(dir);
    if (!d) {
        str_set_err(errmsg, "cannot read output directory %s: %s", dir, strerror(errno));
        return -1;
    }
    int dfd = dirfd(d);
    long removed = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int temp = outputs_is_temp_name(de->d_name);
        int zipdir = !temp && outputs_is_zip_dir_name(de->d_name);
        if (!temp && !zipdir)
            continue;
        struct stat st;
        /* Never follow a symlink; a temp is a plain file, a zip work
         * directory a directory, and both older than cutoff. */
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !(temp ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode)) ||
            !outputs_older(&st, cutoff))
            continue;
        int rc = temp ? unlinkat(dfd, de->d_name, 0)
                      : outputs_remove_tree(dfd, de->d_name, 1);
        if (rc == 0) {
            log_info("removed stale temporary %s %s/%s",
                     temp ? "file" : "directory", dir, de->d_name);
            removed++;
        } else {
            log_warn("cannot remove stale temporary %s %s/%s: %s",
                     temp ? "file" : "directory", dir, de->d_name, strerror(errno));
        }
    }
    closedir(d);
    return removed;
}
