-- +goose Up
-- One-shot retry grants: a person approved a tool call an agent's own check refused
-- (Claude Code's auto mode, through its PermissionDenied hook), and the agent's retry of
-- exactly that call — same session, tool and canonical input (input_hash, the SHA-256 of
-- the input as canonical JSON; the input itself may hold secrets) — is allowed once,
-- before expires_at. Stored, not kept in memory, so the retry may reach any replica.
-- used_at is set by the one conditional update that spends a grant: of two replicas
-- consuming it at once, one sees a row updated. elicitation_id is the approved prompt,
-- unique so a re-answered prompt never mints a second grant.
CREATE TABLE retry_grants (
    id             TEXT PRIMARY KEY,
    elicitation_id TEXT NOT NULL UNIQUE,
    session_id     TEXT NOT NULL,
    tool_name      TEXT NOT NULL,
    input_hash     TEXT NOT NULL,
    granted_by     TEXT NOT NULL,
    created_at     DATETIME NOT NULL,
    expires_at     DATETIME NOT NULL,
    used_at        DATETIME
);
CREATE INDEX retry_grants_call ON retry_grants (session_id, tool_name, input_hash);

-- +goose Down
DROP TABLE retry_grants;
