/*
 * fetch_download.h - BOINC_FETCH_OUTPUT's downloads: one output file into
 * a temp file next to its destination within the fetch's byte limits, and
 * every selected plain (not zipped) output of a job, renamed into place
 * only when all have downloaded; and the zip rule (a job whose only
 * output is a .zip archive delivers its members).
 */
#ifndef BOINC_GAHP_FETCH_DOWNLOAD_H
#define BOINC_GAHP_FETCH_DOWNLOAD_H

#include "fetch/fetch_step.h"

/* One output on its way: downloaded into tmp (open as fd) next to dest. */
typedef struct {
    int file_num;               /* the output's number in the template */
    char *dest;
    int fd;                     /* -1 when no temp file is open */
    char *tmp;
    long long max_nbytes;       /* the template's max_nbytes; 0: none */
} pending_output;

/* The template's max_nbytes of output file_num (0: none). */
long long fetch_output_max_nbytes(const boinc_templates *t, size_t file_num);

/* Download output p->file_num (called name) into a new temp file next to
 * p->dest, counting it against --max-fetch-bytes and stopping it at
 * p->max_nbytes.  0, or -1 with *e set; either way the caller aborts or
 * commits the temp file. */
int fetch_download_temp(fetch_ctx *fc, pending_output *p, const char *name,
                        exec_err *e);

/* Every selected output of a job without the zip rule, put in place only
 * when all have downloaded.  0, or -1 with *e set (nothing new in place
 * unless a rename itself failed). */
int fetch_download_plain(fetch_ctx *fc, const boinc_templates *t, exec_err *e);

/* ==== zip rule ==========================================================
 *
 * BOINC_FETCH_OUTPUT's zip rule: a job whose only output is
 * a .zip archive delivers the archive's members, not the archive.
 */

/* 1 when the zip rule applies: exactly one output, named *.zip (any case). */
int fetch_zip_applies(const boinc_templates *t);

/* Download the archive zip_name into a private directory in the iwd,
 * unpack it there (within the unzip limits) and move the selected members
 * into place; the directory goes, on success and failure alike.  0, or -1
 * with *e set. */
int fetch_zip_output(fetch_ctx *fc, const char *zip_name, long long max_nbytes,
                     exec_err *e);

#endif
