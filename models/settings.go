package models

import (
	"errors"
	"math"
	"path/filepath"
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
	// File is where the snippet is installed (`gatehouse setup <agent> --install`).
	File SettingsFile
}

// SettingsFormat is how a settings file is written, which decides how a snippet is
// merged into it.
type SettingsFormat string

// The settings formats: JSON files get the snippet's hooks merged key by key (every
// other key kept); TOML files get the snippet as one marked block replaced in place (the
// rest of the file kept byte for byte).
const (
	FormatJSON SettingsFormat = "json"
	FormatTOML SettingsFormat = "toml"
)

// SettingsFile is where an agent reads its settings: Dir under the person's home, or
// the directory the environment variable DirEnv names when it is set (Claude Code's
// CLAUDE_CONFIG_DIR, the Codex CLI's CODEX_HOME), then Name in it. HomeEnv, when set,
// names a variable that stands in for the home itself (the Gemini CLI's
// GEMINI_CLI_HOME, under which it still reads .gemini/).
type SettingsFile struct {
	Dir, DirEnv, HomeEnv, Name string
	Format                     SettingsFormat
}

// Path is the settings file's path for a person whose home is home, reading the
// environment through getenv.
func (f SettingsFile) Path(home string, getenv func(string) string) string {
	if f.HomeEnv != "" {
		if h := getenv(f.HomeEnv); h != "" {
			home = h
		}
	}
	dir := filepath.Join(home, f.Dir)
	if f.DirEnv != "" {
		if d := getenv(f.DirEnv); d != "" {
			dir = d
		}
	}
	return filepath.Join(dir, f.Name)
}

// ErrNoSettings is what an agent with nothing to install answers for its settings:
// its requests reach Gatehouse some other way (the Codex app-server's, through a
// bridge).
var ErrNoSettings = errors.New("this agent installs no hook settings")
