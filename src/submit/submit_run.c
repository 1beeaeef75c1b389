/*
 * submit_run.c - the failure convention and journal-row helpers shared by
 * the parts of a submit run (see submit_run.h).
 */
#include "submit/submit_run.h"

#include "wire/gahp_text.h"
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

batch_state run_state(const submit_run *r)
{
    return r->batch.state == BATCH_FAILED ? r->batch.resume_state : r->batch.state;
}

/* Journal state failed with the client's error text (when a row exists). */
static int journal_failure(submit_run *r, int resume)
{
    if (r->batch.id > 0 && resume >= 0) {
        char *tok = gahp_escape(r->error.msg ? r->error.msg : "out of memory");
        /* The journal keeps the error exactly as the client is given it. */
        if (tok != NULL)
            journal_batch_set_failed(r->ctx->journal, r->batch.id, (batch_state)resume, tok);
        free(tok);
    }
    return -1;
}

int run_fail(submit_run *r, int resume, exec_code code, const char *what,
             const char *detail)
{
    exec_err_set(&r->error, code, what, detail);
    return journal_failure(r, resume);
}

int run_failf(submit_run *r, int resume, exec_code code, const char *what,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *detail = str_vprintf(fmt, ap);
    va_end(ap);
    int rc = run_fail(r, resume, code, what, detail ? detail : "(out of memory)");
    free(detail);
    return rc;
}

int run_fail_boinc(submit_run *r, int resume, const char *rpc, const boinc_error *err)
{
    exec_err_boinc(&r->error, rpc, err);
    return journal_failure(r, resume);
}

int run_fail_record_again(submit_run *r, int resume)
{
    return journal_failure(r, resume);
}

int run_fail_journal(submit_run *r)
{
    return run_fail(r, -1, EXEC_E_JOURNAL, "journal write failed",
                    journal_errmsg(r->ctx->journal));
}

int run_fail_nomem(submit_run *r)
{
    return run_fail(r, -1, EXEC_E_NOMEM, "out of memory", NULL);
}

int run_reload(submit_run *r)
{
    int found = 0;
    long long id = r->batch.id;
    char *name = strdup(r->s->batch);
    if (name == NULL)
        return run_fail_nomem(r);
    journal_batch_free(&r->batch);
    int rc = journal_batch_find(r->ctx->journal, r->req->project_id, name,
                                &r->batch, &found);
    free(name);
    if (rc != 0 || !found) {
        r->batch.id = id;
        return run_fail_journal(r);
    }
    return 0;
}

int run_set_state(submit_run *r, batch_state state, long long server_batch_id)
{
    if (journal_batch_set_state(r->ctx->journal, r->batch.id, state, server_batch_id) != 0)
        return run_fail_journal(r);
    return run_reload(r);
}
