/*
 * fetch_zip.h - BOINC_FETCH_OUTPUT's zip rule: a job whose only output is
 * a .zip archive delivers the archive's members, not the archive.
 */
#ifndef BOINC_GAHP_FETCH_ZIP_H
#define BOINC_GAHP_FETCH_ZIP_H

#include "fetch/fetch_step.h"

/* 1 when the zip rule applies: exactly one output, named *.zip (any case). */
int fetch_zip_applies(const boinc_templates *t);

/* Download the archive zip_name into a private directory in the iwd,
 * unpack it there (within the unzip limits) and move the selected members
 * into place; the directory goes, on success and failure alike.  0, or -1
 * with *e set. */
int fetch_zip_output(fetch_ctx *fc, const char *zip_name, long long max_nbytes,
                     exec_err *e);

#endif
