-- +goose Up
-- Gatehouse rules: "always allow / always deny / ask with this wait" for one tool and a
-- pattern over its input, within a scope (a session tree, an agent, a project
-- directory, everywhere), until an expiry or until revoked. Rows are never deleted:
-- decisions a rule made name it (elicitations.rule_id), so revoking only stamps it.
CREATE TABLE rules (
    id              TEXT PRIMARY KEY,
    effect          TEXT NOT NULL,
    tool            TEXT NOT NULL,
    match_kind      TEXT NOT NULL,
    pattern         TEXT NOT NULL,
    scope_kind      TEXT NOT NULL,
    scope_value     TEXT NOT NULL DEFAULT '',
    timeout_seconds INTEGER NOT NULL DEFAULT 0,
    on_timeout      TEXT NOT NULL DEFAULT '',
    note            TEXT NOT NULL DEFAULT '',
    created_by      TEXT NOT NULL,
    created_at      DATETIME NOT NULL,
    expires_at      DATETIME,
    revoked_at      DATETIME,
    revoked_by      TEXT,
    fire_count      BIGINT NOT NULL DEFAULT 0,
    last_fired_at   DATETIME
);
-- Every hook asks "which live rules are there for this tool?"
CREATE INDEX rules_live_tool ON rules (tool) WHERE revoked_at IS NULL;
CREATE INDEX rules_created_by ON rules (created_by);

-- The rule that answered a prompt (resolved_via 'rule') or set its wait; NULL otherwise.
ALTER TABLE elicitations ADD COLUMN rule_id TEXT;

-- +goose Down
ALTER TABLE elicitations DROP COLUMN rule_id;
DROP TABLE rules;
