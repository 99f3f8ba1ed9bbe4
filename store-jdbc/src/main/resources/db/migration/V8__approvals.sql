-- Keys have a role: 'agent' (the default: what every key could do before) or 'approver' (may also
-- decide approvals over REST).
ALTER TABLE api_keys ADD COLUMN role VARCHAR(16) NOT NULL DEFAULT 'agent';

-- A run that waits for a person's approval, and the findings of its analysis (every run's, once
-- analysed; JSON text).
ALTER TABLE runs ADD COLUMN approval_id VARCHAR(64);
ALTER TABLE runs ADD COLUMN risk_findings_json TEXT;

-- One approval per run that had to wait. Single use: pending, then approved, denied or expired,
-- never back. The server that holds the run (instance_id) executes it once approved; a live server
-- adopts the approved runs of a dead one.
CREATE TABLE approvals (
    approval_id     VARCHAR(64)  NOT NULL PRIMARY KEY,
    run_id          VARCHAR(64)  NOT NULL UNIQUE,
    tenant          VARCHAR(64)  NOT NULL,
    session_id      VARCHAR(64),
    instance_id     VARCHAR(64)  NOT NULL,
    state           VARCHAR(16)  NOT NULL,
    why             TEXT         NOT NULL,
    requested_at    BIGINT       NOT NULL,
    expires_at      BIGINT       NOT NULL,
    decided_at      BIGINT,
    decided_by      TEXT,
    decided_via     VARCHAR(16),
    decision_reason TEXT
);
CREATE INDEX approvals_tenant_state_idx ON approvals (tenant, state, requested_at);
CREATE INDEX approvals_state_idx ON approvals (state, expires_at);
