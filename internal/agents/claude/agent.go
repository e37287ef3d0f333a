package claude

import (
	"encoding/json"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Vendor is the agent's name for people.
const Vendor = "Claude Code"

// Agent is Claude Code's hooks: PermissionRequest, PreToolUse and Elicitation, which
// park; PermissionDenied, which escalates a refusal of auto mode; and Notification,
// which is forwarded to the person's channels — on a session route or zero-config (its
// session_id names the session).
type Agent struct{}

// Name is the agent's route name.
func (Agent) Name() string { return "claude" }

// Vendor is the agent's name for people.
func (Agent) Vendor() string { return Vendor }

// Events are the hook events Gatehouse parks.
func (Agent) Events() []string {
	return []string{EventPermissionRequest, EventPreToolUse, EventElicitation}
}

// AnsweredEvents are the hook events Gatehouse answers without parking them as such:
// PermissionDenied (escalated to a person when the server escalates refusals) and
// Notification (forwarded to the person's channels).
func (Agent) AnsweredEvents() []string {
	return []string{EventPermissionDenied, EventNotification}
}

// eventNames names the events handled, for error messages.
const eventNames = "PermissionRequest, PreToolUse, Elicitation, PermissionDenied or Notification"

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
		case EventPermissionRequest, EventPreToolUse, EventElicitation, EventPermissionDenied, EventNotification:
		default:
			return nil, fmt.Errorf("hook_event_name: Gatehouse does not handle %q hooks; send only %s to this URL",
				hookkit.Clip(event, 64), eventNames)
		}
	}
	var p *Payload
	var err error
	switch event {
	case EventElicitation:
		p, err = DecodeElicitation(body)
	case EventNotification:
		p, err = decodeAny(body)
	default:
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
		r.Answer = func(v models.Verdict, by string) any { return a.permissionDecision(v, by) }
	case EventPreToolUse:
		r.Origin, r.Params = models.OriginClaudePreToolUse, p.Params()
		a := p.answering()
		r.Answer = func(v models.Verdict, by string) any { return a.preToolUseDecision(v, by) }
		r.MayRetry = true
	case EventPermissionDenied:
		r.Origin, r.Params = models.OriginClaudeDenied, p.DeniedParams()
		r.Answer = func(v models.Verdict, _ string) any { return DeniedDecision(v) }
		r.Refusal = &models.HookRefusal{Reason: p.Reason}
	case EventNotification:
		r.Notice = &models.HookNotice{Message: p.Message, Title: p.Title, Type: p.NotificationType}
		r.Answer = func(models.Verdict, string) any { return json.RawMessage(NotificationAnswer) }
		return r, nil
	default:
		r.Origin, r.Params, r.RequestedSchema = models.OriginClaudeElicit, p.ElicitationParams(), p.RequestedSchema
		r.Answer = func(v models.Verdict, _ string) any { return ElicitationDecision(v) }
		return r, nil
	}
	r.Tool = &models.HookTool{Name: p.ToolName, Kind: KindOf(p.ToolName), Input: p.Input()}
	return r, nil
}

// NotificationAnswer is the answer to a Notification hook: taken, nothing to add.
const NotificationAnswer = `{"hookSpecificOutput":{"hookEventName":"Notification"}}`

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

// Deny is the deny answer for a payload's hook_event_name, carrying message: for
// PermissionDenied, no retry (the refusal stands); for Notification, an empty answer.
func (Agent) Deny(payload []byte, message string) ([]byte, bool) {
	var probe struct {
		Event string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &probe) == nil {
		switch probe.Event {
		case EventPermissionDenied:
			raw, err := json.Marshal(DeniedDecision(models.Verdict{Action: models.ActionDecline}))
			return raw, err == nil
		case EventNotification:
			return []byte(NotificationAnswer), true
		}
	}
	return hookkit.Deny(payload, message, EventPermissionRequest, EventPreToolUse, EventElicitation)
}
