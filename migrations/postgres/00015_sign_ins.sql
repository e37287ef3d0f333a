-- +goose Up
-- Browser sign-ins (--auth oidc) kept server-side: the browser's cookie carries a
-- random secret, this table only its SHA-256. Signing out deletes the row, so a copy
-- of the cookie stops working at once, on every replica and after restarts. A row
-- past expires_at no longer counts; later sign-ins remove such rows.
CREATE TABLE sign_ins (
    hash       TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX sign_ins_expires ON sign_ins (expires_at);

-- +goose Down
DROP TABLE sign_ins;
