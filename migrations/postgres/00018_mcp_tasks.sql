-- +goose Up
-- An MCP task (the Tasks extension) holds a tool call that waits for a person: its id
-- is the id of the call's prompt (elicitations), whose row says where the approval
-- stands. This row keeps what the prompt does not: the call itself (to run it once
-- approved, on whichever replica the client polls), who asked, and the outcome once
-- there is one. claimed_at is the run-at-most-once guard: the one conditional update
-- that sets it (a run, a cancel, a client's "no") decides the outcome.
CREATE TABLE mcp_tasks (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL,
    person      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    mode        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    answered_at TIMESTAMPTZ,
    claimed_at  TIMESTAMPTZ,
    outcome     TEXT,
    result      TEXT
);

-- +goose Down
DROP TABLE mcp_tasks;
