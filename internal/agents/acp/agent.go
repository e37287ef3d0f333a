package acp

import (
	"encoding/json"
	"errors"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Agent is any ACP agent behind `gatehouse acp`; the agent's sessionId names the
// session.
type Agent struct{}

// Name is the agent's route name.
func (Agent) Name() string { return "acp" }

// Vendor is the agent's name for people when it gives none of its own.
func (Agent) Vendor() string { return Vendor }

// Events are what Gatehouse parks: the permission request.
func (Agent) Events() []string { return []string{Method} }

// Decode reads a permission request's params (event "" or the method).
func (Agent) Decode(event string, body []byte) (*models.HookRequest, error) {
	if event != "" && event != Method {
		return nil, errors.New("event: Gatehouse parks only " + Method + " from an ACP agent")
	}
	p, err := Decode(body)
	if err != nil {
		return nil, err
	}
	return &models.HookRequest{Event: Method, Origin: Origin, Vendor: p.VendorName(),
		ExternalSession: p.SessionID, ExternalKey: "acp:" + p.SessionID, Cwd: p.Cwd,
		IDPrefix: IDPrefix, IDKey: p.Key, Params: p.Params(), Tool: p.Tool(),
		Answer: func(v models.Verdict, by string) any { return p.Answer(v, by) },
	}, nil
}

// Deny is the request's reject outcome, for a `gatehouse acp` that fails closed.
func (Agent) Deny(payload []byte, _ string) ([]byte, bool) {
	p, err := Decode(payload)
	if err != nil {
		return nil, false
	}
	raw, err := json.Marshal(selected(p.option(RejectOnce, RejectAlways).OptionID))
	return raw, err == nil
}

// Bridged marks the agent: its requests come through `gatehouse acp`, not a hook.
func (Agent) Bridged() {}

// ConnectCommand is what goes in front of an ACP agent's command in the editor's
// settings (docs/agents/acp.md).
func (Agent) ConnectCommand(base string) string {
	return "gatehouse acp --url " + base + " -- <agent command, e.g. npx @zed-industries/claude-code-acp>"
}

// Settings: an ACP agent is set up in the editor, by putting `gatehouse acp --` in
// front of the agent's command (docs/agents/acp.md); there is no file to install.
func (Agent) Settings(models.SettingsOptions) (models.Settings, error) {
	return models.Settings{}, models.ErrNoSettings
}
