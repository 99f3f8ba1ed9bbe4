-- Provenance: what ran each run (set when it is recorded).
ALTER TABLE runs ADD COLUMN interpreter VARCHAR(32);
ALTER TABLE runs ADD COLUMN env_hash CHAR(64);
ALTER TABLE runs ADD COLUMN server_version VARCHAR(32);
-- The run's link in the hash chain (a copy of run_chain.record_sha256, for get_run); null until
-- the run is sealed, shortly after it finishes.
ALTER TABLE runs ADD COLUMN record_sha256 CHAR(64);
CREATE INDEX runs_unsealed_idx ON runs (finished_at) WHERE record_sha256 IS NULL;

-- Tamper evidence. Every finished run is sealed once, in the order runs are sealed: its
-- record_sha256 is the sha256 of a canonical JSON of its record (the columns of version 1, see
-- RecordHash) with the sha256 of each file it kept and the previous link's record_sha256. A run
-- deleted through delete_run or purge_runs leaves its row here as a tombstone (deleted_at set),
-- so that the links after it still verify.
CREATE TABLE run_chain (
    seq            BIGINT       NOT NULL PRIMARY KEY,
    run_id         VARCHAR(64)  NOT NULL UNIQUE,
    tenant         VARCHAR(64)  NOT NULL,
    hash_version   INTEGER      NOT NULL,
    prev_sha256    CHAR(64)     NOT NULL,
    record_sha256  CHAR(64)     NOT NULL,
    sealed_at      BIGINT       NOT NULL,
    deleted_at     BIGINT,
    deleted_reason TEXT
);

-- The chain's last link, one row. A sealer updates it first in its transaction, which takes the
-- database's write lock before the head is read: two servers never link to the same head.
CREATE TABLE run_chain_head (
    id             INTEGER      NOT NULL PRIMARY KEY,
    seq            BIGINT       NOT NULL,
    record_sha256  CHAR(64)     NOT NULL
);
INSERT INTO run_chain_head (id, seq, record_sha256)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
