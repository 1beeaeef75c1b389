/*
 * submit_files.h - the file phase of a submit: which inputs the server
 * already has (query_files with the batch id, which also associates them
 * with the batch), and upload_files of the absent ones, in chunks bounded
 * by r->limits lowered to the limits learned from the project.  Both are
 * step_def entries for the driver; their resolver is query_files WITHOUT a
 * batch id, the one file request that is safe to repeat (a repeated upload
 * or batch query is fatal on a real server).  An upload refused with one of
 * the server's PHP limit errors is recovered from in the step: what the
 * server kept is found with that query, a smaller chunk is learned
 * (journal_files.h) and the rest re-planned; a single file too large
 * fails the submit naming it (doc/commands.md "Uploads and server limits").
 *
 * Two batches sharing a new input must not both see it absent and both
 * upload it: a phase first claims its open files for its project
 * (file_claims.h) and waits only for a phase holding one of them; no lock
 * is held across a request.
 */
#ifndef BOINC_GAHP_SUBMIT_FILES_H
#define BOINC_GAHP_SUBMIT_FILES_H

#include "submit/engine.h"

/* From BATCH_CREATED (or a state before BATCH_UPLOADED) to BATCH_UPLOADED. */
int submit_files_phase(submit_run *r);

#endif
