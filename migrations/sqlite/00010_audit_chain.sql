-- +goose Up
-- The audit chain (internal/audit): one row per decided prompt, in commit order, each
-- hash covering the decision and the previous row's hash. audit_head is the chain's
-- single head row: deciding updates it in the same statement that decides the prompt,
-- and its row lock (held to commit) puts deciders on every replica in one line.
-- Hashes are lowercase hex; the first row's prev_hash is 64 zeros.
CREATE TABLE audit_head (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    seq       INTEGER NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, prev_hash, hash)
VALUES (1, 0, '', '0000000000000000000000000000000000000000000000000000000000000000');

CREATE TABLE audit_chain (
    seq            INTEGER PRIMARY KEY,
    elicitation_id TEXT NOT NULL UNIQUE,
    prev_hash      TEXT NOT NULL,
    hash           TEXT NOT NULL
);

-- chained is set by the statement that decides a prompt (and chains it). Decided rows
-- without it — decided before this migration, or by a replica still running older
-- code during a rolling upgrade — are chained later by the backfill, found through
-- the partial index without scanning the table.
ALTER TABLE elicitations ADD COLUMN chained INTEGER NOT NULL DEFAULT 0;
CREATE INDEX elicitations_unchained ON elicitations (resolved_at, id) WHERE status <> 'pending' AND NOT chained;

-- +goose Down
DROP INDEX elicitations_unchained;
ALTER TABLE elicitations DROP COLUMN chained;
DROP TABLE audit_chain;
DROP TABLE audit_head;
