-- Run history. Portable SQL: runs on SQLite (embedded default) and PostgreSQL.
-- Nested values (error, MIME bundles, artifacts ...) are JSON text.
CREATE TABLE runs (
    id               VARCHAR(64)  NOT NULL PRIMARY KEY,
    session_id       VARCHAR(64),
    parent_run_id    VARCHAR(64),
    instance_id      VARCHAR(64)  NOT NULL,
    description      TEXT,
    status           VARCHAR(32)  NOT NULL,
    message          TEXT,
    code             TEXT         NOT NULL,
    code_hash        CHAR(64)     NOT NULL,
    stdout           TEXT,
    stderr           TEXT,
    stdout_truncated INTEGER      NOT NULL DEFAULT 0,
    stderr_truncated INTEGER      NOT NULL DEFAULT 0,
    stdout_bytes     BIGINT       NOT NULL DEFAULT 0,
    stderr_bytes     BIGINT       NOT NULL DEFAULT 0,
    exit_code        INTEGER,
    error_name       VARCHAR(200),
    error_json       TEXT,
    result_json      TEXT,
    displays_json    TEXT,
    outputs_json     TEXT,
    artifacts_json   TEXT,
    artifacts_dir    TEXT,
    timeout_seconds  INTEGER      NOT NULL,
    backend          VARCHAR(32),
    created_at       BIGINT       NOT NULL,
    finished_at      BIGINT,
    duration_ms      BIGINT
);

CREATE INDEX runs_created_idx ON runs (created_at);
CREATE INDEX runs_session_idx ON runs (session_id, created_at);
CREATE INDEX runs_status_idx ON runs (status, created_at);
