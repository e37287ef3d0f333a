-- +goose Up
-- The API token a prompt was parked with (NULL: parked without one — an identity
-- header, a browser, auth off — or before this column existed). A "hooks" token reads
-- only the prompts parked with it.
ALTER TABLE elicitations ADD COLUMN token_id TEXT;

-- +goose Down
ALTER TABLE elicitations DROP COLUMN token_id;
