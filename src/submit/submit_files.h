/*
 * submit_files.h - the file phase of a submit: which inputs the server
 * already has (query_files with the batch id, which also associates them
 * with the batch), and upload_files of the absent ones, in chunks bounded
 * by r->limits lowered to the limits learned from the project.  Both are
 * step_def entries for the driver; their resolver is query_files WITHOUT a
 * batch id, the one file request that is safe to repeat (a repeated upload
 * or batch query is fatal on a real server).  An upload refused with one of
 * the server's PHP limit errors is recovered from in the step: what the
 * server kept is found with that query, a smaller chunk is learned
 * (journal_files.h) and the rest re-planned; a single file too large
 * fails the submit naming it (doc/commands.md "Uploads and server limits").
 *
 * Two batches sharing a new input must not both see it absent and both
 * upload it: a phase first claims its open files for its project
 * (submit_registry.h) and waits only for a phase holding one of them; no lock
 * is held across a request.
 */
#ifndef BOINC_GAHP_SUBMIT_FILES_H
#define BOINC_GAHP_SUBMIT_FILES_H

#include "submit/engine.h"
#include <stddef.h>

/* From BATCH_CREATED (or a state before BATCH_UPLOADED) to BATCH_UPLOADED. */
int submit_files_phase(submit_run *r);

/* ==== upload limits =====================================================
 *
 * Keeping upload_files requests within a BOINC server's
 * PHP limits: planning chunks under a file count and a request size, and
 * recognising the replies a server gives when a request broke one of them
 * (max_file_uploads, post_max_size, upload_max_filesize), so that the
 * submit can shrink its chunks and go on, or name the limit to raise.
 */

/* Debian's stock php.ini: max_file_uploads = 20, post_max_size = 8M. */
#define UPLOAD_DEFAULT_FILES  20
/* Whole request, content plus overhead: under 8 MB (8M is 8,388,608). */
#define UPLOAD_DEFAULT_BYTES  8000000LL
/* What a request carries besides file content: the XML request and the
 * multipart framing (generous; a phys_name and a part header per file). */
#define UPLOAD_REQUEST_OVERHEAD 4096LL
#define UPLOAD_FILE_OVERHEAD    512LL

typedef struct {
    long max_files;         /* files per upload_files request, >= 1 */
    long long max_bytes;    /* request bytes (content + overhead) */
} upload_limits;

typedef enum {
    UPLOAD_LIMIT_NONE = 0,  /* not a limit error */
    UPLOAD_LIMIT_FILES,     /* "# of uploaded files (N) doesn't agree with request (M)" */
    UPLOAD_LIMIT_POST,      /* "can't parse request message:" with nothing after it */
    UPLOAD_LIMIT_FILESIZE   /* "NAME upload failed because: ... upload_max_filesize ..." */
} upload_limit_kind;

/* Request bytes a chunk of these files takes, overhead included. */
long long upload_request_bytes(const long long *sizes, size_t n);

/*
 * Split n files with the given sizes, in order, into consecutive chunks of
 * at most max_count files and at most max_bytes bytes in total; a single
 * file larger than max_bytes gets a chunk of its own.  *chunk_starts gets
 * a malloc'd array of *nchunks start indexes (chunk i is
 * [starts[i], starts[i+1]) and the last one ends at n).  n == 0 gives zero
 * chunks and *chunk_starts == NULL.  Returns -1 with errno EINVAL
 * (max_count == 0, max_bytes <= 0 or a negative size) or ENOMEM.
 */
int upload_split_chunks(const long long *sizes, size_t n, size_t max_count,
                        long long max_bytes, size_t **chunk_starts,
                        size_t *nchunks);

/*
 * Split n files (sizes in order) into consecutive chunks within lim;
 * a file too large for any chunk gets a chunk of its own (the server then
 * says whether it takes it).  *starts (malloc'd) gets each chunk's first
 * index.  0, or -1 on ENOMEM / bad limits.
 */
int upload_plan_chunks(const long long *sizes, size_t n, const upload_limits *lim,
                       size_t **starts, size_t *nchunks);

/*
 * Classify a server's error text.  For UPLOAD_LIMIT_FILES *received gets
 * the count the server saw (0 if unknown); for UPLOAD_LIMIT_FILESIZE
 * *file_name gets the file's name (malloc'd; NULL on ENOMEM).
 */
upload_limit_kind upload_limit_classify(const char *server_msg, long *received,
                                        char **file_name);

/*
 * Lower lim after a limit error on a chunk of nfiles files taking
 * chunk_bytes request bytes: the file count to what the server saw (or half
 * the chunk), the size to half the chunk.  Returns 0 when lim got smaller,
 * -1 when the chunk held one file (nothing to shrink: the file itself is
 * too large for the server).
 */
int upload_limits_shrink(upload_limits *lim, upload_limit_kind kind, size_t nfiles,
                         long long chunk_bytes, long received);

/*
 * A project's first refusal of an upload: what the refusal names is
 * believed, and the stock PHP limits stand in for what it does not name.
 * A file-count refusal names the count PHP kept (`# of uploaded files
 * (1000) doesn't agree with request (2000)`: max_file_uploads is 1000),
 * so the next chunks carry that many files, even above a stock server's
 * 20 (issue 28: a server allowing 1,000 files got 103 requests of 20);
 * received 0 is a refusal that names nothing.  The bytes fall to at
 * most UPLOAD_DEFAULT_BYTES, since no refusal names post_max_size.  Then
 * upload_limits_shrink lowers it further by what the refusal says,
 * instead of halving down request by request, each wasting a large
 * upload.
 */
void upload_limits_first_refusal(upload_limits *lim, upload_limit_kind kind, long received);

/*
 * The limits of the probe chunk, the one request sent alone first while a
 * project has no learned limits: the configured file count, at most a
 * stock request's bytes, so that a stock server's refusal wastes little.
 * Returns 1 when the probe differs from lim (a probe is worth sending
 * alone), else 0.
 */
int upload_limits_probe(const upload_limits *lim, upload_limits *probe);

/* The php.ini setting to raise for a limit error. */
const char *upload_limit_setting(upload_limit_kind kind);

/* The input of paths[0..n) that an upload's local read failure names
 * (the boinc module's "cannot read input file <path>: why" or "input file
 * <path> why"): the longest path that fits (one path may begin another),
 * or NULL.  upload_limits.c. */
const char *upload_unreadable_path(const char *const *paths, size_t n, const char *msg);

/* The chunks of one upload round of files of sizes[0..n) within lim.
 * While the project has taught no limit (!learned), the first chunk is a
 * probe (upload_limits_probe: at most a stock request's bytes) that the
 * caller sends alone: a stock server refuses it, wasting little, and its
 * limits are learned before any other chunk leaves; a raised server takes
 * it, and the rest go in large chunks.  *nprobe = 1 when (*starts)[0] is
 * such a probe, else 0.  upload_limits.c. */
int upload_plan_round(const long long *sizes, size_t n, const upload_limits *lim, int learned,
                      size_t **starts, size_t *nchunks, size_t *nprobe);

/* The texts of an input larger than the server takes in one upload:
 * *detail for the batch's error (names phys and path, the size, the
 * server's message and the php.ini setting to raise) and *why for the
 * hold reason of its job (short); malloc'd, NULL when out of memory.
 * upload_limits.c. */
void upload_too_large_texts(const char *phys, const char *path, long long size,
                            const char *server_msg, upload_limit_kind kind, char **detail,
                            char **why);

#endif
