-- 0018_blah_job_holds (issue 39, per-job isolation): a BLAH job held on
-- its own, and the input a failed batch was refused for.
--
-- blah_jobs.held_at/held_reason: the job was taken out of its group for a
-- problem of its own (an input the server will not take, an input missing
-- when its group closed); it answers held (JobStatus 5) with the reason,
-- whatever its group's batch does.  A new BLAH_JOB_SUBMIT of its
-- JobDirectory (condor_release) makes a new job.
--
-- batches.bad_input/bad_input_why: the local path of the one input whose
-- refusal failed the submit (upload_max_filesize, say), and why, as the
-- job that gave it is told.  The BLAH scheduler holds the jobs that gave
-- it and submits the rest of the group as a new batch.  NULL when the
-- failure was not about one input (every row before this migration).
ALTER TABLE blah_jobs ADD COLUMN held_at REAL;
ALTER TABLE blah_jobs ADD COLUMN held_reason TEXT;
ALTER TABLE batches ADD COLUMN bad_input TEXT;
ALTER TABLE batches ADD COLUMN bad_input_why TEXT;
