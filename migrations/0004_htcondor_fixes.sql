-- 0004_htcondor_fixes: what lets boinc_gahp serve HTCondor's real grid
-- manager across its restarts (issue 8).

-- Identity of a submit's job set: MD5 over the batch name, the app and the
-- sorted digests of each job's name, arguments and inputs (job order and the
-- six trailing fields do not count; src/submit_identity.c).  NULL for a batch
-- journaled before this migration: computed from its request's arguments on
-- first use.
ALTER TABLE batches ADD COLUMN job_set_md5 TEXT;
-- server_time of the last query_batch2 reply whose job statuses were recorded
-- for this batch: the next query asks the server only for jobs modified since
-- a margin below it (NULL: never queried, ask for every job).
ALTER TABLE batches ADD COLUMN status_server_time REAL;
