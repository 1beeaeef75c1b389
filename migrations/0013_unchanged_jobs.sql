-- 0013_unchanged_jobs (issue 22): a batch's jobs are recorded at submit
-- with the status a server gives a job it has just created (UNSENT), so
-- the first status query of a new batch finds them unchanged and rewrites
-- no row (it rewrote every job from IN_PROGRESS to UNSENT, with its
-- (batch_id, status_seq) index entry: about 12,000 instructions a job,
-- half of a first 10,000-job query).  What that rewrite also did, giving
-- every job the reply's change number so that the client's next partial
-- query lists it once, is kept by one number per batch: the change number
-- of its jobs that have not changed since the submit (jobs.status_seq 0).
-- NULL until a query first recorded a group of the batch's jobs.  Rows
-- written before 0013 (status IN_PROGRESS) are rewritten by their first
-- query as before.

-- The change number of the batch's jobs whose status_seq is 0.
ALTER TABLE batches ADD COLUMN unchanged_seq INTEGER;
