/*
 * submit_inputs.h - input planning of a BOINC_SUBMIT: every job input is
 * stat'ed and hashed (MD5 through the journal's cache keyed by path, size,
 * mtime and inode), given its content-addressed physical name, and the
 * batch's distinct files are journaled (batch_files, state hashed).
 *
 * Linear in the number of job inputs: a hash index maps each distinct
 * local path to its slot, so a file shared by every job is looked up in
 * O(1), not found by rescanning the list.  Each distinct file is stat'ed
 * once; the stats and the hashing of cache misses run on the hash pool
 * (hash_pool.h), the cache keys are looked up in one read transaction and
 * the new digests stored in one write transaction.  Of several bad inputs
 * the first in job order is reported, as a serial pass would.
 */
#ifndef BOINC_GAHP_SUBMIT_INPUTS_H
#define BOINC_GAHP_SUBMIT_INPUTS_H

#include "submit/engine.h"

#include <stddef.h>

/* Fill r->ninputs and r->input_phys (one physical name per job input, in
 * job order) and journal the batch's distinct files.  *nread counts the
 * files read for hashing (cache misses).  0, or -1 with r's error set. */
int submit_inputs_plan(submit_run *r, size_t *nread);

#endif
