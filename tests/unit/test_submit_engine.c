/*
 * test_submit_engine.c - the submit engine (src/submit/) run through
 * exec_submit() with a scripted BOINC client (scripted_client.h), a real
 * journal and real input files:
 *
 *   the matrix   every resume point x every step x every outcome;
 *   transitions  engine_transition_ok() on every (from, to) pair, and an
 *                illegal transition refused (internal error, no write);
 *   injection    the contexts a submit makes for other threads (helper
 *                upload lanes, a run past its deadline) get their client
 *                from the injected source too.
 *
 * One cell of the matrix:
 *   1. an earlier run leaves the batch at the resume point: faults make it
 *      fail there (FAILED with that resume state); in the "crash at"
 *      variant the row is then set to the state itself, which is what a
 *      SIGKILL at that point leaves;
 *   2. the run under test, with one fault on the first call of one step
 *      (an "always" fault: on every call);
 *   3. a re-issue without faults.
 * Checked after 2: the result (NULL or the exact error token), the row's
 * state and resume state (and error), how many times each side-effecting
 * RPC was sent, whether the faulted safe query ran.  After every run: no
 * side-effecting RPC sent while its last outcome, or a *_sent state the
 * run started from, was unresolved (its safe query comes first), no
 * violation in the server model (nothing done twice), no other RPC.  After
 * 3: submitted, one batch with its three jobs, the input the server had
 * never uploaded, the two others uploaded exactly once.  After the cell:
 * the budget of kept input bytes is whole again.
 *
 * Expected values come from small tables (steps, resume points) and one
 * rule (expect()); settle pauses run on the test clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "scripted_client.h"

#include "base/files.h"
#include "base/log.h"
#include "exec/exec_ctx.h"
#include "server/shared.h"
#include "exec/exec_cmds.h"
#include "journal/journal_batches.h"
#include "journal/journal_files.h"
#include "submit/engine.h"
#include "submit/submit.h"
#include "submit/submit_inputs.h"
#include "wire/gahp_text.h"
#include "wire/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define URL "http://127.0.0.1:9/scripted/"
#define AUTH "scripted-authenticator"

static char dir[] = "/tmp/test_submit_engine.XXXXXX";
static char input[SC_NFILES][300];      /* a.txt (on the server), b.txt, c.txt */
static char phys[SC_NFILES][64];
static int failures;

/* Record a failed check of a cell (the matrix goes on; the test fails). */
#define CHECK(cell, cond, ...)                                         \
    do {                                                               \
        if (!(cond) && ++failures <= 60) {                             \
            printf("FAIL [%s]: ", (cell));                             \
            printf(__VA_ARGS__);                                       \
            printf("\n");                                              \
        }                                                              \
    } while (0)

/* ---- the fixture: a journal, the request, the server model --------------- */

typedef struct {
    char db[320];
    journal *j;             /* the test's own connection */
    gahp_request *req;
    sc_world w;
    exec_client_source clients;
    exec_shared *shared;    /* the executors' shared state, as a server's */
} fixture;

static void remove_db(const char *db)
{
    const char *suffix[] = { "", "-wal", "-shm", ".lock" };
    for (size_t i = 0; i < 4; i++) {
        char p[400];
        snprintf(p, sizeof p, "%s%s", db, suffix[i]);
        unlink(p);
    }
}

/* BOINC_SUBMIT of batch b1: jobs j1, j2, j3, one input each. */
static gahp_request *submit_request(void)
{
    char *argv[] = { "BOINC_SUBMIT", "1", SC_BATCH, SC_APP, "3",
                     "j1", "0", "1", input[0], "in",
                     "j2", "0", "1", input[1], "in",
                     "j3", "0", "1", input[2], "in" };
    gahp_request *req = NULL;
    const char *why = NULL;
    if (gahp_request_parse(GAHP_CMD_SUBMIT, gahp_parse_submit, argv,
                           sizeof argv / sizeof argv[0], &req, &why) != 0)
        fail_msg("submit request: %s", why);
    req->project_url = strdup(URL);
    req->authenticator = strdup(AUTH);
    return req;
}

static void fixture_open(fixture *f)
{
    snprintf(f->db, sizeof f->db, "%s/j.db", dir);
    remove_db(f->db);
    journal_options o = { f->db, 0, 1000, 1 };
    char *err = NULL;
    f->j = journal_open(&o, &err);
    if (f->j == NULL)
        fail_msg("journal_open: %s", err ? err : "?");
    long long session = 0, row = 0;
    f->req = submit_request();
    assert_int_equal(journal_session_begin(f->j, "test", &session), 0);
    assert_int_equal(journal_project_id(f->j, URL, AUTH, &f->req->project_id), 0);
    assert_int_equal(journal_begin(f->j), 0);
    assert_int_equal(journal_request_insert(f->j, session, 1, "BOINC_SUBMIT",
                                            f->req->args_text, f->req->project_id,
                                            journal_now(), &row), 0);
    assert_int_equal(journal_commit(f->j), 0);
    f->req->journal_id = row;
    const char *names[SC_NFILES] = { phys[0], phys[1], phys[2] };
    sc_world_init(&f->w, names);
    f->clients = sc_source(&f->w);
    f->shared = shared_new();
    assert_non_null(f->shared);
}

static void fixture_close(fixture *f)
{
    shared_free(f->shared);
    journal_close(f->j);
    gahp_request_free(f->req);
    sc_world_destroy(&f->w);
    remove_db(f->db);
}

/* The batch row (found = 0: none).  Free with journal_batch_free. */
static int read_row(fixture *f, journal_batch *b)
{
    int found = 0;
    assert_int_equal(journal_batch_find(f->j, f->req->project_id, SC_BATCH, b, &found), 0);
    return found;
}

/* The side-effecting RPCs whose outcome the journal leaves open: a
 * *_sent state of the batch or of one of its files. */
static unsigned pending_in_journal(fixture *f)
{
    journal_batch b;
    if (!read_row(f, &b))
        return 0;
    unsigned bits = 0;
    batch_state at = b.state == BATCH_FAILED ? b.resume_state : b.state;
    if (at == BATCH_CREATE_SENT)
        bits |= BIT(K_CREATE);
    if (at == BATCH_SUBMIT_SENT)
        bits |= BIT(K_SUBMIT);
    journal_batch_file *files = NULL;
    size_t n = 0;
    assert_int_equal(journal_batch_files_list(f->j, b.id, NULL, &files, &n), 0);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(files[i].state, BFILE_QUERY_SENT) == 0)
            bits |= BIT(K_QUERY_FILES);
        if (strcmp(files[i].state, BFILE_UPLOAD_SENT) == 0)
            bits |= BIT(K_UPLOAD);
    }
    journal_batch_files_free(files, n);
    journal_batch_free(&b);
    return bits;
}

static int side_effect(sc_kind k)
{
    return k == K_CREATE || k == K_QUERY_FILES || k == K_UPLOAD || k == K_SUBMIT;
}

/* The safe query that resolves an unknown outcome of each side effect. */
static const sc_kind resolver_of[K_COUNT] = {
    [K_CREATE] = K_QUERY_BATCHES, [K_QUERY_FILES] = K_QUERY_FILES_SAFE,
    [K_UPLOAD] = K_QUERY_FILES_SAFE, [K_SUBMIT] = K_QUERY_BATCH,
};

/* No side-effecting RPC was sent while its last outcome (or a *_sent
 * state the run started from: pending) was unknown. */
static void check_resolved_first(const char *cell, const sc_world *w, unsigned pending)
{
    CHECK(cell, w->ncalls < SC_MAX_CALLS, "more than %d calls", SC_MAX_CALLS);
    for (size_t i = 0; i < w->ncalls; i++) {
        sc_kind k = w->calls[i].kind;
        for (sc_kind s = 0; s < K_COUNT; s++)
            if (side_effect(s) && resolver_of[s] == k && w->calls[i].o == O_DONE)
                pending &= ~BIT(s);
        if (!side_effect(k))
            continue;
        CHECK(cell, !(pending & BIT(k)), "%s sent (call %zu) before its unknown outcome "
              "was resolved by %s", sc_kind_name[k], i + 1, sc_kind_name[resolver_of[k]]);
        if (sc_uncertain(w->calls[i].o))
            pending |= BIT(k);
    }
}

/* TEST_SUBMIT_ENGINE_TRACE=TEXT prints the calls of each run of the cells
 * whose name contains TEXT (e.g. "crash at created | upload_files"). */
static void trace_calls(const char *cell, const sc_world *w, const char *result)
{
    const char *want = getenv("TEST_SUBMIT_ENGINE_TRACE");
    if (want == NULL || strstr(cell, want) == NULL)
        return;
    printf("[%s] run:", cell);
    for (size_t i = 0; i < w->ncalls; i++)
        printf(" %s%s%s", sc_kind_name[w->calls[i].kind], w->calls[i].o ? "=" : "",
               w->calls[i].o ? sc_outcome_name[w->calls[i].o] : "");
    printf(" -> %s\n", result);
}

/* One BOINC_SUBMIT of the request under faults, as a worker runs it
 * (cfg NULL: one upload lane, no deadline); checked for what every run
 * must hold.  Returns the result (malloc'd). */
static char *run(fixture *f, const sc_fault *faults, size_t n, const gahp_config *cfg,
                 const char *cell)
{
    unsigned pending = pending_in_journal(f);
    sc_world_script(&f->w, faults, n);
    f->w.ncalls = 0;
    exec_ctx ctx;
    char *err = NULL;
    if (exec_ctx_open_with(&ctx, f->shared, cfg, f->j, 0, &f->clients, &err) != 0)
        fail_msg("exec_ctx_open_with: %s", err ? err : "?");
    char *result = exec_submit(&ctx, f->req);
    exec_ctx_close(&ctx);
    assert_non_null(result);
    trace_calls(cell, &f->w, result);
    check_resolved_first(cell, &f->w, pending);
    CHECK(cell, f->w.violations == 0, "the server saw %d violation(s), first: %s",
          f->w.violations, f->w.violation);
    int others = 0;
    for (sc_kind k = K_FIRST_NOT_SUBMIT; k <= K_OTHER; k++)
        others += f->w.seen[k];
    CHECK(cell, others == 0, "an RPC a submit never makes");
    return result;
}

/* ---- the matrix: steps, outcomes, resume points ---------------------------- */

typedef struct {
    sc_kind kind;
    const char *what;           /* how the error result names it */
    batch_state resume;         /* failed: side effect refused or not sent: the
                                   state to resume from; safe query: the
                                   earliest state it runs at (fails in place) */
    int unknown_sends;          /* sent when the first outcome is unknown */
    int always_sends;           /* sent when every outcome is unknown ... */
    const char *always_error;   /* ... and the error then ("": the RPC's own,
                                   NULL: no error, it recovers) */
    batch_state always_resume;
} step;

static const step steps[] = {
    { K_CREATE, "create_batch", BATCH_HASHED, 2, 3, "", BATCH_CREATE_SENT },
    { K_QUERY_FILES, "query_files", BATCH_CREATED, 1, 1, NULL, 0 },
    { K_UPLOAD, "upload_files", BATCH_FILES_KNOWN, 2, 3,
      "upload_files: gave up after repeated unknown outcomes", BATCH_FILES_KNOWN },
    { K_SUBMIT, "submit_batch", BATCH_UPLOADED, 2, 3, "", BATCH_SUBMIT_SENT },
    { K_TEMPLATES, "get_templates", BATCH_HASHED, 0, 0, NULL, 0 },
    { K_QUERY_BATCHES, "query_batches (resolving create_batch)", BATCH_CREATE_SENT, 0, 0,
      NULL, 0 },
    { K_QUERY_FILES_SAFE, "query_files", BATCH_CREATED, 0, 0, NULL, 0 },
    { K_QUERY_BATCH, "query_batch (resolving submit_batch)", BATCH_SUBMIT_SENT, 0, 0,
      NULL, 0 },
};

static const sc_outcome side_outcomes[] = {
    O_DONE, O_NOT_SENT, O_REFUSED, O_UNK_ACTED, O_UNK_LATE, O_UNKNOWN, O_ALWAYS_UNKNOWN,
    O_NOMEM_BEFORE, O_NOMEM_REPLY,
    O_LIMIT,                    /* upload_files only */
};
static const sc_outcome safe_outcomes[] = {
    O_DONE, O_NOT_SENT, O_REFUSED, O_UNKNOWN, O_NOMEM_REPLY,
};

typedef enum {
    E_NONE,         /* no earlier run */
    E_NO_INPUT,     /* an input was missing: the row stays new */
    E_FAULTS,       /* the faults make it fail at `at` (or crash there) */
    E_COMPLETE      /* it ran to the end */
} earlier_run;

typedef struct {
    const char *name;
    earlier_run earlier;
    sc_fault faults[2];
    batch_state at;             /* where the run under test starts */
    unsigned sends;             /* what it calls when nothing fails */
} resume_point;

#define F1(k, o) { k, 1, o }
#define SENDS_AFTER_CREATE (BIT(K_QUERY_FILES) | BIT(K_UPLOAD) | BIT(K_SUBMIT))
#define SENDS_ALL (BIT(K_TEMPLATES) | BIT(K_CREATE) | SENDS_AFTER_CREATE)

static const resume_point points[] = {
    { "fresh", E_NONE, { { 0 } }, BATCH_NEW, SENDS_ALL },
    { "new (an input was missing)", E_NO_INPUT, { { 0 } }, BATCH_NEW, SENDS_ALL },
    { "hashed", E_FAULTS, { F1(K_TEMPLATES, O_NOT_SENT) }, BATCH_HASHED, SENDS_ALL },
    { "create_sent, batch made", E_FAULTS,
      { F1(K_CREATE, O_UNK_ACTED), F1(K_QUERY_BATCHES, O_REFUSED) }, BATCH_CREATE_SENT,
      BIT(K_TEMPLATES) | BIT(K_QUERY_BATCHES) | SENDS_AFTER_CREATE },
    { "create_sent, no batch", E_FAULTS,
      { F1(K_CREATE, O_UNKNOWN), F1(K_QUERY_BATCHES, O_REFUSED) }, BATCH_CREATE_SENT,
      BIT(K_QUERY_BATCHES) | SENDS_ALL },
    { "created", E_FAULTS, { F1(K_QUERY_FILES, O_NOT_SENT) }, BATCH_CREATED,
      SENDS_AFTER_CREATE },
    { "created, files query_sent", E_FAULTS,
      { F1(K_QUERY_FILES, O_UNK_ACTED), F1(K_QUERY_FILES_SAFE, O_REFUSED) }, BATCH_CREATED,
      BIT(K_QUERY_FILES_SAFE) | BIT(K_UPLOAD) | BIT(K_SUBMIT) },
    /* the files an earlier phase found absent are asked about again (another
     * batch may have uploaded them since: submit_files.c) */
    { "files_known", E_FAULTS, { F1(K_UPLOAD, O_NOT_SENT) }, BATCH_FILES_KNOWN,
      SENDS_AFTER_CREATE },
    { "files_known, upload_sent, uploaded", E_FAULTS,
      { F1(K_UPLOAD, O_UNK_ACTED), F1(K_QUERY_FILES_SAFE, O_REFUSED) }, BATCH_FILES_KNOWN,
      BIT(K_QUERY_FILES_SAFE) | BIT(K_SUBMIT) },
    { "files_known, upload_sent, not uploaded", E_FAULTS,
      { F1(K_UPLOAD, O_UNKNOWN), F1(K_QUERY_FILES_SAFE, O_REFUSED) }, BATCH_FILES_KNOWN,
      BIT(K_QUERY_FILES_SAFE) | BIT(K_UPLOAD) | BIT(K_SUBMIT) },
    { "uploaded", E_FAULTS, { F1(K_SUBMIT, O_NOT_SENT) }, BATCH_UPLOADED, BIT(K_SUBMIT) },
    { "submit_sent, jobs made", E_FAULTS,
      { F1(K_SUBMIT, O_UNK_ACTED), F1(K_QUERY_BATCH, O_REFUSED) }, BATCH_SUBMIT_SENT,
      BIT(K_QUERY_BATCH) },
    { "submit_sent, no jobs", E_FAULTS,
      { F1(K_SUBMIT, O_UNKNOWN), F1(K_QUERY_BATCH, O_REFUSED) }, BATCH_SUBMIT_SENT,
      BIT(K_QUERY_BATCH) | BIT(K_SUBMIT) },
    { "submitted", E_COMPLETE, { { 0 } }, BATCH_SUBMITTED, 0 },
};

typedef struct {
    int ok;                     /* else: failed, to resume at `resume` */
    batch_state resume;
    char error[300];            /* the error (unescaped) */
    int sends[K_COUNT];         /* of each side-effecting RPC */
} expectation;

static void expect_failure(expectation *e, const step *s, sc_outcome o, batch_state resume,
                           const char *text)
{
    e->ok = 0;
    e->resume = resume;
    if (text != NULL && *text != '\0')
        snprintf(e->error, sizeof e->error, "%s", text);
    else
        snprintf(e->error, sizeof e->error, "%s failed: %s: %s", s->what,
                 boinc_code_name(sc_failure_of[o].code), sc_failure_of[o].msg);
    for (int k = (int)s->kind + 1; k < K_COUNT; k++)
        e->sends[k] = 0;        /* nothing after the failed step */
}

/* What a run from p with outcome o on the first call of s must give. */
static void expect(const resume_point *p, const step *s, sc_outcome o, expectation *e)
{
    memset(e, 0, sizeof *e);
    e->ok = 1;
    for (int k = 0; k < K_COUNT; k++)
        e->sends[k] = (p->sends & BIT(k)) != 0;
    if (!(p->sends & BIT(s->kind)) || o == O_DONE)
        return;                 /* the step does not run: as if nothing failed */
    if (!side_effect(s->kind)) {
        /* a safe query that fails fails the submit where it runs */
        expect_failure(e, s, o, p->at > s->resume ? p->at : s->resume, NULL);
        return;
    }
    switch (o) {
    case O_NOT_SENT:
    case O_REFUSED:
    case O_NOMEM_BEFORE:
        expect_failure(e, s, o, s->resume, NULL);
        break;
    case O_UNKNOWN:             /* resolved: not done, sent again */
        e->sends[s->kind] = s->unknown_sends;
        break;
    case O_ALWAYS_UNKNOWN:
        e->sends[s->kind] = s->always_sends;
        if (s->always_error != NULL)
            expect_failure(e, s, o, s->always_resume, s->always_error);
        break;
    case O_LIMIT:               /* refused; one file per request from then on */
        e->sends[s->kind] = 3;
        break;
    default:                    /* acted (maybe late), reply lost: resolved */
        break;
    }
}

/* Run the earlier run of resume point p (crash: then set the row to the
 * state a crash there leaves).  0, or -1 when it did not get there. */
static int run_earlier(fixture *f, const resume_point *p, int crash, const char *cell)
{
    char *result = NULL, hidden[320];
    if (p->earlier == E_NONE)
        return 0;
    if (p->earlier == E_NO_INPUT) {
        snprintf(hidden, sizeof hidden, "%s.hidden", input[2]);
        assert_int_equal(rename(input[2], hidden), 0);
        result = run(f, NULL, 0, NULL, cell);
        assert_int_equal(rename(hidden, input[2]), 0);
    } else {
        result = run(f, p->faults, p->earlier == E_FAULTS ? 2 : 0, NULL, cell);
    }
    free(result);
    journal_batch b;
    int found = read_row(f, &b);
    int want_state = p->earlier == E_FAULTS ? BATCH_FAILED : (int)p->at;
    int ok = found && (int)b.state == want_state &&
             (b.state != BATCH_FAILED || b.resume_state == p->at);
    CHECK(cell, ok, "the earlier run left state %d/%d, not the resume point",
          found ? (int)b.state : -1, found ? (int)b.resume_state : -1);
    if (ok && crash)
        assert_int_equal(journal_batch_set_state(f->j, b.id, p->at, 0), 0);
    if (found)
        journal_batch_free(&b);
    return ok ? 0 : -1;
}

/* The result, the row and the calls of the run under test. */
static void check_outcome(const char *cell, fixture *f, const char *result,
                          const expectation *e, const step *s, int reached)
{
    char *want = e->ok ? strdup("NULL") : gahp_escape(e->error);
    CHECK(cell, strcmp(result, want) == 0, "result %s, expected %s", result, want);
    free(want);
    journal_batch b;
    assert_true(read_row(f, &b));
    if (e->ok)
        CHECK(cell, b.state == BATCH_SUBMITTED, "state %s, expected submitted",
              batch_state_name(b.state));
    else
        CHECK(cell, b.state == BATCH_FAILED && b.resume_state == e->resume &&
                    b.error != NULL && strcmp(b.error, result) == 0,
              "state %s/%s (error %s), expected failed/%s", batch_state_name(b.state),
              batch_state_name(b.resume_state), b.error ? b.error : "none",
              batch_state_name(e->resume));
    journal_batch_free(&b);
    for (sc_kind k = 0; k < K_COUNT; k++)
        CHECK(cell, !side_effect(k) || f->w.seen[k] == e->sends[k],
              "%s sent %d times, expected %d", sc_kind_name[k], f->w.seen[k], e->sends[k]);
    CHECK(cell, side_effect(s->kind) || (f->w.seen[s->kind] > 0) == reached,
          "%s %s", sc_kind_name[s->kind], reached ? "never asked" : "asked");
}

/* The re-issue without faults ends the submit, every effect done once; a
 * submit that succeeded is answered from the journal, without any call. */
static void check_reissue(const char *cell, fixture *f, int succeeded)
{
    char *result = run(f, NULL, 0, NULL, cell);
    CHECK(cell, strcmp(result, "NULL") == 0, "re-issue: result %s", result);
    CHECK(cell, !succeeded || f->w.ncalls == 0, "re-issue of a submitted batch: %zu calls",
          f->w.ncalls);
    free(result);
    journal_batch b;
    assert_true(read_row(f, &b));
    CHECK(cell, b.state == BATCH_SUBMITTED, "re-issue: state %s", batch_state_name(b.state));
    journal_batch_free(&b);
    const sc_world *w = &f->w;
    CHECK(cell, w->nbatches == 1 && w->batch_jobs[0] == 3 && w->submits == 1,
          "re-issue: %zu batch(es), %zu jobs, %d submits", w->nbatches,
          w->nbatches ? w->batch_jobs[0] : 0, w->submits);
    CHECK(cell, w->uploads[0] == 0 && w->uploads[1] == 1 && w->uploads[2] == 1,
          "re-issue: uploads %d %d %d, expected 0 1 1", w->uploads[0], w->uploads[1],
          w->uploads[2]);
}

/* 1 when none of the process's budget for kept input bytes is taken:
 * all of it can be reserved (in parts of the largest file kept). */
static int hold_budget_whole(void)
{
    long long got = 0;
    while (got < INPUT_HOLD_TOTAL_MAX && input_hold_reserve(INPUT_HOLD_FILE_MAX))
        got += INPUT_HOLD_FILE_MAX;
    input_hold_unreserve(got);
    return got >= INPUT_HOLD_TOTAL_MAX;
}

static void run_cell(const resume_point *p, int crash, const step *s, sc_outcome o)
{
    char cell[200];
    snprintf(cell, sizeof cell, "%s%s | %s | %s",
             p->earlier != E_FAULTS ? "" : crash ? "crash at " : "failed at ", p->name,
             sc_kind_name[s->kind], sc_outcome_name[o]);
    fixture f;
    fixture_open(&f);
    if (run_earlier(&f, p, crash, cell) == 0) {
        expectation e;
        expect(p, s, o, &e);
        sc_fault fault = { s->kind, o == O_ALWAYS_UNKNOWN ? 0 : 1, o };
        char *result = run(&f, &fault, 1, NULL, cell);
        check_outcome(cell, &f, result, &e, s, (p->sends & BIT(s->kind)) != 0);
        free(result);
        check_reissue(cell, &f, e.ok);
    }
    fixture_close(&f);
    /* whatever the outcome, the runs gave back the budget of the input
     * bytes they kept (the inputs are new files: the first run keeps them) */
    CHECK(cell, hold_budget_whole(), "the kept input bytes' budget was not given back");
}

static void test_matrix(void **state)
{
    (void)state;
    size_t cells = 0;
    time_t start = time(NULL);
    failures = 0;
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        for (int crash = 0; crash <= (points[i].earlier == E_FAULTS); crash++) {
            for (size_t j = 0; j < sizeof steps / sizeof steps[0]; j++) {
                const step *s = &steps[j];
                int side = side_effect(s->kind);
                size_t n = side ? sizeof side_outcomes / sizeof side_outcomes[0]
                                : sizeof safe_outcomes / sizeof safe_outcomes[0];
                for (size_t k = 0; k < n; k++) {
                    sc_outcome o = side ? side_outcomes[k] : safe_outcomes[k];
                    if ((o == O_LIMIT && s->kind != K_UPLOAD) ||
                        (o == O_UNK_LATE && s->kind == K_QUERY_FILES))
                        continue;   /* a late association cannot be seen */
                    run_cell(&points[i], crash, s, o);
                    cells++;
                }
            }
        }
    }
    printf("submit engine matrix: %zu cells, %d failed checks, %ld s\n", cells, failures,
           (long)(time(NULL) - start));
    assert_int_equal(failures, 0);
}

/* ---- the legal transitions ------------------------------------------------- */

/* A place of a batch: a state, or failed with a resume state. */
#define AT(s) BATCH_##s
#define FAILED_AT(s) (16 + BATCH_##s)

/* Every legal change (engine.h says why each one exists). */
static const struct { int from, to; } legal[] = {
    { AT(NEW), AT(HASHED) },
    { AT(HASHED), AT(CREATE_SENT) },            { FAILED_AT(HASHED), AT(CREATE_SENT) },
    { AT(CREATE_SENT), AT(CREATE_SENT) },       { FAILED_AT(CREATE_SENT), AT(CREATE_SENT) },
    { AT(CREATE_SENT), AT(CREATED) },           { FAILED_AT(CREATE_SENT), AT(CREATED) },
    { AT(CREATED), AT(FILES_KNOWN) },           { FAILED_AT(CREATED), AT(FILES_KNOWN) },
    { AT(FILES_KNOWN), AT(FILES_KNOWN) },       { FAILED_AT(FILES_KNOWN), AT(FILES_KNOWN) },
    { AT(FILES_KNOWN), AT(UPLOADED) },          { FAILED_AT(FILES_KNOWN), AT(UPLOADED) },
    { AT(UPLOADED), AT(SUBMIT_SENT) },          { FAILED_AT(UPLOADED), AT(SUBMIT_SENT) },
    { AT(SUBMIT_SENT), AT(SUBMIT_SENT) },       { FAILED_AT(SUBMIT_SENT), AT(SUBMIT_SENT) },
    { AT(SUBMIT_SENT), AT(SUBMITTED) },         { FAILED_AT(SUBMIT_SENT), AT(SUBMITTED) },
    /* failures: in place ... */
    { AT(HASHED), FAILED_AT(HASHED) },          { FAILED_AT(HASHED), FAILED_AT(HASHED) },
    { AT(CREATE_SENT), FAILED_AT(CREATE_SENT) },
    { FAILED_AT(CREATE_SENT), FAILED_AT(CREATE_SENT) },
    { AT(CREATED), FAILED_AT(CREATED) },        { FAILED_AT(CREATED), FAILED_AT(CREATED) },
    { AT(FILES_KNOWN), FAILED_AT(FILES_KNOWN) },
    { FAILED_AT(FILES_KNOWN), FAILED_AT(FILES_KNOWN) },
    { AT(UPLOADED), FAILED_AT(UPLOADED) },      { FAILED_AT(UPLOADED), FAILED_AT(UPLOADED) },
    { AT(SUBMIT_SENT), FAILED_AT(SUBMIT_SENT) },
    { FAILED_AT(SUBMIT_SENT), FAILED_AT(SUBMIT_SENT) },
    /* ... or before a request refused or never sent */
    { AT(CREATE_SENT), FAILED_AT(HASHED) },     { FAILED_AT(CREATE_SENT), FAILED_AT(HASHED) },
    { AT(FILES_KNOWN), FAILED_AT(CREATED) },    { FAILED_AT(FILES_KNOWN), FAILED_AT(CREATED) },
    { AT(SUBMIT_SENT), FAILED_AT(UPLOADED) },   { FAILED_AT(SUBMIT_SENT), FAILED_AT(UPLOADED) },
};

static void place_of(int node, batch_state *state, batch_state *resume)
{
    *state = node >= 16 ? BATCH_FAILED : (batch_state)node;
    *resume = node >= 16 ? (batch_state)(node - 16) : BATCH_NEW;
}

static const char *place_name(int node, char *buf, size_t n)
{
    if (node >= 16)
        snprintf(buf, n, "failed(%s)", batch_state_name((batch_state)(node - 16)));
    else
        snprintf(buf, n, "%s", batch_state_name((batch_state)node));
    return buf;
}

/* Every (from, to) pair of places, failed with every resume state too:
 * accepted exactly when listed. */
static void test_transition_table(void **state)
{
    (void)state;
    int nodes[2 * BATCH_FAILED], n = 0, accepted = 0;
    for (int s = 0; s < BATCH_FAILED; s++)
        nodes[n++] = s;
    for (int s = 0; s < BATCH_FAILED; s++)
        nodes[n++] = 16 + s;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < n; k++) {
            batch_state fs, fr, ts, tr;
            place_of(nodes[i], &fs, &fr);
            place_of(nodes[k], &ts, &tr);
            int want = 0;
            for (size_t l = 0; l < sizeof legal / sizeof legal[0]; l++)
                want |= legal[l].from == nodes[i] && legal[l].to == nodes[k];
            int got = engine_transition_ok(fs, fr, ts, tr);
            char a[48], b[48];
            if (got != want)
                fail_msg("%s -> %s: %s, expected %s", place_name(nodes[i], a, sizeof a),
                         place_name(nodes[k], b, sizeof b), got ? "accepted" : "refused",
                         want ? "accepted" : "refused");
            accepted += got;
        }
    }
    assert_int_equal(accepted, (int)(sizeof legal / sizeof legal[0]));
    /* not places at all */
    assert_false(engine_transition_ok(BATCH_STATE_COUNT, BATCH_NEW, BATCH_HASHED, BATCH_NEW));
    assert_false(engine_transition_ok(BATCH_FAILED, BATCH_FAILED, BATCH_HASHED, BATCH_NEW));
    assert_false(engine_transition_ok(BATCH_HASHED, BATCH_NEW, BATCH_FAILED, BATCH_FAILED));
}

/* An illegal change is refused: an internal error, the row unchanged. */
static void test_illegal_transition_refused(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    const resume_point *created = NULL;
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
        if (strcmp(points[i].name, "created") == 0)
            created = &points[i];
    assert_non_null(created);
    assert_int_equal(run_earlier(&f, created, 1, "illegal"), 0);     /* row: created */
    printf("(two \"BUG: illegal state transition\" errors are expected here)\n");
    fflush(stdout);
    exec_ctx ctx;
    char *err = NULL;
    assert_int_equal(exec_ctx_open_with(&ctx, f.shared, NULL, f.j, 0, &f.clients, &err), 0);
    submit_run r = { .ctx = &ctx, .req = f.req, .s = &f.req->u.submit };
    assert_true(read_row(&f, &r.batch));
    journal_batch b;

    assert_int_equal(engine_set_state(&r, BATCH_SUBMITTED, 0), -1);
    assert_int_equal(r.error.code, EXEC_E_INTERNAL);
    assert_string_equal(r.error.msg, "internal error: illegal submit state transition "
                                     "created -> submitted");
    assert_true(read_row(&f, &b));
    assert_int_equal(b.state, BATCH_CREATED);
    journal_batch_free(&b);

    /* a failure recorded with a resume state it may not have */
    assert_int_equal(engine_fail(&r, BATCH_NEW, EXEC_E_RPC, "query_files", "x"), -1);
    assert_int_equal(r.error.code, EXEC_E_INTERNAL);
    assert_string_equal(r.error.msg, "internal error: illegal submit state transition "
                                     "created -> failed(new)");
    assert_true(read_row(&f, &b));
    assert_int_equal(b.state, BATCH_CREATED);
    journal_batch_free(&b);

    /* legal ones are written */
    exec_err_clear(&r.error);
    assert_int_equal(engine_set_state(&r, BATCH_FILES_KNOWN, 0), 0);
    assert_int_equal(engine_fail(&r, BATCH_FILES_KNOWN, EXEC_E_RPC, "upload_files", "x"), -1);
    assert_int_equal(r.batch.state, BATCH_FAILED);
    assert_true(read_row(&f, &b));
    assert_int_equal(b.state, BATCH_FAILED);
    assert_int_equal(b.resume_state, BATCH_FILES_KNOWN);
    journal_batch_free(&b);

    exec_err_clear(&r.error);
    journal_batch_free(&r.batch);
    exec_ctx_close(&ctx);
    fixture_close(&f);
}

/* ---- injection ------------------------------------------------------------- */

/* The contexts a submit makes for other threads get scripted clients too:
 * two upload lanes (one file per request), then a run on its own thread
 * (a deadline).  A libcurl client there would fail the submit. */
static void test_injected_client_reaches_helper_contexts(void **state)
{
    (void)state;
    gahp_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.upload_chunk_files = 1;
    cfg.upload_chunk_bytes = 8000000;
    cfg.upload_connections = 2;
    cfg.batch_expire_s = 3600;
    fixture f;
    fixture_open(&f);
    char *result = run(&f, NULL, 0, &cfg, "lanes");
    assert_string_equal(result, "NULL");
    free(result);
    assert_int_equal(f.w.clients, 2);       /* the worker's, one helper lane's */
    assert_int_equal(f.w.seen[K_UPLOAD], 2);
    assert_int_equal(failures, 0);
    fixture_close(&f);

    cfg.submit_deadline_s = 60;
    fixture_open(&f);
    result = run(&f, NULL, 0, &cfg, "deadline");
    assert_string_equal(result, "NULL");
    free(result);
    while (atomic_load(&f.shared->detached_runs) > 0)
        usleep(1000);
    assert_true(f.w.clients >= 3);          /* + the detached run's (and its lane's) */
    assert_int_equal(failures, 0);
    fixture_close(&f);
}

/* ---- main ------------------------------------------------------------------ */

static int make_inputs(void)
{
    static const char *const names[SC_NFILES] = { "a.txt", "b.txt", "c.txt" };
    static const char *const content[SC_NFILES] = { "alpha\n", "bravo\n", "charlie\n" };
    if (mkdtemp(dir) == NULL)
        return -1;
    for (int i = 0; i < SC_NFILES; i++) {
        char md5[FILES_MD5_HEX_LEN + 1];
        snprintf(input[i], sizeof input[i], "%s/%s", dir, names[i]);
        FILE *fp = fopen(input[i], "w");
        if (fp == NULL || fputs(content[i], fp) < 0 || fclose(fp) != 0)
            return -1;
        if (files_md5_hex_mem(content[i], strlen(content[i]), md5) != 0)
            return -1;
        char *p = boinc_phys_name(md5, names[i]);
        if (p == NULL)
            return -1;
        snprintf(phys[i], sizeof phys[i], "%s", p);
        free(p);
    }
    return 0;
}

int main(void)
{
    /* settle pauses (1 s, 2 s per resolution) on the test clock */
    setenv("BOINC_GAHP_TEST_TIME_SCALE", "0.0001", 1);
    log_open(NULL, LOG_ERROR, NULL);
    if (make_inputs() != 0) {
        perror("inputs");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transition_table),
        cmocka_unit_test(test_illegal_transition_refused),
        cmocka_unit_test(test_injected_client_reaches_helper_contexts),
        cmocka_unit_test(test_matrix),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    for (int i = 0; i < SC_NFILES; i++)
        unlink(input[i]);
    rmdir(dir);
    return failed ? 1 : 0;
}
