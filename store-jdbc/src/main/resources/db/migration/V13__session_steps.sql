-- What changed a session's state besides its runs (set_context, clear_context, upload_file,
-- download_file), in order, so that export_session writes a notebook that re-runs: the globals set
-- (as JSON) and the files put into the workspace (path, size, sha256). after_run_id is the
-- session's last run begun before the step (null: none yet), which places it among the runs.
CREATE TABLE session_steps (
    step_id       INTEGER      PRIMARY KEY,
    tenant        VARCHAR(64)  NOT NULL,
    session_id    VARCHAR(64)  NOT NULL,
    kind          VARCHAR(16)  NOT NULL,
    at            BIGINT       NOT NULL,
    after_run_id  VARCHAR(64),
    detail_json   TEXT         NOT NULL
);
CREATE INDEX session_steps_session_idx ON session_steps (tenant, session_id, step_id);
