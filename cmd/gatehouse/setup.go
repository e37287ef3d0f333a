package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/setup"
	"github.com/gatehouse-dev/gatehouse/models"
)

// defaultURL is where `gatehouse serve` answers on its defaults.
const defaultURL = "http://127.0.0.1:8080"

// runSetup is `gatehouse setup <agent> [--url U] [--token-env VAR] [--install]`: it
// prints the agent's settings snippet for this server, or with --install merges it into
// the agent's own settings file (a backup first, a diff after; twice changes nothing).
// The agents are the registry's, so a new agent needs nothing here.
func runSetup(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const cmd = "gatehouse setup"
	reg := agents.Default()
	var names []string
	for _, a := range reg.All() {
		if _, err := a.Settings(models.SettingsOptions{URL: defaultURL, Command: "gatehouse", Wait: time.Hour}); !errors.Is(err, models.ErrNoSettings) {
			names = append(names, a.Name())
		}
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s <%s> [--url URL] [--token-env VAR] [--install]\n\n"+
			"Prints the agent's hook settings for this Gatehouse, or installs them into the agent's settings file.\n\n", cmd, strings.Join(names, "|"))
		fs.PrintDefaults()
	}
	base := fs.String("url", firstSet(getenv, defaultURL, "GATEHOUSE_URL", "GATEHOUSE_PUBLIC_URL"), "the Gatehouse server the hooks reach (env `GATEHOUSE_URL`)")
	tokenEnv := fs.String("token-env", "", "environment `variable` the hooks read your API token from (e.g. GATEHOUSE_TOKEN; needed when the server signs people in)")
	install := fs.Bool("install", false, "merge the settings into the agent's settings file instead of printing them")
	command := fs.String("command", "gatehouse", "the gatehouse `binary` the hooks run (a full path if it is not on the agent's PATH)")
	timeout := fs.Duration("elicitation-timeout", envDuration(getenv, "GATEHOUSE_ELICITATION_TIMEOUT", 24*time.Hour), "the server's longest wait (env GATEHOUSE_ELICITATION_TIMEOUT); hook timeouts are a little longer")
	agentName, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		agentName, rest = args[0], args[1:]
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if agentName == "" && fs.NArg() > 0 {
		agentName = fs.Arg(0)
	}
	a, ok := reg.Lookup(agentName)
	if !ok || fs.NArg() > 1 {
		fmt.Fprintf(stderr, "%s: name an agent: %s\n", cmd, strings.Join(names, ", "))
		return 2
	}
	u := strings.TrimRight(strings.TrimSpace(*base), "/")
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		fmt.Fprintf(stderr, "%s: --url: want an absolute http(s) URL, got %q\n", cmd, u)
		return 2
	}
	s, err := a.Settings(models.SettingsOptions{URL: u, TokenEnv: strings.TrimSpace(*tokenEnv), Command: strings.TrimSpace(*command),
		Wait: *timeout, Auth: firstSet(getenv, "none", "GATEHOUSE_AUTH")})
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", cmd, agentName, err)
		return 2
	}
	if err := checkServer(u); err != nil {
		fmt.Fprintf(stderr, "warning: no Gatehouse answers at %s (%v): start it with `gatehouse serve`, or pass --url\n", u, err)
	}
	if !*install {
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
