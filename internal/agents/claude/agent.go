package claude

import (
	"fmt"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Vendor is the agent's name for people.
const Vendor = "Claude Code"

// Agent is Claude Code's hooks: PermissionRequest, PreToolUse and Elicitation, on a
// session route or zero-config (its session_id names the session).
type Agent struct{}

// Name is the agent's route name.
func (Agent) Name() string { return "claude" }

// Vendor is the agent's name for people.
func (Agent) Vendor() string { return Vendor }

// Events are the hook events Gatehouse parks.
func (Agent) Events() []string {
	return []string{EventPermissionRequest, EventPreToolUse, EventElicitation}
}

// eventNames names the parked events, for error messages.
const eventNames = "PermissionRequest, PreToolUse or Elicitation"

// Decode reads a hook payload for event; "" routes it by hook_event_name.
func (Agent) Decode(event string, body []byte) (*models.HookRequest, error) {
	if event == "" {
		probe, err := decodeAny(body)
		if err != nil {
			return nil, err
		}
		if probe.HookEventName == "" {
			return nil, fmt.Errorf("hook_event_name: is required (%s)", eventNames)
		}
		event = probe.HookEventName
		switch event {
		case EventPermissionRequest, EventPreToolUse, EventElicitation:
		default:
			return nil, fmt.Errorf("hook_event_name: Gatehouse does not handle %q hooks; send only %s to this URL",
				hookkit.Clip(event, 64), eventNames)
		}
	}
	var p *Payload
	var err error
	if event == EventElicitation {
		p, err = DecodeElicitation(body)
	} else {
		p, err = Decode(body)
	}
	if err != nil {
		return nil, err
	}
	r := &models.HookRequest{Event: event, Vendor: Vendor,
		ExternalSession: p.SessionID, SubAgent: p.AgentID, SubAgentType: p.AgentType,
		Cwd: p.Cwd, ReattachID: p.ElicitationID}
	switch event {
	case EventPermissionRequest:
		r.Origin, r.Params = models.OriginClaudePermission, p.Params()
		a := p.answering()
		r.Answer = func(v models.Verdict, by string) any { return a.PermissionDecision(v, by) }
	case EventPreToolUse:
		r.Origin, r.Params = models.OriginClaudePreToolUse, p.Params()
		a := p.answering()
		r.Answer = func(v models.Verdict, by string) any { return a.PreToolUseDecision(v, by) }
	default:
		r.Origin, r.Params, r.RequestedSchema = models.OriginClaudeElicit, p.ElicitationParams(), p.RequestedSchema
		r.Answer = func(v models.Verdict, _ string) any { return ElicitationDecision(v) }
		return r, nil
	}
	r.Tool = &models.HookTool{Name: p.ToolName, Kind: KindOf(p.ToolName), Input: p.Input()}
	return r, nil
}

// KindOf is the kind of a Claude Code tool.
func KindOf(tool string) models.ToolKind {
	switch tool {
	case "Bash":
		return models.KindShell
	case "Edit", "MultiEdit", "NotebookEdit":
		return models.KindEdit
	case "Write":
		return models.KindWrite
	case "Read":
		return models.KindRead
	case "WebFetch":
		return models.KindFetch
	case ToolAskUserQuestion:
		return models.KindQuestion
	case ToolExitPlanMode:
		return models.KindPlan
	}
	if len(tool) > 5 && tool[:5] == "mcp__" {
		return models.KindMCP
	}
	return models.KindOther
}

// Deny is the deny answer for a payload's hook_event_name, carrying message.
func (Agent) Deny(payload []byte, message string) ([]byte, bool) {
	return hookkit.Deny(payload, message, EventPermissionRequest, EventPreToolUse, EventElicitation)
}
