-- 0020_blah_fetch_numbers (issue 39, nothing parses its own output): a
-- delivered BLAH job's exit code and times as typed columns, no longer as
-- the text "NULL <exit> <elapsed> <cpu>" in fetch_result that
-- BLAH_JOB_STATUS read back.
--
-- blah_jobs.exit_code/wall_s/cpu_s: what an instance of the job reported
-- (exit code, elapsed and CPU seconds); NULL when none did (not yet
-- delivered, or failed on the project with its end known no better).
-- fetch_result now holds only that plain reason of a failure known no
-- better, and is NULL otherwise.
ALTER TABLE blah_jobs ADD COLUMN exit_code INTEGER;
ALTER TABLE blah_jobs ADD COLUMN wall_s REAL;
ALTER TABLE blah_jobs ADD COLUMN cpu_s REAL;
-- Rows delivered before this migration: fetch_result was written with
-- "NULL %ld %.6f %.6f", so after the 5 bytes "NULL " come exactly three
-- fields, each ended by one space but the last (%f never writes a space
-- or an exponent).  s is the text after "NULL ", r1 what follows the
-- exit code in it: "<elapsed> <cpu>".  A row not in that form (a plain
-- reason) is left as it is.
UPDATE blah_jobs SET
    exit_code = CAST(substr(fetch_result, 6, instr(substr(fetch_result, 6), ' ') - 1)
                     AS INTEGER),
    wall_s = CAST((SELECT substr(r1, 1, instr(r1, ' ') - 1) FROM
                   (SELECT substr(s, instr(s, ' ') + 1) AS r1 FROM
                    (SELECT substr(fetch_result, 6) AS s))) AS REAL),
    cpu_s = CAST((SELECT substr(r1, instr(r1, ' ') + 1) FROM
                  (SELECT substr(s, instr(s, ' ') + 1) AS r1 FROM
                   (SELECT substr(fetch_result, 6) AS s))) AS REAL),
    fetch_result = NULL
WHERE fetch_result GLOB 'NULL * * *';
-- The audit view shows the numbers.
DROP VIEW audit_blah_jobs;
CREATE VIEW audit_blah_jobs AS
SELECT bj.gahp_id AS job_id, bj.job_dir, g.batch_name AS batch, g.app,
       g.state AS group_state, j.status AS boinc_status, bj.submitted_at,
       bj.cancelled_at, bj.fetched_at, bj.fetch_result, bj.held_at, bj.held_reason,
       bj.exit_code, bj.wall_s, bj.cpu_s
FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id
LEFT JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name
LEFT JOIN jobs j ON j.batch_id = b.id AND j.name = bj.gahp_id;
