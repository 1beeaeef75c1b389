/*
 * tmp_journal.c - the journal unit tests' temporary directory and journal
 * (tmp_journal.h).
 */
#include "tmp_journal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];
static char path[300];

int tmp_journal_setup(const char *prefix)
{
    int n = snprintf(dir, sizeof dir, "/tmp/%s.XXXXXX", prefix);
    if (n < 0 || (size_t)n >= sizeof dir || mkdtemp(dir) == NULL)
        return -1;
    n = snprintf(path, sizeof path, "%s/j.db", dir);
    return n < 0 || (size_t)n >= sizeof path ? -1 : 0;
}

int tmp_journal_teardown(void)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char p[600];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p)
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
    return 0;
}

const char *tmp_journal_path(void)
{
    return path;
}

const char *tmp_journal_dir(void)
{
    return dir;
}

journal *tmp_journal_open(char **err)
{
    journal_options o = { path, 1, 1000, 1 };
    return journal_open(&o, err);
}
