/*
 * seam.h - what the command seam tests share (test_fetch_seam.c,
 * test_query_seam.c): a real journal in a private temporary directory
 * (tmp_journal.h) with a session and a project, a scripted BOINC client's
 * world (scripted_client.h), batches a BOINC_SUBMIT of this journal left,
 * and one request line run the way the server runs it: parsed by its
 * command's row, accepted into the journal, dispatched on a worker's
 * context whose client is the scripted one (command_dispatch), and its
 * result committed as the committer does.  Linked into every unit test
 * (the Makefile's UNIT_LIB).
 */
#ifndef TEST_SEAM_H
#define TEST_SEAM_H

#include "scripted_client.h"

#include "config/config.h"
#include "exec/exec.h"
#include "journal/journal.h"

#include <stddef.h>

#define SEAM_URL "http://127.0.0.1:9/scripted/"
#define SEAM_AUTH "scripted-authenticator"

typedef struct {
    journal *j;
    long long session;
    long long project;
    sc_world w;
    exec_client_source clients;
    exec_shared *shared;
    gahp_config cfg;        /* the settings a request runs with: zero but
                               the fetch limits (their defaults) */
} seam;

/* Open a fresh journal in /tmp/<prefix>.XXXXXX, begin a session, add the
 * project, make an empty world.  Fails the test on any error. */
void seam_open(seam *s, const char *prefix);
/* Close everything and remove the directory and what the test made in it. */
void seam_close(seam *s);

/* The directory of the journal (tests put their own files there too). */
const char *seam_dir(void);

/* A batch this journal submitted: state submitted, its server batch id,
 * its jobs (status UNSENT, as the submit records them).  Returns the
 * batch row. */
long long seam_batch(seam *s, const char *name, const char *app, long long server_batch_id,
                     const char *const *jobs, size_t n);

/* Run one request line ("BOINC_FETCH_OUTPUT 7 job ...", escaped tokens)
 * as the server does; the world's call record starts empty.  Returns the
 * line the client would get from RESULTS, "<id> <tail>" (malloc'd). */
char *seam_run(seam *s, const char *line);

/* The first column of the first row of a query on the journal, read
 * through a connection of its own: malloc'd text, "NULL" for SQL NULL,
 * "(no row)" when there is none.  printf-style. */
char *seam_sql(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The stored result of a request row (its transient copy for a ping or a
 * query) and its state, as "<state>: <result>" (malloc'd). */
char *seam_stored(long long request_row);

/* The journal row of the last request seam_run ran. */
long long seam_last_request(void);

#endif
