/*
 * dirs.c - mkdir -p with private modes, and the same walk as a check
 * (dirs.h).
 */
#include "base/dirs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dirs_make(const char *dir, char **failed)
{
    char *path = strdup(dir);
    if (path == NULL)
        return -1;
    for (char *p = path + 1; ; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            int e = errno;
            if (failed != NULL)
                *failed = strdup(path);
            free(path);
            errno = e;
            return -1;
        }
        *p = saved;
        if (saved == '\0')
            break;
    }
    /* EEXIST above may be a file: the last component must be a directory. */
    struct stat st;
    int rc = 0;
    if (stat(path, &st) != 0)
        rc = -1;
    else if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        rc = -1;
    }
    if (rc != 0 && failed != NULL)
        *failed = strdup(path);
    int e = errno;
    free(path);
    errno = e;
    return rc;
}

int dirs_creatable(const char *dir)
{
    char *path = strdup(dir);
    if (path == NULL)
        return -1;
    struct stat st;
    /* Walk up to the nearest component that exists: "a/b" -> "a" -> ".",
     * "/a" -> "/".  The top is a new string: path may be shorter than it
     * (the empty name), and a missing top ends the walk. */
    while (stat(path, &st) != 0 && errno == ENOENT) {
        char *slash = strrchr(path, '/');
        if (slash != NULL && slash != path) {
            *slash = '\0';
            continue;
        }
        const char *top = slash == path ? "/" : ".";
        if (strcmp(path, top) == 0)
            break;                          /* stat below reports ENOENT */
        char *up = strdup(top);
        if (up == NULL) {
            free(path);
            return -1;
        }
        free(path);
        path = up;
    }
    int rc = -1;
    if (stat(path, &st) != 0)
        ;                                   /* errno from stat */
    else if (!S_ISDIR(st.st_mode))
        errno = ENOTDIR;
    else
        rc = access(path, W_OK | X_OK);
    int e = errno;
    free(path);
    errno = e;
    return rc;
}
