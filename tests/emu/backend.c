/*
 * backend.c - the server-side job life cycle (BOINC's backend_logic, seed
 * 001): transitioner, scheduler + simulated hosts that really run the apps,
 * validator (consensus on output bytes), assimilator, batch expiry; and the
 * clocks that drive them (manual virtual time, or real time in a thread).
 *
 * A "pass" runs every component once; passes repeat until nothing changes
 * (quiescent).  Virtual time then jumps to the next due event, so advancing
 * a day of virtual time costs only as many passes as there are events.
 */
#include "emu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apprunner.h"
#include "base/log.h"

extern char **environ;

const char *const behaviour_names[BEH_COUNT] = {
    "succeed", "crash", "no_reply", "wrong", "slow", "detach"
};

int behaviour_parse(const char *s)
{
    for (int i = 0; i < BEH_COUNT; i++)
        if (s && strcmp(s, behaviour_names[i]) == 0)
            return i;
    return -1;
}

static long long mod_now(void)
{
    return (long long)floor(emu_now());
}

/* Mark a job for the transitioner now (and bump its mod_time). */
static void job_transition_now(long long job_id)
{
    sqlite3_stmt *st = db_prep("UPDATE jobs SET transition_time = ?, mod_time = ? WHERE id = ?");
    sqlite3_bind_double(st, 1, emu_now());
    sqlite3_bind_int64(st, 2, mod_now());
    sqlite3_bind_int64(st, 3, job_id);
    db_run(st);
    sqlite3_finalize(st);
}

void job_touch(long long job_id)
{
    job_transition_now(job_id);
}

/* The error bit is set at once (ERROR right away); the transitioner, a
 * polling daemon on a real server, handles the job one second later, which
 * touches mod_time again — so a client polling with the previous
 * server_time as min_mod_time still sees the change. */
void abort_job(long long job_id)
{
    sqlite3_stmt *st = db_prep("UPDATE jobs SET error_mask = error_mask | 16, transition_time = ?, "
                               "mod_time = ? WHERE id = ?");
    sqlite3_bind_double(st, 1, emu_now() + 1);
    sqlite3_bind_int64(st, 2, mod_now());
    sqlite3_bind_int64(st, 3, job_id);
    db_run(st);
    sqlite3_finalize(st);
}

long long unfinished_jobs(void)
{
    return db_int("SELECT COUNT(*) FROM jobs WHERE canonical_resultid = 0 AND error_mask = 0", 0, 0);
}

static long long *id_list(sqlite3_stmt *st, size_t *n)
{
    long long *ids = NULL;
    size_t cap = 0;
    *n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            long long *ni = realloc(ids, cap * sizeof *ni);
            if (ni == NULL)
                abort();
            ids = ni;
        }
        ids[(*n)++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return ids;
}

/* ---------------- transitioner ---------------- */

typedef struct {
    long long id;
    int server_state, outcome, validate_state;
    double report_deadline;
} inst_row;

static inst_row *load_instances(long long job_id, int *n)
{
    sqlite3_stmt *st = db_prep("SELECT id, server_state, outcome, validate_state, report_deadline "
                               "FROM instances WHERE job_id = ? ORDER BY id");
    sqlite3_bind_int64(st, 1, job_id);
    inst_row *v = NULL;
    int cap = 0;
    *n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            inst_row *nv = realloc(v, (size_t)cap * sizeof *nv);
            if (nv == NULL)
                abort();
            v = nv;
        }
        inst_row *r = &v[(*n)++];
        r->id = sqlite3_column_int64(st, 0);
        r->server_state = sqlite3_column_int(st, 1);
        r->outcome = sqlite3_column_int(st, 2);
        r->validate_state = sqlite3_column_int(st, 3);
        r->report_deadline = sqlite3_column_double(st, 4);
    }
    sqlite3_finalize(st);
    return v;
}

static void set_instance_over(long long id, int outcome)
{
    sqlite3_stmt *st = db_prep("UPDATE instances SET server_state = 5, outcome = ? WHERE id = ?");
    sqlite3_bind_int(st, 1, outcome);
    sqlite3_bind_int64(st, 2, id);
    db_run(st);
    sqlite3_finalize(st);
}

static void create_instances(long long job_id, const char *job_name, int seq0, int count)
{
    sqlite3_stmt *st = db_prep("INSERT INTO instances(job_id, name, seq, server_state) VALUES(?, ?, ?, 2)");
    for (int k = 0; k < count; k++) {
        char *name = xasprintf("%s_%d", job_name, seq0 + k);
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, job_id);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 3, seq0 + k);
        db_run(st);
        free(name);
    }
    sqlite3_finalize(st);
}

static void transition_job(long long job_id)
{
    sqlite3_stmt *st = db_prep("SELECT name, min_quorum, target_nresults, max_error_results, "
                               "max_total_results, error_mask, canonical_resultid, assimilate_state, "
                               "ninstances, need_validate FROM jobs WHERE id = ?");
    sqlite3_bind_int64(st, 1, job_id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return;
    }
    char *name = xstrdup((const char *)sqlite3_column_text(st, 0));
    int quorum = sqlite3_column_int(st, 1), target = sqlite3_column_int(st, 2);
    int max_err = sqlite3_column_int(st, 3), max_total = sqlite3_column_int(st, 4);
    int mask = sqlite3_column_int(st, 5);
    long long canon = sqlite3_column_int64(st, 6);
    int assim = sqlite3_column_int(st, 7), ninst = sqlite3_column_int(st, 8);
    int need_validate = sqlite3_column_int(st, 9);
    sqlite3_finalize(st);

    double now = emu_now();
    int n;
    inst_row *in = load_instances(job_id, &n);
    int nsuccess = 0, nerrors = 0, nunsent = 0, ninprog = 0, ncouldnt = 0, ninit_success = 0;
    for (int i = 0; i < n; i++) {
        inst_row *r = &in[i];
        if (r->server_state == SS_IN_PROGRESS && now >= r->report_deadline) {
            set_instance_over(r->id, OUTCOME_NO_REPLY);
            r->server_state = SS_OVER;
            r->outcome = OUTCOME_NO_REPLY;
        }
        if (r->server_state == SS_UNSENT) nunsent++;
        else if (r->server_state == SS_IN_PROGRESS) ninprog++;
        else if (r->server_state == SS_OVER) {
            if (r->outcome == OUTCOME_SUCCESS && r->validate_state != VS_INVALID) {
                nsuccess++;
                if (r->validate_state == VS_INIT)
                    ninit_success++;
            }
            if (r->outcome == OUTCOME_CLIENT_ERROR || r->outcome == OUTCOME_VALIDATE_ERROR)
                nerrors++;
            if (r->outcome == OUTCOME_COULDNT_SEND)
                ncouldnt++;
        }
    }
    if (ninit_success > 0 && (nsuccess >= quorum || canon))
        need_validate = 1;
    if (ncouldnt)
        mask |= WU_ERR_COULDNT_SEND;
    if (nerrors > max_err)
        mask |= WU_ERR_TOO_MANY_ERRORS;
    if (n > max_total)
        mask |= WU_ERR_TOO_MANY_TOTAL;
    if (canon == 0) {
        /* replicate up to target_nresults live-or-good instances; like the
         * real transitioner the total check runs even when another error
         * bit is set (a job failing twice gets mask 2|8 = 10) */
        int needed = target - (nunsent + ninprog + nsuccess);
        if (needed > 0 && n + needed > max_total)
            mask |= WU_ERR_TOO_MANY_TOTAL;
        if (needed > 0 && mask == 0) {
            create_instances(job_id, name, ninst, needed);
            ninst += needed;
        }
    }
    if (mask || canon) {
        for (int i = 0; i < n; i++)
            if (in[i].server_state == SS_UNSENT)
                set_instance_over(in[i].id, OUTCOME_DIDNT_NEED);
        if (mask && assim == ASSIM_INIT)
            assim = ASSIM_READY;
    }
    double next = EMU_NEVER;
    st = db_prep("SELECT MIN(report_deadline) FROM instances WHERE job_id = ? AND server_state = 4");
    sqlite3_bind_int64(st, 1, job_id);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        next = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    st = db_prep("UPDATE jobs SET error_mask = ?, need_validate = ?, assimilate_state = ?, "
                 "transition_time = ?, mod_time = ?, ninstances = ? WHERE id = ?");
    sqlite3_bind_int(st, 1, mask);
    sqlite3_bind_int(st, 2, need_validate);
    sqlite3_bind_int(st, 3, assim);
    sqlite3_bind_double(st, 4, next);
    sqlite3_bind_int64(st, 5, mod_now());
    sqlite3_bind_int(st, 6, ninst);
    sqlite3_bind_int64(st, 7, job_id);
    db_run(st);
    sqlite3_finalize(st);
    free(in);
    free(name);
}

static int transitioner_pass(void)
{
    sqlite3_stmt *st = db_prep("SELECT id FROM jobs WHERE transition_time <= ? ORDER BY id");
    sqlite3_bind_double(st, 1, emu_now());
    size_t n;
    long long *ids = id_list(st, &n);
    for (size_t i = 0; i < n; i++)
        transition_job(ids[i]);
    free(ids);
    return (int)n;
}

/* ---------------- validator ---------------- */

static void validate_job(long long job_id)
{
    sqlite3_stmt *st = db_prep("SELECT min_quorum, target_nresults, max_success_results, error_mask, "
                               "canonical_resultid, assimilate_state FROM jobs WHERE id = ?");
    sqlite3_bind_int64(st, 1, job_id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return;
    }
    int quorum = sqlite3_column_int(st, 0), target = sqlite3_column_int(st, 1);
    int max_succ = sqlite3_column_int(st, 2), mask = sqlite3_column_int(st, 3);
    long long canon = sqlite3_column_int64(st, 4);
    int assim = sqlite3_column_int(st, 5);
    sqlite3_finalize(st);

    st = db_prep("SELECT id, validate_state, IFNULL(output_sig, '') FROM instances "
                 "WHERE job_id = ? AND server_state = 5 AND outcome = 1 ORDER BY id");
    sqlite3_bind_int64(st, 1, job_id);
    long long ids[256];
    int vstate[256];
    char *sig[256];
    int n = 0;
    while (n < 256 && sqlite3_step(st) == SQLITE_ROW) {
        ids[n] = sqlite3_column_int64(st, 0);
        vstate[n] = sqlite3_column_int(st, 1);
        sig[n] = xstrdup((const char *)sqlite3_column_text(st, 2));
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_stmt *up = db_prep("UPDATE instances SET validate_state = ? WHERE id = ?");
#define SET_VS(i, v) do { sqlite3_reset(up); sqlite3_bind_int(up, 1, (v)); \
        sqlite3_bind_int64(up, 2, ids[i]); sqlite3_step(up); vstate[i] = (v); } while (0)
    if (canon) {
        const char *csig = NULL;
        for (int i = 0; i < n; i++)
            if (ids[i] == canon)
                csig = sig[i];
        for (int i = 0; i < n; i++)
            if (vstate[i] == VS_INIT)
                SET_VS(i, (csig && strcmp(sig[i], csig) == 0) ? VS_VALID : VS_INVALID);
    } else if (mask != 0) {
        /* The job ended in error (aborted, too many errors) before this
         * success was validated: it is not checked.  Left INIT, the
         * transitioner would ask for validation again at once, and the
         * two passes would cycle with the database lock held (seen with
         * a job aborted while its instance ran: every RPC waited 10-20 s). */
        for (int i = 0; i < n; i++)
            if (vstate[i] == VS_INIT)
                SET_VS(i, VS_NO_CHECK);
    } else {
        int best = -1, best_count = 0, nsucc = 0;
        for (int i = 0; i < n; i++) {
            if (vstate[i] == VS_INVALID)
                continue;
            nsucc++;
            int c = 0;
            for (int k = 0; k < n; k++)
                if (vstate[k] != VS_INVALID && strcmp(sig[k], sig[i]) == 0)
                    c++;
            if (c > best_count) {
                best_count = c;
                best = i;
            }
        }
        if (best >= 0 && best_count >= quorum) {
            canon = ids[best];
            for (int i = 0; i < n; i++)
                if (vstate[i] != VS_INVALID)
                    SET_VS(i, strcmp(sig[i], sig[best]) == 0 ? VS_VALID : VS_INVALID);
            if (assim == ASSIM_INIT)
                assim = ASSIM_READY;
            sqlite3_stmt *du = db_prep("UPDATE instances SET server_state = 5, outcome = 5 "
                                       "WHERE job_id = ? AND server_state = 2");
            sqlite3_bind_int64(du, 1, job_id);
            db_run(du);
            sqlite3_finalize(du);
        } else {
            for (int i = 0; i < n; i++)
                if (vstate[i] == VS_INIT)
                    SET_VS(i, VS_INCONCLUSIVE);
            if (nsucc > max_succ)
                mask |= WU_ERR_TOO_MANY_SUCCESS;
            if (nsucc >= target)
                target = nsucc + 1;     /* no consensus yet: ask for one more */
        }
    }
#undef SET_VS
    sqlite3_finalize(up);
    for (int i = 0; i < n; i++)
        free(sig[i]);
    st = db_prep("UPDATE jobs SET need_validate = 0, canonical_resultid = ?, error_mask = ?, "
                 "target_nresults = ?, assimilate_state = ?, transition_time = ?, mod_time = ? "
                 "WHERE id = ?");
    sqlite3_bind_int64(st, 1, canon);
    sqlite3_bind_int(st, 2, mask);
    sqlite3_bind_int(st, 3, target);
    sqlite3_bind_int(st, 4, assim);
    sqlite3_bind_double(st, 5, emu_now());
    sqlite3_bind_int64(st, 6, mod_now());
    sqlite3_bind_int64(st, 7, job_id);
    db_run(st);
    sqlite3_finalize(st);
}

static int validator_pass(void)
{
    size_t n;
    long long *ids = id_list(db_prep("SELECT id FROM jobs WHERE need_validate = 1 ORDER BY id"), &n);
    for (size_t i = 0; i < n; i++)
        validate_job(ids[i]);
    free(ids);
    return (int)n;
}

/* ---------------- assimilator + batches ---------------- */

static int assimilator_pass(void)
{
    size_t n;
    long long *ids = id_list(db_prep("SELECT id FROM jobs WHERE assimilate_state = 1"), &n);
    sqlite3_stmt *st = db_prep("UPDATE jobs SET assimilate_state = 2, transition_time = ?, mod_time = ? "
                               "WHERE id = ?");
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_double(st, 1, emu_now());
        sqlite3_bind_int64(st, 2, mod_now());
        sqlite3_bind_int64(st, 3, ids[i]);
        db_run(st);
    }
    sqlite3_finalize(st);
    free(ids);
    /* a batch whose jobs are all assimilated is complete */
    st = db_prep("UPDATE batches SET state = 2, completion_time = ? WHERE state = 1 AND NOT EXISTS "
                 "(SELECT 1 FROM jobs j WHERE j.batch_id = batches.id AND j.assimilate_state IN (0, 1))");
    sqlite3_bind_double(st, 1, emu_now());
    db_run(st);
    int changed = sqlite3_changes(G.db);
    sqlite3_finalize(st);
    return (int)n + changed;
}

/* Batches past their expire_time are retired (their jobs aborted). */
static int expiry_pass(void)
{
    sqlite3_stmt *st = db_prep("SELECT id FROM batches WHERE state != 4 AND expire_time > 0 "
                               "AND expire_time <= ?");
    sqlite3_bind_double(st, 1, emu_now());
    size_t n;
    long long *ids = id_list(st, &n);
    for (size_t i = 0; i < n; i++) {
        size_t nj;
        sqlite3_stmt *q = db_prep("SELECT id FROM jobs WHERE batch_id = ? AND canonical_resultid = 0 "
                                  "AND (error_mask & 16) = 0");
        sqlite3_bind_int64(q, 1, ids[i]);
        long long *jobs = id_list(q, &nj);
        for (size_t k = 0; k < nj; k++)
            abort_job(jobs[k]);
        free(jobs);
        sqlite3_stmt *u = db_prep("UPDATE batches SET state = 4, retired = 1 WHERE id = ?");
        sqlite3_bind_int64(u, 1, ids[i]);
        db_run(u);
        sqlite3_finalize(u);
    }
    free(ids);
    return (int)n;
}

/* ---------------- scheduler: hosts report and fetch work ---------------- */

static int reports_pass(void)
{
    sqlite3_stmt *st = db_prep("SELECT id, job_id, exit_status, behaviour FROM instances "
                               "WHERE server_state = 4 AND run_state = 2 AND report_time <= ?");
    sqlite3_bind_double(st, 1, emu_now());
    int n = 0;
    /* run_state 4: reported, so later passes do not scan it again */
    sqlite3_stmt *up = db_prep("UPDATE instances SET server_state = 5, outcome = ?, validate_state = ?, "
                               "received_time = ?, run_state = 4 WHERE id = ?");
    while (sqlite3_step(st) == SQLITE_ROW) {
        long long iid = sqlite3_column_int64(st, 0), jid = sqlite3_column_int64(st, 1);
        int status = sqlite3_column_int(st, 2), beh = sqlite3_column_int(st, 3);
        int outcome = beh == BEH_DETACH ? OUTCOME_CLIENT_DETACHED
                    : status == 0 ? OUTCOME_SUCCESS : OUTCOME_CLIENT_ERROR;
        sqlite3_reset(up);
        sqlite3_bind_int(up, 1, outcome);
        sqlite3_bind_int(up, 2, outcome == OUTCOME_SUCCESS ? VS_INIT : VS_INVALID);
        sqlite3_bind_double(up, 3, emu_now());
        sqlite3_bind_int64(up, 4, iid);
        db_run(up);
        job_transition_now(jid);
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_finalize(up);
    return n;
}

static int resolve_behaviour(const char *job_name, int seq)
{
    sqlite3_stmt *st = db_prep("SELECT behaviour FROM behaviours WHERE job_name = ? AND seq IN (?, -1) "
                               "ORDER BY seq DESC LIMIT 1");
    sqlite3_bind_text(st, 1, job_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, seq);
    int b = G.default_behaviour;
    if (sqlite3_step(st) == SQLITE_ROW)
        b = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return b;
}

static int send_pass(void)
{
    int nhosts = G.nhosts;
    long *load = xcalloc((size_t)nhosts, sizeof *load);
    sqlite3_stmt *st = db_prep("SELECT host, COUNT(*) FROM instances WHERE server_state = 4 GROUP BY host");
    while (sqlite3_step(st) == SQLITE_ROW) {
        int h = sqlite3_column_int(st, 0);
        if (h >= 0 && h < nhosts)
            load[h] = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    st = db_prep("SELECT i.id, i.job_id, i.seq, j.name, j.delay_bound FROM instances i "
                 "JOIN jobs j ON j.id = i.job_id WHERE i.server_state = 2 ORDER BY i.id");
    sqlite3_stmt *hosts_of = db_prep("SELECT host FROM instances WHERE job_id = ? AND host >= 0");
    sqlite3_stmt *up = db_prep("UPDATE instances SET server_state = 4, host = ?, behaviour = ?, "
                               "sent_time = ?, report_deadline = ?, run_state = ?, report_time = ? "
                               "WHERE id = ?");
    sqlite3_stmt *jt = db_prep("UPDATE jobs SET transition_time = MIN(transition_time, ?), mod_time = ? "
                               "WHERE id = ?");
    int sent = 0, rr = 0;
    unsigned char *used = xcalloc((size_t)nhosts, 1);
    double now = emu_now();
    long free_slots = 0;
    for (int h = 0; h < nhosts; h++)
        if (load[h] < G.max_tasks_per_host)
            free_slots += G.max_tasks_per_host - load[h];
    while (free_slots > 0 && sqlite3_step(st) == SQLITE_ROW) {
        long long iid = sqlite3_column_int64(st, 0), jid = sqlite3_column_int64(st, 1);
        int seq = sqlite3_column_int(st, 2);
        const char *jname = (const char *)sqlite3_column_text(st, 3);
        double delay = sqlite3_column_double(st, 4);
        /* one instance of a job per host, as BOINC's scheduler does */
        memset(used, 0, (size_t)nhosts);
        sqlite3_reset(hosts_of);
        sqlite3_bind_int64(hosts_of, 1, jid);
        while (sqlite3_step(hosts_of) == SQLITE_ROW) {
            int h = sqlite3_column_int(hosts_of, 0);
            if (h >= 0 && h < nhosts)
                used[h] = 1;
        }
        int nused = 0;
        for (int k = 0; k < nhosts; k++)
            nused += used[k];
        if (nused >= nhosts) {
            /* every host already had this job: it can never be sent (the
             * real scheduler's infeasible queue gives up the same way) */
            sqlite3_stmt *cs = db_prep("UPDATE instances SET server_state = 5, outcome = 2 WHERE id = ?");
            sqlite3_bind_int64(cs, 1, iid);
            db_run(cs);
            sqlite3_finalize(cs);
            job_transition_now(jid);
            sent++;
            continue;
        }
        int host = -1;
        for (int k = 0; k < nhosts; k++) {
            int h = (rr + k) % nhosts;
            if (!used[h] && load[h] < G.max_tasks_per_host) {
                host = h;
                break;
            }
        }
        if (host < 0)
            continue;
        rr = (host + 1) % nhosts;
        load[host]++;
        free_slots--;
        int beh = resolve_behaviour(jname, seq);
        int run_state = (beh == BEH_NO_REPLY) ? 0 : (beh == BEH_DETACH ? 2 : 1);
        double report = (beh == BEH_DETACH) ? now + G.run_seconds : EMU_NEVER;
        sqlite3_reset(up);
        sqlite3_bind_int(up, 1, host);
        sqlite3_bind_int(up, 2, beh);
        sqlite3_bind_double(up, 3, now);
        sqlite3_bind_double(up, 4, now + delay);
        sqlite3_bind_int(up, 5, run_state);
        sqlite3_bind_double(up, 6, report);
        sqlite3_bind_int64(up, 7, iid);
        db_run(up);
        sqlite3_reset(jt);
        sqlite3_bind_double(jt, 1, now + delay);
        sqlite3_bind_int64(jt, 2, mod_now());
        sqlite3_bind_int64(jt, 3, jid);
        db_run(jt);
        sent++;
    }
    sqlite3_finalize(st);
    sqlite3_finalize(hosts_of);
    sqlite3_finalize(up);
    sqlite3_finalize(jt);
    free(load);
    free(used);
    return sent;
}

/* ---------------- running apps (outside the database lock) ---------------- */

typedef struct {
    long long iid;
    char *inst_name, *kind, *cmdline, *slot;
    char **in_src, **in_open, **out_open;
    int nin, nout, behaviour;
    double delay_bound;
    pid_t pid;
    double t0, elapsed, cpu;
    int status;         /* wait status */
    int spawn_failed;
    int worker;         /* slot directory index while running */
    int index;          /* position in the batch of runs */
    /* collected right after the process ends (the slot is then reused) */
    int exit_code;
    char *err_text;
    char **out_names;
    char *sig;
} run_item;

static void run_item_free(run_item *r)
{
    free(r->inst_name);
    free(r->kind);
    free(r->cmdline);
    free(r->slot);
    for (int i = 0; i < r->nin; i++) {
        free(r->in_src[i]);
        free(r->in_open[i]);
    }
    for (int i = 0; i < r->nout; i++)
        free(r->out_open[i]);
    free(r->in_src);
    free(r->in_open);
    free(r->out_open);
    if (r->out_names)
        for (int i = 0; i < r->nout; i++)
            free(r->out_names[i]);
    free(r->out_names);
    free(r->err_text);
    free(r->sig);
}

static int load_run_items(run_item *items, int max)
{
    sqlite3_stmt *st = db_prep("SELECT i.id, i.name, j.app, j.command_line, i.behaviour, j.delay_bound, "
                               "j.id FROM instances i JOIN jobs j ON j.id = i.job_id "
                               "WHERE i.run_state = 1 ORDER BY i.id LIMIT ?");
    sqlite3_bind_int(st, 1, max);
    sqlite3_stmt *in = db_prep("SELECT phys_name FROM job_inputs WHERE job_id = ? ORDER BY idx");
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        run_item *r = &items[n];
        memset(r, 0, sizeof *r);
        const emu_app *app = app_find((const char *)sqlite3_column_text(st, 2));
        r->iid = sqlite3_column_int64(st, 0);
        r->inst_name = xstrdup((const char *)sqlite3_column_text(st, 1));
        r->kind = xstrdup(app ? app->kind : "uppercase");
        r->cmdline = xstrdup((const char *)sqlite3_column_text(st, 3));
        r->behaviour = sqlite3_column_int(st, 4);
        r->delay_bound = sqlite3_column_double(st, 5);
        int nin = app ? app->ninputs : 0;
        r->in_src = xcalloc((size_t)nin + 1, sizeof(char *));
        r->in_open = xcalloc((size_t)nin + 1, sizeof(char *));
        sqlite3_reset(in);
        sqlite3_bind_int64(in, 1, sqlite3_column_int64(st, 6));
        while (r->nin < nin && sqlite3_step(in) == SQLITE_ROW) {
            r->in_src[r->nin] = xstrdup((const char *)sqlite3_column_text(in, 0));
            r->in_open[r->nin] = xstrdup(app->inputs[r->nin]);
            r->nin++;
        }
        int nout = app ? app->noutputs : 0;
        r->out_open = xcalloc((size_t)nout + 1, sizeof(char *));
        for (int k = 0; k < nout; k++)
            r->out_open[r->nout++] = xstrdup(app->outputs[k]);
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_finalize(in);
    return n;
}


/*
 * Split a BOINC command line in place like the BOINC client does before it
 * starts an app: white space separates arguments, and an argument that
 * begins with a single or double quote runs to the matching quote (the
 * quotes are dropped).  Returns the number of arguments stored (at most max).
 */
static size_t split_command_line(char *p, char **out, size_t max)
{
    size_t n = 0;
    while (*p != '\0' && n < max) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (*p == '\0')
            break;
        if (*p == '\'' || *p == '"') {
            char q = *p++;
            out[n++] = p;
            while (*p != '\0' && *p != q)
                p++;
        } else {
            out[n++] = p;
            while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                p++;
        }
        if (*p != '\0')
            *p++ = '\0';
    }
    return n;
}

static int spawn_app(run_item *r)
{
    /* One slot directory per parallel worker, reused: creating and
     * deleting a directory per run costs more than the run on ext4. */
    r->slot = xasprintf("%s/w%d", G.slot_dir, r->worker);
    if (mkdir_p(r->slot) != 0)
        return -1;
    for (int i = 0; i < r->nin; i++) {
        char *from = xasprintf("%s/%s", G.download_dir, r->in_src[i]);
        char *to = xasprintf("%s/%s", r->slot, r->in_open[i]);
        int rc = copy_or_link(from, to);
        free(from);
        free(to);
        if (rc != 0)
            return -1;
    }
    /* argv: fixed options, then the job's command line split the way the
     * BOINC client splits it (no shell is involved) */
    size_t cap = 16 + 2 * (size_t)(r->nin + r->nout) + strlen(r->cmdline);
    char **argv = xcalloc(cap, sizeof(char *));
    size_t a = 0;
    argv[a++] = G.self_exe;
    argv[a++] = "--run-app";
    argv[a++] = r->kind;
    argv[a++] = "--slot";
    argv[a++] = r->slot;
    argv[a++] = "--behaviour";
    argv[a++] = (char *)behaviour_names[r->behaviour];
    for (int i = 0; i < r->nin; i++) {
        argv[a++] = "--in";
        argv[a++] = r->in_open[i];
    }
    for (int i = 0; i < r->nout; i++) {
        argv[a++] = "--out";
        argv[a++] = r->out_open[i];
    }
    argv[a++] = "--";
    char *cl = xstrdup(r->cmdline);
    a += split_command_line(cl, argv + a, cap - a - 1);
    argv[a] = NULL;
    char *errpath = xasprintf("%s/stderr.txt", r->slot);
    if (!G.spawn_exec && !G.spawn_direct && apprunner_available()) {
        /* usual path: the small helper process forks the run */
        r->t0 = wall_now();
        int rc = apprunner_submit((uint32_t)r->index, errpath, argv);
        free(errpath);
        free(cl);
        free(argv);
        if (rc != 0)
            return -1;
        r->pid = -1;
        return 0;
    }
    if (!G.spawn_exec) {
        /* Fast path: fork and run the app code in the child, no exec.
         * glibc keeps malloc and stdio usable in the child of a threaded
         * process; the child touches nothing else of the server (no
         * SQLite, no locks, no logging) and leaves with _exit(). */
        r->t0 = wall_now();
        pid_t pid = fork();
        if (pid == 0) {
            sigset_t none;
            sigemptyset(&none);
            pthread_sigmask(SIG_SETMASK, &none, NULL);
            int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY);
            int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                _exit(255);
            int argc_child = (int)a;
            _exit(run_app_main(argc_child, argv));
        }
        free(errpath);
        free(cl);
        free(argv);
        if (pid < 0)
            return -1;
        r->pid = pid;
        return 0;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    /* the server blocks SIGTERM/SIGINT (sigwait); the app must not */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    r->t0 = wall_now();
    int rc = posix_spawn(&r->pid, G.self_exe, &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(errpath);
    free(cl);
    free(argv);
    return rc == 0 ? 0 : -1;
}

static void collect_run(run_item *r);

static void run_items(run_item *items, int n)
{
    int next = 0, running = 0;
    int par = G.parallel > 0 ? G.parallel : 4;
    if (par > 64)
        par = 64;
    unsigned char busy[64] = { 0 };
    while (next < n || running > 0) {
        while (next < n && running < par) {
            run_item *r = &items[next++];
            int w = 0;
            while (busy[w])
                w++;
            r->worker = w;
            r->index = next - 1;
            if (spawn_app(r) != 0) {
                r->spawn_failed = 1;
                log_warn("boinc_emu: cannot start app for %s", r->inst_name);
                collect_run(r);
                continue;
            }
            busy[w] = 1;
            running++;
        }
        if (running == 0)
            continue;
        if (!G.spawn_exec && !G.spawn_direct && apprunner_available()) {
            run_done d;
            if (apprunner_wait(&d) != 0 || d.id >= (uint32_t)next) {
                log_error("boinc_emu: the app runner helper is gone");
                for (int i = 0; i < n; i++)
                    if (items[i].sig == NULL) {
                        items[i].spawn_failed = 1;
                        collect_run(&items[i]);
                    }
                return;
            }
            run_item *r = &items[d.id];
            r->status = d.status;
            r->elapsed = d.elapsed;
            r->cpu = d.cpu;
            collect_run(r);
            busy[r->worker] = 0;
            running--;
            continue;
        }
        int status;
        struct rusage ru;
        pid_t pid = wait4(-1, &status, 0, &ru);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            log_error("boinc_emu: wait4 failed: %s", strerror(errno));
            for (int i = 0; i < next; i++)
                if (items[i].pid > 0 && busy[items[i].worker] && items[i].sig == NULL) {
                    items[i].spawn_failed = 1;
                    collect_run(&items[i]);
                }
            for (int i = next; i < n; i++) {
                items[i].spawn_failed = 1;
                collect_run(&items[i]);
            }
            return;
        }
        for (int i = 0; i < next; i++) {
            if (items[i].pid == pid && items[i].sig == NULL) {
                items[i].status = status;
                items[i].elapsed = wall_now() - items[i].t0;
                items[i].cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
                collect_run(&items[i]);
                busy[items[i].worker] = 0;
                running--;
                break;
            }
        }
    }
}

/* Wrap the app's stderr the way the BOINC client reports it. */
static char *client_stderr(const char *app_err, int exit_code, int failed)
{
    strbuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "\n<core_client_version>7.20.5</core_client_version>\n<![CDATA[\n");
    if (failed)
        strbuf_printf(&sb, "<message>\nprocess exited with code %d (0x%x, %d)</message>\n",
                      exit_code, (unsigned)exit_code, (~0xff) | exit_code);
    strbuf_printf(&sb, "<stderr_txt>\n%s\n</stderr_txt>\n]]>\n", app_err);
    char *s = strbuf_detach(&sb);
    return s ? s : xstrdup("");
}

/* Empty a worker's slot but keep stderr.txt (truncated by the next run):
 * fewer inodes created and deleted. */
static void clean_slot(const char *slot)
{
    DIR *d = opendir(slot);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, "stderr.txt") == 0)
            continue;
        char *p = xasprintf("%s/%s", slot, e->d_name);
        remove_tree(p);
        free(p);
    }
    closedir(d);
}

/* After the process ended: exit code, stderr, outputs moved to the upload
 * area under BOINC-style names, output signature for the validator. */
static void collect_run(run_item *r)
{
    int exit_code;
    if (r->spawn_failed)
        exit_code = 255;
    else if (WIFEXITED(r->status))
        exit_code = WEXITSTATUS(r->status);
    else
        exit_code = 128 + (WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0);
    r->out_names = xcalloc((size_t)r->nout + 1, sizeof(char *));
    if (r->slot == NULL) {
        r->exit_code = exit_code;
        r->err_text = xstrdup("boinc_emu: could not start the app\n");
        r->sig = xstrdup("");
        return;
    }
    char *errpath = xasprintf("%s/stderr.txt", r->slot);
    size_t elen = 0;
    if (read_file(errpath, &r->err_text, &elen) != 0)
        r->err_text = xstrdup("");
    free(errpath);
    const char *times = strstr(r->err_text, EMU_TIMES_LINE);
    double e, c;
    if (times != NULL &&
        sscanf(times + strlen(EMU_TIMES_LINE), "%lf %lf", &e, &c) == 2) {
        r->elapsed = e;
        r->cpu = c;
    }
    strbuf sig = STRBUF_INIT;
    for (int k = 0; exit_code == 0 && k < r->nout; k++) {
        char rnd[11];
        if (random_hex(rnd, 10) != 0)
            snprintf(rnd, sizeof rnd, "%lld", r->iid);
        char *from = xasprintf("%s/%s", r->slot, r->out_open[k]);
        r->out_names[k] = xasprintf("%s_r%s_%d", r->inst_name, rnd, k);
        char *to = xasprintf("%s/%s", G.upload_dir, r->out_names[k]);
        char *data;
        size_t len;
        if (read_file(from, &data, &len) == 0) {
            char md5[33];
            md5_hex(data, len, md5);
            strbuf_puts(&sig, md5);
            free(data);
        }
        if (rename(from, to) != 0)
            exit_code = 254;     /* an output file is missing */
        free(from);
        free(to);
    }
    r->exit_code = exit_code;
    r->sig = strbuf_detach(&sig);
    if (r->sig == NULL)
        r->sig = xstrdup("");
    clean_slot(r->slot);
}

static void store_run_result(run_item *r, double now)
{
    int exit_code = r->exit_code;
    char *wrapped = client_stderr(r->err_text, exit_code, exit_code != 0);
    sqlite3_stmt *st = db_prep("UPDATE instances SET run_state = 2, exit_status = ?, elapsed = ?, cpu = ?, "
                               "stderr_out = ?, output_sig = ?, report_time = ? WHERE id = ?");
    sqlite3_bind_int(st, 1, exit_code);
    /* the client reports times with 6 decimals */
    sqlite3_bind_double(st, 2, round(r->elapsed * 1e6) / 1e6);
    sqlite3_bind_double(st, 3, round(r->cpu * 1e6) / 1e6);
    sqlite3_bind_text(st, 4, wrapped, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, r->sig, -1, SQLITE_TRANSIENT);
    double delay = r->behaviour == BEH_SLOW ? r->delay_bound / 2 : G.run_seconds;
    sqlite3_bind_double(st, 6, now + delay);
    sqlite3_bind_int64(st, 7, r->iid);
    db_run(st);
    sqlite3_finalize(st);
    if (exit_code == 0) {
        st = db_prep("INSERT OR REPLACE INTO instance_outputs(instance_id, idx, file_name) VALUES(?,?,?)");
        for (int k = 0; k < r->nout; k++) {
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, r->iid);
            sqlite3_bind_int(st, 2, k);
            sqlite3_bind_text(st, 3, r->out_names[k], -1, SQLITE_TRANSIENT);
            db_run(st);
        }
        sqlite3_finalize(st);
    }
    free(wrapped);
}

#define RUN_CHUNK 64

/* App runs left to the current run?max_runs=N control call; -1: no limit.
 * Read and written under pass_lock only (runner_pass runs under it). */
static long long run_budget = -1;

/* Runs every instance waiting for its app (at most run_budget of them);
 * the lock is released while the processes run so that HTTP requests are
 * not held up. */
static int runner_pass(void)
{
    int total = 0;
    run_item *items = xcalloc(RUN_CHUNK, sizeof *items);
    for (;;) {
        int want = run_budget >= 0 && run_budget < RUN_CHUNK ? (int)run_budget : RUN_CHUNK;
        int n = want > 0 ? load_run_items(items, want) : 0;
        if (n == 0)
            break;
        if (run_budget >= 0)
            run_budget -= n;
        /* claim them so nothing else loads them meanwhile */
        sqlite3_stmt *st = db_prep("UPDATE instances SET run_state = 3 WHERE id = ?");
        for (int i = 0; i < n; i++) {
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, items[i].iid);
            db_run(st);
        }
        sqlite3_finalize(st);
        emu_unlock();
        run_items(items, n);
        emu_lock();
        double now = emu_now();
        db_begin();
        for (int i = 0; i < n; i++) {
            store_run_result(&items[i], now);
            run_item_free(&items[i]);
        }
        db_commit();
        total += n;
    }
    free(items);
    return total;
}

/* ---------------- driving ---------------- */

static int pass_once(void)
{
    int changes = 0;
    db_begin();
    changes += expiry_pass();
    changes += reports_pass();
    changes += transitioner_pass();
    changes += send_pass();
    db_commit();
    changes += runner_pass();
    db_begin();
    changes += reports_pass();
    changes += validator_pass();
    changes += transitioner_pass();
    changes += assimilator_pass();
    db_commit();
    return changes;
}

/* Caller holds pass_lock (not the database lock). */
void backend_run_until_quiet(void)
{
    emu_lock();
    for (int i = 0; i < 10000 && !G.stopping; i++)
        if (pass_once() == 0)
            break;
    emu_unlock();
}

static double next_event_after(double now)
{
    double next = EMU_NEVER;
    const char *qs[] = {
        "SELECT MIN(transition_time) FROM jobs WHERE transition_time > ?",
        "SELECT MIN(report_time) FROM instances WHERE server_state = 4 AND run_state = 2 AND report_time > ?",
        "SELECT MIN(expire_time) FROM batches WHERE state != 4 AND expire_time > ?",
    };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        sqlite3_stmt *st = db_prep(qs[i]);
        sqlite3_bind_double(st, 1, now);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
            double v = sqlite3_column_double(st, 0);
            if (v < next)
                next = v;
        }
        sqlite3_finalize(st);
    }
    return next;
}

static void save_vnow(void)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.6f", G.vnow);
    meta_set("vnow", buf);
}

/* A run?max_runs call is over once its budget is spent and every run it
 * made has been reported (and so validated and assimilated). */
static int budget_spent(void)
{
    return run_budget == 0 &&
           db_int("SELECT COUNT(*) FROM instances WHERE server_state = 4 AND run_state = 2", 0, 0) == 0;
}

static void backend_advance_locked(double seconds, int stop_when_done);

double backend_advance(double seconds, int stop_when_done, long long max_runs)
{
    pthread_mutex_lock(&G.pass_lock);
    run_budget = max_runs >= 0 ? max_runs : -1;
    backend_advance_locked(seconds, stop_when_done);
    run_budget = -1;
    emu_lock();
    double now = emu_now();
    emu_unlock();
    pthread_mutex_unlock(&G.pass_lock);
    return now;
}

/* Caller holds pass_lock. */
static void backend_advance_locked(double seconds, int stop_when_done)
{
    if (!G.manual_clock) {
        /* real clock: time is not ours to move; run passes, and for "run"
         * wait (in real time) until the jobs are done */
        double end = wall_now() + seconds;
        for (;;) {
            backend_run_until_quiet();
            emu_lock();
            long long left = unfinished_jobs();
            int spent = budget_spent();
            emu_unlock();
            if (!stop_when_done || left == 0 || spent || wall_now() >= end || G.stopping)
                break;
            struct timespec ts = { 0, 50 * 1000000L };
            nanosleep(&ts, NULL);
        }
        return;
    }
    emu_lock();
    double target = G.vnow + (seconds > 0 ? seconds : 0);
    emu_unlock();
    backend_run_until_quiet();
    for (;;) {
        emu_lock();
        long long left = stop_when_done ? unfinished_jobs() : 1;
        double next = next_event_after(G.vnow);
        int at_end = G.vnow >= target;
        if (left == 0 || at_end || budget_spent() || G.stopping) {   /* SIGTERM: stop early */
            emu_unlock();
            break;
        }
        G.vnow = next < target ? next : target;
        save_vnow();
        emu_unlock();
        backend_run_until_quiet();
    }
    emu_lock();
    save_vnow();
    emu_unlock();
}

void *backend_real_clock_thread(void *arg)
{
    (void)arg;
    while (!G.stopping) {
        pthread_mutex_lock(&G.pass_lock);
        backend_run_until_quiet();
        pthread_mutex_unlock(&G.pass_lock);
        struct timespec ts = { 0, 100 * 1000000L };
        nanosleep(&ts, NULL);
    }
    return NULL;
}
