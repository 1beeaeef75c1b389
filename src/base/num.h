/*
 * num.h - the program's one set of number parsers: request fields (wire/),
 * configuration values (config/), the BOINC server's replies (boinc/),
 * numbers inside its messages, and the test variables.  Each returns 0 and
 * sets *out, or -1 (and leaves *out alone) when the text is not wholly a
 * number of that kind or is out of range: no overflow wraps, no garbage is
 * skipped.
 *
 *   num_parse_llong    optional '-' and decimal digits, within long long
 *   num_parse_long     the same, within [min, max]
 *   num_parse_double   a finite decimal number, optional sign and exponent
 *                      (no blanks, "inf", "nan" or hex)
 *   num_parse_long_blanks   num_parse_long over the n bytes at s (no NUL
 *                      needed) with blanks (isspace) around the number: the
 *                      text of an XML element, " 12\n"
 *   num_parse_double_blanks the same for num_parse_double; the text must be
 *                      NUL-terminated somewhere after the n bytes (strtod
 *                      reads on), and a number running on past them is refused
 *   num_parse_digits   n bytes (no NUL needed) of unsigned digits in base
 *                      10 or 16 (no sign, no "0x"), at most max
 */
#ifndef BOINC_GAHP_NUM_H
#define BOINC_GAHP_NUM_H

#include <stddef.h>

int num_parse_llong(const char *s, long long *out);
int num_parse_long(const char *s, long min, long max, long *out);
int num_parse_double(const char *s, double *out);

int num_parse_long_blanks(const char *s, size_t n, long min, long max, long *out);
int num_parse_double_blanks(const char *s, size_t n, double *out);

int num_parse_digits(const char *s, size_t n, unsigned base, unsigned long long max,
                     unsigned long long *out);

#endif
