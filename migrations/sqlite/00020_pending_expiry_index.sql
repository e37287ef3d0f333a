-- +goose Up
-- The expiry sweep and the pending count read pending prompts only, and a prompt is
-- pending for minutes of a life that may last years: an index of every prompt by
-- (status, expires_at) took an entry for each decided one, which every decision moved
-- (a page written for its new place) and every rule's answer added. This one holds the
-- pending prompts alone; a decision only takes its entry out.
DROP INDEX elicitations_status_expires;
CREATE INDEX elicitations_pending_expires ON elicitations (expires_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX elicitations_pending_expires;
CREATE INDEX elicitations_status_expires ON elicitations(status, expires_at);
