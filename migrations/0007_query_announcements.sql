-- 0007_query_announcements (issue 12): a query_files chunk sent with the
-- batch id is journaled, before it leaves, as one row naming its files
-- instead of a state change of each of them (1,000 row rewrites a chunk
-- were most of a resubmit's query time).  A file whose row says 'hashed'
-- and that a row here names is 'query_sent': the server may have associated
-- it with the batch, so it is never queried with the batch id again; the
-- next start resolves it with the batch-less query_files.  The chunk's
-- answer sets the files 'confirmed' or 'absent' and deletes the row, in
-- one transaction.  Rows 'query_sent' in batch_files (journals written
-- before) mean the same and are resolved the same way.
CREATE TABLE batch_file_queries (
    id        INTEGER PRIMARY KEY,
    batch_id  INTEGER NOT NULL REFERENCES batches(id),  -- the batch
    names     TEXT NOT NULL,             -- JSON array of the physical names sent
    sent_at   REAL NOT NULL              -- when it was journaled, just before sending
);
CREATE INDEX batch_file_queries_batch ON batch_file_queries (batch_id);

-- The audit view shows a file of an unanswered query as 'query_sent', as
-- before.
DROP VIEW audit_batch_files;
CREATE VIEW audit_batch_files AS
SELECT b.name AS batch, f.phys_name, f.local_path, f.size,
       CASE WHEN f.state = 'hashed' AND (f.batch_id, f.phys_name) IN
                 (SELECT q.batch_id, e.value FROM batch_file_queries q, json_each(q.names) e)
            THEN 'query_sent' ELSE f.state END AS state,
       f.updated_at
FROM batch_files f JOIN batches b ON b.id = f.batch_id;
