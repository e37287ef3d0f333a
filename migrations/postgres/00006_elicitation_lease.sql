-- +goose Up
-- A prompt someone waits on carries a lease: the replica holding the waiter renews it
-- while the client is connected; when the client hangs up, the process stops or is
-- killed, renewals stop, and once lease_until has passed any live replica abandons the
-- prompt (the disconnect grace). Prompts nobody waits on (MCP approvals a client comes
-- back for) have no lease and end on expires_at. This replaces attached_at: the lease
-- itself says a client is (back) on the prompt, on whichever replica.
ALTER TABLE elicitations ADD COLUMN lease_until TIMESTAMPTZ;
CREATE INDEX elicitations_lease ON elicitations (lease_until) WHERE status = 'pending' AND lease_until IS NOT NULL;
ALTER TABLE elicitations DROP COLUMN attached_at;

-- +goose Down
ALTER TABLE elicitations ADD COLUMN attached_at TIMESTAMPTZ;
DROP INDEX elicitations_lease;
ALTER TABLE elicitations DROP COLUMN lease_until;
