-- +goose Up
-- Every chain row names the encoding that hashed it (internal/audit): 1 for rows
-- chained by earlier releases (they still verify with that encoding, and a replica
-- still running one during a rolling upgrade goes on writing them), 2 for rows whose
-- hash covers every column of the decision record. backfilled marks a row chained
-- after the fact, for a prompt decided before the chain began (version 2 hashes it).
ALTER TABLE audit_chain ADD COLUMN version SMALLINT NOT NULL DEFAULT 1;
ALTER TABLE audit_chain ADD COLUMN backfilled INTEGER NOT NULL DEFAULT 0;

-- One signed checkpoint of the chain's head per UTC day (day is YYYY-MM-DD): the
-- primary key lets exactly one replica take, sign and export each day's. key is the
-- Ed25519 public key that signed it (the private key is derived from the server's
-- secret and never stored); sig is the signature, hex.
CREATE TABLE audit_checkpoints (
    day      TEXT PRIMARY KEY,
    seq      INTEGER NOT NULL,
    hash     TEXT NOT NULL,
    taken_at DATETIME NOT NULL,
    key      TEXT NOT NULL,
    sig      TEXT NOT NULL
);

-- +goose Down
DROP TABLE audit_checkpoints;
ALTER TABLE audit_chain DROP COLUMN backfilled;
ALTER TABLE audit_chain DROP COLUMN version;
