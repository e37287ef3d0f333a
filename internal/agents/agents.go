// Package agents is the registry of the agents whose hooks Gatehouse parks. Each agent
// is a package under internal/agents (importing only the standard library, models,
// internal/shell and hookkit, what agents of Claude Code's hook shape share) that
// decodes its hook payloads into a models.HookRequest — where
// the request parks, what its prompt shows, what rules match, and how to answer in the
// agent's own format. The HTTP routes, the hook forwarder (`gatehouse hook <agent>`)
// and its fail-closed answers read the agents from here, so adding an agent is one
// package and one line in registry.go.
package agents

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Request is a decoded hook payload (see models.HookRequest).
type Request = models.HookRequest

// Agent is one integration.
type Agent interface {
	// Name is the {agent} of POST /v1/hooks/{agent} and of `gatehouse hook <agent>`.
	Name() string
	// Vendor is the agent's name for people ("Claude Code").
	Vendor() string
	// Events are the hook events it parks.
	Events() []string
	// Decode reads one hook payload for event ("": the event the payload names) into
	// a Request. Its errors are the client's (a 400 carrying the error's text).
	Decode(event string, body []byte) (*Request, error)
	// Deny is the agent's deny answer for a payload, carrying message, for a
	// forwarder that fails closed; ok false when the event has none (the forwarder
	// then blocks by exit status).
	Deny(payload []byte, message string) (answer []byte, ok bool)
	// Settings is the snippet that installs the agent's hooks as o asks (Claude Code's
	// settings.json hooks, the Codex CLI's config.toml block), with notes for the
	// person installing it; its errors name the option at fault. An agent with nothing
	// to install returns models.ErrNoSettings.
	Settings(o models.SettingsOptions) (models.Settings, error)
}

// Bridged is implemented by an agent whose requests reach Gatehouse through a bridge
// rather than a hook command — the Codex app-server's, which posts to a session route,
// or `gatehouse acp`, which sits between an editor and an ACP agent — so `gatehouse
// hook` does not forward them and there is no hook to install.
type Bridged interface {
	Agent
	// Bridged marks the agent; it does nothing.
	Bridged()
}

// Connector is implemented by a bridged agent a person connects with a command of their
// own rather than installed settings (`gatehouse bridge opencode …`, `gatehouse acp …`):
// the onboarding shows it beside the setup commands.
type Connector interface {
	Agent
	// ConnectCommand is that command for the Gatehouse at base.
	ConnectCommand(base string) string
}

// Registry is the set of agents, by name.
type Registry struct {
	list []Agent
}

// NewRegistry returns a registry of list (names must be distinct).
func NewRegistry(list ...Agent) *Registry { return &Registry{list: list} }

// Lookup returns the agent named name.
func (r *Registry) Lookup(name string) (Agent, bool) {
	for _, a := range r.list {
		if a.Name() == name {
			return a, true
		}
	}
	return nil, false
}

// All returns every agent, in registry order.
func (r *Registry) All() []Agent { return append([]Agent(nil), r.list...) }

// Forwardable returns the agents `gatehouse hook <agent>` forwards a hook payload for
// (every agent but the bridged ones), in registry order.
func (r *Registry) Forwardable() *Registry {
	var out []Agent
	for _, a := range r.list {
		if _, bridged := a.(Bridged); !bridged {
			out = append(out, a)
		}
	}
	return NewRegistry(out...)
}

// Names returns every agent's name, in registry order.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.list))
	for _, a := range r.list {
		out = append(out, a.Name())
	}
	return out
}

// Answering is implemented by an agent with hook events Gatehouse answers that are
// not requests for a verdict — Claude Code's PermissionDenied (auto mode's refusal,
// escalated to a person only when the server escalates refusals) and Notification
// (forwarded to the person's channels).
type Answering interface {
	Agent
	// AnsweredEvents are those events.
	AnsweredEvents() []string
}

// Handled is every hook event a handles: the ones it parks, then the ones it answers.
func Handled(a Agent) []string {
	out := append([]string(nil), a.Events()...)
	if ans, ok := a.(Answering); ok {
		out = append(out, ans.AnsweredEvents()...)
	}
	return out
}

// Parks reports whether a handles event (parks it, or answers it: Handled).
func Parks(a Agent, event string) bool {
	for _, e := range Handled(a) {
		if e == event {
			return true
		}
	}
	return false
}

// JoinOr joins names as "a, b or c".
func JoinOr(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
