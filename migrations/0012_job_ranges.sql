-- 0012_job_ranges (issue 22): the row ids a batch's jobs span, so that a
-- status query reads them in submit order by a rowid range instead of
-- through an index and a sort (the ORDER BY jobs.id of the job list built
-- a temporary b-tree of every job of the batch at each query: about 23 M
-- instructions per 10,000 jobs, callgrind, SQLite 3.40).  A batch's jobs
-- are inserted in one transaction, so they are one run of row ids; every
-- read also checks jobs.batch_id, so a range that spans other rows only
-- costs their reading.  NULL: the batch has no job rows.  Independent of
-- 0011.

-- Smallest and largest jobs.id of the batch's jobs.
ALTER TABLE batches ADD COLUMN job_lo INTEGER;
ALTER TABLE batches ADD COLUMN job_hi INTEGER;
UPDATE batches
   SET job_lo = (SELECT min(id) FROM jobs WHERE jobs.batch_id = batches.id),
       job_hi = (SELECT max(id) FROM jobs WHERE jobs.batch_id = batches.id);
