package hookclient

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Deny returns the agent's "deny" answer for the hook event named in payload's
// hook_event_name, carrying message (Claude Code and Codex show it to the model), for
// a forwarder that fails closed. ok is false for an event that has no deny answer (or
// an unreadable payload): the caller then blocks by exit status (2), which both agents
// read as "do not proceed".
//
// Only fields both agents accept are sent: Codex fails closed on `interrupt`,
// `updatedInput` or `updatedPermissions`, so none of them appear. A blank message is
// replaced by one naming Gatehouse: a deny always says why (newer Claude Code refuses a
// deny without one).
func Deny(payload []byte, message string) (answer []byte, ok bool) {
	if strings.TrimSpace(message) == "" {
		message = "Denied by the Gatehouse hook forwarder."
	}
	var p struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return nil, false
	}
	var out map[string]any
	switch p.HookEventName {
	case "PermissionRequest":
		out = map[string]any{"hookEventName": p.HookEventName, "decision": map[string]any{"behavior": "deny", "message": message}}
	case "PreToolUse":
		out = map[string]any{"hookEventName": p.HookEventName, "permissionDecision": "deny", "permissionDecisionReason": message}
	case "Elicitation":
		out = map[string]any{"hookEventName": p.HookEventName, "action": "decline"}
	default:
		return nil, false
	}
	raw, err := json.Marshal(map[string]any{"hookSpecificOutput": out})
	if err != nil {
		panic(fmt.Sprintf("hookclient: marshal deny: %v", err)) // maps of strings always marshal
	}
	return raw, true
}
