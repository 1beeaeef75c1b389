/*
 * exec.h - what the executors share: the context a worker runs a request
 * in, and the one error convention.  Each command's executor is in its
 * command's folder (src/submit, src/fetch, src/cmd), named by its row in
 * server/command.c, which runs a request (command_dispatch).
 */
#ifndef BOINC_GAHP_EXEC_H
#define BOINC_GAHP_EXEC_H

#include "boinc/boinc.h"
#include "wire/request.h"
#include "config/config.h"
#include "journal/journal.h"

#include <stdatomic.h>

/*
 * Where the BOINC clients of contexts come from (exec_ctx.h): make returns
 * a new client for a context of configuration cfg (cfg may be NULL), owned
 * by the caller (released with boinc_client_free), or NULL.  The server
 * uses the libcurl client (exec_ctx_open); a test hands another
 * implementation (exec_ctx_open_with).  arg is the source's own; the
 * source must outlive every context made from it.
 */
typedef struct {
    boinc_client *(*make)(const gahp_config *cfg, void *arg);
    void *arg;
} exec_client_source;

/*
 * What the executors of one server share: the state through which the
 * requests running at once see each other.  One per server, made and
 * freed by server/ (server_shared.c); a unit test makes its own.  The
 * structs are opaque here: each belongs to the layer above that uses it.
 */
struct submit_registry;         /* submit/submit_registry.h: running submits */
struct file_claims;             /* submit/submit_registry.h: files being uploaded */
struct fetch_templates_cache;   /* fetch/fetch_step.h: templates by app */
struct blah_state;              /* blah/blah.h: BLAH groups, status refreshes */

typedef struct {
    struct submit_registry *submits;
    struct file_claims *claims;
    struct fetch_templates_cache *templates;
    struct blah_state *blah;
    atomic_size_t detached_runs;    /* submit.c: runs not ended yet;
                                       shutdown counts them as executing and
                                       keeps the journal and config alive */
    atomic_int replay_possible;     /* server/command.c: set by recovery */
    /* server/workers.c: queue req (owned) to run on a worker in the
     * background, outside the journal (journal_id 0: nothing is recorded
     * of it); NULL in a context without workers. */
    void (*spawn)(void *arg, gahp_request *req);
    void *spawn_arg;
} exec_shared;

typedef struct {
    exec_shared *shared;        /* the server's (not owned) */
    boinc_client *client;       /* owned by this context (exec_ctx_close frees
                                   it), not shared with another thread */
    journal *journal;           /* this worker's own connection */
    const gahp_config *config;
    int worker_index;
    long long session_id;       /* 0 until main sets it */
    exec_client_source clients; /* where client came from: the contexts made
                                   from this one (exec_ctx_open_like) get
                                   theirs there too */
} exec_ctx;

/*
 * The executors' one error convention: a code saying what kind of failure
 * it was, and the message the client gets (unescaped, one line).  An
 * executor fills one exec_err and turns it into its result tail with
 * exec_err_result().  doc/commands.md ("Common rules") lists every code
 * with what the client sees.
 *
 * Out of memory, wherever it happens, is one status: the code EXEC_E_NOMEM
 * with no message (exec_err_nomem: nothing is allocated to say it), and
 * the client gets EXEC_NOMEM_MSG as its one error token, "out\ of\ memory".
 * An executor that returns NULL means the same; the worker answers it.
 * An RPC that ran out of memory (BOINC_E_NOMEM) is EXEC_E_NOMEM too, with
 * its step in the message like any failed RPC: "<step> failed: out of
 * memory: <message>".
 *
 * exec_err_may_pass() says whether a failure is the kind that may pass by
 * itself (EXEC_E_UNREACHABLE): what a background retry waits out.
 */
#define EXEC_NOMEM_MSG "out of memory"
/* The same as its escaped token, for where nothing can be allocated. */
#define EXEC_NOMEM_RESULT "out\\ of\\ memory"
typedef enum {
    EXEC_OK = 0,
    EXEC_E_NOMEM,       /* out of memory */
    EXEC_E_REFUSED,     /* the request cannot be carried out as given */
    EXEC_E_LOCAL,       /* a local file could not be read or written */
    EXEC_E_JOURNAL,     /* the journal could not be read or written */
    EXEC_E_RPC,         /* a BOINC RPC failed: the server answered with an
                           error or a reply we cannot use (message from the
                           client) */
    EXEC_E_UNREACHABLE, /* a BOINC RPC failed because the project did not
                           answer (connection, time-out, an HTTP status
                           other than 200): it may pass */
    EXEC_E_INTERNAL     /* a bug caught by a check (an illegal submit state
                           transition): refused, nothing written */
} exec_code;

typedef struct {
    exec_code code;
    char *msg;          /* malloc'd; NULL only with EXEC_E_NOMEM */
    /* The failure is one input's own (the server will not take it): its
     * local path and why, as the job that gave it is told (malloc'd, both
     * or neither; exec_err_blame).  The BLAH dialect holds that job alone
     * and submits the rest of its group without it (doc/blah-core.md). */
    char *bad_input;
    char *bad_input_why;
} exec_err;

/* Set *e to out of memory (EXEC_E_NOMEM, no message).  Returns -1. */
int exec_err_nomem(exec_err *e);
/* The result tail of out of memory (EXEC_NOMEM_MSG escaped), malloc'd;
 * NULL when even that cannot be allocated. */
char *exec_nomem_result(void);

/* Set *e to code and "<what>: <detail>" (detail may be NULL); out of
 * memory when the message cannot be made. */
void exec_err_set(exec_err *e, exec_code code, const char *what, const char *detail);
/* Set *e from a failed RPC: "<what> failed: <boinc code name>: <message>"
 * (EXEC_E_NOMEM for BOINC_E_NOMEM, EXEC_E_UNREACHABLE for
 * BOINC_E_TRANSPORT and BOINC_E_HTTP, else EXEC_E_RPC). */
void exec_err_boinc(exec_err *e, const char *what, const boinc_error *err);
/* The escaped one-token result for *e (EXEC_NOMEM_MSG when it has no
 * message; NULL when the token cannot be allocated); *e is cleared. */
char *exec_err_result(exec_err *e);
void exec_err_clear(exec_err *e);
/* *dst = a copy of *src (dst not cleared first): 0, or -1 on ENOMEM with
 * *dst untouched. */
int exec_err_copy(exec_err *dst, const exec_err *src);
/* Say that *e (set already) is about the input at path alone, and why
 * (copied; out of memory leaves *e as it was, blaming nothing). */
void exec_err_blame(exec_err *e, const char *path, const char *why);
int exec_err_may_pass(const exec_err *e);

/*
 * The project a typed core operation works on (doc/blah-core.md): the URL
 * and authenticator its RPCs use, and its id in the journal (0: none, the
 * journal is then left alone).  Borrowed strings.
 */
typedef struct {
    const char *url;
    const char *authenticator;
    long long journal_id;
} exec_project;
/* The project of a request (its fields borrowed). */
exec_project exec_project_of(const gahp_request *req);

/* Shorthands of the same convention: one escaped error token
 * "<step>: <detail>" (exec_err_set, code EXEC_E_REFUSED) or "<step>
 * failed: <class>: <message>" (exec_err_boinc), or out of memory's; NULL
 * when not even that can be allocated. */
char *exec_error(const char *step, const char *detail);
/* "<step> failed: <boinc code name>: <message>" as one escaped token. */
char *exec_boinc_error(const char *step, const boinc_error *err);

#endif
