-- +goose Up
-- The call an MCP approval is for (session, tool, canonical arguments and, when the
-- client sends one, its tool-use id), hashed. A client that retries a call without its
-- requestState finds the approval already asked for instead of opening a second one.
ALTER TABLE elicitations ADD COLUMN call_key TEXT;
CREATE INDEX elicitations_call_key ON elicitations (session_id, call_key) WHERE call_key IS NOT NULL;

-- +goose Down
DROP INDEX elicitations_call_key;
ALTER TABLE elicitations DROP COLUMN call_key;
