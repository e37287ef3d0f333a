package opencode

import (
	"encoding/json"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Agent is OpenCode's permission requests, brought by `gatehouse bridge opencode`
// from its server's event stream to POST /v1/hooks/opencode: zero-config, OpenCode's
// sessionID names the session (a sub-agent's asks park on a child session under its
// top-level session's).
type Agent struct{}

// Name is the agent's route name.
func (Agent) Name() string { return "opencode" }

// Vendor is the agent's name for people.
func (Agent) Vendor() string { return Vendor }

// Events are the events Gatehouse parks.
func (Agent) Events() []string { return []string{EventAsked} }

// Bridged marks OpenCode as reaching Gatehouse through its bridge, not a hook command
// (agents.Bridged): `gatehouse hook` has nothing to forward for it.
func (Agent) Bridged() {}

// ConnectCommand runs the bridge beside `opencode serve` (its default port 4096).
func (Agent) ConnectCommand(base string) string {
	return "gatehouse bridge opencode --server http://127.0.0.1:4096 --url " + base
}

// Decode reads a permission.asked event's properties (or the whole event), or a
// permission.replied event, which withdraws the prompt of the request it answers
// (someone answered in OpenCode itself). event "" is the body's.
//
// A wait that ends without a verdict answers nothing (the empty 200): the bridge then
// asks again, since OpenCode's request still waits (it waits without limit).
func (Agent) Decode(event string, body []byte) (*models.HookRequest, error) {
	if event == EventReplied || (event == "" && isReplied(body)) {
		n, err := DecodeReplied(body)
		if err != nil {
			return nil, err
		}
		root, sub := n.Root()
		return &models.HookRequest{Event: EventReplied, Origin: Origin, Vendor: Vendor,
			ExternalSession: root, ExternalKey: "opencode:" + root, SubAgent: sub, SubAgentType: SubAgentType,
			Retire: n.Matches, RetiredBy: "opencode"}, nil
	}
	p, err := Decode(body)
	if err != nil {
		return nil, err
	}
	root, sub := p.Root()
	return &models.HookRequest{Event: EventAsked, Origin: Origin, Vendor: Vendor,
		// Namespaced so that an OpenCode session never shares a Gatehouse session
		// with another agent's session of the same id.
		ExternalSession: root, ExternalKey: "opencode:" + root, SubAgent: sub, SubAgentType: SubAgentType,
		Cwd: p.Directory, ReattachID: p.ElicitationID, Params: p.Params(),
		Tool:   &models.HookTool{Name: p.RuleTool(), Kind: p.Kind(), Input: p.Input()},
		Answer: func(v models.Verdict, by string) any { return p.Answer(v, by) },
	}, nil
}

// Deny is the reject reply to a permission request, carrying message; ok false for a
// body that is not one.
func (Agent) Deny(payload []byte, message string) ([]byte, bool) {
	if _, err := Decode(payload); err != nil {
		return nil, false
	}
	raw, err := json.Marshal(Reject(message))
	return raw, err == nil
}

// Settings: OpenCode has no hook settings to install; its requests come through
// `gatehouse bridge opencode`, which subscribes to its server. The error says so, for
// whoever runs `gatehouse setup opencode`.
func (Agent) Settings(o models.SettingsOptions) (models.Settings, error) {
	return models.Settings{}, fmt.Errorf("%w; OpenCode is gated by running `gatehouse bridge opencode --server http://127.0.0.1:4096 --url %s` beside `opencode serve`",
		models.ErrNoSettings, o.URL)
}
