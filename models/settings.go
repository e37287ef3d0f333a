package models

import (
	"errors"
	"math"
	"time"
)

// SettingsOptions are the choices a settings command (`gatehouse claude-settings`,
// `gatehouse codex-settings`) makes an agent's settings snippet from. An agent reads
// the fields it has a use for.
type SettingsOptions struct {
	// URL is the absolute base URL the hooks reach Gatehouse at, without a trailing
	// slash.
	URL string
	// Auth is the server's auth mode: none, header or oidc. In header mode the hook
	// sends the identity header AuthHeader, its value read from the environment
	// variable IdentityEnv.
	Auth, AuthHeader, IdentityEnv string
	// TokenEnv, when set, names the environment variable holding an API token: the
	// hook sends it as a bearer credential.
	TokenEnv string
	// Command, when set, is the gatehouse binary a command hook runs (`<Command> hook
	// <agent> --url …`); "" asks for an http hook, for an agent that has them.
	Command string
	// Wait is the server's longest wait (--elicitation-timeout); see HookTimeout.
	Wait time.Duration
	// Events are the hook events to install, for an agent that lets the person choose;
	// Matcher, when set, narrows its tool hooks to the tools it matches.
	Events  []string
	Matcher string
}

// Hook timeouts in a settings snippet: a little above the server's own wait, so the
// server answers first (with its "no verdict") and the agent never cuts a parked
// request off itself; capped so a very long wait does not make a hook that outlives any
// reasonable session.
const (
	HookTimeoutMargin = 30 * time.Second
	HookTimeoutMax    = 7 * 24 * time.Hour
)

// HookTimeout is the timeout a snippet gives its hooks, in whole seconds; capped
// reports that HookTimeoutMax cut it short (a prompt still waiting then falls back to
// the agent's own approval).
func (o SettingsOptions) HookTimeout() (seconds int64, capped bool) {
	wait := o.Wait + HookTimeoutMargin
	if wait > HookTimeoutMax {
		wait, capped = HookTimeoutMax, true
	}
	return int64(math.Ceil(wait.Seconds())), capped
}

// Settings is an agent's settings snippet: the text to add to its settings file, and
// notes for the person installing it.
type Settings struct {
	Text  string
	Notes []string
}

// ErrNoSettings is what an agent with nothing to install answers for its settings:
// its requests reach Gatehouse some other way (the Codex app-server's, through a
// bridge).
var ErrNoSettings = errors.New("this agent installs no hook settings")
