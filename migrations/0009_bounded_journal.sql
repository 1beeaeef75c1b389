-- 0009_bounded_journal (issue 19): a journal whose size does not grow with
-- the life of the server.  Besides these statements, the program turns on
-- PRAGMA auto_vacuum = INCREMENTAL once this version is reached, with a
-- one-time VACUUM of an existing journal (a VACUUM cannot run inside the
-- migration's transaction; src/journal/journal.c), and every prune then
-- returns the free pages with PRAGMA incremental_vacuum.

-- 1 when the request's result is about the moment it was computed (a
-- ping, a status query: commands that are never replayed): the result is
-- kept only until it is delivered, then set to NULL (a result start-up
-- closed stays for the audit until the retention prunes the row).  A status
-- reply of a 10,000-job batch is ~430 KB; polled every minute, keeping it
-- grew the journal by that much a minute.
ALTER TABLE requests ADD COLUMN transient INTEGER NOT NULL DEFAULT 0;
-- Such a result waits for its delivery here, not in requests.result: a
-- 430 KB value written into a requests row and cleared again left its
-- b-tree pages split and half empty (about 2 KB a poll, measured), while a
-- row of this table goes whole, its pages freed.
CREATE TABLE transient_results (
    request_id INTEGER PRIMARY KEY REFERENCES requests(id),  -- the request
    result     TEXT NOT NULL             -- its result tail, until delivered
);
UPDATE requests SET transient = 1
WHERE command = 'BOINC_PING' OR command = 'BOINC_QUERY_BATCHES';
UPDATE requests SET result = NULL
WHERE transient = 1 AND state = 'delivered';

-- Session in which the client confirmed an earlier run's submit without
-- re-issuing it: a status query naming its batch got a group of its jobs
-- (HTCondor's grid manager queries the batch it is unsure of after a
-- restart, and re-issues BOINC_SUBMIT only for an empty group).  Such a
-- request is answered: no longer undelivered, not kept for replay.
ALTER TABLE requests ADD COLUMN confirmed_in INTEGER REFERENCES sessions(id);

-- The views that tell what became of a request know both.  A submit that
-- failed before its inputs were hashed (a missing or unreadable input)
-- keeps state 0 ('new', nothing recorded to resume from) with its error:
-- audit_batches shows it as failed at step 'new'.
DROP VIEW audit_undelivered;
DROP VIEW audit_pending_at_stop;
DROP VIEW audit_batches;

CREATE VIEW audit_undelivered AS
SELECT r.id, r.session_id, r.client_id, r.command, r.args, p.url AS project_url,
       r.state, r.accepted_at, r.started_at, r.completed_at,
       coalesce(r.result, (SELECT t.result FROM transient_results t
                           WHERE t.request_id = r.id)) AS result
FROM requests r LEFT JOIN projects p ON p.id = r.project_id
WHERE r.state <> 'delivered' AND r.closed_at IS NULL AND r.replayed_by IS NULL
  AND r.confirmed_in IS NULL;

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
            WHEN r.confirmed_in IS NOT NULL AND r.resumed_session IS NOT NULL
                 THEN 'resumed in session ' || r.resumed_session
                      || '; confirmed by a status query in session ' || r.confirmed_in
            WHEN r.confirmed_in IS NOT NULL
                 THEN 'confirmed by a status query in session ' || r.confirmed_in
            WHEN r.resumed_session IS NOT NULL AND r.completed_at IS NOT NULL
                 THEN 'resumed in session ' || r.resumed_session || ', finished'
            WHEN r.resumed_session IS NOT NULL
                 THEN 'resumed in session ' || r.resumed_session || ', running'
            WHEN r.closed_at IS NOT NULL THEN 'closed (re-issue runs it fresh)'
            ELSE 'waiting for re-issue' END AS what_became_of_it,
       coalesce(r.result, (SELECT t.result FROM transient_results t
                           WHERE t.request_id = r.id)) AS result
FROM requests r
JOIN sessions s ON s.id = r.session_id
LEFT JOIN projects p ON p.id = r.project_id
WHERE s.id < (SELECT max(id) FROM sessions)
  AND (r.delivered_at IS NULL OR r.replayed_by IS NOT NULL
       OR r.resumed_session IS NOT NULL OR r.closed_at IS NOT NULL
       OR r.confirmed_in IS NOT NULL);

CREATE VIEW audit_batches AS
SELECT b.id, p.url AS project_url, b.name, b.app, b.server_batch_id,
       CASE WHEN b.state = 0 AND b.error IS NOT NULL THEN 'failed'
            ELSE (SELECT name FROM submit_state_names WHERE state = b.state) END AS step,
       CASE WHEN b.state = 0 AND b.error IS NOT NULL THEN 'new'
            ELSE (SELECT name FROM submit_state_names WHERE state = b.resume_state)
            END AS failed_step,
       b.error, b.njobs,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id) AS jobs_recorded,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id AND j.status = 'DONE') AS jobs_done,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id AND j.status = 'ERROR') AS jobs_error,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id) AS files,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id AND f.state = 'uploaded') AS files_uploaded,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id AND f.state = 'confirmed') AS files_already_on_server,
       b.retired, b.lease, b.request_id, b.created_at, b.updated_at
FROM batches b JOIN projects p ON p.id = b.project_id;
