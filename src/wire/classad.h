/*
 * classad.h - the part of HTCondor's ClassAd text syntax that the grid
 * manager of HTCondor 10.0-25.x sends with BLAH_JOB_SUBMIT (a record of
 * evaluated attributes: "[ Iwd = \"/home/u\"; RequestMemory = 128; ... ]"),
 * the string form a status reply must carry back, and the two value
 * syntaxes inside such an ad: V2 job arguments and file lists.
 *
 * Interface:
 *   classad_parse       text -> list of (name, value) attributes
 *   classad_find        an attribute by name (case-insensitive, as ClassAds)
 *   classad_string      a string attribute's unescaped value
 *   classad_free
 *   classad_put_string  append a string literal as HTCondor's unparser writes it
 *   classad_put_name    append an attribute name as the unparser writes it
 *   classad_split_args  HTCondor "new" (V2) argument syntax -> argv
 *   classad_split_words the old (V1) syntax: white space only
 *   classad_split_list  "a, b c" (transfer_input_files) -> items
 *   strv_free           free what the splitters return
 *
 * The text is read as HTCondor's own lexer reads it (src/classad/lexer.cpp
 * and util.cpp convert_escapes of 25.0.13): string literals with \a \b \f
 * \n \r \t \v \\ \" \' \? and octal \o \oo \ooo escapes (a backslash
 * before any other character is dropped), adjacent literals joined, raw
 * bytes (UTF-8) passed through as they are, names bare or quoted ('my
 * attr', with the same escapes).  What that lexer refuses is refused: a
 * \0 (no C string could hold the value either), an empty quoted name, a
 * bare reserved word as a name.  Every size comes from the text: nothing
 * is fixed.  A value that is not a string literal is kept as its source
 * text (a number, true, an expression), so nothing the client sends is
 * lost or misread as a string.
 */
#ifndef BOINC_GAHP_CLASSAD_H
#define BOINC_GAHP_CLASSAD_H

#include "base/strbuf.h"

#include <stddef.h>

typedef struct {
    char *name;
    char *value;        /* unescaped string, or the source text */
    int is_string;      /* 1: value came from a "..." literal */
} classad_attr;

typedef struct {
    size_t n;
    classad_attr *attrs;
} classad;

/* Parse a record "[ a = 1; b = "x" ]".  0; -1 with *why (malloc'd, naming
 * the attribute when the fault is in one) when the text is not such a
 * record; -2 when memory ran out.  *out is empty on failure. */
int classad_parse(const char *text, classad *out, char **why);
void classad_free(classad *ad);

const classad_attr *classad_find(const classad *ad, const char *name);
/* The value of a string attribute, or NULL (absent, or not a string). */
const char *classad_string(const classad *ad, const char *name);

/* Append s as sink.cpp's UnparseString writes it: "..." with \" \\ \a \b
 * \f \n \r \t \v, and every other byte outside 0x20-0x7e (UTF-8 included)
 * as \ooo.  0, or -1 on ENOMEM. */
int classad_put_string(strbuf *sb, const char *s);
/* Append an attribute name as the unparser writes it: bare when it is an
 * identifier that is not a reserved word, else quoted ('my attr') with
 * the string escapes (\' for the quote).  0, or -1 on ENOMEM. */
int classad_put_name(strbuf *sb, const char *name);

/* HTCondor's V2 argument syntax: white space separates arguments; a
 * single-quoted part keeps white space, and '' inside it is one quote.
 * 0, -1 with *why for an unterminated quote, -2 on ENOMEM. */
int classad_split_args(const char *s, char ***argv, size_t *n, const char **why);
/* V1: arguments separated by white space, no quoting.  0 or -2. */
int classad_split_words(const char *s, char ***argv, size_t *n);
/* A list separated by commas and/or white space; empty items dropped.
 * 0 or -2. */
int classad_split_list(const char *s, char ***items, size_t *n);
void strv_free(char **v, size_t n);

#endif
