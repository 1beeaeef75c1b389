/*
 * files.h - local files: stat keys, MD5 content addressing, physical names,
 * upload planning, and the one write-it-all loop every writer of a file
 * descriptor uses.  Local file work only: no network, no SQL; callers
 * (the BOINC command implementations) pass data in and out.
 *
 * Error convention: functions returning int give 0 on success and -1 on
 * failure; on failure *errmsg (when errmsg is not NULL) receives a malloc'd
 * one-line message naming the path and the reason, e.g.
 * "cannot read input file /x/y: No such file or directory".  The caller
 * frees it.  See doc/files-and-outputs.md.
 */
#ifndef BOINC_GAHP_FILES_H
#define BOINC_GAHP_FILES_H

#include <stddef.h>

/* Length of an MD5 in hex, without the NUL. */
#define FILES_MD5_HEX_LEN 32

/*
 * The key under which the journal caches a file's MD5: if any field
 * differs the file is hashed again.  path is the path exactly as given
 * (malloc'd, owned by the key).
 */
typedef struct {
    char *path;
    long long size;
    long long mtime_sec;
    long mtime_nsec;
    unsigned long long inode;
    unsigned long long device;
} files_stat_key;

/* stat() path (following symlinks); it must be a regular file that this
 * process can read.  Fills *out (free with files_stat_key_free). */
int files_stat(const char *path, files_stat_key *out, char **errmsg);
void files_stat_key_free(files_stat_key *key);
/* 1 if every field (path included) is equal, else 0. */
int files_stat_key_equal(const files_stat_key *a, const files_stat_key *b);

/*
 * MD5 of the file's content as 32 lowercase hex digits + NUL in out.
 * *nbytes (if not NULL) gets the number of bytes hashed.  Fails if the file
 * is not a regular file, cannot be read, or changes (size or mtime) while
 * it is being hashed.
 *
 * *key (when key is not NULL; free with files_stat_key_free) is filled
 * from the fstat of the very file descriptor that was hashed, after
 * hashing: store the digest under this key rather than under one from an
 * earlier files_stat(), which would name other content if the file was
 * replaced in between.  On failure key->path is NULL.
 *
 * It may also keep the bytes it hashed: once the file is open,
 * may_keep(its size, keep_arg) (when not NULL) gives a buffer of at least
 * size + 1 bytes to read them into, or NULL not to keep them; it is
 * called at most once, not at all when the open fails.  The buffer stays
 * the caller's.  Then *kept (when not NULL) is that buffer holding the
 * file's *nbytes bytes, or NULL when may_keep declined or the call failed.
 * The bytes are exactly those the MD5 is of, so uploading them needs no
 * second read and cannot send other content under that name.
 */
typedef void *(*files_keep_fn)(long long size, void *arg);
int files_md5_hex_kept(const char *path, char out[FILES_MD5_HEX_LEN + 1],
                       long long *nbytes, files_stat_key *key, files_keep_fn may_keep,
                       void *keep_arg, unsigned char **kept, char **errmsg);

/* MD5 of len bytes at data, as 32 lowercase hex digits + NUL.  0 or -1. */
int files_md5_hex_mem(const void *data, size_t len, char out[FILES_MD5_HEX_LEN + 1]);

/*
 * An MD5 fed piece by piece, for many small digests in a row: one context
 * serves them all (files_md5_hex_mem makes and frees a context per call,
 * which costs more than hashing a few hundred bytes).  new: NULL when out
 * of memory or libcrypto refuses MD5; update and end: 0 or -1; end writes
 * the digest of everything fed since new or the last end, and starts over.
 */
typedef struct files_md5_stream files_md5_stream;
files_md5_stream *files_md5_stream_new(void);
int files_md5_stream_update(files_md5_stream *s, const void *data, size_t len);
int files_md5_stream_end(files_md5_stream *s, char out[FILES_MD5_HEX_LEN + 1]);
void files_md5_stream_free(files_md5_stream *s);

/*
 * path if it is absolute, else iwd + "/" + path (no doubled '/'): where a
 * job's relative file names lead (outputs, and a BLAH job's inputs).
 * Returns a malloc'd string, or NULL with errno EINVAL (path NULL or empty,
 * or relative with no iwd) or ENOMEM.
 */
char *files_resolve(const char *iwd, const char *path);

/*
 * files_resolve, then folded lexically: '//' and '.' components dropped,
 * 'x/..' removed ('..' at the root stays at the root), no trailing '/'.
 * Symbolic links are not followed (the path may not exist yet).  The one
 * name of a path for comparisons (the output claims, issue 40).  NULL with
 * errno EINVAL or ENOMEM.
 */
char *files_normal_path(const char *iwd, const char *path);

/*
 * Write all len bytes of data to fd: short writes are continued and a
 * write interrupted by a signal (EINTR) is retried.  0, or -1 with errno
 * set (EIO when write() makes no progress).  The one such loop of the
 * program: stdout's return lines, downloads, outputs and zip members.
 */
int files_write_all(int fd, const void *data, size_t len);

#endif
