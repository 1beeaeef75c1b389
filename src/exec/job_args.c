/*
 * job_args.c - the argument rule for BOINC_SUBMIT (see job_args.h and
 * doc/commands.md "Job arguments").
 */
#include "exec/job_args.h"

#include "base/strbuf.h"
#include "base/utf8.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Why arg cannot travel verbatim (a static phrase such as "is empty"), or
 * NULL when it can. */
static const char *job_arg_problem(const char *arg)
{
    if (arg[0] == '\0')
        return "is empty (a real server stores '' as a lone quote)";
    for (const unsigned char *p = (const unsigned char *)arg; *p; p++) {
        if (*p == ' ' || *p == '\t')
            return "contains white space (grouping it would need a quote)";
        if (*p == '\n' || *p == '\r')
            return "contains a line break (it would split create_work's job line)";
        if (*p == '\'')
            return "contains ' (create_work puts the command line into SQL unescaped)";
        if (*p == '"')
            return "contains \" (it would break create_work's job line)";
        if (*p == '\\')
            return "contains \\ (a real server's database rewrites backslashes: "
                   "\\n becomes a line break, \\b a backspace, a lone \\ vanishes)";
        if (*p < 0x20 || *p == 0x7f)
            return "contains a control character (XML 1.0 cannot carry it)";
    }
    /* submit_batch's request is XML: a server's parser refuses a byte that
     * is not UTF-8 and fails the whole batch ("can't parse request
     * message"), so the rule is checked here, before anything exists. */
    size_t len = strlen(arg);
    for (size_t i = 0, n; i < len; i += n) {
        long cp = utf8_decode(arg + i, len - i, &n);
        if (cp < 0)
            return "is not valid UTF-8 (a BOINC server's XML parser would refuse the "
                   "whole batch's request)";
        if (cp == 0xFFFE || cp == 0xFFFF)
            return "contains U+FFFE or U+FFFF (XML 1.0 cannot carry it)";
    }
    return NULL;
}

/* arg as a message may show it: as it is when it is UTF-8, else with each
 * byte that is not as \ooo (malloc'd; NULL on ENOMEM). */
static char *shown(const char *arg)
{
    size_t len = strlen(arg);
    if (utf8_valid_len(arg, len) == len)
        return strdup(arg);
    strbuf sb = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0, n; rc == 0 && i < len; i += n) {
        if (utf8_decode(arg + i, len - i, &n) < 0)
            rc = strbuf_printf(&sb, "\\%03o", (unsigned)(unsigned char)arg[i]);
        else
            rc = strbuf_append(&sb, arg + i, n);
    }
    if (rc != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

void job_line_measure(const char *job_name, const char *const *args, size_t nargs,
                      const char *const *phys_names, size_t ninputs,
                      size_t *bytes, size_t *tokens)
{
    /* " --wu_name NAME" */
    size_t b = strlen(" --wu_name ") + strlen(job_name);
    size_t t = 2;
    if (nargs > 0) {
        /* ` --command_line "a b c"`: the arguments are counted one token
         * each, as the volunteer client splits them (create_work sees one
         * quoted token; counting each keeps both within their limits). */
        b += strlen(" --command_line \"\"") + (nargs - 1);
        t += 1;
        for (size_t i = 0; i < nargs; i++)
            b += strlen(args[i]);
        t += nargs;
    }
    for (size_t i = 0; i < ninputs; i++)
        b += 1 + strlen(phys_names[i]);
    t += ninputs;
    *bytes = b + 1;   /* the newline */
    *tokens = t;
}

static int refuse(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(char **why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *why = str_vprintf(fmt, ap);
    va_end(ap);
    return *why != NULL ? 1 : -1;
}

int job_args_command_line(const char *job_name, const char *const *args, size_t nargs,
                          const char *const *phys_names, size_t ninputs,
                          char **command_line, char **why)
{
    return job_args_command_line_as(job_name, NULL, args, nargs, phys_names, ninputs,
                                    command_line, why);
}

int job_args_command_line_as(const char *job_name, const char *label,
                             const char *const *args, size_t nargs,
                             const char *const *phys_names, size_t ninputs,
                             char **command_line, char **why)
{
    *command_line = NULL;
    *why = NULL;
    /* The name is a word of the same line (and of the same SQL insert). */
    const char *name_problem = job_arg_problem(job_name);
    char *name = shown(job_name), *arg = NULL;
    /* who the messages name: "job NAME", or the caller's label */
    char *who = name == NULL ? NULL
              : label != NULL ? strdup(label) : str_printf("job %s", name);
    int rc = 0;
    if (name == NULL || who == NULL) {
        free(name);
        return -1;
    }
    if (name_problem != NULL)
        rc = refuse(why, "job name %s %s", name, name_problem);
    for (size_t i = 0; rc == 0 && i < nargs; i++) {
        const char *problem = job_arg_problem(args[i]);
        if (problem != NULL)
            rc = (arg = shown(args[i])) == NULL ? -1
               : refuse(why, "argument %zu of %s (%s) %s", i + 1, who, arg, problem);
    }
    free(name);
    free(arg);
    if (rc == 0) {
        size_t bytes, tokens;
        job_line_measure(job_name, args, nargs, phys_names, ninputs, &bytes, &tokens);
        if (bytes > JOB_LINE_MAX_BYTES)
            rc = refuse(why, "%s: its create_work line would be %zu bytes, more than "
                        "the %d create_work reads (shorten the arguments or input names)",
                        who, bytes, JOB_LINE_MAX_BYTES);
        else if (tokens > JOB_LINE_MAX_TOKENS)
            rc = refuse(why, "%s: its create_work line would have %zu words "
                        "(arguments + input files + 3), more than create_work's %d",
                        who, tokens, JOB_LINE_MAX_TOKENS);
    }
    free(who);
    if (rc != 0)
        return rc;
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < nargs; i++) {
        if ((i > 0 && strbuf_putc(&sb, ' ') != 0) || strbuf_puts(&sb, args[i]) != 0) {
            strbuf_free(&sb);
            return -1;
        }
    }
    *command_line = sb.data != NULL ? strbuf_detach(&sb) : strdup("");
    return *command_line != NULL ? 0 : -1;
}
