/*
 * strset.h - a set of C strings (open addressing, linear probing).
 *
 * Used to deduplicate input files by physical name and to spot duplicate
 * zip member names.  Adding n strings costs O(n) expected time: the table
 * doubles when it is half full, so a 100,000-name batch never degrades to a
 * quadratic scan.  The set keeps its own copies of the strings.
 */
#ifndef BOINC_GAHP_STRSET_H
#define BOINC_GAHP_STRSET_H

#include <stddef.h>

typedef struct strset strset;

/* A new empty set sized for about `expected` strings (0 is fine).
 * NULL on ENOMEM. */
strset *strset_new(size_t expected);
void strset_free(strset *set);

/* Add a copy of str.  Returns 1 if it was added, 0 if it was already
 * there, -1 on ENOMEM (the set is unchanged). */
int strset_add(strset *set, const char *str);

/* 1 if str is in the set, else 0. */
int strset_contains(const strset *set, const char *str);

/* Insertion index of str (0 for the first string added, 1 for the
 * second ...), or -1 when str is not in the set: a string-to-index map in
 * O(1) expected time. */
long strset_index(const strset *set, const char *str);

/* Number of distinct strings in the set. */
size_t strset_count(const strset *set);

#endif
