package copilot

import (
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Agent is the Copilot CLI's command hooks (preToolUse and permissionRequest), always
// zero-config: Copilot's sessionId names the session.
type Agent struct{}

// Name is the agent's route name.
func (Agent) Name() string { return "copilot" }

// Vendor is the agent's name for people.
func (Agent) Vendor() string { return Vendor }

// Events are the hook events Gatehouse parks.
func (Agent) Events() []string { return []string{EventPreToolUse, EventPermissionRequest} }

// Decode reads a hook payload for event ("": the one the payload is, see Decode).
//
// A wait that ends without a verdict answers nothing (the empty 200): Copilot then
// goes on with its own flow. For preToolUse that flow runs the tool under
// --allow-all-tools, which is why the installed hook runs `gatehouse hook copilot
// --answer-within`: the forwarder turns "no verdict" into a deny before Copilot's hook
// timeout. (A deny here instead would also deny the requests a restarting server
// hands back to re-attach.)
func (Agent) Decode(event string, body []byte) (*models.HookRequest, error) {
	p, err := Decode(event, body)
	if err != nil {
		return nil, err
	}
	return &models.HookRequest{Event: p.Event, Origin: Origin, Vendor: Vendor,
		// Namespaced so that a Copilot session never shares a Gatehouse session with
		// another agent's session of the same id.
		ExternalSession: p.SessionID, ExternalKey: "copilot:" + p.SessionID,
		SubAgent: p.AgentID, SubAgentType: p.AgentType,
		Cwd: p.Cwd, ReattachID: p.ElicitationID, Params: p.Params(),
		Tool:   &models.HookTool{Name: p.RuleTool(), Kind: p.Kind(), Input: p.Input()},
		Answer: func(v models.Verdict, by string) any { return p.Answer(v, by) },
	}, nil
}

// Deny is the deny answer to a payload, carrying message, for a forwarder that fails
// closed (or whose --answer-within ran out); ok false for a payload that is not one of
// the parked events.
func (Agent) Deny(payload []byte, message string) ([]byte, bool) {
	p := &Payload{}
	if json.Unmarshal(payload, p) != nil || p.resolveEvent("") != nil {
		return nil, false
	}
	raw, err := json.Marshal(denyAnswer(p.Event, message))
	return raw, err == nil
}
