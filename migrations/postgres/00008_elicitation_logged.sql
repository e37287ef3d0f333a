-- +goose Up
-- How far a prompt's lifecycle is in the durable event log: 0 nothing yet, 1 its
-- request event, 2 its resolved event too. The append that logs an event moves the
-- stage in the same transaction, and only if it was lower, so each event is logged
-- exactly once; any replica re-logs what a crash or an outage left out between a
-- prompt's commit and its event's. Rows from before this are taken as logged.
ALTER TABLE elicitations ADD COLUMN logged SMALLINT NOT NULL DEFAULT 2;
CREATE INDEX elicitations_unlogged ON elicitations (created_at) WHERE logged < 2;

-- +goose Down
DROP INDEX elicitations_unlogged;
ALTER TABLE elicitations DROP COLUMN logged;
