package cursor

import (
	"encoding/json"
	"slices"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Agent is Cursor's command hooks, always zero-config: Cursor's conversation_id names
// the session.
type Agent struct{}

// Name is the agent's route name.
func (Agent) Name() string { return "cursor" }

// Vendor is the agent's name for people.
func (Agent) Vendor() string { return Vendor }

// Events are the hook events Gatehouse parks.
func (Agent) Events() []string { return []string{EventShell, EventMCP, EventPreTool} }

// Decode reads a hook payload for event ("": its hook_event_name).
func (Agent) Decode(event string, body []byte) (*models.HookRequest, error) {
	p, err := Decode(event, body)
	if err != nil {
		return nil, err
	}
	return &models.HookRequest{Event: p.HookEventName, Origin: Origin, Vendor: Vendor,
		// Namespaced so that a Cursor conversation never shares another agent's session.
		ExternalSession: p.ConversationID, ExternalKey: "cursor:" + p.ConversationID, Cwd: p.Dir(),
		IDPrefix: IDPrefix, IDKey: p.Key, Params: p.Params(), Tool: p.Tool(),
		Answer: func(v models.Verdict, by string) any { return p.Answer(v, by) },
	}, nil
}

// Deny is the deny answer, carrying message, for any payload of an event Gatehouse
// parks: every one of them is answered in the same shape.
func (a Agent) Deny(payload []byte, message string) ([]byte, bool) {
	var p struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &p) != nil || !slices.Contains(a.Events(), p.HookEventName) {
		return nil, false
	}
	raw, err := json.Marshal(deny(message))
	return raw, err == nil
}
