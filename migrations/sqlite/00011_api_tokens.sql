-- +goose Up
-- Personal API tokens (issue 11): a bearer secret that acts as its owner in every auth
-- mode. Only the SHA-256 of the secret is kept (hash, looked up on every request, so a
-- revocation on any replica holds at once); prefix is its first characters, to tell
-- tokens apart in lists. Revoked rows stay, stamped, and no longer authenticate.
CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    owner        TEXT NOT NULL,
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    scope        TEXT NOT NULL DEFAULT 'all',
    created_at   DATETIME NOT NULL,
    expires_at   DATETIME,
    last_used_at DATETIME,
    revoked_at   DATETIME
);
CREATE INDEX api_tokens_owner ON api_tokens (owner);

-- +goose Down
DROP TABLE api_tokens;
