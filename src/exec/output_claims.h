/*
 * output_claims.h - the output paths a job writes, as the claims of issue
 * 40 name them (journal/journal_claims.h): every destination, after every
 * remap, and the BOINC stderr destination, each absolute and normalised
 * (files_normal_path); /dev/null is no claim.  Both dialects' commands
 * use it: BLAH_JOB_SUBMIT before it accepts a job, BOINC_FETCH_OUTPUT
 * before it writes.
 */
#ifndef BOINC_GAHP_OUTPUT_CLAIMS_H
#define BOINC_GAHP_OUTPUT_CLAIMS_H

#include <stddef.h>

#include "wire/request.h"

typedef struct {
    char **paths;
    size_t n;
} exec_claims;

/*
 * The paths of stderr_path (NULL or /dev/null: none) and specs[i].dst,
 * relative ones joined to iwd.  0 with *out; 1 with *why (malloc'd, one
 * line) when two specs name one path (a job overwriting its own output:
 * "two outputs of this job go to P: a and b"); the stderr file may be an
 * output's path (HTCondor 9.0 sends Err both ways; the stderr is appended
 * after the output), or a destination that cannot be made absolute
 * (empty, or relative without iwd); -1 out of memory.
 */
int exec_claim_paths(const char *iwd, const char *stderr_path, const gahp_output_spec *specs,
                     size_t n, exec_claims *out, char **why);
void exec_claims_free(exec_claims *c);

/* The refusal of a conflict (malloc'd): "output path P is also written by
 * job J, live at the same time". */
char *exec_claim_refusal(const char *path, const char *other_job);

#endif
