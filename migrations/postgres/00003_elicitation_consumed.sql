-- +goose Up
-- An accepted approval that authorizes one action (an MCP tool call retried with its
-- requestState) is spent when used: consumed_at makes the approval single-use.
ALTER TABLE elicitations ADD COLUMN consumed_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE elicitations DROP COLUMN consumed_at;
