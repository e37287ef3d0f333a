package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/setup"
	"github.com/gatehouse-dev/gatehouse/models"
)

// defaultURL is where `gatehouse serve` answers on its defaults.
const defaultURL = "http://127.0.0.1:8080"

// newSetupCmd is `gatehouse setup <agent> [--url U] [--token-env VAR] [--install]`:
// it prints the agent's settings snippet for this server, or with --install merges it
// into the agent's own settings file (a backup first, a diff after; twice changes
// nothing). The agents are the registry's, so a new agent needs nothing here.
func newSetupCmd(c *cli) *cobra.Command {
	names := setupAgents()
	cmd := &cobra.Command{
		Use:     "setup <agent>",
		Short:   "print an agent's hook settings for this server, or --install them",
		Long:    "Prints the agent's hook settings for this Gatehouse, or installs them into the agent's settings file.\nAgents: " + strings.Join(names, ", ") + ".",
		GroupID: groupAgents,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("gatehouse setup: name an agent: %s", strings.Join(names, ", "))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	base := fs.String("url", firstSet(c.getenv, defaultURL, "GATEHOUSE_URL", "GATEHOUSE_PUBLIC_URL"), "the Gatehouse server the hooks reach (env GATEHOUSE_URL, else GATEHOUSE_PUBLIC_URL)")
	tokenEnv := fs.String("token-env", "", "the environment variable the hooks read your API token from (e.g. GATEHOUSE_TOKEN; needed when the server signs people in)")
	install := fs.Bool("install", false, "merge the settings into the agent's settings file instead of printing them")
	command := fs.String("command", "gatehouse", "the gatehouse binary the hooks run (a full path if it is not on the agent's PATH)")
	timeout := fs.Duration("elicitation-timeout", envDuration(c.getenv, "GATEHOUSE_ELICITATION_TIMEOUT", 24*time.Hour), "the server's longest wait (env GATEHOUSE_ELICITATION_TIMEOUT); hook timeouts are a little longer")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return exitCode(runSetup(setupOptions{agent: args[0], names: names, url: *base, tokenEnv: *tokenEnv,
			install: *install, command: *command, timeout: *timeout}, c.getenv, c.stdout, c.stderr))
	}
	return cmd
}

// setupAgents are the registry's agents that have settings to print.
func setupAgents() []string {
	var names []string
	for _, a := range agents.Default().All() {
		if _, err := a.Settings(models.SettingsOptions{URL: defaultURL, Command: "gatehouse", Wait: time.Hour}); !errors.Is(err, models.ErrNoSettings) {
			names = append(names, a.Name())
		}
	}
	return names
}

// setupOptions are `gatehouse setup`'s arguments.
type setupOptions struct {
	agent, url, tokenEnv, command string
	names                         []string
	install                       bool
	timeout                       time.Duration
}

// runSetup prints or installs o.agent's settings and returns the exit code.
func runSetup(o setupOptions, getenv func(string) string, stdout, stderr io.Writer) int {
	const cmd = "gatehouse setup"
	agentName := o.agent
	a, ok := agents.Default().Lookup(agentName)
	if !ok {
		fmt.Fprintf(stderr, "%s: name an agent: %s\n", cmd, strings.Join(o.names, ", "))
		return 2
	}
	u := strings.TrimRight(strings.TrimSpace(o.url), "/")
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		fmt.Fprintf(stderr, "%s: --url: want an absolute http(s) URL, got %q\n", cmd, u)
		return 2
	}
	s, err := a.Settings(models.SettingsOptions{URL: u, TokenEnv: strings.TrimSpace(o.tokenEnv), Command: strings.TrimSpace(o.command),
		Wait: o.timeout, Auth: firstSet(getenv, "none", "GATEHOUSE_AUTH")})
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", cmd, agentName, err)
		return 2
	}
	if err := checkServer(u); err != nil {
		fmt.Fprintf(stderr, "warning: no Gatehouse answers at %s (%v): start it with `gatehouse serve`, or pass --url\n", u, err)
	}
	if !o.install {
		fmt.Fprint(stdout, s.Text)
		printNotes(stderr, s.Notes)
		return 0
	}
	home := getenv("HOME")
	if home == "" || s.File.Name == "" {
		fmt.Fprintf(stderr, "%s %s: no settings file to install into (HOME unset?): print the settings without --install\n", cmd, agentName)
		return 1
	}
	r, err := setup.Install(s.File.Path(home, getenv), a.Name(), s)
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", cmd, agentName, err)
		return 1
	}
	switch {
	case !r.Changed:
		fmt.Fprintf(stdout, "%s already sends %s to %s: nothing to change\n", r.Path, a.Vendor(), u)
	case r.Created:
		fmt.Fprint(stdout, setup.Diff(r.Path, nil, r.New))
		fmt.Fprintf(stdout, "wrote %s: %s now asks Gatehouse at %s\n", r.Path, a.Vendor(), u)
	default:
		fmt.Fprint(stdout, setup.Diff(r.Path, r.Old, r.New))
		fmt.Fprintf(stdout, "updated %s (the old file is %s): %s now asks Gatehouse at %s\n", r.Path, r.Backup, a.Vendor(), u)
	}
	printNotes(stderr, s.Notes)
	return 0
}

func printNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// checkServer asks the server's health route, so a typo in --url shows now rather than
// when the agent's first hook fails.
func checkServer(base string) error {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(base + "/healthz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/healthz answered %s", resp.Status)
	}
	return nil
}

// firstSet is the first of the environment variables names that is set, else def.
func firstSet(getenv func(string) string, def string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return def
}

// envDuration reads a duration from the environment variable name, else def.
func envDuration(getenv func(string) string, name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(strings.TrimSpace(getenv(name))); err == nil && d > 0 {
		return d
	}
	return def
}
