/*
 * gahp_text.h - GAHP escaping and tokenising, shared by every module that
 * reads or writes protocol text (a bottom module: it uses only strbuf).
 *
 * Escapes (both directions): "\ " space, "\\" backslash, "\<CR>" and
 * "\<LF>" keep that character inside an argument.  A backslash before any
 * other character keeps that character too (lenient on input).
 */
#ifndef BOINC_GAHP_GAHP_TEXT_H
#define BOINC_GAHP_GAHP_TEXT_H

#include "base/strbuf.h"

#include <stddef.h>

/* ---- escaping ------------------------------------------------------------ */

/* Append s with space, backslash, CR and LF escaped.  0 or -1 (ENOMEM). */
int gahp_escape_append(strbuf *sb, const char *s);
/* malloc'd escaped copy, NULL on ENOMEM. */
char *gahp_escape(const char *s);

/* ---- tokenising ---------------------------------------------------------- */

typedef enum {
    GAHP_TOK_OK = 0,
    GAHP_TOK_NOMEM,
    GAHP_TOK_BAD_CHAR,          /* a NUL byte, escaped or not */
    GAHP_TOK_TRAILING_ESCAPE,   /* line ends in a lone backslash */
    GAHP_TOK_EMPTY              /* no command at all */
} gahp_tok_status;

typedef struct {
    char **argv;                /* pointers into the (modified) line */
    size_t argc;
    size_t cap;
} gahp_args;

/*
 * Split line[0..len) (without its line terminator) in place into
 * arguments, unescaping them.  Separators are single spaces: two spaces in
 * a row give an empty argument.  A NUL byte is refused; every other byte
 * (TAB, a bare CR and other control bytes included) is part of its
 * argument, as HTCondor sends them raw.  args is reused across calls.
 */
gahp_tok_status gahp_tokenize(char *line, size_t len, gahp_args *args);
void gahp_args_free(gahp_args *args);

#endif
