/*
 * classad.c - the ClassAd record syntax of BLAH_JOB_SUBMIT, V2 arguments
 * and file lists (see classad.h).
 *
 * The grid manager unparses the submit ad with its ClassAd library: a
 * record of "Name = value" separated by ';', string literals with
 * backslash escapes.  Values are evaluated literals, except attributes the
 * user forwards with +remote_X, which may be any expression: a value that
 * is not a single string literal is kept as its text up to the next ';'
 * or ']' outside strings, lists and records.
 */
#include "wire/classad.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *s;
    size_t pos;
    const char *why;
} scanner;

static void skip_space(scanner *sc)
{
    while (sc->s[sc->pos] != '\0' && isspace((unsigned char)sc->s[sc->pos]))
        sc->pos++;
}

static int name_char(char c, int first)
{
    return isalpha((unsigned char)c) || c == '_' || (!first && isdigit((unsigned char)c));
}

/* An attribute name: [A-Za-z_][A-Za-z0-9_]*. */
static int scan_name(scanner *sc, char **out)
{
    size_t start = sc->pos;
    if (!name_char(sc->s[sc->pos], 1)) {
        sc->why = "an attribute name was expected";
        return -1;
    }
    while (name_char(sc->s[sc->pos], 0))
        sc->pos++;
    *out = strndup(sc->s + start, sc->pos - start);
    return *out != NULL ? 0 : -2;
}

static char unescape_char(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'b': return '\b';
    case 'f': return '\f';
    default: return c;      /* \" \\ \' \/ and anything else: the char */
    }
}

/* A string literal at sc->pos (the opening quote); *out unescaped. */
static int scan_string(scanner *sc, char **out)
{
    strbuf sb = STRBUF_INIT;
    sc->pos++;
    for (;;) {
        char c = sc->s[sc->pos];
        if (c == '\0') {
            strbuf_free(&sb);
            sc->why = "a string is not terminated";
            return -1;
        }
        sc->pos++;
        if (c == '"')
            break;
        if (c == '\\') {
            if (sc->s[sc->pos] == '\0')
                continue;       /* reported as unterminated above */
            c = unescape_char(sc->s[sc->pos++]);
        }
        if (strbuf_putc(&sb, c) != 0) {
            strbuf_free(&sb);
            return -2;
        }
    }
    if (sb.data == NULL && strbuf_puts(&sb, "") != 0)
        return -2;
    *out = strbuf_detach(&sb);
    return 0;
}

/* Any other value: its text up to ';' or ']' at depth 0, trimmed. */
static int scan_expression(scanner *sc, char **out)
{
    size_t start = sc->pos;
    int depth = 0;
    for (;;) {
        char c = sc->s[sc->pos];
        if (c == '\0') {
            sc->why = "the record is not closed with ]";
            return -1;
        }
        if (c == '"') {
            char *skip = NULL;
            int rc = scan_string(sc, &skip);
            free(skip);
            if (rc != 0)
                return rc;
            continue;
        }
        if (depth == 0 && (c == ';' || c == ']'))
            break;
        if (c == '[' || c == '{' || c == '(')
            depth++;
        else if ((c == ']' || c == '}' || c == ')') && depth > 0)
            depth--;
        sc->pos++;
    }
    size_t end = sc->pos;
    while (end > start && isspace((unsigned char)sc->s[end - 1]))
        end--;
    if (end == start) {
        sc->why = "an attribute has no value";
        return -1;
    }
    *out = strndup(sc->s + start, end - start);
    return *out != NULL ? 0 : -2;
}

static int add_attr(classad *ad, size_t *cap, char *name, char *value, int is_string)
{
    if (ad->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        classad_attr *v = realloc(ad->attrs, ncap * sizeof *v);
        if (v == NULL)
            return -2;
        ad->attrs = v;
        *cap = ncap;
    }
    ad->attrs[ad->n++] = (classad_attr){ name, value, is_string };
    return 0;
}

/* One "Name = value": 0, -1 (syntax), -2 (memory). */
static int scan_attr(scanner *sc, classad *ad, size_t *cap)
{
    char *name = NULL, *value = NULL;
    int rc = scan_name(sc, &name);
    if (rc != 0)
        return rc;
    skip_space(sc);
    if (sc->s[sc->pos] != '=') {
        free(name);
        sc->why = "an attribute has no '='";
        return -1;
    }
    sc->pos++;
    skip_space(sc);
    int is_string = 0;
    if (sc->s[sc->pos] == '"') {
        size_t save = sc->pos;
        rc = scan_string(sc, &value);
        skip_space(sc);
        is_string = rc == 0;
        if (rc == 0 && sc->s[sc->pos] != ';' && sc->s[sc->pos] != ']') {
            /* "a" + "b" or the like: an expression after all */
            free(value);
            value = NULL;
            is_string = 0;
            sc->pos = save;
            rc = scan_expression(sc, &value);
        }
    } else {
        rc = scan_expression(sc, &value);
    }
    if (rc == 0 && (rc = add_attr(ad, cap, name, value, is_string)) == 0)
        return 0;
    free(name);
    free(value);
    return rc;
}

int classad_parse(const char *text, classad *out, const char **why)
{
    memset(out, 0, sizeof *out);
    scanner sc = { text, 0, NULL };
    size_t cap = 0;
    int rc = 0;
    skip_space(&sc);
    if (text[sc.pos] != '[') {
        *why = "the job ad does not start with [";
        return -1;
    }
    sc.pos++;
    for (;;) {
        skip_space(&sc);
        char c = text[sc.pos];
        if (c == ']') {
            sc.pos++;
            break;
        }
        if (c == ';') {         /* empty statements are harmless */
            sc.pos++;
            continue;
        }
        if ((rc = scan_attr(&sc, out, &cap)) != 0)
            break;
    }
    if (rc == 0) {
        skip_space(&sc);
        if (text[sc.pos] != '\0') {
            sc.why = "text follows the job ad's closing ]";
            rc = -1;
        }
    }
    if (rc != 0) {
        classad_free(out);
        *why = sc.why != NULL ? sc.why : "out of memory";
    }
    return rc;
}

void classad_free(classad *ad)
{
    for (size_t i = 0; i < ad->n; i++) {
        free(ad->attrs[i].name);
        free(ad->attrs[i].value);
    }
    free(ad->attrs);
    memset(ad, 0, sizeof *ad);
}

const classad_attr *classad_find(const classad *ad, const char *name)
{
    /* The last definition wins, as in a ClassAd (remote_X overrides). */
    for (size_t i = ad->n; i > 0; i--)
        if (strcasecmp(ad->attrs[i - 1].name, name) == 0)
            return &ad->attrs[i - 1];
    return NULL;
}

const char *classad_string(const classad *ad, const char *name)
{
    const classad_attr *a = classad_find(ad, name);
    return a != NULL && a->is_string ? a->value : NULL;
}

int classad_put_string(strbuf *sb, const char *s)
{
    if (strbuf_putc(sb, '"') != 0)
        return -1;
    for (; *s != '\0'; s++) {
        const char *esc = NULL;
        switch (*s) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\t': esc = "\\t"; break;
        case '\r': esc = "\\r"; break;
        default: break;
        }
        int rc = esc != NULL ? strbuf_puts(sb, esc)
               : (unsigned char)*s < 0x20 ? 0 : strbuf_putc(sb, *s);
        if (rc != 0)
            return -1;
    }
    return strbuf_putc(sb, '"');
}

/* ---- argument and list syntaxes ------------------------------------------- */

typedef struct {
    char **v;
    size_t n, cap;
} strv;

static int strv_push(strv *sv, strbuf *word)
{
    if (sv->n == sv->cap) {
        size_t ncap = sv->cap ? sv->cap * 2 : 8;
        char **v = realloc(sv->v, ncap * sizeof *v);
        if (v == NULL)
            return -2;
        sv->v = v;
        sv->cap = ncap;
    }
    if (word->data == NULL && strbuf_puts(word, "") != 0)
        return -2;
    sv->v[sv->n++] = strbuf_detach(word);
    return 0;
}

void strv_free(char **v, size_t n)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int finish(strv *sv, strbuf *word, int rc, char ***out, size_t *n)
{
    strbuf_free(word);
    if (rc != 0) {
        strv_free(sv->v, sv->n);
        return rc;
    }
    *out = sv->v;
    *n = sv->n;
    return 0;
}

int classad_split_args(const char *s, char ***argv, size_t *n, const char **why)
{
    strv sv = { 0 };
    strbuf word = STRBUF_INIT;
    int in_word = 0, quoted = 0, rc = 0;
    for (size_t i = 0; rc == 0 && s[i] != '\0'; i++) {
        char c = s[i];
        if (quoted) {
            if (c == '\'' && s[i + 1] == '\'') {
                rc = strbuf_putc(&word, '\'') != 0 ? -2 : 0;
                i++;
            } else if (c == '\'') {
                quoted = 0;
            } else {
                rc = strbuf_putc(&word, c) != 0 ? -2 : 0;
            }
        } else if (isspace((unsigned char)c)) {
            if (in_word)
                rc = strv_push(&sv, &word);
            in_word = 0;
        } else if (c == '\'') {
            quoted = in_word = 1;
        } else {
            in_word = 1;
            rc = strbuf_putc(&word, c) != 0 ? -2 : 0;
        }
    }
    if (rc == 0 && quoted) {
        *why = "a single quote in the arguments is not closed";
        rc = -1;
    }
    if (rc == 0 && in_word)
        rc = strv_push(&sv, &word);
    return finish(&sv, &word, rc, argv, n);
}

/* Split at any character for which sep() is true; empty items dropped. */
static int split_on(const char *s, int (*sep)(int), char ***out, size_t *n)
{
    strv sv = { 0 };
    strbuf word = STRBUF_INIT;
    int rc = 0, in_word = 0;
    for (size_t i = 0; rc == 0 && s[i] != '\0'; i++) {
        if (sep((unsigned char)s[i])) {
            if (in_word)
                rc = strv_push(&sv, &word);
            in_word = 0;
        } else {
            in_word = 1;
            rc = strbuf_putc(&word, s[i]) != 0 ? -2 : 0;
        }
    }
    if (rc == 0 && in_word)
        rc = strv_push(&sv, &word);
    return finish(&sv, &word, rc, out, n);
}

static int is_space(int c)
{
    return isspace(c);
}

static int is_list_sep(int c)
{
    return c == ',' || isspace(c);
}

int classad_split_words(const char *s, char ***argv, size_t *n)
{
    return split_on(s, is_space, argv, n);
}

int classad_split_list(const char *s, char ***items, size_t *n)
{
    return split_on(s, is_list_sep, items, n);
}
