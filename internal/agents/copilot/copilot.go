// Package copilot translates the GitHub Copilot CLI's command hooks (permissionRequest
// and preToolUse, @github/copilot 1.0.102) into prompt params and human verdicts back
// into the hook output Copilot reads. Pure functions only.
//
// Copilot's hook payloads are not Claude Code's shape: camelCase fields, the tool's
// arguments under toolArgs (preToolUse) or toolInput (permissionRequest), and only
// permissionRequest names itself (hookName). A preToolUse payload is known by its
// toolArgs. Copilot's tools are mapped onto the names rules and prompts know (bash is
// Bash with its command, edit is Edit, create is Write, view is Read, their fields
// renamed to Claude's), so a rule like Bash(git status:*) and the risk assessment
// apply to Copilot as they do to Claude Code. Unknown payload fields are ignored.
package copilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Hook event names Gatehouse parks, as Copilot spells them in its settings.
const (
	EventPermissionRequest = "permissionRequest"
	EventPreToolUse        = "preToolUse"
)

// eventNames names the parked events, for error messages.
const eventNames = "preToolUse or permissionRequest"

// Origin is the prompt origin of both events.
const Origin = "copilot_cli"

// Vendor is the agent name prompts show.
const Vendor = "Copilot CLI"

// Copilot's tool names (what the model is offered and the hooks carry).
const (
	ToolBash       = "bash"
	ToolPowerShell = "powershell"
	ToolEdit       = "edit"
	ToolCreate     = "create"
	ToolView       = "view"
	ToolApplyPatch = "apply_patch"
)

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// messageArgLimit is the longest command or path shown in the prompt's one-line message.
const messageArgLimit = 120

// Payload is the subset of a Copilot hook body Gatehouse reads.
type Payload struct {
	HookName              string          `json:"hookName"` // permissionRequest only
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	ToolName              string          `json:"toolName"`
	ToolArgs              json.RawMessage `json:"toolArgs"`   // preToolUse
	ToolInput             json.RawMessage `json:"toolInput"`  // permissionRequest
	ToolResult            json.RawMessage `json:"toolResult"` // postToolUse: not parked
	PermissionSuggestions json.RawMessage `json:"permissionSuggestions"`
	AgentID               string          `json:"agentId"`   // a sub-agent's tool call
	AgentType             string          `json:"agentType"` // its type, when known
	// ElicitationID is the re-attach id `gatehouse hook copilot` adds.
	ElicitationID string `json:"_gatehouse_elicitation_id"`

	// Event is the hook event the payload is (EventPreToolUse or EventPermissionRequest).
	Event string

	args        map[string]any // the tool's arguments as Copilot sent them
	suggestions []any
}

// Decode reads a hook payload of event ("": the event the payload names, or for a
// payload without hookName, preToolUse when it carries toolArgs). It insists on a
// toolName, an object of arguments and, for a shell tool, a non-empty command; every
// refusal names the field.
func Decode(event string, body []byte) (*Payload, error) {
	p := &Payload{}
	if err := hookkit.Decode(body, p); err != nil {
		return nil, err
	}
	if err := p.resolveEvent(event); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.SessionID) == "" {
		return nil, errors.New("sessionId is required")
	}
	if strings.TrimSpace(p.ToolName) == "" {
		return nil, errors.New("toolName is required")
	}
	field, raw := "toolArgs", p.ToolArgs
	if p.Event == EventPermissionRequest {
		field, raw = "toolInput", p.ToolInput
	}
	var err error
	if p.args, err = argsObject(field, raw); err != nil {
		return nil, err
	}
	if err := p.checkArgs(field); err != nil {
		return nil, err
	}
	if len(p.PermissionSuggestions) > 0 && !bytes.Equal(bytes.TrimSpace(p.PermissionSuggestions), []byte("null")) {
		if json.Unmarshal(p.PermissionSuggestions, &p.suggestions) != nil {
			return nil, errors.New("permissionSuggestions must be a list")
		}
	}
	return p, nil
}

// resolveEvent settles which event the payload is: event when the route names one,
// else hookName, else preToolUse for a payload carrying toolArgs (Copilot's preToolUse
// input has no hookName). A postToolUse payload (toolArgs and toolResult) is refused
// rather than parked.
func (p *Payload) resolveEvent(event string) error {
	if event == "" {
		event = p.HookName
	}
	if event == "" {
		switch {
		case len(p.ToolResult) > 0:
			return fmt.Errorf("toolResult: this is a postToolUse payload; Gatehouse parks only %s hooks", eventNames)
		case len(p.ToolArgs) > 0:
			event = EventPreToolUse
		default:
			return fmt.Errorf("hookName is required (%s), or toolArgs for a preToolUse payload", eventNames)
		}
	}
	switch event {
	case EventPreToolUse, EventPermissionRequest:
		p.Event = event
		return nil
	}
	return fmt.Errorf("hookName: Gatehouse does not handle %q hooks; send only %s", hookkit.Clip(event, 64), eventNames)
}

// argsObject decodes the tool's arguments: a JSON object, or a string holding one
// (how Copilot's documentation shows toolArgs), numbers kept as sent.
func argsObject(field string, raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, fmt.Errorf("%s must be an object", field)
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%s must be an object", field)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%s must be an object", field)
	}
	return m, nil
}

// checkArgs insists on the field each mapped tool is judged by: a shell tool's
// command, a file tool's path.
func (p *Payload) checkArgs(field string) error {
	need := ""
	switch p.ToolName {
	case ToolBash, ToolPowerShell:
		need = "command"
	case ToolEdit, ToolCreate, ToolView:
		need = "path"
	default:
		return nil
	}
	if s, ok := p.args[need].(string); !ok || strings.TrimSpace(s) == "" {
		return fmt.Errorf("%s.%s must be a non-empty string", field, need)
	}
	return nil
}

// Kind is what the tool does.
func (p *Payload) Kind() models.ToolKind { return KindOf(p.ToolName) }

// KindOf is the kind of a Copilot CLI tool.
func KindOf(tool string) models.ToolKind {
	switch tool {
	case ToolBash, ToolPowerShell:
		return models.KindShell
	case ToolEdit, ToolApplyPatch:
		return models.KindEdit
	case ToolCreate:
		return models.KindWrite
	case ToolView:
		return models.KindRead
	}
	return models.KindOther
}

// RuleTool is the tool name rules and prompts know the call by: Claude's name for the
// tools Copilot shares with it (so Bash(…), Edit(…), Write(…) and Read(…) rules match),
// Copilot's own name for the rest.
func (p *Payload) RuleTool() string {
	switch p.ToolName {
	case ToolBash:
		return "Bash"
	case ToolEdit:
		return "Edit"
	case ToolCreate:
		return "Write"
	case ToolView:
		return "Read"
	}
	return p.ToolName
}

// Input is what the request is about, for prompts and rules, in the fields of
// RuleTool: a shell command alone (its description is the model's prose, shown
// apart and not part of what is approved), a file tool's path as file_path with its
// text under Claude's names, any other tool's arguments as sent.
func (p *Payload) Input() map[string]any {
	a := p.args
	switch p.ToolName {
	case ToolBash, ToolPowerShell:
		return map[string]any{"command": str(a["command"])}
	case ToolEdit:
		return map[string]any{"file_path": str(a["path"]), "old_string": str(a["old_str"]), "new_string": str(a["new_str"])}
	case ToolCreate:
		return map[string]any{"file_path": str(a["path"]), "content": str(a["file_text"])}
	case ToolView:
		in := map[string]any{"file_path": str(a["path"])}
		if r, ok := a["view_range"]; ok {
			in["view_range"] = r
		}
		return in
	}
	return a
}

// Params builds the prompt params.
func (p *Payload) Params() map[string]any {
	input := p.Input()
	params := map[string]any{
		"mode":        "form",
		"phase":       "pre_tool_use",
		"policy_name": "copilot_cli_hook",
		"vendor":      Vendor,
		// Copilot's hook answers carry a decision only: nothing to remember a grant with.
		"allow_remember": false,
		"tool_name":      p.RuleTool(),
		"tool_input":     input,
		"cwd":            p.Cwd,
		"copilot_event":  p.Event,
		"copilot_tool":   p.ToolName,
	}
	path := str(input["file_path"])
	switch kind := p.Kind(); {
	case kind == models.KindShell:
		cmd := str(input["command"])
		params["message"] = Vendor + " wants to run **" + hookkit.Clip(hookkit.OneLine(cmd), messageArgLimit) + "**"
		params["command"] = cmd
		params["content_preview"] = hookkit.Clip(cmd, PreviewLimit)
	case path != "":
		verb := map[models.ToolKind]string{models.KindEdit: "edit", models.KindWrite: "write", models.KindRead: "read"}[kind]
		params["message"] = fmt.Sprintf("%s wants to %s **%s**", Vendor, verb, hookkit.Clip(hookkit.OneLine(path), messageArgLimit))
		params["content_preview"] = hookkit.Clip(p.previewJSON(input), PreviewLimit)
	default:
		params["message"] = fmt.Sprintf("%s wants to call **%s**", Vendor, hookkit.Clip(hookkit.OneLine(p.ToolName), messageArgLimit))
		params["content_preview"] = hookkit.Clip(p.previewJSON(input), PreviewLimit)
	}
	if d := strings.TrimSpace(str(p.args["description"])); d != "" && p.Kind() == models.KindShell {
		params["reason"] = d
	}
	if p.SessionID != "" {
		params["copilot_session_id"] = p.SessionID
	}
	if len(p.suggestions) > 0 {
		// What Copilot would offer to remember; shown, not granted (see allow_remember).
		params["permission_suggestions"] = p.suggestions
	}
	return params
}

func (p *Payload) previewJSON(input map[string]any) string {
	raw, _ := json.Marshal(input)
	return p.ToolName + "(" + string(raw) + ")"
}

// Answer builds the hook output for verdict v, given by by.
//
// preToolUse: {"permissionDecision":"allow"} (which also skips Copilot's own
// permission request) or "deny" with permissionDecisionReason, which Copilot shows the
// model. Never "ask": a headless Copilot cannot ask and fails.
//
// permissionRequest: {"behavior":"allow"} or {"behavior":"deny","message":…}; the
// message reaches the model.
func (p *Payload) Answer(v models.Verdict, by string) map[string]any {
	if v.Accepted() {
		if p.Event == EventPreToolUse {
			return map[string]any{"permissionDecision": "allow"}
		}
		return map[string]any{"behavior": "allow"}
	}
	return denyAnswer(p.Event, v.DenyReason(by))
}

func denyAnswer(event, message string) map[string]any {
	if event == EventPreToolUse {
		return map[string]any{"permissionDecision": "deny", "permissionDecisionReason": message}
	}
	return map[string]any{"behavior": "deny", "message": message}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
