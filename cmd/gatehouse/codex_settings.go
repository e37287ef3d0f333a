package main

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/models"
)

// newCodexSettingsCmd is the deprecated `gatehouse codex-settings` (gatehouse setup
// codex prints the same block): it prints the Codex CLI agent's config.toml hooks
// block, which sends Codex's PermissionRequest and PreToolUse hooks to this Gatehouse
// through the command hook `gatehouse hook codex` (Codex has command hooks only), and
// how to trust them. The block goes to stdout, notes to stderr, so `gatehouse
// codex-settings >> ~/.codex/config.toml` works.
func newCodexSettingsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "codex-settings",
		Short:   "print a Codex config.toml hooks block (deprecated: use gatehouse setup codex)",
		GroupID: groupAgents,
		Hidden:  true,
		Args:    noArgs,
	}
	fs := cmd.Flags()
	base := fs.String("url", firstSet(c.getenv, defaultURL, "GATEHOUSE_URL", "GATEHOUSE_PUBLIC_URL"),
		"Gatehouse base URL the hook posts to (env GATEHOUSE_URL, else GATEHOUSE_PUBLIC_URL)")
	tokenEnv := fs.String("token-env", "", "the environment variable the hook reads your API token from (e.g. GATEHOUSE_TOKEN); empty sends none")
	command := fs.String("command", "gatehouse", "the gatehouse binary the hooks run (a full path if it is not on Codex's PATH)")
	timeout := fs.Duration("elicitation-timeout", envDuration(c.getenv, "GATEHOUSE_ELICITATION_TIMEOUT", 24*time.Hour), "the server's longest wait (env GATEHOUSE_ELICITATION_TIMEOUT); the hook timeout is a little longer")
	cmd.RunE = func(*cobra.Command, []string) error {
		fmt.Fprintln(c.stderr, "note: gatehouse codex-settings is deprecated: gatehouse setup codex prints (or --install installs) the same hooks")
		if *timeout <= 0 {
			return usageErrorf("gatehouse codex-settings: --elicitation-timeout: want a positive duration like 30s or 24h, got %s", *timeout)
		}
		u := strings.TrimSpace(*base)
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return usageErrorf("gatehouse codex-settings: --url: want an absolute http(s) URL, got %q", u)
		}
		return exitCode(printSettings("gatehouse codex-settings", "codex", models.SettingsOptions{URL: strings.TrimRight(u, "/"),
			TokenEnv: strings.TrimSpace(*tokenEnv), Command: strings.TrimSpace(*command), Wait: *timeout}, c.stdout, c.stderr))
	}
	return cmd
}
