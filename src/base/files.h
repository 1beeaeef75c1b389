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

/* Longest physical name the BOINC server accepts. */
#define FILES_PHYS_NAME_MAX 255

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
 */
int files_md5_hex(const char *path, char out[FILES_MD5_HEX_LEN + 1],
                  long long *nbytes, char **errmsg);

/*
 * files_md5_hex that also fills *key (when not NULL; free with
 * files_stat_key_free) from the fstat of the very file descriptor that was
 * hashed, after hashing.  Store the digest under this key rather than
 * under one from an earlier files_stat(): if the file was replaced in
 * between, the earlier key would name other content.  On failure key->path
 * is NULL.
 */
int files_md5_hex_keyed(const char *path, char out[FILES_MD5_HEX_LEN + 1],
                        long long *nbytes, files_stat_key *key,
                        char **errmsg);

/*
 * files_md5_hex_keyed that may also keep the bytes it hashed: once the file
 * is open, may_keep(its size, keep_arg) says whether to (it may reserve
 * memory for them; it is called at most once, not at all when the open
 * fails).  Then *kept (when not NULL) gets a malloc'd buffer of *nbytes
 * bytes (free it), or NULL when may_keep declined or the call failed.  The
 * bytes are exactly those the MD5 is of, so uploading them needs no second
 * read and cannot send other content under that name.
 */
typedef int (*files_keep_fn)(long long size, void *arg);
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
 * Physical name for content md5_hex (32 lowercase hex digits) of the local
 * file local_name: md5_hex + the extension of local_name's basename (from
 * its last '.', when that '.' is not the first character), e.g.
 * "in.dat" -> "<md5>.dat", "data.tar.gz" -> "<md5>.gz", ".bashrc" -> "<md5>".
 * The extension is dropped when it is only "." or has a character outside
 * [A-Za-z0-9_-] after the dot, so the result always matches
 * ^[A-Za-z0-9_.-]{1,255}$.  Returns a malloc'd string, or NULL with errno
 * EINVAL (md5_hex is not 32 lowercase hex digits) or ENOMEM.
 */
char *files_phys_name(const char *md5_hex, const char *local_name);

/* 1 if name matches ^[A-Za-z0-9_.-]{1,255}$, else 0. */
int files_phys_name_is_valid(const char *name);

/*
 * Split n files with the given sizes, in order, into consecutive chunks of
 * at most max_count files and at most max_bytes bytes in total; a single
 * file larger than max_bytes gets a chunk of its own.  *chunk_starts gets
 * a malloc'd array of *nchunks start indexes (chunk i is
 * [starts[i], starts[i+1]) and the last one ends at n).  n == 0 gives zero
 * chunks and *chunk_starts == NULL.  Returns -1 with errno EINVAL
 * (max_count == 0, max_bytes <= 0 or a negative size) or ENOMEM.
 */
int files_plan_chunks(const long long *sizes, size_t n, size_t max_count,
                      long long max_bytes, size_t **chunk_starts,
                      size_t *nchunks);

/*
 * Distinct strings of names[0..n) in first-seen order: *first_index gets a
 * malloc'd array of *ndistinct indexes into names, one per distinct string,
 * at its first occurrence (NULL when n == 0).  O(n) expected time.
 * Returns -1 with errno ENOMEM or EINVAL (a NULL name).
 */
int files_distinct(const char *const *names, size_t n, size_t **first_index,
                   size_t *ndistinct);

/*
 * path if it is absolute, else iwd + "/" + path (no doubled '/'): where a
 * job's relative file names lead (outputs, and a BLAH job's inputs).
 * Returns a malloc'd string, or NULL with errno EINVAL (path NULL or empty,
 * or relative with no iwd) or ENOMEM.
 */
char *files_resolve(const char *iwd, const char *path);

/*
 * Write all len bytes of data to fd: short writes are continued and a
 * write interrupted by a signal (EINTR) is retried.  0, or -1 with errno
 * set (EIO when write() makes no progress).  The one such loop of the
 * program: stdout's return lines, downloads, outputs and zip members.
 */
int files_write_all(int fd, const void *data, size_t len);

#endif
