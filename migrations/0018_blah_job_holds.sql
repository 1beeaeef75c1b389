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
-- The audit view shows the holds.
DROP VIEW audit_blah_jobs;
CREATE VIEW audit_blah_jobs AS
SELECT bj.gahp_id AS job_id, bj.job_dir, g.batch_name AS batch, g.app,
       g.state AS group_state, j.status AS boinc_status, bj.submitted_at,
       bj.cancelled_at, bj.fetched_at, bj.fetch_result, bj.held_at, bj.held_reason
FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id
LEFT JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name
LEFT JOIN jobs j ON j.batch_id = b.id AND j.name = bj.gahp_id;
