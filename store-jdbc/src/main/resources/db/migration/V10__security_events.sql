-- Security events: what a reviewer wants to see, one row each, never changed once written
-- (approvals requested and decided, runs stopped by a limit, denied imports and network attempts,
-- sandboxes that died). Listed per tenant, newest first, optionally of one kind or one session;
-- event_id ('evt_' + 16 hex digits) breaks ties between events of the same millisecond and is the
-- cursor of the next page. detail_json is a small JSON object (the limit, the module, the reason).
CREATE TABLE security_events (
    event_id     VARCHAR(32)  NOT NULL PRIMARY KEY,
    tenant       VARCHAR(64)  NOT NULL,
    kind         VARCHAR(32)  NOT NULL,
    session_id   VARCHAR(64),
    run_id       VARCHAR(64),
    at           BIGINT       NOT NULL,
    detail_json  TEXT         NOT NULL
);
CREATE INDEX security_events_tenant_at_idx ON security_events (tenant, at);
CREATE INDEX security_events_tenant_kind_at_idx ON security_events (tenant, kind, at);
