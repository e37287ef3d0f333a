-- +goose Up
-- A rule for an MCP (or other) tool may compare one named argument instead of the
-- whole input.
ALTER TABLE rules ADD COLUMN match_argument TEXT NOT NULL DEFAULT '';
-- Every allow rule expires: live allow rules made "until revoked" get 30 days from now.
UPDATE rules SET expires_at = strftime('%Y-%m-%d %H:%M:%f+00:00', 'now', '+30 days')
    WHERE effect = 'allow' AND expires_at IS NULL AND revoked_at IS NULL;

-- +goose Down
ALTER TABLE rules DROP COLUMN match_argument;
