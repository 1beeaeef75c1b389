-- 0007_query_announcements (issue 12): two changes to batch_files.
--
-- 1. A query_files chunk sent with the batch id is journaled, before it
-- leaves, as one row naming its files instead of a state change of each
-- of them (1,000 row rewrites a chunk were most of a resubmit's query
-- time).  A file whose row says 'hashed' and that a row here names is
-- 'query_sent': the server may have associated it with the batch, so it
-- is never queried with the batch id again; the next start resolves it
-- with the batch-less query_files.  The chunk's answer sets the files
-- 'confirmed' or 'absent' and deletes the row, in one transaction.  Rows
-- 'query_sent' in batch_files (journals written before) mean the same and
-- are resolved the same way.
CREATE TABLE batch_file_queries (
    id        INTEGER PRIMARY KEY,
    batch_id  INTEGER NOT NULL REFERENCES batches(id),  -- the batch
    names     TEXT NOT NULL,             -- JSON array of the physical names sent
    sent_at   REAL NOT NULL              -- when it was journaled, just before sending
);
CREATE INDEX batch_file_queries_batch ON batch_file_queries (batch_id);

-- 2. batch_files' CHECK on state becomes a chain of equalities.  SQLite
-- builds an ephemeral table for an IN list of constants once per statement
-- execution, so `state IN ('hashed', ...)` cost 1.3 us on every row
-- inserted or whose state changed (measured with SQLite 3.40: 10,000
-- inserts 30 ms with the IN list, 17 ms without), a third of a 10,000-file
-- submit's bookkeeping.  Same states, same meaning.  A CHECK cannot be
-- altered: the table is rebuilt, its rows copied in rowid order (the
-- first-use order the submit reads them in).  The views that read it are
-- dropped first and made again.
DROP VIEW audit_batches;
DROP VIEW audit_batch_files;
ALTER TABLE batch_files RENAME TO batch_files_0006;
CREATE TABLE batch_files (
    batch_id   INTEGER NOT NULL REFERENCES batches(id),  -- the batch
    phys_name  TEXT NOT NULL,            -- BOINC physical name (md5 + extension)
    local_path TEXT NOT NULL,            -- where the content is read from
    size       INTEGER NOT NULL,         -- bytes, as hashed
    state      TEXT NOT NULL CHECK (state = 'hashed' OR state = 'query_sent' OR
                                    state = 'absent' OR state = 'confirmed' OR
                                    state = 'upload_sent' OR state = 'uploaded'),
    updated_at REAL NOT NULL,            -- last state change
    PRIMARY KEY (batch_id, phys_name)
);
INSERT INTO batch_files (batch_id, phys_name, local_path, size, state, updated_at)
SELECT batch_id, phys_name, local_path, size, state, updated_at FROM batch_files_0006
ORDER BY rowid;
DROP TABLE batch_files_0006;

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

-- The audit view shows a file of an unanswered query as 'query_sent', as
-- before.
CREATE VIEW audit_batch_files AS
SELECT b.name AS batch, f.phys_name, f.local_path, f.size,
       CASE WHEN f.state = 'hashed' AND (f.batch_id, f.phys_name) IN
                 (SELECT q.batch_id, e.value FROM batch_file_queries q, json_each(q.names) e)
            THEN 'query_sent' ELSE f.state END AS state,
       f.updated_at
FROM batch_files f JOIN batches b ON b.id = f.batch_id;
