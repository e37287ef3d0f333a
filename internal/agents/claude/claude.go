// Package claude translates Claude Code hook payloads into prompt params and human
// verdicts back into the hook answers Claude Code reads. Pure functions only.
package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
)

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// Hook event names.
const (
	EventPermissionRequest = hookkit.EventPermissionRequest
	EventPreToolUse        = hookkit.EventPreToolUse
	EventElicitation       = hookkit.EventElicitation
	// EventPermissionDenied fires after auto mode refused a tool call; its answer may
	// let the model make the call once more (retry), which goes through the same
	// permission check.
	EventPermissionDenied = "PermissionDenied"
	// EventNotification fires when Claude Code waits for its person (its own
	// permission dialog, an idle prompt).
	EventNotification = "Notification"
)

// Tools with their own prompt shapes.
const (
	ToolAskUserQuestion = "AskUserQuestion"
	ToolExitPlanMode    = "ExitPlanMode"
)

// Payload is the subset of a Claude Code hook body Gatehouse reads. Unknown fields are
// ignored, as Claude Code adds new ones over time.
type Payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	AgentID        string          `json:"agent_id"`
	AgentType      string          `json:"agent_type"`
	MCPServerName  string          `json:"mcp_server_name"`
	Message        string          `json:"message"`
	// Reason is PermissionDenied's reason: why auto mode refused the call.
	Reason string `json:"reason"`
	// Title and NotificationType are a Notification's title and kind.
	Title            string          `json:"title"`
	NotificationType string          `json:"notification_type"`
	Mode             string          `json:"mode"`
	RequestedSchema  json.RawMessage `json:"requested_schema"`
	// PermissionSuggestions is PermissionRequest's permission_suggestions: the
	// permission updates Claude Code would offer for "always allow" (see suggestions.go).
	PermissionSuggestions json.RawMessage `json:"permission_suggestions"`
	// ElicitationID lets a retried hook re-attach to its prompt.
	ElicitationID string `json:"_gatehouse_elicitation_id"`

	input       map[string]any
	suggestions []json.RawMessage
}

// Decode reads a hook body. It checks the shape every tool hook needs: a non-empty
// tool_name and an object tool_input.
func Decode(body []byte) (*Payload, error) {
	p, err := decodeAny(body)
	if err != nil {
		return nil, err
	}
	if p.input, err = hookkit.ToolInput(p.ToolName, p.ToolInput); err != nil {
		return nil, err
	}
	p.suggestions = decodeSuggestions(p.PermissionSuggestions)
	return p, nil
}

// DecodeElicitation reads an Elicitation hook body: a non-empty message, an object
// requested_schema (or none) and form mode.
func DecodeElicitation(body []byte) (*Payload, error) {
	p, err := decodeAny(body)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Message) == "" {
		return nil, errors.New("message is required")
	}
	if len(p.RequestedSchema) > 0 && string(p.RequestedSchema) != "null" && p.RequestedSchema[0] != '{' {
		return nil, errors.New("requested_schema must be an object")
	}
	if p.Mode != "" && p.Mode != "form" {
		// Claude Code itself supports form mode only; a URL-mode request has no schema to
		// show and no content to return.
		return nil, fmt.Errorf("mode %q is not supported (want form)", p.Mode)
	}
	return p, nil
}

// decodeAny reads any hook body, to route it by hook_event_name.
func decodeAny(body []byte) (*Payload, error) {
	var p Payload
	if err := hookkit.Decode(body, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Input returns the decoded tool input.
func (p *Payload) Input() map[string]any { return p.input }

// Params builds the prompt params for a tool hook (PermissionRequest or PreToolUse).
func (p *Payload) Params() map[string]any {
	params := map[string]any{
		"mode":            "form",
		"message":         fmt.Sprintf("Claude wants to call **%s**", p.ToolName),
		"phase":           "pre_tool_use",
		"policy_name":     "claude_native_permission",
		"content_preview": Preview(p.ToolName, p.ToolInput),
		"tool_name":       p.ToolName,
		"tool_input":      p.input,
		"cwd":             p.Cwd,
		"permission_mode": p.PermissionMode,
		"vendor":          "Claude Code",
	}
	if p.AgentType != "" {
		params["agent_type"] = p.AgentType
	}
	if p.ToolUseID != "" { // PreToolUse only: lets a UI or log line correlate the call
		params["tool_use_id"] = p.ToolUseID
	}
	if len(p.suggestions) > 0 {
		list := make([]any, 0, len(p.suggestions))
		for _, raw := range p.suggestions {
			m, _ := decodeObject(raw) // decodeSuggestions kept objects only
			list = append(list, m)
		}
		params[ParamSuggestions] = list
	}
	switch p.ToolName {
	case ToolAskUserQuestion:
		params["ask_user_question"] = map[string]any{"questions": questions(p.input["questions"])}
	case ToolExitPlanMode:
		params["exit_plan_mode"] = p.input
	}
	return params
}

// DeniedParams builds the prompt params for a PermissionDenied hook: the call auto
// mode refused, and why.
func (p *Payload) DeniedParams() map[string]any {
	params := p.Params()
	reason := hookkit.Clip(hookkit.OneLine(p.Reason), 300)
	if reason == "" {
		reason = "none given"
	}
	params["message"] = fmt.Sprintf("Auto mode refused: `%s` — reason: %s", hookkit.Clip(hookkit.OneLine(callText(p.ToolName, p.input)), 200), reason)
	params["phase"] = "permission_denied"
	params["policy_name"] = "claude_auto_mode_refusal"
	params["denied_reason"] = p.Reason
	delete(params, ParamSuggestions)
	return params
}

// callText is what a refused call did, for the prompt's message: a command line, a
// path, a URL, else the tool's name.
func callText(tool string, input map[string]any) string {
	for _, k := range []string{"command", "file_path", "notebook_path", "url"} {
		if v, ok := input[k].(string); ok && strings.TrimSpace(v) != "" {
			return v
		}
	}
	return tool
}

// ElicitationParams builds the prompt params for Claude Code's Elicitation hook.
func (p *Payload) ElicitationParams() map[string]any {
	schema := any(map[string]any{"type": "object", "properties": map[string]any{}})
	if len(p.RequestedSchema) > 0 && string(p.RequestedSchema) != "null" {
		var s map[string]any
		if json.Unmarshal(p.RequestedSchema, &s) == nil {
			schema = s
		}
	}
	return map[string]any{
		"mode":            "form",
		"message":         p.Message,
		"phase":           "mcp_elicitation",
		"policy_name":     "claude_mcp_elicitation",
		"requestedSchema": schema,
		"server_name":     p.MCPServerName,
		"cwd":             p.Cwd,
		"vendor":          "Claude Code",
		"content_preview": hookkit.Clip(p.Message, PreviewLimit),
	}
}

// questions normalises AskUserQuestion's questions to the published shape.
func questions(v any) []any {
	list, _ := v.([]any)
	out := make([]any, 0, len(list))
	for _, q := range list {
		m, ok := q.(map[string]any)
		if !ok {
			continue
		}
		opts := []any{}
		if ol, ok := m["options"].([]any); ok {
			for _, o := range ol {
				om, ok := o.(map[string]any)
				if !ok {
					continue
				}
				opts = append(opts, map[string]any{"label": str(om["label"]), "description": str(om["description"])})
			}
		}
		multi, _ := m["multiSelect"].(bool)
		out = append(out, map[string]any{
			"question": str(m["question"]), "header": str(m["header"]), "multiSelect": multi, "options": opts,
		})
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Preview renders "<tool>(<compact json of input>)", cut to PreviewLimit characters.
func Preview(tool string, input json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, input); err != nil {
		buf.Reset()
		buf.Write(input)
	}
	return hookkit.Clip(tool+"("+buf.String()+")", PreviewLimit)
}
