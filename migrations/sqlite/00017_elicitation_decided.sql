-- +goose Up
-- The history lists decided prompts newest decision first, a page at a time
-- (resolved_at, id): this index serves that order without sorting every decision.
CREATE INDEX elicitations_decided ON elicitations (resolved_at, id) WHERE status <> 'pending';

-- +goose Down
DROP INDEX elicitations_decided;
