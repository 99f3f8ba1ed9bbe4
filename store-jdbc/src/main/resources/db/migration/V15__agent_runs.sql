-- Agent runs (issue 26): a model that writes code and runs it in a session. One row per agent run
-- with its state, what it spent (usage) and its limits (budgets); what is left of each budget is
-- computed on read. Once its status is final (succeeded, failed, cancelled, budget_exhausted,
-- interrupted) neither the row nor its steps change again. instance_id is the server that runs it,
-- so that a server that died leaves its unfinished agent runs to be marked interrupted.
CREATE TABLE agent_runs (
    agent_run_id         VARCHAR(64)  NOT NULL PRIMARY KEY,
    tenant               VARCHAR(64)  NOT NULL,
    instance_id          VARCHAR(64)  NOT NULL,
    status               VARCHAR(32)  NOT NULL,
    task                 TEXT         NOT NULL,
    provider             VARCHAR(32),
    model                TEXT,
    session_id           VARCHAR(64),
    own_session          INTEGER      NOT NULL DEFAULT 0,
    answer               TEXT,
    stop_reason          TEXT,
    error_code           VARCHAR(64),
    retryable            INTEGER,
    approval_id          VARCHAR(64),
    prompt_tokens        BIGINT       NOT NULL DEFAULT 0,
    completion_tokens    BIGINT       NOT NULL DEFAULT 0,
    total_tokens         BIGINT       NOT NULL DEFAULT 0,
    tokens_estimated     INTEGER      NOT NULL DEFAULT 0,
    iterations           INTEGER      NOT NULL DEFAULT 0,
    subcalls             INTEGER      NOT NULL DEFAULT 0,
    seconds              DOUBLE PRECISION NOT NULL DEFAULT 0,
    max_iterations       INTEGER,
    token_budget         BIGINT,
    time_budget_seconds  INTEGER,
    max_subcalls         INTEGER,
    max_depth            INTEGER,
    created_at           BIGINT       NOT NULL,
    ended_at             BIGINT
);
CREATE INDEX agent_runs_tenant_created_idx ON agent_runs (tenant, created_at, agent_run_id);
CREATE INDEX agent_runs_status_idx ON agent_runs (status);

-- What an agent run did, in order: a model reply, a code run (written when it starts and again
-- when it ends: the same idx), a sub-call or another tool. Tokens and tokens_estimated are null
-- where the kind has none.
CREATE TABLE agent_steps (
    agent_run_id      VARCHAR(64)  NOT NULL,
    idx               INTEGER      NOT NULL,
    kind              VARCHAR(16)  NOT NULL,
    text              TEXT,
    code              TEXT,
    run_id            VARCHAR(64),
    run_status        VARCHAR(32),
    output            TEXT,
    tool              TEXT,
    prompt            TEXT,
    tokens_in         INTEGER,
    tokens_out        INTEGER,
    tokens_estimated  INTEGER,
    duration_ms       BIGINT       NOT NULL DEFAULT 0,
    started_at        BIGINT,
    error             TEXT,
    PRIMARY KEY (agent_run_id, idx)
);
