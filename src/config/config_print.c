/*
 * config_print.c - the texts generated from the option table: --help,
 * --example-config (examples/boinc_gahp.conf is its output) and the
 * effective settings with their sources (--check-config).
 */
#include "config/config_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- --help ------------------------------------------------------------ */

static void print_value_hint(const option_row *row, FILE *out)
{
    if (row->type == OT_CHOICE) {
        for (int i = 0; row->choices[i] != NULL; i++)
            fprintf(out, "%s%s", i ? "|" : " ", row->choices[i]);
    } else if (row->metavar != NULL) {
        fprintf(out, " %s", row->metavar);
    }
}

static void print_row_help(const option_row *row, FILE *out)
{
    if (row->name != NULL)
        fprintf(out, "  --%s", row->name);
    else
        fprintf(out, "  %s =", row->key);
    print_value_hint(row, out);
    fprintf(out, "\n      %s", row->help);
    if (row->type == OT_INT || row->type == OT_LONG)
        fprintf(out, " (%ld..%ld)", (long)row->min, (long)row->max);
    else if (row->type == OT_DOUBLE)
        fprintf(out, " (%g..%g)", row->min, row->max);
    if (row->def != NULL)
        fprintf(out, " [default %s]", row->def);
    fputc('\n', out);
    if (row->env != NULL || (row->name != NULL && row->key != NULL)) {
        fputs("      ", out);
        if (row->env != NULL)
            fprintf(out, "environment %s%s", row->env, row->key ? "; " : "");
        if (row->key != NULL)
            fprintf(out, "config file key %s", row->key);
        fputc('\n', out);
    }
}

void config_print_help(FILE *out)
{
    fputs("usage: boinc_gahp [options]\n"
          "A persistent BOINC GAHP server: speaks the GAHP protocol on stdin/stdout.\n"
          "Every setting also comes from the environment or the configuration file;\n"
          "precedence: command line > environment > configuration file > default.\n"
          "\nOptions:\n", out);
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (option_table[i].name != NULL)
            print_row_help(&option_table[i], out);
    fputs("\nConfiguration-file keys without an option:\n", out);
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (option_table[i].name == NULL)
            print_row_help(&option_table[i], out);
    fputs("\nOperator commands (the journal the server would use; boinc_gahp(1)):\n"
          "  boinc_gahp [options] --check-config     check settings, journal, log; exit\n"
          "  boinc_gahp [options] --check-config --user NAME   the same for NAME (root)\n"
          "  boinc_gahp [options] journal status      who holds it, pending work, sizes\n"
          "  boinc_gahp [options] journal backup FILE a consistent copy, beside a server\n"
          "  boinc_gahp [options] journal verify      integrity and foreign keys\n"
          "  boinc_gahp [options] journal prune       the retention prune, now\n", out);
    fputs("\nFILES (configuration, the first that exists unless --config or\n"
          "BOINC_GAHP_CONFIG names one):\n"
          "  $XDG_CONFIG_HOME/" GAHP_USER_CONFIG "  (or ~/.config/" GAHP_USER_CONFIG ")\n"
          "  " GAHP_SYSTEM_CONFIG "\n"
          "See boinc_gahp(1).\n", out);
}

/* ---- --example-config -------------------------------------------------- */

/* The help text of a row with its range, as one comment line. */
static void print_row_comment(const option_row *row, FILE *out)
{
    fprintf(out, "# %s", row->help);
    if (row->type == OT_INT || row->type == OT_LONG)
        fprintf(out, " (%ld..%ld)", (long)row->min, (long)row->max);
    else if (row->type == OT_DOUBLE)
        fprintf(out, " (%g..%g)", row->min, row->max);
    else if (row->type == OT_CHOICE) {
        fputs(" (", out);
        for (int i = 0; row->choices[i] != NULL; i++)
            fprintf(out, "%s%s", i ? ", " : "", row->choices[i]);
        fputc(')', out);
    } else if (row->type == OT_FLAG)
        fputs(" (yes or no)", out);
    fputc('\n', out);
    if (row->env != NULL || row->name != NULL) {
        fputs("#", out);
        if (row->name != NULL)
            fprintf(out, " option --%s", row->name);
        if (row->env != NULL)
            fprintf(out, "%s environment %s", row->name ? ";" : "", row->env);
        fputc('\n', out);
    }
}

void config_print_example(FILE *out)
{
    fputs("# boinc_gahp configuration file: every key, commented out, with its\n"
          "# built-in default.  This text is the output of\n"
          "# `boinc_gahp --example-config`; see boinc_gahp(1) and\n"
          "# doc/configuration.md.\n"
          "#\n"
          "# boinc_gahp reads ONE file: the one named by --config or\n"
          "# $BOINC_GAHP_CONFIG, else the first that exists of\n"
          "#   $XDG_CONFIG_HOME/" GAHP_USER_CONFIG "  (~/.config/" GAHP_USER_CONFIG ")\n"
          "#   " GAHP_SYSTEM_CONFIG "  (system-wide, for every user)\n"
          "# Environment variables override this file, and command-line options\n"
          "# override both.  Format: key = value, one per line; '#' starts a\n"
          "# comment at the start of a line or after a blank; yes/no and choices\n"
          "# in any case; file names absolute or starting with ~/.  An unknown\n"
          "# key is a warning in the log; a bad value stops boinc_gahp.\n"
          "# Check a file with: boinc_gahp --check-config --config FILE\n"
          "# In the system-wide file leave journal and log_file unset: each\n"
          "# user's GAHP keeps its own journal, and its log beside it.\n", out);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const option_row *row = &option_table[i];
        if (row->key == NULL)
            continue;
        fputc('\n', out);
        print_row_comment(row, out);
        if (row->type == OT_PROJECT_URL)
            fputs("# Optional: a project selected before the client's first line\n"
                  "# (what grid_resource = batch boinc needs), with project_url and\n"
                  "# authenticator or authenticator_file together.  In the\n"
                  "# system-wide file use authenticator_file with %u, e.g.\n"
                  "# /etc/boinc_gahp/auth/%u: each user's GAHP reads its own file\n"
                  "# (doc/htcondor.md, \"A site set-up for many users\").\n", out);
        if (row->def != NULL)
            fprintf(out, "#%s = %s\n", row->key, row->def);
        else
            fprintf(out, "#%s =\n", row->key);
    }
}

/* ---- --check-config ---------------------------------------------------- */

/* A project URL with its password ("user:PASS@") as "***": a secret
 * like the authenticator (doc/security.md #11). */
static void print_url(const char *url, FILE *out)
{
    char *shown = url != NULL ? log_redact_url(url) : NULL;
    fputs(shown != NULL ? shown : url != NULL ? "(out of memory)" : "", out);
    free(shown);
}

static void print_value(const gahp_config *cfg, const option_row *row, FILE *out)
{
    const void *v = (const char *)cfg + row->field;
    const char *const *str = v;
    switch (row->type) {
    case OT_INT:
        fprintf(out, "%d", *(const int *)v);
        break;
    case OT_LONG:
        fprintf(out, "%ld", *(const long *)v);
        break;
    case OT_DOUBLE:
        fprintf(out, "%g", *(const double *)v);
        break;
    case OT_CHOICE:
        fputs(row->choices[*(const int *)v], out);
        break;
    case OT_FLAG:
        fputs(*(const int *)v ? "yes" : "no", out);
        break;
    case OT_SECRET:
        fputs(*str != NULL ? "***" : "", out);      /* never the secret */
        break;
    case OT_PROJECT_URL:
        print_url(*str, out);
        break;
    case OT_SECRET_FILE:
        /* the file's name ("%u" expanded), never its content */
        fputs(cfg->authenticator_file != NULL ? cfg->authenticator_file : "", out);
        break;
    default:
        fputs(*str != NULL ? *str : "", out);
        break;
    }
}

void config_print_effective(const gahp_config *cfg, FILE *out)
{
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const option_row *row = &option_table[i];
        if (row->key == NULL && row->env == NULL)
            continue;                   /* --help, --check-config, ... */
        const char *src = cfg->sources[i];
        if ((row->type == OT_SECRET || row->type == OT_SECRET_FILE) && src == NULL)
            continue;                   /* the other row of the same field */
        if (row->field == offsetof(gahp_config, project_workers) && cfg->project_workers == 0) {
            /* the value the server uses, not the 0 that means "not set" */
            fprintf(out, "%s = %d  (not set: half the workers, at least 1)\n", row->key,
                    config_project_workers(cfg));
            continue;
        }
        fprintf(out, "%s = ", row->key != NULL ? row->key : row->name);
        print_value(cfg, row, out);
        if (row->type == OT_CONFIG)
            src = cfg->config_file == NULL ? "no file found" : src;
        else if (row->field == offsetof(gahp_config, journal_path) && cfg->journal_default)
            src = "default";
        else if (row->field == offsetof(gahp_config, log_file) && cfg->log_file == NULL) {
            char *def = config_default_log_path(cfg);
            fprintf(out, "  (not set: %s and stderr)\n", def ? def : "stderr only");
            free(def);
            continue;
        }
        fprintf(out, "  (%s)\n", src != NULL ? src :
                row->type == OT_CONFIG ? "found by the default search" : "not set");
    }
    /* every named project (batch_project), in the file's order */
    size_t n = 0;
    for (const config_project *pr = cfg->projects; pr != NULL; pr = pr->next)
        n++;
    for (size_t k = n; k > 0; k--) {
        const config_project *pr = cfg->projects;
        for (size_t i = 1; i < k; i++)
            pr = pr->next;
        fprintf(out, "project %s = ", pr->name);
        print_url(pr->url, out);
        fprintf(out, "  (authenticator_file.%s = %s)\n", pr->name,
                pr->authenticator_file ? pr->authenticator_file : "");
    }
    if (n == 0)
        fputs("named projects: none\n", out);
}
