/*
 * submit_driver.c - the generic step driver and the settle policy (see
 * submit_driver.h).
 */
#include "submit/submit_driver.h"

#include "base/log.h"
#include "base/testpoint.h"

/* Attempts of a step whose earlier attempt had an unknown outcome. */
#define STEP_ATTEMPTS 3
/* Extra looks before concluding that a lost request had no effect. */
#define SETTLE_LOOKS 2

step_outcome step_classify(int rc, const boinc_error *err)
{
    if (rc == BOINC_OK)
        return STEP_DONE;
    if (!err->reached)
        return STEP_NOT_SENT;
    /* The server answered with an error: it did not act.  A local file
     * that could not be read mid-upload aborts the request body, so the
     * server cannot have accepted it either. */
    if (rc == BOINC_E_SERVER || rc == BOINC_E_IO)
        return STEP_REFUSED;
    return STEP_UNKNOWN;
}

int settle_probe(submit_run *r, settle_probe_fn probe, void *arg)
{
    for (int look = 0;; look++) {
        int found = probe(r, arg);
        if (found != 0 || look == SETTLE_LOOKS)
            return found;
        pause_ms(1000L * (look + 1));
    }
}

/* Send once and act on the outcome: 0 done, 1 try again, -1 failed. */
static int attempt(submit_run *r, const step_def *d, void *arg, int last)
{
    if (d->announce(r, arg) != 0)
        return -1;
    testpoint(d->sent_point);
    boinc_error err = { 0 };
    int rc = d->send(r, arg, &err);
    step_outcome o = step_classify(rc, &err);
    int ret = -1;
    int recovered = 0;
    if (o == STEP_REFUSED && d->recover_refusal != NULL)
        recovered = d->recover_refusal(r, arg, &err);
    if (recovered != 0) {
        ret = recovered > 0 ? 0 : -1;
    } else if (o == STEP_DONE) {
        ret = d->record_done(r, arg);
        if (ret == 0)
            testpoint(d->done_point);
    } else if (o == STEP_NOT_SENT || o == STEP_REFUSED) {
        if (d->unannounce != NULL)
            d->unannounce(r, arg);
        run_fail_boinc(r, d->resume_refused, d->rpc, &err);
    } else if (last) {
        run_fail_boinc(r, d->resume_unknown, d->rpc, &err);
    } else {
        log_warn("submit %s: %s outcome unknown (%s); asking the server",
                 r->s->batch, d->rpc, err.msg ? err.msg : boinc_code_name(err.code));
        resolve_result res = d->resolve(r, arg);
        ret = res == RESOLVE_FAILED ? -1 : res == RESOLVE_ACTED ? 0 : 1;
    }
    boinc_error_clear(&err);
    return ret;
}

int step_run(submit_run *r, const step_def *d, void *arg)
{
    if (d->pending != NULL && d->pending(r, arg)) {
        resolve_result res = d->resolve(r, arg);
        if (res != RESOLVE_NOT_ACTED)
            return res == RESOLVE_ACTED ? 0 : -1;
    }
    for (int i = 0; i < STEP_ATTEMPTS; i++) {
        int rc = attempt(r, d, arg, i + 1 == STEP_ATTEMPTS);
        if (rc <= 0)
            return rc;
    }
    return -1;  /* not reached: the last attempt never asks to retry */
}
