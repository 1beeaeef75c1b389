/*
 * exec_submit.h - the BOINC_SUBMIT executor (see exec_submit.c).
 */
#ifndef BOINC_GAHP_EXEC_SUBMIT_H
#define BOINC_GAHP_EXEC_SUBMIT_H

#include "exec/exec.h"

/* Run (or resume, or answer from the journal) one BOINC_SUBMIT; returns the
 * result tail ("NULL" or one escaped error token), NULL on ENOMEM. */
char *exec_submit(exec_ctx *ctx, const gahp_request *req);

#endif
