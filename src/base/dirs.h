/*
 * dirs.h - directories for the server's own files (journal, log): made
 * on demand, private to the user, or checked without making them.
 */
#ifndef BOINC_GAHP_DIRS_H
#define BOINC_GAHP_DIRS_H

/*
 * mkdir -p: every missing component of dir is made with mode 0700 (the
 * user's private state).  Returns 0, or -1 with errno set and *failed
 * (when not NULL) a malloc'd copy of the component that could not be made.
 */
int dirs_make(const char *dir, char **failed);

/*
 * Could this process create a file in dir, making the missing
 * directories on the way?  Checked without creating anything: the
 * nearest existing ancestor must be a directory it may write and search.
 * Returns 0, or -1 with errno set (ENOTDIR, EACCES, ...).
 */
int dirs_creatable(const char *dir);

#endif
