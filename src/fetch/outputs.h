/*
 * outputs.h - placing output files safely in the user's directories:
 * name checks for server-supplied names, write-to-temp-then-rename, path
 * resolution against the job's iwd, zip unpacking (libzip), stderr
 * appending, and clean-up of temp files left by a crash.  No network and
 * no SQL: the fetching code passes data in.
 *
 * Error convention: int functions return 0 on success and -1 on failure;
 * on failure *errmsg (when errmsg is not NULL) receives a malloc'd one-line
 * message naming the path and the reason (NULL if even that allocation
 * failed).  The caller frees it.  See doc/files-and-outputs.md.
 */
#ifndef BOINC_GAHP_OUTPUTS_H
#define BOINC_GAHP_OUTPUTS_H

#include <stddef.h>
#include <time.h>

/*
 * 1 if name (an output open_name or a zip member name from the server) may
 * be used as a file name inside a destination directory, else 0.  Refused:
 * NULL, empty, longer than 255 bytes, containing '/' or a control
 * character (below 0x20, or DEL), equal to "." or "..".
 * With no '/' allowed the name is a single path component, so ".." as a
 * component can only be the whole name.  (A C string cannot contain '\0':
 * a name cut at an embedded NUL is checked as cut.)
 */
int outputs_name_is_safe(const char *name);

/*
 * rename(src, dest), refusing (-1, errno EEXIST) when dest exists and is a
 * device, FIFO or socket: such a node is never replaced by an output.
 */
int outputs_place(const char *src, const char *dest);

/* fsync the directory holding path, so that a rename into it survives a
 * power loss (a failure is logged: some file systems refuse it). */
void outputs_sync_parent(const char *path);

/*
 * Create a new empty temporary file next to dest_path, named
 * ".<basename>.boinc_gahp.XXXXXX" (basename cut to 200 bytes), mode 0644
 * minus the umask, O_EXCL.  *fd gets the open (write-only) descriptor and
 * *tmp_path its malloc'd path.  Write the content to *fd, then call
 * outputs_commit_temp or outputs_abort_temp exactly once.
 */
int outputs_open_temp(const char *dest_path, int *fd, char **tmp_path,
                      char **errmsg);

/*
 * fsync and close fd, rename tmp_path onto dest_path (atomically replacing
 * any existing file), fsync the directory.  On failure the temp file is
 * removed and dest_path is untouched.  Always closes fd and frees tmp_path.
 */
int outputs_commit_temp(int fd, char *tmp_path, const char *dest_path,
                        char **errmsg);

/* Close fd, unlink tmp_path, free tmp_path.  fd < 0 or NULL are skipped. */
void outputs_abort_temp(int fd, char *tmp_path);

/* Atomically create or replace dest_path with data[0..len) (temp file +
 * commit). */
int outputs_write_file(const char *dest_path, const void *data, size_t len,
                       char **errmsg);

/*
 * Unpack every member of the zip archive zip_path into dest_dir (which
 * must exist).  The whole archive is checked first and nothing is written
 * if any member is refused: unsafe name (outputs_name_is_safe; so no
 * member in a subdirectory and no directory entries), duplicate name,
 * encrypted, a symlink / device / other non-regular Unix file type, unknown
 * size, or a total uncompressed size above max_total_bytes.  Each member
 * is then written to a temp file and its byte count checked against the
 * archive's directory (libzip also checks the CRC); only when every member
 * has been written are they all renamed into place.  *names gets a malloc'd
 * array of the *n member names in archive order (free with
 * outputs_free_names); NULL and 0 for an empty archive.
 */
int outputs_unzip(const char *zip_path, const char *dest_dir,
                  long long max_total_bytes, char ***names, size_t *n,
                  char **errmsg);
void outputs_free_names(char **names, size_t n);

/* Append text to the file at path (created 0644 minus umask if missing),
 * checking every write. */
int outputs_append_stderr(const char *path, const char *text, char **errmsg);

/*
 * Remove what a crash left in dir: regular files named
 * ".*.boinc_gahp.XXXXXX" (temp files) and zip work directories
 * ".boinc_gahp.zip.XXXXXX" (with their "members" subdirectory), only those
 * last modified before cutoff (NULL = any): what a fetch interrupted by a
 * crash left behind, while the temps of fetches running now (created
 * after cutoff) stay.  With cutoff NULL it is only safe when no other
 * thread or process is writing outputs into dir.  Returns the number
 * removed, or -1 (errmsg set) if dir cannot be read.
 */
long outputs_remove_stale_before(const char *dir, const struct timespec *cutoff,
                                 char **errmsg);

#endif
