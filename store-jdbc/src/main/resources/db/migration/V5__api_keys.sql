-- API keys for the HTTP face. A key is shown once, when it is made: only its SHA-256 (hex of the
-- whole key string) is kept, and the public key_id ('key_' + 12 hex digits) names it everywhere
-- else. Every process sharing the data directory reads this table, so a key revoked by one (the
-- CLI) is refused by the others (servers) once their short cache has expired.
CREATE TABLE api_keys (
    key_id        VARCHAR(64)  NOT NULL PRIMARY KEY,
    tenant        VARCHAR(63)  NOT NULL,
    label         TEXT,
    key_sha256    CHAR(64)     NOT NULL UNIQUE,
    created_at    BIGINT       NOT NULL,
    last_used_at  BIGINT,
    revoked_at    BIGINT
);
