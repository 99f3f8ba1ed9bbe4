-- Every run and session belongs to a tenant (the owner of the API key that made it; `local` for
-- stdio and the CLI, and for everything recorded before tenants). Session ids are per tenant: two
-- tenants may each have a session `default`, so the sessions table's key becomes (tenant, id).
ALTER TABLE runs ADD COLUMN tenant VARCHAR(64) NOT NULL DEFAULT 'local';
-- The X-Request-Id of the HTTP request that started a run (null for stdio and the CLI).
ALTER TABLE runs ADD COLUMN request_id VARCHAR(64);
DROP INDEX runs_created_idx;
DROP INDEX runs_session_idx;
DROP INDEX runs_status_idx;
CREATE INDEX runs_tenant_created_idx ON runs (tenant, created_at);
CREATE INDEX runs_tenant_session_idx ON runs (tenant, session_id, created_at);
CREATE INDEX runs_tenant_status_idx ON runs (tenant, status, created_at);

CREATE TABLE sessions_by_tenant (
    tenant           VARCHAR(64)  NOT NULL,
    id               VARCHAR(64)  NOT NULL,
    instance_id      VARCHAR(64)  NOT NULL,
    state            VARCHAR(16)  NOT NULL,
    created_at       BIGINT       NOT NULL,
    last_used_at     BIGINT       NOT NULL,
    closed_at        BIGINT,
    run_count        INTEGER      NOT NULL DEFAULT 0,
    workspace_bytes  BIGINT       NOT NULL DEFAULT 0,
    ttl_minutes      INTEGER      NOT NULL,
    dead_reason      TEXT,
    close_requested  INTEGER      NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, id)
);
INSERT INTO sessions_by_tenant (tenant, id, instance_id, state, created_at, last_used_at,
    closed_at, run_count, workspace_bytes, ttl_minutes, dead_reason, close_requested)
SELECT 'local', id, instance_id, state, created_at, last_used_at, closed_at, run_count,
    workspace_bytes, ttl_minutes, dead_reason, close_requested
FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_by_tenant RENAME TO sessions;
CREATE INDEX sessions_state_idx ON sessions (state, instance_id);
