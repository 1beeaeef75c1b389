/*
 * creatework.c - what a real server's create_work does with a job's
 * command line, for submit_batch.
 *
 * submit_rpc_handler.php writes one line per job to `create_work --stdin`:
 * ` --wu_name NAME --command_line "X" FILE...`.  create_work reads it with
 * fgets() into a 4096-byte buffer, splits it with BOINC's
 * parse_command_line() (white space separates, '...' and "..." group, no
 * escapes) into a 100-slot array, and later puts X into its SQL insert
 * without escaping.  The emulator rebuilds that line and refuses what
 * would break on a real server: a lone ' (SQL syntax error, exact text),
 * a line that does not split back into the job's own name, command line
 * and files (" or a line break in X), a line over 4095 bytes, more than 99
 * tokens.  '' pairs are stored as one ' (SQL's quote escape), as a real
 * server does.  Texts other than the SQL error are not known from a real
 * server (doc/emulator.md).
 */
#include "emu.h"

#include <stdlib.h>
#include <string.h>

#define CW_LINE_BYTES 4096
#define CW_MAX_TOKENS 100

/* BOINC's parse_command_line(): tokens of line, at most max (-1 if more). */
static int split_line(const char *line, char **tok, int max)
{
    int n = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (*p == '\0')
            return n;
        if (n == max)
            return -1;
        const char *start, *end;
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            start = p;
            while (*p && *p != q)
                p++;
            end = p;
            if (*p)
                p++;
        } else {
            start = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                p++;
            end = p;
        }
        tok[n] = xcalloc((size_t)(end - start) + 1, 1);
        memcpy(tok[n], start, (size_t)(end - start));
        n++;
    }
}

/* MariaDB's parse error for the unescaped quote at q (80 chars of context). */
static void sql_error(strbuf *sb, const char *q)
{
    char *m = xasprintf("create_work failed: Database error: You have an error in your SQL "
                        "syntax; check the manual that corresponds to your MariaDB server "
                        "version for the right syntax to use near '%.80s\n</command_line>\n' "
                        "at line 1", q);
    xml_error(sb, m);
    free(m);
}

/* SQL literal semantics for X: '' is one quote; a lone ' ends the literal. */
static int sql_unquote(char **cmdline, strbuf *sb)
{
    char *s = *cmdline, *o = s;
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            if (p[1] != '\'') {
                sql_error(sb, p);
                return -1;
            }
            p++;
        }
        *o++ = *p;
    }
    *o = '\0';
    return 0;
}

static int line_matches(char **tok, int n, const char *name, const char *cmd,
                        char *const *inputs, int ninputs)
{
    int k = 0;
    if (n < 2 || strcmp(tok[0], "--wu_name") != 0 || strcmp(tok[1], name) != 0)
        return 0;
    k = 2;
    if (cmd && *cmd) {
        if (n < 4 || strcmp(tok[2], "--command_line") != 0 || strcmp(tok[3], cmd) != 0)
            return 0;
        k = 4;
    }
    if (n - k != ninputs)
        return 0;
    for (int i = 0; i < ninputs; i++)
        if (strcmp(tok[k + i], inputs[i]) != 0)
            return 0;
    return 1;
}

int create_work_check(int index, const char *name, char **cmdline, char *const *inputs,
                      int ninputs, strbuf *sb)
{
    const char *cmd = *cmdline ? *cmdline : "";
    strbuf line = STRBUF_INIT;
    strbuf_printf(&line, " --wu_name %s", name);
    if (*cmd)
        strbuf_printf(&line, " --command_line \"%s\"", cmd);
    for (int i = 0; i < ninputs; i++)
        strbuf_printf(&line, " %s", inputs[i]);
    strbuf_putc(&line, '\n');
    char *m = NULL;
    if (line.len >= CW_LINE_BYTES) {
        m = xasprintf("create_work failed: job %d: line of %zu bytes read in pieces "
                      "(fgets buffer of %d)", index, line.len, CW_LINE_BYTES);
    } else if (strchr(cmd, '\n') != NULL || strchr(cmd, '\r') != NULL) {
        m = xasprintf("create_work failed: job %d: command line breaks the job line", index);
    } else {
        char **tok = xcalloc(CW_MAX_TOKENS + 1, sizeof *tok);
        int n = split_line(strbuf_str(&line), tok, CW_MAX_TOKENS - 1);
        /* The arguments count one word each (as the reference counts them:
         * arguments + input files + create_work's own words), although
         * create_work's split keeps the quoted X as one token. */
        char **xt = xcalloc(CW_MAX_TOKENS + 1, sizeof *xt);
        int nx = *cmd ? split_line(cmd, xt, CW_MAX_TOKENS - 1) : 0;
        for (int i = 0; i < CW_MAX_TOKENS; i++)
            free(xt[i]);
        free(xt);
        int words = (n >= 0 && nx > 1) ? n - 1 + nx : n;
        if (n < 0 || nx < 0 || words > CW_MAX_TOKENS - 1)
            m = xasprintf("create_work failed: create_work crashed (more than %d words on "
                          "job line %d)", CW_MAX_TOKENS - 1, index);
        else if (!line_matches(tok, n, name, cmd, inputs, ninputs))
            m = xasprintf("create_work failed: job %d: job line does not split into its "
                          "name, command line and %d input files", index, ninputs);
        for (int i = 0; i < CW_MAX_TOKENS; i++)
            free(tok[i]);
        free(tok);
    }
    strbuf_free(&line);
    if (m != NULL) {
        xml_error(sb, m);
        free(m);
        return -1;
    }
    return *cmdline ? sql_unquote(cmdline, sb) : 0;
}
