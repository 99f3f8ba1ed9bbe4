-- Content-addressed kept files (issue 24 item 9): each distinct content is stored once, as
-- data_dir/blobs/<first 2 hex>/<sha256>. blobs has one row per content on the disk (or about to
-- be: the row is written before the file is put in place, and a blob's file is deleted only in
-- the transaction that deletes its row, so a blob a run references is never removed under it).
-- run_files says which run keeps which content at which path; tenant is copied from the run so
-- that a tenant's storage (the sizes of the distinct blobs its runs reference) is one indexed
-- query, and survives the run row's deletion until the references are dropped.
CREATE TABLE blobs (
    sha256      VARCHAR(64)  PRIMARY KEY,
    size_bytes  BIGINT       NOT NULL,
    created_at  BIGINT       NOT NULL
);
CREATE TABLE run_files (
    run_id      VARCHAR(64)  NOT NULL,
    path        TEXT         NOT NULL,
    tenant      VARCHAR(64)  NOT NULL,
    sha256      VARCHAR(64)  NOT NULL,
    size_bytes  BIGINT       NOT NULL,
    PRIMARY KEY (run_id, path)
);
CREATE INDEX run_files_sha_idx ON run_files (sha256);
CREATE INDEX run_files_tenant_idx ON run_files (tenant, sha256);
