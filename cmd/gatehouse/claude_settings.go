package main

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/models"
)

// newClaudeSettingsCmd is the deprecated `gatehouse claude-settings` (gatehouse setup
// claude prints the same snippet): it prints the Claude Code agent's
// .claude/settings.json snippet, whose hooks send every Claude Code session of the user
// to this Gatehouse (POST /v1/hooks/claude). It reads the server's own flags and
// environment twins (--public-url, --addr, --auth, --auth-header,
// --elicitation-timeout), so running it next to `gatehouse serve` with the same
// environment gives matching values. The snippet goes to stdout, notes to stderr, so
// `gatehouse claude-settings > .claude/settings.json` works.
func newClaudeSettingsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "claude-settings",
		Short:   "print a .claude/settings.json hook snippet (deprecated: use gatehouse setup claude)",
		GroupID: groupAgents,
		Hidden:  true,
		Args:    noArgs,
	}
	fs := cmd.Flags()
	env := func(name, def string) string { return firstSet(c.getenv, def, name) }
	publicURL := fs.String("public-url", env("GATEHOUSE_PUBLIC_URL", ""), "absolute base URL Claude Code reaches Gatehouse at (env GATEHOUSE_PUBLIC_URL)")
	addr := fs.String("addr", env("GATEHOUSE_ADDR", "127.0.0.1:8080"), "the server's listen address, used when --public-url is empty (env GATEHOUSE_ADDR)")
	authMode := fs.String("auth", env("GATEHOUSE_AUTH", "none"), "the server's auth mode: none, header or oidc (env GATEHOUSE_AUTH; oidc hooks carry an API token)")
	authHeader := fs.String("auth-header", env("GATEHOUSE_AUTH_HEADER", "X-Forwarded-Email"), "identity header in header mode (env GATEHOUSE_AUTH_HEADER)")
	timeout := fs.Duration("elicitation-timeout", envDuration(c.getenv, "GATEHOUSE_ELICITATION_TIMEOUT", 24*time.Hour), "the server's longest wait (env GATEHOUSE_ELICITATION_TIMEOUT)")
	events := fs.String("events", "PermissionRequest", "comma-separated hook events to send: PermissionRequest, PreToolUse, Elicitation "+
		"(PreToolUse fires for every tool call, so with it every call waits for a person unless --matcher narrows it)")
	matcher := fs.String("matcher", "", "tool-name matcher for PermissionRequest and PreToolUse (e.g. \"Bash|Write|Edit\"); empty matches every tool")
	identityEnv := fs.String("identity-env", "GATEHOUSE_USER", "environment variable Claude Code reads the identity header's value from (header auth)")
	tokenEnv := fs.String("token-env", "", "the environment variable the hooks read your API token from (from /settings/tokens): the hook sends it as Authorization: Bearer, "+
		"which works in every auth mode and replaces the identity header")
	command := fs.String("command", "gatehouse", "the gatehouse binary the hooks run: given, a command hook running gatehouse hook claude is printed instead of an http hook "+
		"(for private-range addresses, re-attach after dropped connections, --fail-closed); --command alone runs gatehouse from the PATH, --command=BIN another")
	fs.Lookup("command").NoOptDefVal = "gatehouse"
	commandBin := fs.String("gatehouse-bin", "", "the gatehouse binary the command hook runs (the same as --command=BIN)")
	_ = fs.MarkHidden("gatehouse-bin")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		fmt.Fprintln(c.stderr, "note: gatehouse claude-settings is deprecated: gatehouse setup claude prints (or --install installs) the same hooks")
		bin := ""
		if fs.Changed("command") {
			bin = *command
			if fs.Changed("gatehouse-bin") {
				bin = *commandBin
			}
		}
		return exitCode(printClaudeSettings(claudeSettingsOptions{
			publicURL: *publicURL, addr: *addr, auth: *authMode, authHeader: *authHeader, timeout: *timeout,
			events: *events, matcher: *matcher, identityEnv: *identityEnv, tokenEnv: *tokenEnv,
			command: fs.Changed("command"), commandBin: bin,
		}, c.stdout, c.stderr))
	}
	return cmd
}

// claudeSettingsOptions are `gatehouse claude-settings`'s flags.
type claudeSettingsOptions struct {
	publicURL, addr, auth, authHeader, events, matcher, identityEnv, tokenEnv string
	timeout                                                                   time.Duration
	// command prints a command hook running commandBin instead of an http hook.
	command    bool
	commandBin string
}

// printClaudeSettings prints the snippet o describes and returns the exit code.
func printClaudeSettings(o claudeSettingsOptions, stdout, stderr io.Writer) int {
	d := o.timeout
	if d <= 0 {
		fmt.Fprintf(stderr, "gatehouse claude-settings: --elicitation-timeout: want a positive duration like 30s or 24h, got %s\n", d)
		return 2
	}
	opts := models.SettingsOptions{
		Auth: strings.TrimSpace(o.auth), AuthHeader: strings.TrimSpace(o.authHeader),
		IdentityEnv: strings.TrimSpace(o.identityEnv), TokenEnv: strings.TrimSpace(o.tokenEnv),
		Wait: d, Matcher: o.matcher,
	}
	if o.command {
		opts.Command = strings.TrimSpace(o.commandBin)
		if opts.Command == "" {
			fmt.Fprintln(stderr, "gatehouse claude-settings: --command must not be empty")
			return 2
		}
	}
	for _, e := range strings.Split(o.events, ",") {
		if e = strings.TrimSpace(e); e != "" {
			opts.Events = append(opts.Events, e)
		}
	}
	if len(opts.Events) == 0 {
		fmt.Fprintln(stderr, "gatehouse claude-settings: --events: name at least one of PermissionRequest, PreToolUse, Elicitation")
		return 2
	}
	var err error
	if opts.URL, err = hookBase(strings.TrimSpace(o.publicURL), strings.TrimSpace(o.addr)); err != nil {
		fmt.Fprintln(stderr, "gatehouse claude-settings:", err)
		return 2
	}
	return printSettings("gatehouse claude-settings", "claude", opts, stdout, stderr)
}

// hookBase is the absolute base URL Claude Code should call.
func hookBase(publicURL, addr string) (string, error) {
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("--public-url: want an absolute http(s) URL, got %q", publicURL)
		}
		return strings.TrimRight(publicURL, "/"), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("--addr: want host:port, got %q", addr)
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "127.0.0.1" // listening everywhere: this machine reaches it on loopback
	}
	return "http://" + net.JoinHostPort(host, port), nil
}
