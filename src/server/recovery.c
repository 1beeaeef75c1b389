/*
 * recovery.c - resume, keep for replay, or close what earlier runs left.
 *
 * The journal knows every accepted request.  A run that died (or quit with
 * work in flight) leaves rows that were never delivered; this start-up hook
 * decides each one's fate, in one pass over an index, before the banner.
 */
#include "server/recovery.h"

#include "blah/blah.h"
#include "server/command.h"
#include "journal/journal_requests.h"
#include "base/log.h"
#include "server/protocol.h"

#include <stdlib.h>
#include <string.h>

/* Growable list of request rows. */
typedef struct {
    long long *v;
    size_t n, cap;
} row_list;

static int row_list_add(row_list *l, long long row)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        long long *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = row;
    return 0;
}

typedef struct {
    workers *w;
    protocol *p;
    const gahp_config *cfg;
    long long session_id;
    row_list close;
    row_list resumed;
    size_t requeued_results;
    size_t rerun;
    size_t kept;
    int failed;
} recovery_state;

/*
 * Rebuild a typed request from its journal row (gahp_request_from_record:
 * parsed exactly like a request line), with the row decide_row found for
 * it.
 */
static gahp_request *request_from_row(const journal_request_row *row, const command_row *cmd)
{
    const char *why = "unknown command";
    gahp_request *req = NULL;
    if (cmd != NULL && cmd->sync == SYNC_NONE) {
        gahp_journal_record rec = { row->command, row->client_id, row->args_text,
                                    row->project_id, row->project_url, row->authenticator };
        req = gahp_request_from_record(cmd->cmd, cmd->parse, &rec, &why);
    }
    if (req == NULL) {
        log_error("recovery: journaled request %lld (%s) does not parse: %s",
                  row->request_row, row->command, why);
        return NULL;
    }
    req->row = cmd;
    req->journal_id = row->request_row;
    return req;
}

static int requeue_row(recovery_state *st, const journal_request_row *row,
                       const command_row *cmd)
{
    if (strcmp(row->state, JOURNAL_COMPLETED) == 0) {
        if (workers_add_result(st->w, row->request_row, row->client_id,
                               row->result ? row->result : "NULL") != 0 ||
            protocol_mark_pending(st->p, row->client_id) != 0)
            return -1;
        st->requeued_results++;
        return 0;
    }
    gahp_request *req = request_from_row(row, cmd);
    if (req == NULL)
        return row_list_add(&st->close, row->request_row);
    if (row_list_add(&st->resumed, row->request_row) != 0 ||
        protocol_mark_pending(st->p, row->client_id) != 0) {
        gahp_request_free(req);
        return -1;
    }
    workers_submit(st->w, req);
    st->rerun++;
    return 0;
}

/* A request an earlier run left unfinished may have left files behind
 * (a fetch's temp files and zip work directories): its command row says
 * how to remove them; done now, while none of this run's requests runs
 * (issue 10 #5). */
static void remove_leftovers(const command_row *cmd, const journal_request_row *row)
{
    if (cmd == NULL || cmd->remove_leftovers == NULL)
        return;
    gahp_request *req = request_from_row(row, cmd);
    if (req != NULL)
        cmd->remove_leftovers(req);
    gahp_request_free(req);
}

static int decide_row(const journal_request_row *row, void *arg)
{
    recovery_state *st = arg;
    int unfinished = strcmp(row->state, JOURNAL_COMPLETED) != 0;
    const command_row *cmd = command_find_journaled(row->command);
    int resumable = cmd != NULL && cmd->resume_unfinished;
    int replayable = cmd != NULL && cmd->replayable;
    int internal = cmd != NULL && cmd->internal;
    /* BLAH requests are never answered under an earlier run's id: the
     * grid manager of HTCondor 10.0-25.x numbers its requests from 2 again
     * and asserts each result's token count, so a stale result for a
     * reused id would stop it; it sends every unanswered request again
     * and the journal answers it (blah/). */
    int blah = command_is_blah(cmd);
    int rc = 0;
    if ((internal || blah) && !(unfinished && resumable && row->project_url != NULL)) {
        /* no client waits for it (internal), or its re-issue is answered
         * afresh (BLAH): closed */
        rc = row_list_add(&st->close, row->request_row);
    } else if (st->cfg->requeue_undelivered && !internal) {
        rc = requeue_row(st, row, cmd);
    } else if (unfinished && resumable && row->project_url != NULL) {
        gahp_request *req = request_from_row(row, cmd);
        if (req == NULL) {
            rc = row_list_add(&st->close, row->request_row);
        } else {
            req->background = 1;    /* outcome kept for the re-issue */
            rc = row_list_add(&st->resumed, row->request_row);
            if (rc == 0)
                workers_submit(st->w, req);
            else
                gahp_request_free(req);
        }
    } else if (!unfinished && replayable) {
        st->kept++;
    } else {
        if (unfinished)
            remove_leftovers(cmd, row);
        rc = row_list_add(&st->close, row->request_row);
    }
    if (rc != 0) {
        st->failed = 1;
        return 1;
    }
    return 0;
}

int recovery_start(journal *j, workers *w, protocol *p,
                   const gahp_config *cfg, long long session_id)
{
    recovery_state st = { 0 };
    st.w = w;
    st.p = p;
    st.cfg = cfg;
    st.session_id = session_id;
    int rc = journal_recovery_scan(j, session_id, decide_row, &st);
    if (rc == 0 && !st.failed) {
        if (journal_requests_resumed(j, st.resumed.v, st.resumed.n, session_id) != 0 ||
            journal_requests_close(j, st.close.v, st.close.n) != 0)
            rc = -1;
    }
    command_set_replay_possible(workers_shared(w), st.kept > 0 || st.resumed.n > 0);
    if (rc != 0 || st.failed) {
        log_error("recovery failed: %s", journal_errmsg(j));
        rc = -1;
    } else if (st.resumed.n + st.close.n + st.kept + st.requeued_results > 0) {
        if (cfg->requeue_undelivered)
            log_info("recovery: %zu stored results re-queued and %zu requests run again "
                     "under their original ids; %zu closed", st.requeued_results, st.rerun,
                     st.close.n);
        else
            log_info("recovery: %zu unfinished submits resumed, %zu results kept for "
                     "replay, %zu requests closed", st.resumed.n, st.kept, st.close.n);
    }
    free(st.close.v);
    free(st.resumed.v);
    return rc;
}

/* ---- BLAH groups an earlier run left open ---------------------------------- */

/* A group closed at start-up: its request is the internal
 * BLAH_GROUP_SUBMIT it was journaled as (blah.c's close_group), named so
 * in the log and delivered once done; left to workers_submit, it would
 * take the row of the client command of the same type, BOINC_SUBMIT. */
static void run_in_background(gahp_request *req, void *arg)
{
    if (req->row == NULL)
        req->row = command_find_journaled("BLAH_GROUP_SUBMIT");
    workers_submit(arg, req);
}

int recovery_blah_groups(journal *j, workers *w, protocol *p, const gahp_config *cfg,
                         long long session_id)
{
    (void)p;
    exec_ctx ctx = { 0 };
    ctx.shared = workers_shared(w);
    ctx.journal = j;
    ctx.config = cfg;
    ctx.session_id = session_id;
    if (blah_remove_leftovers(&ctx) < 0)
        return -1;
    int n = blah_close_open_groups(&ctx, run_in_background, w);
    if (n > 0)
        log_info("recovery: %d BLAH batch%s closed and submitted", n, n == 1 ? "" : "es");
    if (n < 0)
        return -1;
    /* aborts owed and finished jobs are seen to even if nobody polls */
    return blah_sched_resume(&ctx) < 0 ? -1 : 0;
}
