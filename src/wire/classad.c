/*
 * classad.c - the ClassAd record syntax of BLAH_JOB_SUBMIT, V2 arguments
 * and file lists (see classad.h).
 *
 * The grid manager unparses the submit ad with its ClassAd library
 * (src/classad/sink.cpp of HTCondor 25.0.13): a record of "Name = value"
 * separated by "; ", names that are not plain identifiers quoted as
 * 'my attr', string literals with backslash escapes and every byte that
 * fails isprint() written as \ooo (so "é" arrives as "\303\251").  This
 * file reads that text as HTCondor's own lexer does (lexer.cpp
 * tokenizeString, util.cpp convert_escapes), and writes strings as the
 * unparser does.  Values are evaluated literals, except attributes the
 * user forwards with +remote_X, which may be any expression: a value that
 * is not a single string literal is kept as its text up to the next ';'
 * or ']' outside strings, quoted names, lists and records.
 */
#include "wire/classad.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *s;
    size_t pos;
    const char *why;        /* static text of the first error */
    char *msg;              /* or a malloc'd message naming the attribute */
} scanner;

/* The C locale's isspace, isalpha, isdigit, isprint: the grid manager's
 * lexer and unparser run in it, whatever this process's locale is. */
static int ad_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static int ad_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int ad_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int ad_odigit(char c)
{
    return c >= '0' && c <= '7';
}

static int ad_print(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

static void skip_space(scanner *sc)
{
    while (ad_space(sc->s[sc->pos]))
        sc->pos++;
}

/* The words the lexer reads as something else than a name (lexer.cpp
 * tokenizeAlphaHead), and "parent", which the unparser quotes too. */
static int reserved_word(const char *s)
{
    static const char *const words[] = {
        "error", "false", "is", "isnt", "parent", "true", "undefined",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(s, words[i]) == 0)
            return 1;
    return 0;
}

/* ---- quoted text: "string literals" and 'quoted names' ------------------- */

/*
 * The raw text of the quoted token at sc->pos (its opening delim) into
 * raw, as lexer.cpp tokenizeString reads it: up to the first delim not
 * escaped by an odd run of backslashes; a token followed, after white
 * space, by another with the same delim goes on in it ("a" "b" is "ab",
 * joined before the escapes are read).  0, -1 (not closed), -2.
 */
static int scan_raw(scanner *sc, char delim, strbuf *raw)
{
    for (;;) {
        size_t start = ++sc->pos;
        int odd = 0;
        char c;
        while ((c = sc->s[sc->pos]) != '\0' && (c != delim || odd)) {
            odd = c == '\\' ? !odd : 0;
            sc->pos++;
        }
        if (c == '\0') {
            sc->why = delim == '"' ? "a string is not terminated"
                                   : "a quoted attribute name is not terminated";
            return -1;
        }
        if (strbuf_append(raw, sc->s + start, sc->pos - start) != 0)
            return -2;
        size_t next = ++sc->pos;
        while (ad_space(sc->s[next]))
            next++;
        if (sc->s[next] != delim)
            return 0;
        sc->pos = next;
    }
}

/*
 * The escapes of raw[0..len) read as util.cpp convert_escapes reads them:
 * \a \b \f \n \r \t \v; \ooo octal, up to three digits, a third only when
 * the first two make less than 040 (\303 is one byte, \477 is "'" and
 * "7"); before any other character (\" \' \\ \? \x \u ...) the backslash
 * is dropped; a final lone backslash stays.  The lexer refuses a \0 (the
 * value could hold no NUL either): -1.  0, -1, -2.
 */
static int unescape(const char *raw, size_t len, strbuf *out)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c == '\\' && i + 1 < len) {
            c = (unsigned char)raw[++i];
            switch (c) {
            case 'a': c = '\a'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'v': c = '\v'; break;
            default:
                if (ad_odigit((char)c)) {
                    unsigned n = c - '0';
                    if (i + 1 < len && ad_odigit(raw[i + 1])) {
                        n = n * 8 + (unsigned)(raw[++i] - '0');
                        if (n < 040 && i + 1 < len && ad_odigit(raw[i + 1]))
                            n = n * 8 + (unsigned)(raw[++i] - '0');
                    }
                    if (n == 0)
                        return -1;
                    c = (unsigned char)n;
                }
                break;
            }
        }
        if (strbuf_putc(out, (char)c) != 0)
            return -2;
    }
    return 0;
}

/* A quoted token at sc->pos, unescaped: *out malloc'd ("" for an empty
 * one).  0, -1 with sc->why, -2. */
static int scan_quoted(scanner *sc, char delim, char **out)
{
    strbuf raw = STRBUF_INIT, val = STRBUF_INIT;
    int rc = scan_raw(sc, delim, &raw);
    if (rc == 0 && (rc = unescape(raw.data != NULL ? raw.data : "", raw.len, &val)) == -1)
        sc->why = delim == '"' ? "a string holds \\0, a NUL byte (HTCondor's lexer "
                                 "refuses it, and no C string can carry it)"
                               : "a quoted attribute name holds \\0, a NUL byte";
    strbuf_free(&raw);
    if (rc == 0 && (*out = strbuf_detach(&val)) == NULL)
        rc = -2;
    if (rc != 0)
        strbuf_free(&val);
    return rc;
}

/* ---- names and values ------------------------------------------------------ */

/* An attribute name: [A-Za-z_][A-Za-z0-9_]* that is not a reserved word,
 * or a quoted name ('my attr', with the string escapes) not empty. */
static int scan_name(scanner *sc, char **out)
{
    *out = NULL;
    if (sc->s[sc->pos] == '\'') {
        int rc = scan_quoted(sc, '\'', out);
        if (rc == 0 && (*out)[0] == '\0') {
            sc->why = "an attribute name is empty ('')";
            rc = -1;
        }
        if (rc != 0) {
            free(*out);
            *out = NULL;
        }
        return rc;
    }
    size_t start = sc->pos;
    if (!ad_alpha(sc->s[sc->pos]) && sc->s[sc->pos] != '_') {
        sc->why = "an attribute name was expected";
        return -1;
    }
    while (ad_alpha(sc->s[sc->pos]) || ad_digit(sc->s[sc->pos]) || sc->s[sc->pos] == '_')
        sc->pos++;
    if ((*out = strndup(sc->s + start, sc->pos - start)) == NULL)
        return -2;
    if (reserved_word(*out) && strcasecmp(*out, "parent") != 0) {
        sc->why = "a reserved word (true, false, error, undefined, is, isnt) stands "
                  "where an attribute name was expected (a ClassAd writes it quoted)";
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* Any other value: its text up to ';' or ']' at depth 0, trimmed.  The
 * strings and quoted names inside are read (and refused as the lexer
 * refuses them) but kept as written. */
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
        if (c == '"' || c == '\'') {
            char *skip = NULL;
            int rc = scan_quoted(sc, c, &skip);
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
    while (end > start && ad_space(sc->s[end - 1]))
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
        if (*cap > SIZE_MAX / 2 / sizeof *ad->attrs)
            return -2;
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

/* The value after "Name =": a string literal alone, or an expression. */
static int scan_value(scanner *sc, char **value, int *is_string)
{
    *value = NULL;
    *is_string = 0;
    if (sc->s[sc->pos] != '"')
        return scan_expression(sc, value);
    size_t save = sc->pos;
    int rc = scan_quoted(sc, '"', value);
    if (rc != 0)
        return rc;
    skip_space(sc);
    if (sc->s[sc->pos] == ';' || sc->s[sc->pos] == ']') {
        *is_string = 1;
        return 0;
    }
    /* "a" + "b" or the like: an expression after all */
    free(*value);
    *value = NULL;
    sc->pos = save;
    return scan_expression(sc, value);
}

/* The error of the attribute named name, naming it as the ad writes it. */
static void name_the_error(scanner *sc, const char *name)
{
    strbuf sb = STRBUF_INIT;
    if (sc->msg != NULL || sc->why == NULL)
        return;
    if (strbuf_puts(&sb, "attribute ") == 0 && classad_put_name(&sb, name) == 0 &&
        strbuf_printf(&sb, ": %s", sc->why) == 0)
        sc->msg = strbuf_detach(&sb);
    strbuf_free(&sb);
}

/* One "Name = value": 0, -1 (syntax), -2 (memory). */
static int scan_attr(scanner *sc, classad *ad, size_t *cap)
{
    char *name = NULL, *value = NULL;
    int is_string = 0;
    int rc = scan_name(sc, &name);
    if (rc != 0)
        return rc;
    skip_space(sc);
    if (sc->s[sc->pos] != '=') {
        sc->why = "an attribute has no '='";
        rc = -1;
    } else {
        sc->pos++;
        skip_space(sc);
        rc = scan_value(sc, &value, &is_string);
    }
    if (rc == 0 && (rc = add_attr(ad, cap, name, value, is_string)) == 0)
        return 0;
    if (rc == -1)
        name_the_error(sc, name);
    free(name);
    free(value);
    return rc;
}

static int scan_record(scanner *sc, classad *out)
{
    size_t cap = 0;
    skip_space(sc);
    if (sc->s[sc->pos] != '[') {
        sc->why = "the job ad does not start with [";
        return -1;
    }
    sc->pos++;
    for (;;) {
        skip_space(sc);
        char c = sc->s[sc->pos];
        if (c == ']') {
            sc->pos++;
            break;
        }
        if (c == ';') {         /* empty statements are harmless */
            sc->pos++;
            continue;
        }
        int rc = scan_attr(sc, out, &cap);
        if (rc != 0)
            return rc;
    }
    skip_space(sc);
    if (sc->s[sc->pos] != '\0') {
        sc->why = "text follows the job ad's closing ]";
        return -1;
    }
    return 0;
}

int classad_parse(const char *text, classad *out, char **why)
{
    memset(out, 0, sizeof *out);
    *why = NULL;
    scanner sc = { text, 0, NULL, NULL };
    int rc = scan_record(&sc, out);
    if (rc == 0)
        return 0;
    classad_free(out);
    if (rc == -1 && sc.msg == NULL)
        sc.msg = str_printf("%s (at byte %zu of the ad)",
                            sc.why != NULL ? sc.why : "syntax error", sc.pos);
    if (rc == -1 && sc.msg == NULL)
        return -2;
    if (rc == -2) {
        free(sc.msg);
        return -2;
    }
    *why = sc.msg;
    return -1;
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

/* ---- writing, as sink.cpp ClassAdUnParser::UnparseString ------------------ */

/* s escaped as between delims: the delim as \" or \', \a \b \f \n \r \t
 * \v \\, any other byte that fails isprint (the C locale's: every byte
 * from 0x80 up too) as \ooo, the rest (the other quote included) as is. */
static int put_escaped(strbuf *sb, const char *s, char delim)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        const char *esc = NULL;
        switch (*p) {
        case '\a': esc = "\\a"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\v': esc = "\\v"; break;
        case '\\': esc = "\\\\"; break;
        default: break;
        }
        int rc;
        if (*p == (unsigned char)delim)
            rc = strbuf_putc(sb, '\\') == 0 ? strbuf_putc(sb, delim) : -1;
        else if (esc != NULL)
            rc = strbuf_puts(sb, esc);
        else if (!ad_print(*p))
            rc = strbuf_printf(sb, "\\%03o", (unsigned)*p);
        else
            rc = strbuf_putc(sb, (char)*p);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int classad_put_string(strbuf *sb, const char *s)
{
    if (strbuf_putc(sb, '"') != 0 || put_escaped(sb, s, '"') != 0)
        return -1;
    return strbuf_putc(sb, '"');
}

/* sink.cpp identifierNeedsQuoting, on the escaped text. */
static int name_needs_quotes(const char *s)
{
    if (!ad_alpha(s[0]) && s[0] != '_')
        return 1;
    for (const char *p = s + 1; *p != '\0'; p++)
        if (!ad_alpha(*p) && !ad_digit(*p) && *p != '_')
            return 1;
    return reserved_word(s);
}

int classad_put_name(strbuf *sb, const char *name)
{
    strbuf esc = STRBUF_INIT;
    int rc = put_escaped(&esc, name, '\'');
    const char *text = strbuf_str(&esc);
    if (rc == 0 && name_needs_quotes(text))
        rc = strbuf_printf(sb, "'%s'", text);
    else if (rc == 0)
        rc = strbuf_puts(sb, text);
    strbuf_free(&esc);
    return rc;
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
