/*
 * gahp_text.c - GAHP escaping and tokenising (see gahp_text.h): the bottom
 * module every layer that reads or writes protocol text uses.
 */
#include "wire/gahp_text.h"

#include <stdlib.h>
#include <string.h>

/* ---- escaping ------------------------------------------------------------ */

int gahp_escape_append(strbuf *sb, const char *s)
{
    size_t n = strlen(s);
    if (strbuf_reserve(sb, n * 2) != 0)
        return -1;
    char *d = sb->data + sb->len;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == ' ' || c == '\\' || c == '\r' || c == '\n')
            *d++ = '\\';
        *d++ = c;
    }
    sb->len = (size_t)(d - sb->data);
    sb->data[sb->len] = '\0';
    return 0;
}

char *gahp_escape(const char *s)
{
    strbuf sb = STRBUF_INIT;
    if (gahp_escape_append(&sb, s) != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* ---- tokenising ---------------------------------------------------------- */


static int args_push(gahp_args *a, char *arg)
{
    if (a->argc == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        char **v = realloc(a->argv, cap * sizeof *v);
        if (v == NULL)
            return -1;
        a->argv = v;
        a->cap = cap;
    }
    a->argv[a->argc++] = arg;
    return 0;
}

gahp_tok_status gahp_tokenize(char *line, size_t len, gahp_args *args)
{
    args->argc = 0;
    if (len == 0)
        return GAHP_TOK_EMPTY;
    size_t w = 0;               /* write position: unescaping shrinks in place */
    char *arg = line;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c == '\\') {
            if (i + 1 >= len)
                return GAHP_TOK_TRAILING_ESCAPE;
            unsigned char e = (unsigned char)line[++i];
            if (e == '\0')
                return GAHP_TOK_BAD_CHAR;
            line[w++] = (char)e;
        } else if (c == ' ') {
            line[w++] = '\0';
            if (args_push(args, arg) != 0)
                return GAHP_TOK_NOMEM;
            arg = line + w;
        } else if (c == '\0') {
            /* NUL cannot live in a C string; every other byte, TAB and
             * control characters included, is an ordinary byte: HTCondor
             * escapes only space, backslash, CR and LF. */
            return GAHP_TOK_BAD_CHAR;
        } else {
            line[w++] = (char)c;
        }
    }
    /* The terminator slot (line[len]) exists: the reader NUL-terminates. */
    line[w] = '\0';
    if (args_push(args, arg) != 0)
        return GAHP_TOK_NOMEM;
    return GAHP_TOK_OK;
}

void gahp_args_free(gahp_args *args)
{
    free(args->argv);
    args->argv = NULL;
    args->argc = args->cap = 0;
}
