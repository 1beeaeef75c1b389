/*
 * config_user.c - whose configuration it is (issue 41): the user whose
 * name "%u" stands for (the running user, or --check-config --user NAME),
 * and whether that user may read or write a file, decided from stat(),
 * the mode bits and the user's groups (getgrouplist) without setuid, so
 * that root can answer for any user.  Part of the config module.
 */
#include "config/config_internal.h"

#include "base/strbuf.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct config_user {
    char *name;
    char *home;
    uid_t uid;
    gid_t gid;
    gid_t *groups;              /* every group of the user, gid included */
    int ngroups;
};

void config_user_free(config_user *u)
{
    if (u == NULL)
        return;
    free(u->name);
    free(u->home);
    free(u->groups);
    free(u);
}

const char *config_user_name(const config_user *u)
{
    return u->name;
}

const char *config_user_home(const config_user *u)
{
    return u->home;
}

config_user *config_user_lookup(const char *name, FILE *err)
{
    errno = 0;
    struct passwd *pw = getpwnam(name);
    if (pw == NULL) {
        fprintf(err, "boinc_gahp: --user: no user called '%s'%s%s\n", name,
                errno ? ": " : "", errno ? strerror(errno) : "");
        return NULL;
    }
    config_user *u = calloc(1, sizeof *u);
    if (u == NULL || (u->name = strdup(pw->pw_name)) == NULL ||
        (u->home = strdup(pw->pw_dir ? pw->pw_dir : "")) == NULL) {
        config_user_free(u);
        fprintf(err, "boinc_gahp: out of memory\n");
        return NULL;
    }
    u->uid = pw->pw_uid;
    u->gid = pw->pw_gid;
    /* getgrouplist tells how many there are when the array is too small */
    int n = 16;
    for (int tries = 0; tries < 8; tries++) {
        gid_t *g = realloc(u->groups, (size_t)n * sizeof *g);
        if (g == NULL)
            break;
        u->groups = g;
        int want = n;
        if (getgrouplist(u->name, u->gid, u->groups, &want) >= 0) {
            u->ngroups = want;
            return u;
        }
        n = want > n ? want : n * 2;
    }
    fprintf(err, "boinc_gahp: --user %s: cannot list the user's groups\n", name);
    config_user_free(u);
    return NULL;
}

static int in_groups(const config_user *u, gid_t gid)
{
    if (gid == u->gid)
        return 1;
    for (int i = 0; i < u->ngroups; i++)
        if (u->groups[i] == gid)
            return 1;
    return 0;
}

/* The permission bits of st that apply to u (rwx, 0..7). */
static unsigned bits_for(const config_user *u, const struct stat *st)
{
    if (st->st_uid == u->uid)
        return (st->st_mode >> 6) & 7;
    if (in_groups(u, st->st_gid))
        return (st->st_mode >> 3) & 7;
    return st->st_mode & 7;
}

/* "owner 0, group 0, mode 0600" of st, into sb. */
static int describe(strbuf *sb, const char *path, const char *what,
                    const struct stat *st)
{
    struct passwd *pw = getpwuid(st->st_uid);
    struct group *gr = getgrgid(st->st_gid);
    int rc = strbuf_printf(sb, "%s %s (owner ", what, path);
    rc = rc != 0 ? rc : pw != NULL ? strbuf_puts(sb, pw->pw_name)
                      : strbuf_printf(sb, "%ld", (long)st->st_uid);
    rc = rc != 0 ? rc : strbuf_puts(sb, ", group ");
    rc = rc != 0 ? rc : gr != NULL ? strbuf_puts(sb, gr->gr_name)
                      : strbuf_printf(sb, "%ld", (long)st->st_gid);
    return rc != 0 ? rc : strbuf_printf(sb, ", mode %04o)",
                                        (unsigned)(st->st_mode & 07777));
}

/*
 * May u open path with these rwx bits (4 read, 2 write)?  Every directory
 * on the way must let u search it (x).  root may do anything but run a
 * file.  POSIX ACLs are not looked at.  0 yes; -1 with *why malloc'd.
 */
int config_user_access(const config_user *u, const char *path, unsigned want,
                       char **why)
{
    *why = NULL;
    size_t len = strlen(path);
    char *p = malloc(len + 1);
    if (p == NULL)
        return -1;
    memcpy(p, path, len + 1);
    strbuf sb = STRBUF_INIT;
    struct stat st;
    int rc = 0;
    /* each directory on the way ("/etc", "/etc/boinc_gahp"), then the file */
    for (size_t i = 1; rc == 0 && i <= len; i++) {
        if (i < len && p[i] != '/')
            continue;
        char saved = p[i];
        p[i] = '\0';
        int last = i == len;
        if (stat(p, &st) != 0) {
            rc = strbuf_printf(&sb, "%s: %s", p, strerror(errno)) == 0 ? -1 : -2;
        } else if (u->uid != 0) {
            unsigned need = last ? want : 1;
            if ((bits_for(u, &st) & need) != need)
                rc = strbuf_printf(&sb, "%s cannot %s ", u->name,
                                   !last ? "search" : (want & 2) ? "write" : "read") != 0 ||
                     describe(&sb, p, S_ISDIR(st.st_mode) ? "directory" : "file", &st) != 0 ? -2 : -1;
        }
        p[i] = saved;
    }
    free(p);
    if (rc == -1)
        *why = strbuf_detach(&sb);
    strbuf_free(&sb);
    return rc == 0 ? 0 : -1;
}

/*
 * "%u" is the user's name (the running user's, or --user's), "%%" a '%'.
 * strict: any other '%' is an error (authenticator_file); else it is kept
 * as it is (journal, for the files written before issue 41).  0, or -1
 * with a message naming src.
 */
int config_expand_user(const gahp_config *cfg, char **path, int strict,
                       const char *src, FILE *err)
{
    if (strchr(*path, '%') == NULL)
        return 0;
    const char *name = cfg->user != NULL ? cfg->user->name : NULL;
    if (name == NULL) {
        struct passwd *pw = getpwuid(geteuid());
        name = pw != NULL && pw->pw_name != NULL && pw->pw_name[0] != '\0'
               ? pw->pw_name : NULL;
    }
    strbuf sb = STRBUF_INIT;
    int rc = 0;
    for (const char *p = *path; *p != '\0' && rc == 0; p++) {
        if (p[0] == '%' && p[1] == 'u') {
            if (name == NULL) {
                fprintf(err, "boinc_gahp: %s '%s': %%u needs the user's login "
                        "name, and uid %ld has none\n", src, *path, (long)geteuid());
                strbuf_free(&sb);
                return -1;
            }
            rc = strbuf_puts(&sb, name);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            rc = strbuf_puts(&sb, "%");
            p++;
        } else if (p[0] == '%' && strict) {
            fprintf(err, "boinc_gahp: %s '%s': unknown escape '%%%.1s' (only %%u, "
                    "the user's name, and %%%%, a '%%', are known)\n", src, *path,
                    p[1] != '\0' ? p + 1 : "");
            strbuf_free(&sb);
            return -1;
        } else {
            char c[2] = { *p, '\0' };
            rc = strbuf_puts(&sb, c);
        }
    }
    char *out = rc == 0 ? strbuf_detach(&sb) : NULL;
    strbuf_free(&sb);
    if (out == NULL) {
        fprintf(err, "boinc_gahp: out of memory\n");
        return -1;
    }
    free(*path);
    *path = out;
    return 0;
}
