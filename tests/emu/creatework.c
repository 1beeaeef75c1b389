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
 * and files (" or a line break in X), a line of 4,095 bytes or more
 * (create_work takes strlen == 4095 for "fgets() buffer was too small",
 * exact text), more than 99 tokens.  '' pairs are stored as one ' (SQL's
 * quote escape), as a real server does.  With the sql-backslash quirk (on
 * by default, as MariaDB's default sql_mode) the command line and the job
 * name are stored with MariaDB's backslash escapes decoded, silently, as a
 * real server stores them; a name ending in \ is an SQL syntax error.
 * Texts other than the SQL errors are not known from a real server
 * (doc/emulator.md).
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

/* What MariaDB stores for the escape \c (default sql_mode): \% and \_
 * keep their backslash (*keep = 1), an unknown escape drops it. */
static char sql_escape_char(char c, int *keep)
{
    *keep = 0;
    switch (c) {
    case 'b': return '\b';
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'Z': return 0x1a;
    case '0': return '\0';
    case '%': case '_': *keep = 1; return c;
    default: return c;
    }
}

/*
 * SQL literal semantics for a value create_work put between '...'
 * unescaped.  quotes: '' is one quote and a lone ' ends the literal
 * (syntax error, reported with the text from there on).  With the
 * sql-backslash quirk, \c is decoded as MariaDB decodes it; a trailing \
 * escapes what follows the value in the insert: the command line's
 * newline (so it just vanishes) or the name's closing quote (syntax
 * error, trailing_error).  A decoded NUL ends the stored text, as it
 * ends a C string on the volunteer host.
 */
static int sql_unquote(char **value, int quotes, int trailing_error, strbuf *sb)
{
    char *s = *value, *o = s;
    for (const char *p = s; *p; p++) {
        if (*p == '\\' && G.quirk_sql_backslash) {
            if (p[1] == '\0') {
                if (!trailing_error)
                    break;
                sql_error(sb, p);
                return -1;
            }
            int keep;
            char c = sql_escape_char(*++p, &keep);
            if (keep)
                *o++ = '\\';
            *o++ = c;
            continue;
        }
        if (quotes && *p == '\'') {
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

int create_work_check(int index, char **name_io, char **cmdline, char *const *inputs,
                      int ninputs, strbuf *sb)
{
    const char *cmd = *cmdline ? *cmdline : "";
    const char *name = *name_io;
    strbuf line = STRBUF_INIT;
    strbuf_printf(&line, " --wu_name %s", name);
    if (*cmd)
        strbuf_printf(&line, " --command_line \"%s\"", cmd);
    for (int i = 0; i < ninputs; i++)
        strbuf_printf(&line, " %s", inputs[i]);
    strbuf_putc(&line, '\n');
    char *m = NULL;
    if (line.len >= CW_LINE_BYTES - 1) {
        /* create_work: fgets(buf, 4096) then strlen(buf) == 4095 is "too small" */
        m = xstrdup("create_work failed: fgets() buffer was too small");
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
    /* The name goes through the same unescaped SQL insert (only its
     * backslashes are modelled: a quote in a name was never tried). */
    if (G.quirk_sql_backslash && sql_unquote(name_io, 0, 1, sb) != 0)
        return -1;
    return *cmdline ? sql_unquote(cmdline, 1, 0, sb) : 0;
}
