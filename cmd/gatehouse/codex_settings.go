package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// codexHookEvents are the Codex CLI hook events /v1/hooks/codex parks, in the order
// printed.
func codexHookEvents() []string { return []string{"PermissionRequest", "PreToolUse"} }

// codexSettingsOptions are the inputs of `gatehouse codex-settings`.
type codexSettingsOptions struct {
	URL                string
	TokenEnv           string
	Command            string
	ElicitationTimeout time.Duration
}

// runCodexSettings prints the Codex config.toml hooks block that sends Codex's
// PermissionRequest and PreToolUse hooks to this Gatehouse through the command hook
// `gatehouse hook codex` (Codex has command hooks only), and how to trust them. The
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
	block, notes, err := codexSettings(codexSettingsOptions{URL: strings.TrimSpace(*base), TokenEnv: strings.TrimSpace(*tokenEnv),
		Command: strings.TrimSpace(*command), ElicitationTimeout: d})
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse codex-settings:", err)
		return 2
	}
	fmt.Fprint(stdout, block)
	for _, n := range notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	return 0
}

// codexSettings builds the config.toml block and the notes for the person running it.
func codexSettings(o codexSettingsOptions) (string, []string, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("--url: want an absolute http(s) URL, got %q", o.URL)
	}
	if o.TokenEnv != "" && !validEnvName(o.TokenEnv) {
		return "", nil, fmt.Errorf("--token-env: %q is not an environment variable name", o.TokenEnv)
	}
	if o.Command == "" || strings.ContainsAny(o.Command, "\"'\n\\") {
		return "", nil, fmt.Errorf("--command: want the path of the gatehouse binary without quotes or backslashes, got %q", o.Command)
	}
	argv := []string{shellWord(o.Command), "hook", "codex", "--url", shellWord(strings.TrimRight(o.URL, "/"))}
	if o.TokenEnv != "" {
		argv = append(argv, "--token-env", o.TokenEnv)
	}
	wait := o.ElicitationTimeout + hookTimeoutMargin
	var notes []string
	if wait > hookTimeoutMax {
		wait = hookTimeoutMax
		notes = append(notes, fmt.Sprintf("the hook timeout is capped at %s: a prompt still waiting then falls back to Codex's own approval", hookTimeoutMax))
	}
	secs := int64(math.Ceil(wait.Seconds()))

	var b strings.Builder
	b.WriteString("# Gatehouse: Codex asks a person in Gatehouse before it runs a command (gatehouse codex-settings).\n")
	b.WriteString("# PermissionRequest fires when Codex itself would ask for approval; PreToolUse fires before\n")
	b.WriteString("# every command, so with it every command waits for a person: delete that block to be asked\n")
	b.WriteString("# only when Codex would ask. One answer covers both events for the same command.\n")
	for _, ev := range codexHookEvents() {
		fmt.Fprintf(&b, "\n[[hooks.%s]]\n", ev)
		if ev == "PreToolUse" {
			b.WriteString("matcher = \"Bash\" # shell commands only\n")
		}
		fmt.Fprintf(&b, "\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %s\ntimeout = %d\n",
			ev, strconv.Quote(strings.Join(argv, " ")), secs)
	}
	notes = append(notes,
		"Codex skips new or changed hooks until you trust them: start `codex` once in a terminal and choose Trust when it "+
			"lists them (\"Hooks need review\"); `codex exec` runs only trusted hooks (or pass --dangerously-bypass-hook-trust for a one-off run)",
		"headless runs need approvals on to ask at all: `codex exec --approve-for-me` (with approval policy never, PermissionRequest never fires)")
	if o.TokenEnv != "" {
		notes = append(notes, fmt.Sprintf("export %s=<your Gatehouse API token> in the shell you start codex from", o.TokenEnv))
	}
	return b.String(), notes, nil
}

// shellWord quotes s for a POSIX shell when it needs it (Codex runs the command with
// the shell).
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
