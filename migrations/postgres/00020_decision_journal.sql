-- +goose Up
-- The decision journal: a rule's answer is recorded here, one small row, before the
-- request it answers is told; the prompt row, its audit chain link, the rule's fire
-- count and its stream events follow in batches (internal/elicit, journal.go), in a
-- transaction that deletes the journal rows it turns into them. A row still here after
-- a crash is turned into them by the next replica that starts. body is the prompt row
-- as JSON; written with synchronous_commit off (see docs/performance.md).
CREATE TABLE decision_journal (
    id         TEXT PRIMARY KEY,
    body       BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE decision_journal;
