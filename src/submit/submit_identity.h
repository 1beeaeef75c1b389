/*
 * submit_identity.h - what makes two BOINC_SUBMIT requests "the same
 * submit": the batch name, the app and the SET of jobs (each job's name,
 * arguments and inputs).  HTCondor's grid manager lists the jobs of a
 * re-issued submit in another order and takes the six trailing fields from
 * whichever job comes first, so neither counts (doc/recovery.md).
 */
#ifndef BOINC_GAHP_SUBMIT_IDENTITY_H
#define BOINC_GAHP_SUBMIT_IDENTITY_H

#include "wire/request.h"
#include "journal/journal_batches.h"

/* Length of the hex fingerprint plus its NUL. */
#define SUBMIT_IDENTITY_LEN 33

/* Fingerprint of s (hex MD5) into out.  0, or -1 on ENOMEM. */
int submit_identity_of(const gahp_submit *s, char out[SUBMIT_IDENTITY_LEN]);

/*
 * Rebuild a BOINC_SUBMIT request from its journaled argument text (the
 * escaped arguments after the request id, as in requests.args).  NULL when
 * the text does not parse or memory ran out.  The caller frees it with
 * gahp_request_free.
 */
gahp_request *submit_identity_parse_args(const char *args_text);

/* Fingerprint of the submit whose journaled argument text is args_text.
 * 0, or -1 when it does not parse or memory ran out. */
int submit_identity_of_args(const char *args_text, char out[SUBMIT_IDENTITY_LEN]);

/*
 * Is the submit s (fingerprint fp, exact-text digest spec_md5) the one the
 * journal recorded in batch b?  Compares job-set fingerprints; a batch
 * journaled before they existed gets its fingerprint computed from its
 * request's arguments and stored (b->job_set_md5 updated); when that
 * request is gone, the exact text digest decides, as before.  *same = 1
 * or 0.  Returns 0, or -1 on a journal error or ENOMEM.
 */
int submit_identity_same(journal *j, journal_batch *b, const char *fp,
                         const char *spec_md5, int *same);

#endif
