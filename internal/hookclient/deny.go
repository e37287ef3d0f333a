package hookclient

import "strings"

// Deny returns a's "deny" answer for the hook event named in payload's
// hook_event_name, carrying message (Claude Code and Codex show it to the model), for
// a forwarder that fails closed. ok is false for an event that has no deny answer (or
// an unreadable payload): the caller then blocks by exit status (2), which both agents
// read as "do not proceed".
//
// The agent's Deny sends only fields it accepts (Codex fails closed on `interrupt`,
// `updatedInput` or `updatedPermissions`). A blank message is replaced by one naming
// Gatehouse: a deny always says why (newer Claude Code refuses a deny without one).
func Deny(a Agent, payload []byte, message string) (answer []byte, ok bool) {
	if strings.TrimSpace(message) == "" {
		message = "Denied by the Gatehouse hook forwarder."
	}
	return a.Deny(payload, message)
}
