package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// runClaudeSettings prints the Claude Code agent's .claude/settings.json snippet, whose
// hooks send every Claude Code session of the user to this Gatehouse (POST
// /v1/hooks/claude). It reads the server's own flags and environment twins
// (--public-url, --addr, --auth, --auth-header, --elicitation-timeout), so running it
// next to `gatehouse serve` with the same environment gives matching values. The
// snippet goes to stdout, notes to stderr, so `gatehouse claude-settings >
// .claude/settings.json` works.
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
	opts := models.SettingsOptions{
		Auth: strings.TrimSpace(*authMode), AuthHeader: strings.TrimSpace(*authHeader),
		IdentityEnv: strings.TrimSpace(*identityEnv), TokenEnv: strings.TrimSpace(*tokenEnv),
		Wait: d, Matcher: *matcher,
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
	if len(opts.Events) == 0 {
		fmt.Fprintln(stderr, "gatehouse claude-settings: --events: name at least one of PermissionRequest, PreToolUse, Elicitation")
		return 2
	}
	if opts.URL, err = hookBase(strings.TrimSpace(*publicURL), strings.TrimSpace(*addr)); err != nil {
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
