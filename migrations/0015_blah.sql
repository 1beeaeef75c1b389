-- 0015_blah (issue 32): the BLAH dialect of HTCondor 10.0-25.x
-- (grid_resource = batch boinc).  Each BLAH_JOB_SUBMIT is one row of
-- blah_jobs, keyed by the job's JobDirectory; jobs that arrive close
-- together for one project and app gather in a blah_groups row, which
-- becomes one BOINC batch through an internal BLAH_GROUP_SUBMIT request
-- (the ordinary submit engine: journaled steps, resumed after a crash).
CREATE TABLE blah_groups (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id),
    app         TEXT NOT NULL,
    memory_mb   REAL NOT NULL DEFAULT 0,
    batch_name  TEXT NOT NULL UNIQUE,
    state       TEXT NOT NULL CHECK (state = 'open' OR state = 'closed' OR state = 'empty'),
    opened_at   REAL NOT NULL,
    closed_at   REAL,
    njobs       INTEGER NOT NULL DEFAULT 0,
    request_id  INTEGER REFERENCES requests(id)
);
CREATE TABLE blah_jobs (
    id           INTEGER PRIMARY KEY,
    group_id     INTEGER NOT NULL REFERENCES blah_groups(id),
    job_dir      TEXT NOT NULL,
    gahp_id      TEXT NOT NULL UNIQUE,
    spec         TEXT NOT NULL,
    fetch_args   TEXT NOT NULL,
    submitted_at REAL NOT NULL,
    cancelled_at REAL,
    abort_state  INTEGER NOT NULL DEFAULT 0 CHECK (abort_state BETWEEN 0 AND 2),
    fetch_started_at REAL,
    fetched_at   REAL,
    fetch_result TEXT
);
CREATE INDEX blah_jobs_dir ON blah_jobs (job_dir);
CREATE INDEX blah_jobs_group ON blah_jobs (group_id);
CREATE INDEX blah_groups_state ON blah_groups (state);
-- Each BLAH job with its group, batch and last status seen on the server.
CREATE VIEW audit_blah_jobs AS
SELECT bj.gahp_id AS job_id, bj.job_dir, g.batch_name AS batch, g.app,
       g.state AS group_state, j.status AS boinc_status, bj.submitted_at,
       bj.cancelled_at, bj.fetched_at, bj.fetch_result
FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id
LEFT JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name
LEFT JOIN jobs j ON j.batch_id = b.id AND j.name = bj.gahp_id;
