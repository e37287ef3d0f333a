package policy

import (
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
)

// NewEvent builds the V0 event for a request made by user in session. The actor is
// the authenticated caller, whatever the request body claims, so a policy on
// context.actor.run_as cannot be talked around. A tool event's target defaults to
// the tool's name.
func NewEvent(session SessionInfo, user, phase, target string, data, evCtx map[string]any) Event {
	if evCtx == nil {
		evCtx = map[string]any{}
	}
	evCtx["actor"] = map[string]any{"run_as": user}
	if target == "" && (phase == PhaseToolCall || phase == PhaseToolResult || phase == PhasePermissionDenied) {
		target, _ = data["name"].(string)
	}
	return Event{Type: phase, Target: target, Data: data, Context: evCtx, Session: session}
}

// PromptParams are the params of a prompt parked for an ASK (§6.3): the composed
// reason as message, the lower-case phase, the deciding policy and an empty
// requestedSchema (a plain approve/reject). URL mode adds the url when the prompt's id
// is minted (elicit.Prompt.URLMode).
func PromptParams(ev Event, res Result, urlMode bool) map[string]any {
	p := map[string]any{
		"mode": mcp.ModeForm, "message": res.Reason, "phase": ev.Type, "policy_name": res.Policy,
		"requestedSchema": map[string]any{}, "vendor": "Gatehouse policy",
	}
	if urlMode {
		p["mode"] = mcp.ModeURL
	}
	if ev.Type == PhaseToolCall {
		name := ev.Tool()
		args, _ := json.Marshal(ev.Data["arguments"])
		p["tool_name"] = name
		p["content_preview"] = mcp.ToolPreview(name, args)
	} else if raw, err := json.Marshal(ev.Data); err == nil {
		p["content_preview"] = mcp.Truncate(string(raw), mcp.PreviewLimit)
	}
	return p
}
