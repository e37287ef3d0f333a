package codex

import (
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FingerprintParam is the param holding the hash of the request a prompt was opened
// for, so a different request re-using its JSON-RPC id is refused.
const FingerprintParam = "codex_fingerprint"

// ShellTool is the tool name rules use for Codex command approvals.
const ShellTool = "shell"

// AppServer is the Codex app-server's server → client requests, forwarded by a bridge
// to a session route (they carry no session of their own).
type AppServer struct{}

// Name is the agent's route name.
func (AppServer) Name() string { return "codex-app-server" }

// Bridged marks the app-server as reaching Gatehouse through its bridge, not a hook
// command (agents.Bridged).
func (AppServer) Bridged() {}

// Vendor is the agent's name for people.
func (AppServer) Vendor() string { return Vendor }

// Events are the JSON-RPC methods Gatehouse parks.
func (AppServer) Events() []string { return Methods() }

// Decode reads a forwarded request (the method is the envelope's; event is not
// consulted). A serverRequest/resolved notice decodes to a Request that retires the
// prompts it settles.
func (AppServer) Decode(_ string, body []byte) (*models.HookRequest, error) {
	if n, ok, err := DecodeResolved(body); ok {
		if err != nil {
			return nil, err
		}
		return &models.HookRequest{Event: "serverRequest/resolved", Origin: models.OriginCodex, Vendor: Vendor, Retire: n.Matches, RetiredBy: "codex"}, nil
	}
	req, err := Decode(body)
	if err != nil {
		return nil, err
	}
	fp := req.Fingerprint()
	params := req.PromptParams()
	params[FingerprintParam] = fp
	r := &models.HookRequest{Event: req.Method, Origin: models.OriginCodex, Vendor: Vendor,
		IDPrefix: IDPrefix, IDKey: req.CanonicalKey, Fingerprint: fp, Params: params,
		// The app-server's answers have no place for a message: a decline is
		// {"decision":"decline"} (or its method's equivalent) and nothing else.
		Answer:             func(v models.Verdict, _ string) any { return req.Answer(v) },
		InterruptOnDecline: true,
	}
	if req.Method == MethodMCPElicitation {
		r.RequestedSchema = rawRequestedSchema(body)
	}
	if cmd, ok := params["command"].(string); ok && cmd != "" {
		// Command approvals are the tool "shell" to rules; the pattern sees the command
		// line as Codex shows it.
		r.Cwd, _ = params["cwd"].(string)
		r.Tool = &models.HookTool{Name: ShellTool, Kind: models.KindShell, Input: map[string]any{"command": cmd}}
	}
	return r, nil
}

// rawRequestedSchema is params.requestedSchema of a JSON-RPC request body, as sent.
func rawRequestedSchema(body []byte) []byte {
	var env struct {
		Params struct {
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &env)
	return env.Params.RequestedSchema
}

// Deny: the app-server's requests are answered through its bridge, not a forwarder.
func (AppServer) Deny([]byte, string) ([]byte, bool) { return nil, false }

// Settings: the app-server has no hook settings to install; its requests come through
// a bridge that forwards them to a session route.
func (AppServer) Settings(models.SettingsOptions) (models.Settings, error) {
	return models.Settings{}, models.ErrNoSettings
}
