-- +goose Up
-- Server-wide values Gatehouse makes up once and every replica shares, such as the
-- session secret used when no --session-secret is configured (key 'session_secret').
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE settings;
