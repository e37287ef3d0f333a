-- +goose Up
CREATE TABLE agents (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    config      TEXT,
    created_by  TEXT NOT NULL,
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL
);

CREATE TABLE sessions (
    id                  TEXT PRIMARY KEY,
    agent_id            TEXT NOT NULL REFERENCES agents(id),
    kind                TEXT NOT NULL,
    title               TEXT NOT NULL DEFAULT '',
    parent_id           TEXT REFERENCES sessions(id),
    root_id             TEXT NOT NULL,
    path                TEXT NOT NULL,
    depth               INTEGER NOT NULL DEFAULT 0,
    created_by          TEXT NOT NULL,
    external_session_id TEXT,
    created_at          DATETIME NOT NULL,
    updated_at          DATETIME NOT NULL
);
CREATE UNIQUE INDEX sessions_child_title ON sessions(parent_id, title) WHERE parent_id IS NOT NULL;
CREATE INDEX sessions_path ON sessions(path);
CREATE INDEX sessions_root ON sessions(root_id);
CREATE UNIQUE INDEX sessions_external ON sessions(created_by, external_session_id) WHERE external_session_id IS NOT NULL;

CREATE TABLE permissions (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    user_id    TEXT NOT NULL,
    level      INTEGER NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (session_id, user_id)
);
CREATE INDEX permissions_user ON permissions(user_id);

CREATE TABLE elicitations (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id),
    origin       TEXT NOT NULL,
    params       TEXT NOT NULL,
    status       TEXT NOT NULL,
    action       TEXT,
    content      TEXT,
    resolved_by  TEXT,
    resolved_via TEXT,
    created_at   DATETIME NOT NULL,
    resolved_at  DATETIME,
    expires_at   DATETIME NOT NULL
);
CREATE INDEX elicitations_session_status ON elicitations(session_id, status);
CREATE INDEX elicitations_status_expires ON elicitations(status, expires_at);

-- +goose Down
DROP TABLE elicitations;
DROP TABLE permissions;
DROP TABLE sessions;
DROP TABLE agents;
