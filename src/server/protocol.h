/*
 * protocol.h - the GAHP line protocol: line splitting and the reader loop
 * (escaping and tokenising are in gahp_text.h).  The ONLY code that writes
 * to stdout.
 */
#ifndef BOINC_GAHP_PROTOCOL_H
#define BOINC_GAHP_PROTOCOL_H

#include "config/config.h"
#include "journal/journal.h"
#include "base/strbuf.h"

#include <stddef.h>

/* ---- line splitting ------------------------------------------------------ */

/*
 * Incremental splitter over a growable buffer.  Bytes are appended with
 * line_reader_fill (one read()); line_reader_next returns complete lines.
 * Only new bytes are scanned; an LF preceded by an escaping backslash
 * belongs to the argument and does not end the line; an unescaped CR just
 * before the LF is dropped (CRLF).
 */
/*
 * The longest request line kept (doc/protocol.md, "Lines"): 64 MiB, three
 * times a 100,000-job BOINC_SUBMIT whose jobs each name two inputs by
 * 80-byte paths (about 20 MB).  A longer line is refused with E; its
 * bytes are dropped as they arrive, so it never costs more than this in
 * memory (issue 29 #6).
 */
#define GAHP_MAX_LINE_BYTES ((size_t)64 * 1024 * 1024)

typedef struct {
    strbuf buf;
    size_t start;               /* first byte of the current line */
    size_t scan;                /* next byte to examine */
    int escaped;                /* byte at scan is preceded by an escape */
    int prev_plain_cr;          /* byte before scan is an unescaped CR */
    int eof;
    size_t max;                 /* longest line kept; 0: no limit */
    size_t dropped;             /* bytes of the current line dropped: over max */
} line_reader;

/* max: the longest line kept (0: none); longer lines are dropped. */
void line_reader_init(line_reader *lr, size_t max);
void line_reader_free(line_reader *lr);
/* read() once from fd: 1 bytes read, 0 EOF, -1 error (errno). */
int line_reader_fill(line_reader *lr, int fd);
/* 1 and *line, *len set (NUL-terminated, in place); 2 for a line longer
 * than max, whose bytes were dropped (*line is "", *len its full length);
 * or 0 when no full line. */
int line_reader_next(line_reader *lr, char **line, size_t *len);
/* After EOF: the unterminated rest, if any (1) or 0. */
int line_reader_rest(line_reader *lr, char **line, size_t *len);
/* Drop consumed bytes (call when line_reader_next returned 0). */
void line_reader_compact(line_reader *lr);

/* ---- the server loop ----------------------------------------------------- */

typedef struct protocol protocol;
struct workers;

protocol *protocol_new(int in_fd, int out_fd, const gahp_config *cfg,
                       journal *j, long long session_id);
void protocol_set_workers(protocol *p, struct workers *w);
void protocol_free(protocol *p);

/* Write the banner line.  0 or -1 (stdout broken). */
int protocol_banner(protocol *p);

/* Recovery with --requeue-undelivered: an earlier run's request id that
 * will be answered under its original number counts as pending, so a new
 * request cannot reuse it until then.  Before protocol_run only.  0 or -1. */
int protocol_mark_pending(protocol *p, long id);

/* Pre-select a project (config file). */
int protocol_select_project(protocol *p, const char *url, const char *auth);

/* Run until QUIT, stdin EOF or a broken stdout.  Returns 0 (QUIT/EOF) or
 * -1 (I/O error). */
/* Make SIGTERM and SIGINT end protocol_run as the end of stdin does (a
 * clean stop); call from the reader's thread, after every other thread
 * started with both signals blocked.  0 or -1. */
int protocol_catch_termination(void);

int protocol_run(protocol *p);

/* Committer callback (workers_notify_fn): results were appended. */
void protocol_results_ready(void *protocol_ptr);

#endif
