/*
 * submit_batch_steps.h - the batch-level steps of a submit: the app check
 * (get_templates), create_batch and submit_batch, each a step_def table
 * entry for the driver (engine.h) with its safe resolver:
 * query_batches for create_batch, query_batch for submit_batch.
 */
#ifndef BOINC_GAHP_SUBMIT_BATCH_STEPS_H
#define BOINC_GAHP_SUBMIT_BATCH_STEPS_H

#include "submit/engine.h"

/* get_templates: the app exists and every job has its input count. */
int submit_batch_steps_check_app(submit_run *r);

/* create_batch unless the server batch id is known. */
int submit_batch_steps_create(submit_run *r);

/* The jobs of the submit as submit_batch sends them. */
typedef struct {
    boinc_job_spec *specs;
    size_t njobs;
    const gahp_job_params *params;   /* the request's own */
} submit_jobs;

/* submit_batch of jobs into the created batch. */
int submit_batch_steps_submit(submit_run *r, const submit_jobs *jobs);

#endif
