/*
 * utf8.h - strict UTF-8 (RFC 3629): what an XML 1.0 parser such as a BOINC
 * server's accepts as text.
 *
 *   utf8_decode     the code point of one well-formed sequence
 *   utf8_valid_len  how many leading bytes are well-formed UTF-8
 *
 * Well-formed means: no stray continuation byte, no truncated sequence, no
 * overlong form (C0, C1, E0 80-9F, F0 80-8F), no UTF-16 surrogate (ED
 * A0-BF), nothing above U+10FFFF (F4 90-BF, F5-FF).
 */
#ifndef BOINC_GAHP_UTF8_H
#define BOINC_GAHP_UTF8_H

#include <stddef.h>

/* The length of the longest prefix of s[0..len) made of whole,
 * well-formed sequences: len when all of s is valid UTF-8. */
size_t utf8_valid_len(const char *s, size_t len);

/* The code point of the well-formed sequence at s[0..len), and its length
 * in *n; -1 when s does not start with one (then *n is 1). */
long utf8_decode(const char *s, size_t len, size_t *n);

#endif
