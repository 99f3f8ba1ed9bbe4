-- Sessions, as the server that owns each one last reported it: for `pysandbox sessions` and for
-- other processes sharing this data directory. The owning server is the only one that changes a
-- row, except close_requested, which anyone may set to ask the owner to close it.
CREATE TABLE sessions (
    id               VARCHAR(64)  NOT NULL PRIMARY KEY,
    instance_id      VARCHAR(64)  NOT NULL,
    state            VARCHAR(16)  NOT NULL,
    created_at       BIGINT       NOT NULL,
    last_used_at     BIGINT       NOT NULL,
    closed_at        BIGINT,
    run_count        INTEGER      NOT NULL DEFAULT 0,
    workspace_bytes  BIGINT       NOT NULL DEFAULT 0,
    ttl_minutes      INTEGER      NOT NULL,
    dead_reason      TEXT,
    close_requested  INTEGER      NOT NULL DEFAULT 0
);

CREATE INDEX sessions_state_idx ON sessions (state, instance_id);
