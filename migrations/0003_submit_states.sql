-- 0003_submit_states: a submit's progress as the number of a C enum
-- (src/submit_state.h) instead of a step name kept in agreement across a
-- CHECK, macros and code.  Existing journals keep working: every old step
-- name is mapped to its state, and the audit view still shows the names.

DROP VIEW audit_batches;

ALTER TABLE batches ADD COLUMN state INTEGER NOT NULL DEFAULT 0 CHECK (state BETWEEN 0 AND 8);
ALTER TABLE batches ADD COLUMN resume_state INTEGER CHECK (resume_state BETWEEN 0 AND 7);

UPDATE batches SET
    state = CASE step WHEN 'new' THEN 0 WHEN 'hashed' THEN 1 WHEN 'create_sent' THEN 2
                      WHEN 'created' THEN 3 WHEN 'files_known' THEN 4 WHEN 'uploaded' THEN 5
                      WHEN 'submit_sent' THEN 6 WHEN 'submitted' THEN 7 ELSE 8 END,
    resume_state = CASE failed_step WHEN 'new' THEN 0 WHEN 'hashed' THEN 1
                      WHEN 'create_sent' THEN 2 WHEN 'created' THEN 3
                      WHEN 'files_known' THEN 4 WHEN 'uploaded' THEN 5
                      WHEN 'submit_sent' THEN 6 WHEN 'submitted' THEN 7 ELSE NULL END;

ALTER TABLE batches DROP COLUMN step;
ALTER TABLE batches DROP COLUMN failed_step;

-- State numbers as the names doc/auditing.md uses.
CREATE TABLE submit_state_names (
    state INTEGER PRIMARY KEY,           -- src/submit_state.h value
    name  TEXT NOT NULL UNIQUE           -- its name in logs and audits
);
INSERT INTO submit_state_names (state, name) VALUES
    (0, 'new'), (1, 'hashed'), (2, 'create_sent'), (3, 'created'), (4, 'files_known'),
    (5, 'uploaded'), (6, 'submit_sent'), (7, 'submitted'), (8, 'failed');

-- Every batch with its submit progress, jobs and input files.
CREATE VIEW audit_batches AS
SELECT b.id, p.url AS project_url, b.name, b.app, b.server_batch_id,
       (SELECT name FROM submit_state_names WHERE state = b.state) AS step,
       (SELECT name FROM submit_state_names WHERE state = b.resume_state) AS failed_step,
       b.error, b.njobs,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id) AS jobs_recorded,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id AND j.status = 'DONE') AS jobs_done,
       (SELECT count(*) FROM jobs j WHERE j.batch_id = b.id AND j.status = 'ERROR') AS jobs_error,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id) AS files,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id AND f.state = 'uploaded') AS files_uploaded,
       (SELECT count(*) FROM batch_files f WHERE f.batch_id = b.id AND f.state = 'confirmed') AS files_already_on_server,
       b.retired, b.lease, b.request_id, b.created_at, b.updated_at
FROM batches b JOIN projects p ON p.id = b.project_id;
