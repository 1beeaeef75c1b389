-- 0011_batch_file_ids (issue 22): batch_files gets an explicit
-- `id INTEGER PRIMARY KEY`.  A submit changes its files' states by row id
-- (a chunk of consecutive ids as one `id BETWEEN` range, a scattered list
-- through json_each) instead of by name: a name is an index seek per file
-- through the (batch_id, phys_name) index, an id a seek in the table
-- itself (a 10,000-file submit: doc/performance.md, perf-files).  The ids
-- are read from the journal and written back later, so they must not
-- change in between: VACUUM may renumber the implicit rowid of a table
-- without an INTEGER PRIMARY KEY, never an explicit one.  (batch_id,
-- phys_name) stays unique and indexed (INSERT OR IGNORE, the audit view).
--
-- A primary key cannot be altered: the table is rebuilt with its rows'
-- rowids kept as their ids (the insertion order the submit lists them
-- in), after the views that read it are dropped; they are made again,
-- unchanged.
DROP VIEW audit_batches;
DROP VIEW audit_batch_files;
ALTER TABLE batch_files RENAME TO batch_files_0010;
CREATE TABLE batch_files (
    id         INTEGER PRIMARY KEY,      -- (0011) stable row id
    batch_id   INTEGER NOT NULL REFERENCES batches(id),  -- the batch
    phys_name  TEXT NOT NULL,            -- BOINC physical name (md5 + extension)
    local_path TEXT NOT NULL,            -- where the content is read from
    size       INTEGER NOT NULL,         -- bytes, as hashed
    state      TEXT NOT NULL CHECK (state = 'hashed' OR state = 'query_sent' OR
                                    state = 'absent' OR state = 'confirmed' OR
                                    state = 'upload_sent' OR state = 'uploaded'),
    updated_at REAL NOT NULL,            -- last state change
    UNIQUE (batch_id, phys_name)
);
INSERT INTO batch_files (id, batch_id, phys_name, local_path, size, state, updated_at)
SELECT rowid, batch_id, phys_name, local_path, size, state, updated_at FROM batch_files_0010
ORDER BY rowid;
DROP TABLE batch_files_0010;

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

CREATE VIEW audit_batch_files AS
SELECT b.name AS batch, f.phys_name, f.local_path, f.size,
       CASE WHEN f.state = 'hashed' AND (f.batch_id, f.phys_name) IN
                 (SELECT q.batch_id, e.value FROM batch_file_queries q, json_each(q.names) e)
            THEN 'query_sent' ELSE f.state END AS state,
       f.updated_at
FROM batch_files f JOIN batches b ON b.id = f.batch_id;
