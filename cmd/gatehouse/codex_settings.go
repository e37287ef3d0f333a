package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// runCodexSettings prints the Codex CLI agent's config.toml hooks block, which sends
// Codex's PermissionRequest and PreToolUse hooks to this Gatehouse through the command
// hook `gatehouse hook codex` (Codex has command hooks only), and how to trust them. The
// block goes to stdout, notes to stderr, so `gatehouse codex-settings >>
// ~/.codex/config.toml` works.
func runCodexSettings(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gatehouse codex-settings", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(def string, names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return def
	}
	base := fs.String("url", env("http://127.0.0.1:8080", "GATEHOUSE_URL", "GATEHOUSE_PUBLIC_URL"),
		"Gatehouse base URL the hook posts to (env GATEHOUSE_URL, else GATEHOUSE_PUBLIC_URL)")
	tokenEnv := fs.String("token-env", "", "environment variable the hook reads your API token from (e.g. GATEHOUSE_TOKEN); empty sends none")
	command := fs.String("command", "gatehouse", "the gatehouse binary as Codex should run it (a full path if it is not on Codex's PATH)")
	timeout := fs.String("elicitation-timeout", env("24h", "GATEHOUSE_ELICITATION_TIMEOUT"), "the server's longest wait (env GATEHOUSE_ELICITATION_TIMEOUT); the hook timeout is a little longer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gatehouse codex-settings: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	d, err := time.ParseDuration(strings.TrimSpace(*timeout))
	if err != nil || d <= 0 {
		fmt.Fprintf(stderr, "gatehouse codex-settings: --elicitation-timeout: want a positive duration like 30s or 24h, got %q\n", *timeout)
		return 2
	}
	u := strings.TrimSpace(*base)
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		fmt.Fprintf(stderr, "gatehouse codex-settings: --url: want an absolute http(s) URL, got %q\n", u)
		return 2
	}
	return printSettings("gatehouse codex-settings", "codex", models.SettingsOptions{URL: strings.TrimRight(u, "/"),
		TokenEnv: strings.TrimSpace(*tokenEnv), Command: strings.TrimSpace(*command), Wait: d}, stdout, stderr)
}
