// Package hookkit is what the agents whose hooks take Claude Code's shape have in
// common — a JSON object naming its hook_event_name, a tool_name and a tool_input
// object, answered under hookSpecificOutput (Claude Code, and the Codex CLI, whose
// hooks copy it) — and the small text helpers every agent package needs. An agent
// package may import it; it imports only the standard library.
package hookkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Hook events with a deny answer (Deny).
const (
	EventPermissionRequest = "PermissionRequest"
	EventPreToolUse        = "PreToolUse"
	EventElicitation       = "Elicitation"
)

// Decode unmarshals a hook body into v (a pointer to the agent's payload struct),
// with an error a client can act on: the field of the wrong type, or that the body
// is not a JSON object.
func Decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s has the wrong type (want %s)", te.Field, te.Type)
		}
		return errors.New("body is not a JSON object")
	}
	return nil
}

// ToolInput checks what every tool hook needs — a non-empty tool_name and an object
// tool_input — and returns the decoded input (numbers as json.Number, so they read
// back as sent).
func ToolInput(toolName string, raw json.RawMessage) (map[string]any, error) {
	if strings.TrimSpace(toolName) == "" {
		return nil, errors.New("tool_name is required")
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("tool_input must be an object")
	}
	var input map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&input); err != nil || input == nil {
		return nil, errors.New("tool_input must be an object")
	}
	return input, nil
}

// Deny is the deny answer to a hook payload, carrying message, when its
// hook_event_name is one of events: only the fields Claude Code and the Codex CLI
// both accept (no interrupt, updatedInput or updatedPermissions, which Codex fails
// closed on). ok is false for another event or an unreadable payload (a forwarder
// then blocks by exit status).
func Deny(payload []byte, message string, events ...string) (answer []byte, ok bool) {
	var p struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &p) != nil || !slices.Contains(events, p.HookEventName) {
		return nil, false
	}
	var out map[string]any
	switch p.HookEventName {
	case EventPermissionRequest:
		out = map[string]any{"hookEventName": p.HookEventName, "decision": map[string]any{"behavior": "deny", "message": message}}
	case EventPreToolUse:
		out = map[string]any{"hookEventName": p.HookEventName, "permissionDecision": "deny", "permissionDecisionReason": message}
	case EventElicitation:
		out = map[string]any{"hookEventName": p.HookEventName, "action": "decline"}
	default:
		return nil, false
	}
	raw, err := json.Marshal(map[string]any{"hookSpecificOutput": out})
	if err != nil {
		return nil, false // maps of strings always marshal
	}
	return raw, true
}

// Clip cuts s to at most n characters, ending a cut one with "…".
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// OneLine folds every run of white space in s, newlines included, into one space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ValidEnvName reports whether s can name an environment variable a hook reads
// (letters, digits and '_', not starting with a digit).
func ValidEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
