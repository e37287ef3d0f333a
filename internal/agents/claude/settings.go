package claude

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// hook is one Claude Code hook in settings.json, "http" or "command". Field order is
// the order printed.
type hook struct {
	Type           string            `json:"type"`
	URL            string            `json:"url,omitempty"`
	Command        string            `json:"command,omitempty"`
	Timeout        int64             `json:"timeout"`
	Headers        map[string]string `json:"headers,omitempty"`
	AllowedEnvVars []string          `json:"allowedEnvVars,omitempty"`
}

// hookMatcher is one entry of a hook event's list in settings.json.
type hookMatcher struct {
	Matcher string `json:"matcher,omitempty"`
	Hooks   []hook `json:"hooks"`
}

// Settings is the .claude/settings.json snippet whose hooks send the events o names
// to POST /v1/hooks/claude: http hooks carrying the identity header or an API token,
// or, with o.Command, command hooks running `gatehouse hook claude`.
func (a Agent) Settings(o models.SettingsOptions) (models.Settings, error) {
	var notes []string
	host := hostOf(o.URL)
	if privateRange(host) && o.Command == "" {
		notes = append(notes, fmt.Sprintf("Claude Code's http hooks refuse private-range addresses like %s: "+
			"set --public-url to a loopback or public name (or forward with a command hook)", host))
	}
	h := hook{Type: "http", URL: o.URL + "/v1/hooks/claude"}
	if o.TokenEnv != "" && !hookkit.ValidEnvName(o.TokenEnv) {
		return models.Settings{}, fmt.Errorf("--token-env: want an environment variable name, got %q", o.TokenEnv)
	}
	timeout, capped := o.HookTimeout()
	if capped {
		notes = append(notes, fmt.Sprintf("the hook timeout is capped at %s: a prompt still waiting then falls back to Claude Code's own prompt",
			models.HookTimeoutMax))
	}
	if o.Auth == "oidc" && o.TokenEnv == "" {
		// Signing in with the provider is for browsers; a hook identifies its person
		// with an API token.
		o.TokenEnv = "GATEHOUSE_TOKEN"
	}
	switch {
	case o.Auth != "none" && o.Auth != "header" && o.Auth != "oidc":
		return models.Settings{}, fmt.Errorf("--auth: want none, header or oidc, got %q", o.Auth)
	case o.Command != "":
		// The forwarder reads the token from GATEHOUSE_TOKEN, or the variable named here.
		h = hook{Type: "command", Command: shellQuote(o.Command) + " hook " + a.Name() + " --url " + shellQuote(o.URL)}
		switch {
		case o.TokenEnv != "":
			h.Command += " --token-env " + o.TokenEnv
			notes = append(notes, fmt.Sprintf("set %s to your Gatehouse API token (create one at %s/settings/tokens) before starting claude", o.TokenEnv, o.URL))
		case o.Auth == "header":
			return models.Settings{}, fmt.Errorf("--command sends no identity header: with --auth header, pass --token-env (an API token identifies you)")
		}
	case o.TokenEnv != "":
		h.Headers = map[string]string{"Authorization": "Bearer $" + o.TokenEnv}
		h.AllowedEnvVars = []string{o.TokenEnv}
		notes = append(notes, fmt.Sprintf("set %s to your Gatehouse API token (create one at %s/settings/tokens) before starting claude", o.TokenEnv, o.URL))
		if strings.HasPrefix(o.URL, "http://") && !loopbackHost(host) {
			notes = append(notes, "the token travels in clear over http://: use an https --public-url")
		}
	case o.Auth == "header":
		if o.AuthHeader == "" || !hookkit.ValidEnvName(o.IdentityEnv) {
			return models.Settings{}, fmt.Errorf("--auth header needs --auth-header and a valid --identity-env name")
		}
		h.Headers = map[string]string{o.AuthHeader: "$" + o.IdentityEnv}
		h.AllowedEnvVars = []string{o.IdentityEnv}
		notes = append(notes, fmt.Sprintf("set %s to your identity (e.g. export %s=you@example.com) before starting claude; "+
			"Gatehouse honours the %s header only from its --trusted-proxies", o.IdentityEnv, o.IdentityEnv, o.AuthHeader))
	}
	h.Timeout = timeout
	defaults := len(o.Events) == 0
	if defaults {
		// Asked only when Claude Code itself would ask (PermissionRequest); auto mode's
		// refusals escalated to a person when the server escalates them
		// (PermissionDenied), with the PreToolUse that lets an approved retry through
		// and nothing else (a PreToolUse that parked would make every tool call wait
		// for a person); and Claude Code's own waits sent to the person's channels
		// (Notification).
		o.Events = []string{EventPermissionRequest, EventPermissionDenied, EventPreToolUse, EventNotification}
	}
	handled := append(a.Events(), a.AnsweredEvents()...)
	hooks := map[string]any{}
	for _, ev := range o.Events {
		if !slices.Contains(handled, ev) {
			return models.Settings{}, fmt.Errorf("--events: Gatehouse does not handle %q (want %s)", ev, strings.Join(handled, ", "))
		}
		hk := h
		switch {
		case ev == EventNotification:
			hk.Timeout = quickHookTimeout // forwarded in the background, answered at once
		case ev == EventPreToolUse && defaults:
			hk = grantsOnly(hk)
		}
		m := hookMatcher{Hooks: []hook{hk}}
		if ev != EventElicitation && ev != EventNotification { // their matchers are a server name, a notification type
			m.Matcher = o.Matcher
		}
		hooks[ev] = []hookMatcher{m}
	}
	out, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		return models.Settings{}, err // maps of strings always marshal
	}
	return models.Settings{Text: string(out) + "\n", Notes: notes, File: settingsFile}, nil
}

// quickHookTimeout is the timeout, in seconds, of a hook Gatehouse answers at once.
const quickHookTimeout = 30

// grantsOnly is h asking only for the retry of a refusal a person approved
// (?only=grants): any other call is answered at once with no decision.
func grantsOnly(h hook) hook {
	h.Timeout = quickHookTimeout
	if h.Type == "command" {
		h.Command += " --grants-only"
	} else {
		h.URL += "?only=grants"
	}
	return h
}

// hostOf is the host of a base URL (as privateRange and loopbackHost read it), read
// leniently: a listen address that makes no valid URL still names its host.
func hostOf(base string) string {
	rest := base
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	if h, _, err := net.SplitHostPort(rest); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]")
}

// privateRange reports the addresses Claude Code's http hooks refuse (RFC 1918 and
// CGNAT); loopback and names are fine.
func privateRange(host string) bool {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	if ip.IsPrivate() {
		return true
	}
	return netip.MustParsePrefix("100.64.0.0/10").Contains(ip)
}

// loopbackHost reports a loopback address or localhost.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// shellQuote quotes s for the POSIX shell Claude Code runs command hooks with, unless it
// needs no quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// settingsFile is where Claude Code reads the person's settings: ~/.claude/settings.json,
// or settings.json in CLAUDE_CONFIG_DIR when it is set.
var settingsFile = models.SettingsFile{Dir: ".claude", DirEnv: "CLAUDE_CONFIG_DIR", Name: "settings.json", Format: models.FormatJSON}
