-- +goose Up
-- Durable event log behind session streams: every published event gets a per-session,
-- gap-free sequence number so a reconnecting stream resumes with Last-Event-ID.
ALTER TABLE sessions ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0;

CREATE TABLE session_events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL,
    seq            INTEGER NOT NULL,
    type           TEXT NOT NULL,
    data           TEXT NOT NULL,
    elicitation_id TEXT,
    created_at     DATETIME NOT NULL
);
CREATE UNIQUE INDEX session_events_seq ON session_events(session_id, seq);
CREATE INDEX session_events_created ON session_events(created_at);

-- +goose Down
DROP TABLE session_events;
ALTER TABLE sessions DROP COLUMN event_seq;
