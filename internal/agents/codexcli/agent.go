package codexcli

import (
	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Agent is the Codex CLI's command hooks (PermissionRequest and PreToolUse), always
// zero-config: Codex's session_id names the session.
type Agent struct{}

// Name is the agent's route name.
func (Agent) Name() string { return "codex" }

// Vendor is the agent's name for people.
func (Agent) Vendor() string { return Vendor }

// Events are the hook events Gatehouse parks.
func (Agent) Events() []string { return []string{EventPermissionRequest, EventPreToolUse} }

// Decode reads a hook payload for event ("": its hook_event_name).
func (Agent) Decode(event string, body []byte) (*models.HookRequest, error) {
	p, err := DecodeEvent(event, body)
	if err != nil {
		return nil, err
	}
	return &models.HookRequest{Event: p.HookEventName, Origin: Origin, Vendor: Vendor,
		// Namespaced so that a Codex and a Claude session never share a Gatehouse session.
		ExternalSession: p.SessionID, ExternalKey: "codex:" + p.SessionID, Cwd: p.Cwd,
		IDPrefix: IDPrefix, IDKey: p.Key, Params: p.Params(),
		Tool:   &models.HookTool{Name: p.ToolName, Kind: KindOf(p.ToolName), Input: p.Input()},
		Answer: func(v models.Verdict, by string) any { return p.Answer(v, by) },
	}, nil
}

// KindOf is the kind of a Codex CLI tool.
func KindOf(tool string) models.ToolKind {
	switch tool {
	case ToolBash:
		return models.KindShell
	}
	return models.KindOther
}

// Deny is the deny answer for a payload's hook_event_name, carrying message: only
// the fields Codex accepts (it fails closed on interrupt, updatedInput or
// updatedPermissions).
func (Agent) Deny(payload []byte, message string) ([]byte, bool) {
	return hookkit.Deny(payload, message, EventPermissionRequest, EventPreToolUse)
}
