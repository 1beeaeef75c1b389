-- 0002_recovery: what crash recovery records about requests, and the audit
-- views an operator queries with the sqlite3 shell after an incident
-- (doc/auditing.md).  No view shows an authenticator.

-- Set at start-up for an unfinished BOINC_SUBMIT of an earlier run that this
-- run resumed in the background (NULL: never resumed).
ALTER TABLE requests ADD COLUMN resumed_session INTEGER REFERENCES sessions(id);
-- Set at start-up when a request of an earlier run can no longer be answered:
-- an unfinished ping/query/fetch/abort/retire/lease, or the stored result of a
-- ping or query (those always run fresh).  Closed rows are never replayed.
ALTER TABLE requests ADD COLUMN closed_at REAL;
-- For a request of an earlier run answered through a re-issued request (same
-- command, arguments and project: its stored result replayed, or the re-issue
-- ran it): that request's requests.id.  Such rows are never delivered again.
ALTER TABLE requests ADD COLUMN replayed_by INTEGER REFERENCES requests(id);

-- Requests not yet answered: still to run, running, or finished but not yet
-- delivered by RESULTS (and neither closed nor answered through a re-issue).
CREATE VIEW audit_undelivered AS
SELECT r.id, r.session_id, r.client_id, r.command, r.args, p.url AS project_url,
       r.state, r.accepted_at, r.started_at, r.completed_at, r.result
FROM requests r LEFT JOIN projects p ON p.id = r.project_id
WHERE r.state <> 'delivered' AND r.closed_at IS NULL AND r.replayed_by IS NULL;

-- What was pending when each server run stopped or died: requests accepted
-- in a run that ended (or crashed) before delivering them, with what became
-- of them afterwards (resumed, replayed to a re-issue, closed, or still
-- waiting).  The current run's own requests are not listed.
CREATE VIEW audit_pending_at_stop AS
SELECT s.id AS session_id,
       CASE WHEN s.clean_exit = 1 THEN 'stopped' ELSE 'crashed' END AS how_it_ended,
       r.id AS request, r.client_id, r.command, r.args, p.url AS project_url,
       CASE WHEN r.completed_at IS NULL OR r.resumed_session IS NOT NULL THEN 'unfinished'
            ELSE 'finished, not delivered' END AS state_at_stop,
       CASE WHEN r.replayed_by IS NOT NULL AND r.resumed_session IS NOT NULL
                 THEN 'resumed in session ' || r.resumed_session
                      || '; answered through re-issued request ' || r.replayed_by
            WHEN r.replayed_by IS NOT NULL THEN 'answered through re-issued request ' || r.replayed_by
            WHEN r.resumed_session IS NOT NULL AND r.completed_at IS NOT NULL
                 THEN 'resumed in session ' || r.resumed_session || ', finished'
            WHEN r.resumed_session IS NOT NULL
                 THEN 'resumed in session ' || r.resumed_session || ', running'
            WHEN r.closed_at IS NOT NULL THEN 'closed (re-issue runs it fresh)'
            ELSE 'waiting for re-issue' END AS what_became_of_it,
       r.result
FROM requests r
JOIN sessions s ON s.id = r.session_id
LEFT JOIN projects p ON p.id = r.project_id
WHERE s.id < (SELECT max(id) FROM sessions)
  AND (r.delivered_at IS NULL OR r.replayed_by IS NOT NULL
       OR r.resumed_session IS NOT NULL OR r.closed_at IS NOT NULL);

-- Submits that start-up resumed in the background.
CREATE VIEW audit_resumed AS
SELECT r.id AS request, r.session_id AS accepted_in, r.resumed_session AS resumed_in,
       r.command, r.args, r.state, r.completed_at, r.result
FROM requests r WHERE r.resumed_session IS NOT NULL;

-- Every batch with its submit progress, jobs and input files.
CREATE VIEW audit_batches AS
SELECT b.id, p.url AS project_url, b.name, b.app, b.server_batch_id, b.step,
       b.failed_step, b.error, b.njobs,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id) AS jobs_recorded,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id AND j.status = 'DONE') AS jobs_done,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id AND j.status = 'ERROR') AS jobs_error,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id) AS files,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id AND f.state = 'uploaded') AS files_uploaded,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id AND f.state = 'confirmed') AS files_already_on_server,
       b.retired, b.lease, b.request_id, b.created_at, b.updated_at
FROM batches b JOIN projects p ON p.id = b.project_id;

-- Jobs with their batch.
CREATE VIEW audit_jobs AS
SELECT b.name AS batch, j.name AS job, j.status, j.updated_at
FROM jobs j JOIN batches b ON b.id = j.batch_id;

-- Input files of each batch: where they came from and how far they got.
CREATE VIEW audit_batch_files AS
SELECT b.name AS batch, f.phys_name, f.local_path, f.size, f.state, f.updated_at
FROM batch_files f JOIN batches b ON b.id = f.batch_id;
