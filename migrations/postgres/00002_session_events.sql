-- +goose Up
-- Durable event log behind session streams: every published event gets a per-session,
-- gap-free sequence number so a reconnecting stream resumes with Last-Event-ID.
-- The counter lives on the session row: incrementing it takes the row lock until commit,
-- so one session's events commit in sequence order even across replicas.
ALTER TABLE sessions ADD COLUMN event_seq BIGINT NOT NULL DEFAULT 0;

CREATE TABLE session_events (
    id             BIGSERIAL PRIMARY KEY,
    session_id     TEXT NOT NULL,
    seq            BIGINT NOT NULL,
    type           TEXT NOT NULL,
    data           TEXT NOT NULL,
    elicitation_id TEXT,
    created_at     TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX session_events_seq ON session_events(session_id, seq);
CREATE INDEX session_events_created ON session_events(created_at);

-- +goose Down
DROP TABLE session_events;
ALTER TABLE sessions DROP COLUMN event_seq;
