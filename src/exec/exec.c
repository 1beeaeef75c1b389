/*
 * exec.c - what every executor shares: the error convention (exec_err)
 * and the one-token error results.  The executors are in their commands' folders (submit/, fetch/, cmd/);
 * src/server/command.c runs a request through the command table.
 */
#include "exec/exec.h"

#include "wire/gahp_text.h"
#include "base/strbuf.h"

#include <stdlib.h>
#include <string.h>

void exec_err_clear(exec_err *e)
{
    free(e->msg);
    free(e->bad_input);
    free(e->bad_input_why);
    e->msg = e->bad_input = e->bad_input_why = NULL;
    e->code = EXEC_OK;
}

int exec_err_copy(exec_err *dst, const exec_err *src)
{
    exec_err c = { src->code, NULL, NULL, NULL };
    if ((src->msg != NULL && (c.msg = strdup(src->msg)) == NULL) ||
        (src->bad_input != NULL && (c.bad_input = strdup(src->bad_input)) == NULL) ||
        (src->bad_input_why != NULL && (c.bad_input_why = strdup(src->bad_input_why)) == NULL)) {
        exec_err_clear(&c);
        return -1;
    }
    *dst = c;
    return 0;
}

void exec_err_blame(exec_err *e, const char *path, const char *why)
{
    char *p = strdup(path), *w = strdup(why);
    if (p == NULL || w == NULL) {
        free(p);
        free(w);
        return;
    }
    free(e->bad_input);
    free(e->bad_input_why);
    e->bad_input = p;
    e->bad_input_why = w;
}

int exec_err_nomem(exec_err *e)
{
    exec_err_clear(e);
    e->code = EXEC_E_NOMEM;
    return -1;
}

char *exec_nomem_result(void)
{
    return strdup(EXEC_NOMEM_RESULT);
}

void exec_err_set(exec_err *e, exec_code code, const char *what, const char *detail)
{
    exec_err_clear(e);
    e->msg = str_printf("%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    e->code = e->msg != NULL ? code : EXEC_E_NOMEM;
}

void exec_err_boinc(exec_err *e, const char *what, const boinc_error *err)
{
    exec_err_clear(e);
    int has_msg = err->msg != NULL && err->msg[0] != '\0';
    e->msg = str_printf("%s failed: %s%s%s", what, boinc_code_name(err->code),
                        has_msg ? ": " : "", has_msg ? err->msg : "");
    if (e->msg == NULL || err->code == BOINC_E_NOMEM)
        e->code = EXEC_E_NOMEM;
    else if (err->code == BOINC_E_TRANSPORT || err->code == BOINC_E_HTTP)
        e->code = EXEC_E_UNREACHABLE;
    else
        e->code = EXEC_E_RPC;
}

int exec_err_may_pass(const exec_err *e)
{
    return e->code == EXEC_E_UNREACHABLE;
}

char *exec_err_result(exec_err *e)
{
    /* A failure whose message could not be formed still answers with an
     * error, never with success. */
    char *tok = e->msg != NULL ? gahp_escape(e->msg) : exec_nomem_result();
    exec_err_clear(e);
    return tok;
}

/* The shorthands build the same exec_err and turn it into the token. */
char *exec_error(const char *step, const char *detail)
{
    exec_err e = { 0 };
    exec_err_set(&e, EXEC_E_REFUSED, step, detail);
    return exec_err_result(&e);
}

char *exec_boinc_error(const char *step, const boinc_error *err)
{
    exec_err e = { 0 };
    exec_err_boinc(&e, step, err);
    return exec_err_result(&e);
}

exec_project exec_project_of(const gahp_request *req)
{
    exec_project p = { req->project_url, req->authenticator, req->project_id };
    return p;
}
