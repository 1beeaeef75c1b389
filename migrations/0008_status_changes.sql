-- 0008_status_changes: status replies that cannot hurt HTCondor 9.0's grid
-- manager (issue 18).  Its client applies a status line to whichever job
-- has that cluster.proc, whatever the batch, so a partial query is answered
-- with the jobs changed since the client's min_mod_time only, and a job the
-- client aborted is never reported again (doc/protocol.md, "Status
-- queries").

-- Change number of the job's last recorded status change (0: none since
-- this migration); the project's counter below gives the numbers.
ALTER TABLE jobs ADD COLUMN status_seq INTEGER NOT NULL DEFAULT 0;
-- 1 once BOINC_ABORT_JOBS named the job: it is never reported again.
ALTER TABLE jobs ADD COLUMN aborted INTEGER NOT NULL DEFAULT 0;
-- The project's last status change number: the token boinc_gahp hands the
-- client as a query's server_time, and gets back as its min_mod_time.
ALTER TABLE projects ADD COLUMN status_seq INTEGER NOT NULL DEFAULT 0;
-- Session (sessions.id) in which the client took this batch as submitted:
-- it got the submit's success, or a query group of its jobs.  Until then a
-- query lists every job of the batch (the client resubmits a batch it is
-- unsure of when its group is empty).
ALTER TABLE batches ADD COLUMN client_session INTEGER;
-- The jobs of a batch changed since a number, read in index order.
CREATE INDEX jobs_batch_status_seq ON jobs (batch_id, status_seq);
