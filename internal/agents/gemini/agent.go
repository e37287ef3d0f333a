package gemini

import (
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Agent is the Gemini CLI's BeforeTool command hook, always zero-config: Gemini's
// session_id names the session.
type Agent struct{}

// Name is the agent's route name.
func (Agent) Name() string { return "gemini" }

// Vendor is the agent's name for people.
func (Agent) Vendor() string { return Vendor }

// Events are the hook events Gatehouse parks.
func (Agent) Events() []string { return []string{EventBeforeTool} }

// Decode reads a hook payload for event ("": its hook_event_name).
//
// A wait that ends without a verdict answers nothing (the empty 200), which Gemini
// reads as "allow": the installed hook therefore runs `gatehouse hook gemini
// --answer-within`, which turns "no verdict" into a deny, and a late one into a deny
// before Gemini's own hook timeout (which also runs the tool). A deny here instead
// would also deny the requests a restarting server hands back to re-attach.
func (Agent) Decode(event string, body []byte) (*models.HookRequest, error) {
	p, err := Decode(event, body)
	if err != nil {
		return nil, err
	}
	return &models.HookRequest{Event: p.HookEventName, Origin: Origin, Vendor: Vendor,
		// Namespaced so that a Gemini session never shares a Gatehouse session with
		// another agent's session of the same id.
		ExternalSession: p.SessionID, ExternalKey: "gemini:" + p.SessionID,
		Cwd: p.WorkDir(), ReattachID: p.ElicitationID, Params: p.Params(),
		Tool:   &models.HookTool{Name: p.RuleTool(), Kind: p.Kind(), Input: p.Input()},
		Answer: func(v models.Verdict, by string) any { return p.Answer(v, by) },
	}, nil
}

// Deny is the deny answer to a BeforeTool payload, carrying message, for a forwarder
// that fails closed (or whose --answer-within ran out); ok false for any other payload.
func (Agent) Deny(payload []byte, message string) ([]byte, bool) {
	var p struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &p) != nil || p.HookEventName != EventBeforeTool {
		return nil, false
	}
	raw, err := json.Marshal(denyAnswer(message))
	return raw, err == nil
}
