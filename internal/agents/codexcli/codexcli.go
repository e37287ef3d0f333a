// Package codexcli translates the Codex CLI's command hooks (PermissionRequest and
// PreToolUse, Codex 0.171) into prompt params and human verdicts back into the hook
// output Codex reads. Pure functions only.
//
// Codex fails closed on output fields it does not accept (updatedInput,
// updatedPermissions, interrupt, a PreToolUse "allow" or "ask"), so the answers carry
// exactly the documented fields and nothing else. Unknown payload fields are ignored.
package codexcli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Hook event names Gatehouse parks.
const (
	EventPermissionRequest = hookkit.EventPermissionRequest
	EventPreToolUse        = hookkit.EventPreToolUse
)

// Events names the parked events, for error messages.
const Events = "PermissionRequest or PreToolUse"

// Origin is the prompt origin of both events. It is one origin, not one per event, so
// that the PreToolUse and the PermissionRequest Codex sends for the same command share
// one prompt (see Key): a person answers once.
const Origin = "codex_cli"

// IDPrefix starts every prompt id of this adapter (ids.Deterministic(IDPrefix, Key)).
const IDPrefix = "elicit_codexcli_"

// Vendor is the agent name prompts show.
const Vendor = "Codex"

// ToolBash is the tool name Codex gives its shell commands in hook payloads.
const ToolBash = "Bash"

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// messageArgLimit is the longest command shown in the prompt's one-line message.
const messageArgLimit = 120

// Payload is the subset of a Codex hook body Gatehouse reads.
type Payload struct {
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id"`
	TranscriptPath *string         `json:"transcript_path"` // null with --ephemeral
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Model          string          `json:"model"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"` // PreToolUse only

	input map[string]any
}

// Decode reads a PermissionRequest or PreToolUse body: hook_event_name one of those,
// a non-empty tool_name, an object tool_input and, for Bash, a non-empty string
// tool_input.command.
func Decode(body []byte) (*Payload, error) { return DecodeEvent("", body) }

// DecodeEvent is Decode for a payload of event ("": the payload's hook_event_name).
func DecodeEvent(event string, body []byte) (*Payload, error) {
	p := &Payload{}
	if err := hookkit.Decode(body, p); err != nil {
		return nil, err
	}
	if event != "" {
		p.HookEventName = event
	}
	switch p.HookEventName {
	case EventPermissionRequest, EventPreToolUse:
	case "":
		return nil, fmt.Errorf("hook_event_name is required (%s)", Events)
	default:
		return nil, fmt.Errorf("hook_event_name: Gatehouse does not handle %q hooks; send only %s", hookkit.Clip(p.HookEventName, 64), Events)
	}
	var err error
	if p.input, err = hookkit.ToolInput(p.ToolName, p.ToolInput); err != nil {
		return nil, err
	}
	if p.ToolName == ToolBash {
		if cmd, ok := p.input["command"].(string); !ok || strings.TrimSpace(cmd) == "" {
			return nil, errors.New("tool_input.command must be a non-empty string")
		}
	}
	return p, nil
}

// Command is tool_input.command ("" for other tools).
func (p *Payload) Command() string { return str(p.input["command"]) }

// Description is tool_input.description: the model's justification for the command.
func (p *Payload) Description() string { return str(p.input["description"]) }

// Input is what the request is about, for prompts and rules: for Bash only the
// command (the description is the model's prose, shown apart and not part of what is
// approved), for other tools the whole tool_input.
func (p *Payload) Input() map[string]any {
	if p.ToolName == ToolBash {
		return map[string]any{"command": p.Command()}
	}
	return p.input
}

// Key identifies the request a prompt is about: the Gatehouse session, Codex's turn,
// the working directory, the tool and what it would do — not the event, so Codex's
// PreToolUse and PermissionRequest for one command map to the same prompt and the
// second re-attaches to the first's verdict. The same command asked again in the same
// turn gets the same answer.
func (p *Payload) Key(sessionID string) []byte {
	b, _ := json.Marshal([]any{sessionID, p.SessionID, p.TurnID, p.Cwd, p.ToolName, p.Input()})
	return b
}

// Params builds the prompt params.
func (p *Payload) Params() map[string]any {
	input := p.Input()
	params := map[string]any{
		"mode":            "form",
		"phase":           "pre_tool_use",
		"policy_name":     "codex_cli_hook",
		"vendor":          Vendor,
		"allow_remember":  false, // Codex's hook output has nothing to remember a grant with
		"tool_name":       p.ToolName,
		"tool_input":      input,
		"cwd":             p.Cwd,
		"permission_mode": p.PermissionMode,
		"codex_event":     p.HookEventName,
	}
	if cmd := p.Command(); p.ToolName == ToolBash {
		params["message"] = "Codex wants to run **" + hookkit.Clip(hookkit.OneLine(cmd), messageArgLimit) + "**"
		params["command"] = cmd
		params["content_preview"] = hookkit.Clip(cmd, PreviewLimit)
	} else {
		raw, _ := json.Marshal(input)
		params["message"] = fmt.Sprintf("Codex wants to call **%s**", p.ToolName)
		params["content_preview"] = hookkit.Clip(p.ToolName+"("+string(raw)+")", PreviewLimit)
	}
	if d := strings.TrimSpace(p.Description()); d != "" {
		params["reason"] = d
	}
	for k, v := range map[string]string{"codex_session_id": p.SessionID, "codex_turn_id": p.TurnID, "model": p.Model} {
		if v != "" {
			params[k] = v
		}
	}
	return params
}

// Answer builds the hook output for verdict v, given by by.
//
// PermissionRequest: {"hookSpecificOutput":{"hookEventName":"PermissionRequest",
// "decision":{"behavior":"allow"}}} or behavior "deny" with an optional message, which
// reaches the model.
//
// PreToolUse: Codex accepts only "deny" (with a non-empty reason); "allow" and "ask"
// are refused. An approval is therefore the empty object, which decides nothing: the
// command goes on to Codex's own approval step (when it needs one), where its
// PermissionRequest re-attaches to this same prompt and is allowed at once.
func (p *Payload) Answer(v models.Verdict, by string) map[string]any {
	accepted := v.Accepted()
	switch p.HookEventName {
	case EventPreToolUse:
		if accepted {
			return map[string]any{}
		}
		return map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": EventPreToolUse, "permissionDecision": "deny", "permissionDecisionReason": v.DenyReason(by),
		}}
	default:
		decision := map[string]any{"behavior": "allow"}
		if !accepted {
			decision = map[string]any{"behavior": "deny", "message": v.DenyReason(by)}
		}
		return map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": EventPermissionRequest, "decision": decision,
		}}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
