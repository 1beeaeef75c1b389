-- 0016_output_claims (issue 40): never a silent overwrite.  One row per
-- output path (absolute, normalised: Iwd joined, '.', '..' and '//'
-- folded) that a job writes: its outputs after every remap, Out, Err and
-- the BOINC stderr destination.  released_at NULL: the job is live (a
-- BLAH job until its outputs are delivered or it is cancelled); else when
-- it stopped writing the path.  A job may not claim a path whose row
-- belongs to another job that is live, or that was released after the
-- claiming job was submitted (the two were live at the same time).
CREATE TABLE output_claims (
    path        TEXT PRIMARY KEY,
    job         TEXT NOT NULL,
    claimed_at  REAL NOT NULL,
    released_at REAL
);
CREATE INDEX output_claims_job ON output_claims (job);
