/*
 * config_internal.h - what the files of the config module share: the
 * option table (config.c) that the command line, the environment, the
 * file, --help, --example-config and --check-config (config_print.c) all
 * read.  Nothing outside src/config includes it.
 */
#ifndef BOINC_GAHP_CONFIG_INTERNAL_H
#define BOINC_GAHP_CONFIG_INTERNAL_H

#include "config/config.h"

#include <stddef.h>
#include <stdio.h>

typedef enum {
    OT_STRING,      /* char *, non-empty */
    OT_PATH,        /* char *, a file name: "~/" expanded; must be absolute
                       in the environment and the file, relative to the
                       working directory on the command line */
    OT_INT,         /* int in min..max */
    OT_LONG,        /* long in min..max */
    OT_DOUBLE,      /* double in min..max */
    OT_CHOICE,      /* int: index of the value in choices[] */
    OT_FLAG,        /* int 0/1: bare --name; yes/no/true/false/on/off/1/0 elsewhere */
    OT_PROJECT_URL, /* char *, a normalised BOINC project URL */
    OT_SECRET,      /* char *, an authenticator (file must be private) */
    OT_SECRET_FILE, /* char *, read from the named file */
    OT_CONFIG,      /* --config: chooses the file, handled before the rest */
    OT_HELP,
    OT_VERSION,
    OT_EXAMPLE      /* --example-config: print the example file, exit */
} option_type;

typedef struct {
    const char *name;      /* --NAME on the command line, or NULL */
    const char *env;       /* environment variable, or NULL */
    const char *key;       /* configuration-file key, or NULL */
    option_type type;
    size_t field;          /* offsetof(gahp_config, ...) of the value */
    double min, max;       /* bounds of OT_INT / OT_LONG / OT_DOUBLE */
    const char *const *choices;   /* OT_CHOICE: NULL-terminated */
    const char *def;       /* built-in default, as text; NULL = none */
    const char *metavar;   /* value placeholder in --help */
    const char *help;      /* one line; ranges and defaults are added */
} option_row;

extern const option_row option_table[];
extern const size_t option_count;
#define OPTION_COUNT option_count

/* The system-wide configuration file.  A fixed /etc path (not PREFIX/etc):
 * the binary behaves the same wherever it is installed, like HTCondor's
 * own /etc/condor.  Override at build time with -DGAHP_SYSTEM_CONFIG=... */
#ifndef GAHP_SYSTEM_CONFIG
#define GAHP_SYSTEM_CONFIG "/etc/boinc_gahp/boinc_gahp.conf"
#endif
#define GAHP_USER_CONFIG "boinc_gahp/boinc_gahp.conf"

/* config_paths.c: the journal path, from the setting ("%u" expanded) or
 * the default, with the grid manager's suffix; 0 or -1 (message on err). */
int config_resolve_journal(gahp_config *cfg, FILE *err);

/* config_user.c: --user NAME looked up (message on err, NULL); freed;
 * its home directory; "%u" and "%%" expanded in *path (strict: any other
 * '%' is an error naming src). */
config_user *config_user_lookup(const char *name, FILE *err);
void config_user_free(config_user *u);
const char *config_user_home(const config_user *u);
int config_expand_user(const gahp_config *cfg, char **path, int strict,
                       const char *src, FILE *err);

/* --help */
void config_print_help(FILE *out);

#endif
