/*
 * fetch_step.h - what the steps of one BOINC_FETCH_OUTPUT share: the
 * fetch's context and the helpers that fill its exec_err (exec.h).
 *
 * Every step returns 0 when done, or -1 with the exec_err holding a code
 * and the client's message; exec_fetch_output turns it into the result
 * tail once.  Out of memory is exec_err_nomem's EXEC_E_NOMEM with no
 * message (exec.h), never a marker pointer.  Codes: EXEC_E_RPC for a failed BOINC
 * RPC, EXEC_E_LOCAL for a local file operation, EXEC_E_REFUSED for what
 * the server's answer or the request makes impossible (a job not
 * finished, an unsafe name, a bad destination).
 */
#ifndef BOINC_GAHP_FETCH_STEP_H
#define BOINC_GAHP_FETCH_STEP_H

#include "exec/exec.h"

/* Everything one fetch needs, passed between the steps. */
typedef struct {
    exec_ctx *ctx;
    const gahp_fetch_output *f;
    boinc_project project;
    long long fetched;          /* bytes downloaded so far (--max-fetch-bytes) */
} fetch_ctx;

/* Set *e to code and the printf-style message.  Returns -1. */
int fetch_step_failf(exec_err *e, exec_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Set *e to a failed local file operation, "<step>: <errmsg>" (errmsg from
 * outputs.h, NULL meaning out of memory); frees errmsg.  Returns -1. */
int fetch_step_fail_local(exec_err *e, const char *step, char *errmsg);

/* Set *e to a failed RPC, "<step> failed: <class>: <message>"; clears
 * err.  Returns -1. */
int fetch_step_fail_rpc(exec_err *e, const char *step, boinc_error *err);

#endif
