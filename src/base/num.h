/*
 * num.h - strict number parsing shared by the request parser (wire/) and
 * the configuration (config/).  Each returns 0 and sets *out, or -1 when
 * the string is not wholly a number of that kind (or is out of range).
 *
 *   num_parse_llong   optional '-' and decimal digits, within long long
 *   num_parse_long    the same, within [min, max]
 *   num_parse_double  a finite decimal number (no blanks, "inf", "nan" or hex)
 */
#ifndef BOINC_GAHP_NUM_H
#define BOINC_GAHP_NUM_H

int num_parse_llong(const char *s, long long *out);
int num_parse_long(const char *s, long min, long max, long *out);
int num_parse_double(const char *s, double *out);

#endif
