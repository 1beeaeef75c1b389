/*
 * fetch_step.c - the failure helpers the steps of BOINC_FETCH_OUTPUT
 * share (see fetch_step.h): each fills an exec_err with a code and the
 * message the client gets, and turns a message that could not be formed
 * into out of memory (exec_err_nomem), so that a failure never looks like
 * success.  The selection of a job's outputs is fetch_select.c's, the
 * process-wide template cache fetch_templates.c's.
 */
#include "fetch/fetch_step.h"

#include "base/strbuf.h"

#include <stdarg.h>
#include <stdlib.h>

int fetch_step_failf(exec_err *e, exec_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = str_vprintf(fmt, ap);
    va_end(ap);
    if (msg == NULL)
        return exec_err_nomem(e);
    exec_err_set(e, code, msg, NULL);   /* no detail: the message as it is */
    free(msg);
    return -1;          /* out of memory when the message could not be made */
}

int fetch_step_fail_local(exec_err *e, const char *step, char *errmsg)
{
    if (errmsg == NULL)
        return exec_err_nomem(e);
    exec_err_set(e, EXEC_E_LOCAL, step, errmsg);
    free(errmsg);
    return -1;          /* out of memory when the message could not be made */
}

int fetch_step_fail_rpc(exec_err *e, const char *step, boinc_error *err)
{
    exec_err_boinc(e, step, err);
    boinc_error_clear(err);
    return -1;          /* out of memory when the message could not be made */
}
