-- +goose Up
-- When a client last (re-)attached to a pending prompt, on any replica. A replica whose
-- client hung up abandons the prompt after the grace period only if nobody re-attached
-- since — possibly through another replica.
ALTER TABLE elicitations ADD COLUMN attached_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE elicitations DROP COLUMN attached_at;
