-- 0005_upload_limits: upload limits learned from a project's replies.
-- A server whose PHP limits (max_file_uploads, post_max_size) are lower
-- than the configured upload chunk answers with a limit error; the smaller
-- chunk that then works is remembered here so later submits (and later
-- runs) start with it instead of failing again.
CREATE TABLE upload_limits (
    project_id INTEGER PRIMARY KEY REFERENCES projects(id),  -- the project
    max_files  INTEGER NOT NULL,         -- files per upload_files request (learned)
    max_bytes  INTEGER NOT NULL,         -- file bytes per upload_files request (learned)
    learned_at REAL NOT NULL,            -- when it was last lowered
    reason     TEXT NOT NULL             -- the server's error that taught it
);
