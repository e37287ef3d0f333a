package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Hook timeouts in the printed snippet: a little above the server's own wait, so the
// server answers first (with its "no verdict" empty 200) and Claude Code never cuts a
// parked request off itself; capped so a very long --elicitation-timeout does not make
// a hook that outlives any reasonable session.
const (
	hookTimeoutMargin = 30 * time.Second
	hookTimeoutMax    = 7 * 24 * time.Hour
)

// claudeHookEvents lists the Claude Code hook events /v1/hooks/claude parks.
func claudeHookEvents() []string { return []string{"PermissionRequest", "PreToolUse", "Elicitation"} }

// claudeSettingsOptions are the inputs of `gatehouse claude-settings`.
type claudeSettingsOptions struct {
	PublicURL, Addr, Auth, AuthHeader string
	ElicitationTimeout                time.Duration
	Events                            []string
	Matcher                           string
	IdentityEnv                       string
	// TokenEnv, when set, names the environment variable holding an API token: the hook
	// sends it as a bearer credential instead of an identity header.
	TokenEnv string
	// Command, when set, is the gatehouse binary to run as a command hook
	// (`<Command> hook claude --url …`) instead of an http hook.
	Command string
}

// claudeHook is one Claude Code hook, "http" or "command". Field order is the order
// printed.
type claudeHook struct {
	Type           string            `json:"type"`
	URL            string            `json:"url,omitempty"`
	Command        string            `json:"command,omitempty"`
	Timeout        int64             `json:"timeout"`
	Headers        map[string]string `json:"headers,omitempty"`
	AllowedEnvVars []string          `json:"allowedEnvVars,omitempty"`
}

// claudeHookMatcher is one entry of a hook event's list in settings.json.
type claudeHookMatcher struct {
	Matcher string       `json:"matcher,omitempty"`
	Hooks   []claudeHook `json:"hooks"`
}

// runClaudeSettings prints a .claude/settings.json snippet whose http hooks send every
// Claude Code session of the user to this Gatehouse (POST /v1/hooks/claude). It reads
// the server's own flags and environment twins (--public-url, --addr, --auth,
// --auth-header, --elicitation-timeout), so running it next to `gatehouse serve` with
// the same environment gives matching values. The snippet goes to stdout, notes to
// stderr, so `gatehouse claude-settings > .claude/settings.json` works.
func runClaudeSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gatehouse claude-settings", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	publicURL := fs.String("public-url", env("GATEHOUSE_PUBLIC_URL", ""), "absolute base URL Claude Code reaches Gatehouse at (env GATEHOUSE_PUBLIC_URL)")
	addr := fs.String("addr", env("GATEHOUSE_ADDR", "127.0.0.1:8080"), "the server's listen address, used when --public-url is empty (env GATEHOUSE_ADDR)")
	authMode := fs.String("auth", env("GATEHOUSE_AUTH", "none"), "the server's auth mode: none, header or oidc (env GATEHOUSE_AUTH; oidc hooks carry an API token)")
	authHeader := fs.String("auth-header", env("GATEHOUSE_AUTH_HEADER", "X-Forwarded-Email"), "identity header in header mode (env GATEHOUSE_AUTH_HEADER)")
	timeout := fs.String("elicitation-timeout", env("GATEHOUSE_ELICITATION_TIMEOUT", "24h"), "the server's longest wait (env GATEHOUSE_ELICITATION_TIMEOUT)")
	events := fs.String("events", "PermissionRequest", "comma-separated hook events to send: PermissionRequest, PreToolUse, Elicitation "+
		"(PreToolUse fires for every tool call, so with it every call waits for a person unless --matcher narrows it)")
	matcher := fs.String("matcher", "", "tool-name matcher for PermissionRequest and PreToolUse (e.g. \"Bash|Write|Edit\"); empty matches every tool")
	identityEnv := fs.String("identity-env", "GATEHOUSE_USER", "environment variable Claude Code reads the identity header's value from (header auth)")
	tokenEnv := fs.String("token-env", "", "environment variable holding your API token (from /settings/tokens): the hook sends it as `Authorization: Bearer`, "+
		"which works in every auth mode and replaces the identity header")
	command := fs.Bool("command", false, "print a command hook running `gatehouse hook claude` instead of an http hook "+
		"(for private-range addresses, re-attach after dropped connections, --fail-closed)")
	commandBin := fs.String("gatehouse-bin", "gatehouse", "the gatehouse binary the command hook runs (with --command)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gatehouse claude-settings: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	d, err := time.ParseDuration(strings.TrimSpace(*timeout))
	if err != nil || d <= 0 {
		fmt.Fprintf(stderr, "gatehouse claude-settings: --elicitation-timeout: want a positive duration like 30s or 24h, got %q\n", *timeout)
		return 2
	}
	opts := claudeSettingsOptions{
		PublicURL: strings.TrimSpace(*publicURL), Addr: strings.TrimSpace(*addr), Auth: strings.TrimSpace(*authMode),
		AuthHeader: strings.TrimSpace(*authHeader), ElicitationTimeout: d, Matcher: *matcher,
		IdentityEnv: strings.TrimSpace(*identityEnv), TokenEnv: strings.TrimSpace(*tokenEnv),
	}
	if *command {
		opts.Command = strings.TrimSpace(*commandBin)
		if opts.Command == "" {
			fmt.Fprintln(stderr, "gatehouse claude-settings: --gatehouse-bin must not be empty")
			return 2
		}
	}
	for _, e := range strings.Split(*events, ",") {
		if e = strings.TrimSpace(e); e != "" {
			opts.Events = append(opts.Events, e)
		}
	}
	settings, notes, err := claudeSettings(opts)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse claude-settings:", err)
		return 2
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse claude-settings:", err)
		return 1
	}
	fmt.Fprintln(stdout, string(out))
	for _, n := range notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	return 0
}

// claudeSettings builds the settings object and notes for the person running it.
func claudeSettings(o claudeSettingsOptions) (map[string]any, []string, error) {
	var notes []string
	base, host, err := hookBase(o.PublicURL, o.Addr)
	if err != nil {
		return nil, nil, err
	}
	if privateRange(host) && o.Command == "" {
		notes = append(notes, fmt.Sprintf("Claude Code's http hooks refuse private-range addresses like %s: "+
			"set --public-url to a loopback or public name (or forward with a command hook)", host))
	}
	hook := claudeHook{Type: "http", URL: base + "/v1/hooks/claude"}
	if o.TokenEnv != "" && !validEnvName(o.TokenEnv) {
		return nil, nil, fmt.Errorf("--token-env: want an environment variable name, got %q", o.TokenEnv)
	}
	wait := o.ElicitationTimeout + hookTimeoutMargin
	if wait > hookTimeoutMax {
		wait = hookTimeoutMax
		notes = append(notes, fmt.Sprintf("the hook timeout is capped at %s: a prompt still waiting then falls back to Claude Code's own prompt",
			hookTimeoutMax))
	}
	timeout := int64(math.Ceil(wait.Seconds()))
	if o.Auth == "oidc" && o.TokenEnv == "" {
		// Signing in with the provider is for browsers; a hook identifies its person
		// with an API token.
		o.TokenEnv = "GATEHOUSE_TOKEN"
	}
	switch {
	case o.Auth != "none" && o.Auth != "header" && o.Auth != "oidc":
		return nil, nil, fmt.Errorf("--auth: want none, header or oidc, got %q", o.Auth)
	case o.Command != "":
		// The forwarder reads the token from GATEHOUSE_TOKEN, or the variable named here.
		hook = claudeHook{Type: "command", Command: shellQuote(o.Command) + " hook claude --url " + shellQuote(base)}
		switch {
		case o.TokenEnv != "":
			hook.Command += " --token-env " + o.TokenEnv
			notes = append(notes, fmt.Sprintf("set %s to your Gatehouse API token (create one at %s/settings/tokens) before starting claude", o.TokenEnv, base))
		case o.Auth == "header":
			return nil, nil, fmt.Errorf("--command sends no identity header: with --auth header, pass --token-env (an API token identifies you)")
		}
	case o.TokenEnv != "":
		hook.Headers = map[string]string{"Authorization": "Bearer $" + o.TokenEnv}
		hook.AllowedEnvVars = []string{o.TokenEnv}
		notes = append(notes, fmt.Sprintf("set %s to your Gatehouse API token (create one at %s/settings/tokens) before starting claude", o.TokenEnv, base))
		if strings.HasPrefix(base, "http://") && !loopbackHost(host) {
			notes = append(notes, "the token travels in clear over http://: use an https --public-url")
		}
	case o.Auth == "header":
		if o.AuthHeader == "" || !validEnvName(o.IdentityEnv) {
			return nil, nil, fmt.Errorf("--auth header needs --auth-header and a valid --identity-env name")
		}
		hook.Headers = map[string]string{o.AuthHeader: "$" + o.IdentityEnv}
		hook.AllowedEnvVars = []string{o.IdentityEnv}
		notes = append(notes, fmt.Sprintf("set %s to your identity (e.g. export %s=you@example.com) before starting claude; "+
			"Gatehouse honours the %s header only from its --trusted-proxies", o.IdentityEnv, o.IdentityEnv, o.AuthHeader))
	}
	hook.Timeout = timeout
	if len(o.Events) == 0 {
		return nil, nil, fmt.Errorf("--events: name at least one of %s", strings.Join(claudeHookEvents(), ", "))
	}
	hooks := map[string]any{}
	for _, ev := range o.Events {
		if !knownHookEvent(ev) {
			return nil, nil, fmt.Errorf("--events: Gatehouse does not handle %q (want %s)", ev, strings.Join(claudeHookEvents(), ", "))
		}
		m := claudeHookMatcher{Hooks: []claudeHook{hook}}
		if ev != "Elicitation" { // Elicitation's matcher is an MCP server name, not a tool
			m.Matcher = o.Matcher
		}
		hooks[ev] = []claudeHookMatcher{m}
	}
	return map[string]any{"hooks": hooks}, notes, nil
}

// hookBase is the absolute base URL Claude Code should call, and its host.
func hookBase(publicURL, addr string) (string, string, error) {
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", "", fmt.Errorf("--public-url: want an absolute http(s) URL, got %q", publicURL)
		}
		return strings.TrimRight(publicURL, "/"), u.Hostname(), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", "", fmt.Errorf("--addr: want host:port, got %q", addr)
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "127.0.0.1" // listening everywhere: this machine reaches it on loopback
	}
	return "http://" + net.JoinHostPort(host, port), host, nil
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

func knownHookEvent(ev string) bool {
	for _, e := range claudeHookEvents() {
		if e == ev {
			return true
		}
	}
	return false
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
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
