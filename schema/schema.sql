-- schema.sql: the current journal schema (migrations 0001 to 0020;
-- PRAGMA user_version = 20: the runner counts the files in order; since
-- 0009 PRAGMA auto_vacuum = INCREMENTAL), as the
-- migrations in migrations/ build it; read this to audit a journal with sqlite3.
-- A unit test checks that it equals the result of applying every migration.


-- One row per server run.
CREATE TABLE sessions (
    id             INTEGER PRIMARY KEY,  -- session number
    started_at     REAL NOT NULL,        -- when the server started
    pid            INTEGER NOT NULL,     -- its process id
    version        TEXT NOT NULL,        -- boinc_gahp version string
    condor_version TEXT,                 -- what the client sent with CONDOR_VERSION
    ended_at       REAL,                 -- when it stopped (NULL: running or crashed)
    clean_exit     INTEGER               -- 1 after QUIT/EOF shutdown, NULL if it crashed
);

-- BOINC projects selected with BOINC_SELECT_PROJECT (or the config file).
-- The authenticator (and a URL's password) is stored because recovery needs
-- it to resume work; it is never written to logs, result lines or views.
CREATE TABLE projects (
    id            INTEGER PRIMARY KEY,   -- project number
    url           TEXT NOT NULL,         -- normalised project URL, ends in '/'
    authenticator TEXT NOT NULL,         -- account authenticator (secret)
    first_used_at REAL NOT NULL,         -- first time a request used it
    url_password  TEXT,                  -- (0006) password of the URL's user information
                                         -- (secret); url then shows it as "***"
    status_seq    INTEGER NOT NULL DEFAULT 0,  -- (0008) last job status change number: the
                                         -- token a query hands the client as its server_time
    UNIQUE (url, authenticator)
);

-- One row per accepted asynchronous command (write-ahead: inserted and
-- committed before the client is told "S").
CREATE TABLE requests (
    id           INTEGER PRIMARY KEY,    -- internal request number
    session_id   INTEGER NOT NULL REFERENCES sessions(id),  -- run that accepted it
    client_id    INTEGER NOT NULL,       -- the client's request id (reused across runs)
    command      TEXT NOT NULL,          -- e.g. BOINC_SUBMIT
    args         TEXT NOT NULL,          -- escaped arguments after the request id (an answered
                                         -- submit whose batch has its job_set_md5: a short note
                                         -- instead, from the first prune after; 0009)
    project_id   INTEGER REFERENCES projects(id),  -- selected project (NULL: none)
    state        TEXT NOT NULL CHECK (state = 'accepted' OR state = 'started' OR state = 'completed' OR state = 'delivered'),
                                         -- life cycle of the request
    accepted_at  REAL NOT NULL,          -- committed to the journal
    started_at   REAL,                   -- a worker began executing it
    completed_at REAL,                   -- its result was committed
    delivered_at REAL,                   -- RESULTS wrote and flushed the result
    result       TEXT,                   -- result line after "<client_id> ", escaped
    resumed_session INTEGER REFERENCES sessions(id),
                                         -- (0002) run that resumed this unfinished submit at start-up
    closed_at    REAL,                   -- (0002) start-up gave up answering it (earlier run; ping,
                                         -- query, or unfinished non-submit): never replayed
    replayed_by  INTEGER REFERENCES requests(id),
                                         -- (0002) re-issued request through which this one was
                                         -- answered (stored result replayed, or the re-issue ran)
    transient    INTEGER NOT NULL DEFAULT 0,
                                         -- (0009) 1: a result about its moment (ping, status
                                         -- query): kept in transient_results until delivered
    confirmed_in INTEGER REFERENCES sessions(id)
                                         -- (0009) an earlier run's submit the client confirmed
                                         -- in this session by a status query of its batch
);
-- Recovery and pruning look requests up by state.
CREATE INDEX requests_state ON requests (state, id);
-- Re-issued requests are matched by command and arguments: found through
-- the first 64 characters of the arguments (0014; the whole text as a key
-- held a second copy of every submit's text), then compared whole.
CREATE INDEX requests_command_args_prefix ON requests (command, substr(args, 1, 64));

-- (0009) The result of a transient request (ping, status query) until it
-- is delivered: kept apart so that a large reply leaves no half-empty
-- pages in requests once it goes.
CREATE TABLE transient_results (
    request_id INTEGER PRIMARY KEY REFERENCES requests(id),  -- the request
    result     TEXT NOT NULL             -- its result tail, until delivered
);

-- BOINC batches this server created or is creating (filled by BOINC_SUBMIT).
CREATE TABLE batches (
    id              INTEGER PRIMARY KEY, -- internal batch number
    project_id      INTEGER NOT NULL REFERENCES projects(id),  -- where it lives
    name            TEXT NOT NULL,       -- batch name as given by the client
    app             TEXT NOT NULL,       -- BOINC application name
    server_batch_id INTEGER,             -- the server's batch id once created
    error           TEXT,                -- when state = 8 (failed): the error result given to the client
    spec_md5        TEXT NOT NULL,       -- MD5 of the submit's argument text (the re-issue identity
                                         -- only for a batch whose job_set_md5 cannot be computed)
    njobs           INTEGER NOT NULL,    -- number of jobs in the batch
    retired         INTEGER NOT NULL DEFAULT 0,  -- 1 after BOINC_RETIRE_BATCH succeeded
    lease           REAL,                -- expire time last set on the server
    request_id      INTEGER REFERENCES requests(id),  -- the submit that owns it
    created_at      REAL NOT NULL,       -- row creation
    updated_at      REAL NOT NULL,       -- last change
    state INTEGER NOT NULL DEFAULT 0 CHECK (state BETWEEN 0 AND 8),
                                         -- submit progress, enum batch_state of src/submit_state.h
                                         -- (names in submit_state_names); *_sent = request announced,
                                         -- outcome not yet recorded (resolved by asking the server
                                         -- with a safe query before acting again)
    resume_state INTEGER CHECK (resume_state BETWEEN 0 AND 7),
                                         -- when state = 8 (failed): the state a re-issue resumes from
    job_set_md5     TEXT,                -- (0004) MD5 of the job set (name, app, each job's name,
                                         -- arguments, inputs; order-free); NULL: computed on first use
    status_server_time REAL,             -- (0004) server_time of the last recorded status query
    client_session  INTEGER,             -- (0008) session in which the client took the batch as
                                         -- submitted (until then a query lists all its jobs)
    job_lo          INTEGER,             -- (0012) smallest jobs.id of its jobs (NULL: none): a
    job_hi          INTEGER,             -- (0012) largest; a batch's jobs are one run of row ids,
                                         -- read in submit order without a sort
    unchanged_seq   INTEGER,             -- (0013) change number of its jobs whose status has not
                                         -- changed since the submit (status_seq 0); NULL until a
                                         -- query first recorded a group of its jobs
    may_pass        INTEGER NOT NULL DEFAULT 0,  -- (0017) 1: the last failure was the project
                                         -- not answering (it may pass; a BLAH group is
                                         -- submitted again), 0: final or none
    bad_input       TEXT,                -- (0018) the local input whose refusal failed the
                                         -- last submit attempt (NULL: none, or not one input)
    bad_input_why   TEXT,                -- (0018) why, as the job that gave it is told
    error_msg       TEXT,                -- (0019) error as plain text (NULL: none, or journaled
                                         -- before 0019)
    UNIQUE (project_id, name)
);

-- Jobs of those batches.
CREATE TABLE jobs (
    id         INTEGER PRIMARY KEY,      -- internal job number
    batch_id   INTEGER NOT NULL REFERENCES batches(id),  -- its batch
    name       TEXT NOT NULL,            -- job name as given by the client
    status     TEXT,                     -- last status seen on the server (DONE, ERROR, ...); at
                                         -- submit UNSENT, a new job's status on a server (0013)
    updated_at REAL NOT NULL,            -- when status last changed
    status_seq INTEGER NOT NULL DEFAULT 0,  -- (0008) change number of the last status change
    aborted    INTEGER NOT NULL DEFAULT 0,  -- (0008) 1 once BOINC_ABORT_JOBS named it: never
                                         -- reported again
    UNIQUE (batch_id, name)
);
-- (0008) the jobs of a batch changed since a number
CREATE INDEX jobs_batch_status_seq ON jobs (batch_id, status_seq);

-- MD5 of local input files, so unchanged files are not read again.
CREATE TABLE file_md5_cache (
    path      TEXT PRIMARY KEY,          -- absolute local path
    size      INTEGER NOT NULL,          -- st_size when hashed
    mtime_ns  INTEGER NOT NULL,          -- st_mtime in nanoseconds when hashed
    inode     INTEGER NOT NULL,          -- st_ino when hashed
    md5       TEXT NOT NULL,             -- lowercase hex digest
    hashed_at REAL NOT NULL              -- when it was computed
);

-- Input files of each batch and how far their upload got.
CREATE TABLE batch_files (
    id         INTEGER PRIMARY KEY,      -- (0011) stable row id: a submit changes
                                         -- states by id, which VACUUM keeps
    batch_id   INTEGER NOT NULL REFERENCES batches(id),  -- the batch
    phys_name  TEXT NOT NULL,            -- BOINC physical name (md5 + extension)
    local_path TEXT NOT NULL,            -- where the content is read from
    size       INTEGER NOT NULL,         -- bytes, as hashed
    state      TEXT NOT NULL CHECK (state = 'hashed' OR state = 'query_sent' OR
                                    state = 'absent' OR state = 'confirmed' OR
                                    state = 'upload_sent' OR state = 'uploaded'),
                                         -- (0007: equalities, not an IN list, which SQLite
                                         -- evaluates through a table built per statement)
                                         -- hashed locally / query_files with the batch id sent
                                         -- (journals before 0007; now batch_file_queries) /
                                         -- server lacks it / server had it (now associated) /
                                         -- upload_files sent / we uploaded it
    updated_at REAL NOT NULL,            -- last state change
    UNIQUE (batch_id, phys_name)
);

-- (0007) query_files chunks sent with the batch id whose answer is not
-- journaled yet: a 'hashed' file a row here names is in fact 'query_sent'
-- (never queried with the batch id again; resolved by the batch-less
-- query_files).  The answer updates the files and deletes the row.
CREATE TABLE batch_file_queries (
    id        INTEGER PRIMARY KEY,
    batch_id  INTEGER NOT NULL REFERENCES batches(id),  -- the batch
    names     TEXT NOT NULL,             -- JSON array of the physical names sent
    sent_at   REAL NOT NULL              -- when it was journaled, just before sending
);
CREATE INDEX batch_file_queries_batch ON batch_file_queries (batch_id);

-- (0005) Upload limits learned from a project's limit errors (max_file_uploads,
-- post_max_size): later submits and runs start with the smaller chunk.
CREATE TABLE upload_limits (
    project_id INTEGER PRIMARY KEY REFERENCES projects(id),  -- the project
    max_files  INTEGER NOT NULL,         -- files per upload_files request (learned)
    max_bytes  INTEGER NOT NULL,         -- file bytes per upload_files request (learned)
    learned_at REAL NOT NULL,            -- when it was last lowered
    reason     TEXT NOT NULL             -- the server's error that taught it
);

-- ---- audit views (migration 0002; doc/auditing.md) ----

-- Requests not yet answered: still to run, running, or finished but not yet
-- delivered by RESULTS (and neither closed nor answered through a re-issue).
CREATE VIEW audit_undelivered AS
SELECT r.id, r.session_id, r.client_id, r.command, r.args, p.url AS project_url,
       r.state, r.accepted_at, r.started_at, r.completed_at,
       coalesce(r.result, (SELECT t.result FROM transient_results t
                           WHERE t.request_id = r.id)) AS result
FROM requests r LEFT JOIN projects p ON p.id = r.project_id
WHERE r.state <> 'delivered' AND r.closed_at IS NULL AND r.replayed_by IS NULL
  AND r.confirmed_in IS NULL;

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

-- Submits that start-up resumed in the background.
CREATE VIEW audit_resumed AS
SELECT r.id AS request, r.session_id AS accepted_in, r.resumed_session AS resumed_in,
       r.command, r.args, r.state, r.completed_at, r.result
FROM requests r WHERE r.resumed_session IS NOT NULL;

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

-- Jobs with their batch.
CREATE VIEW audit_jobs AS
SELECT b.name AS batch, j.name AS job, j.status, j.updated_at
FROM jobs j JOIN batches b ON b.id = j.batch_id;

-- Input files of each batch: where they came from and how far they got
-- (a file of an unanswered query shows as 'query_sent').
CREATE VIEW audit_batch_files AS
SELECT b.name AS batch, f.phys_name, f.local_path, f.size,
       CASE WHEN f.state = 'hashed' AND (f.batch_id, f.phys_name) IN
                 (SELECT q.batch_id, e.value FROM batch_file_queries q, json_each(q.names) e)
            THEN 'query_sent' ELSE f.state END AS state,
       f.updated_at
FROM batch_files f JOIN batches b ON b.id = f.batch_id;

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
    fetch_result TEXT,                   -- the plain reason a job that failed on the project
                                         -- was delivered with no instance's exit code; NULL
                                         -- otherwise (0020: before it, also the numbers as
                                         -- "NULL <exit> <elapsed> <cpu>", moved below)
    held_at      REAL,                   -- (0018) held alone for a problem of its own
    held_reason  TEXT,                   -- (0018) the hold reason HTCondor shows
    exit_code    INTEGER,                -- (0020) the exit code an instance reported, once
                                         -- delivered; NULL: none did, or not delivered
    wall_s       REAL,                   -- (0020) its elapsed (wall clock) seconds; NULL as
                                         -- exit_code
    cpu_s        REAL                    -- (0020) its CPU seconds; NULL as exit_code
);
CREATE INDEX blah_jobs_dir ON blah_jobs (job_dir);
CREATE INDEX blah_jobs_group ON blah_jobs (group_id);
CREATE INDEX blah_groups_state ON blah_groups (state);
-- Each BLAH job with its group, batch and last status seen on the server.
-- (0018: with when a job was held alone, and why; 0020: with its exit
-- code and times)
CREATE VIEW audit_blah_jobs AS
SELECT bj.gahp_id AS job_id, bj.job_dir, g.batch_name AS batch, g.app,
       g.state AS group_state, j.status AS boinc_status, bj.submitted_at,
       bj.cancelled_at, bj.fetched_at, bj.fetch_result, bj.held_at, bj.held_reason,
       bj.exit_code, bj.wall_s, bj.cpu_s
FROM blah_jobs bj JOIN blah_groups g ON g.id = bj.group_id
LEFT JOIN batches b ON b.project_id = g.project_id AND b.name = g.batch_name
LEFT JOIN jobs j ON j.batch_id = b.id AND j.name = bj.gahp_id;

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
