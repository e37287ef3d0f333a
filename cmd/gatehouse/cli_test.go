package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeIsTheDefaultCommand: `gatehouse` with no command, or with only serve's
// flags, runs the server.
func TestServeIsTheDefaultCommand(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	for name, tc := range map[string]struct {
		env  []string
		args []string
	}{
		"no arguments":       {[]string{"GATEHOUSE_ADDR=127.0.0.1:0", "GATEHOUSE_DATABASE_URL=" + db}, nil},
		"only serve's flags": {nil, []string{"--addr", "127.0.0.1:0", "--database-url", db}},
	} {
		t.Run(name, func(t *testing.T) {
			p := startProc(t, db, childEnv(tc.env...), tc.args...)
			if r := p.Client().Do(t, http.MethodGet, "/healthz", nil); r.Status != http.StatusOK {
				t.Fatalf("healthz: %d %s", r.Status, r.Body)
			}
			p.Terminate(t)
			if code := p.WaitExit(t, 10*time.Second); code != 0 {
				t.Fatalf("exit %d after SIGTERM", code)
			}
		})
	}
}

// TestSubcommandHelpShowsFlagTypes: each command's --help types its flags (pflag's
// string, duration, int; nothing after a bool), never the placeholder "value".
func TestSubcommandHelpShowsFlagTypes(t *testing.T) {
	for cmd, wants := range map[string][]string{
		"hook":         {"--url string", "--token string", "--token-env string", "--connect-timeout duration", "--reattach-for duration", "--fail-closed   "},
		"setup":        {"--url string", "--token-env string", "--command string", "--elicitation-timeout duration", "--install   "},
		"pending":      {"--url string", "--token string", "--token-env string"},
		"reject":       {"--url string", "--token string", "--token-env string", "--reason string"},
		"migrate":      {"--database-url string", "--max-body-bytes int", "--notify-allow-private   "},
		"audit verify": {"--database-url string", "--head stringArray", "--checkpoint stringArray"},
	} {
		code, stdout, stderr := runCmd(t, childEnv(), append(strings.Fields(cmd), "--help")...)
		if code != 0 {
			t.Fatalf("%s --help: exit %d %s", cmd, code, stderr)
		}
		for _, want := range wants {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, want, stdout)
			}
		}
		if strings.Contains(stdout, " value ") {
			t.Errorf("%s --help shows an untyped flag:\n%s", cmd, stdout)
		}
	}
}

// TestCompletionScripts: `gatehouse completion <shell>` prints a script for each shell
// cobra supports, naming the program.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runCmd(t, childEnv(), "completion", shell)
		if code != 0 || !strings.Contains(stdout, "gatehouse") || len(stdout) < 500 {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %s", shell, code, len(stdout), stderr)
		}
	}
	if code, _, stderr := runCmd(t, childEnv(), "completion", "tcsh"); code != 2 || stderr == "" {
		t.Errorf("completion tcsh: exit %d, stderr %q; want a usage error", code, stderr)
	}
}

// TestUsageErrorsPrintOneLine: a usage error is said once, on one line, with exit 2 —
// no usage dump, no second copy of the message.
func TestUsageErrorsPrintOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"}, {"--no-such-flag"}, {"serve", "--no-such-flag"}, {"pending", "--url"},
		{"approve"}, {"watch", "extra"}, {"setup"}, {"audit", "verify", "--head", "nope"},
	} {
		code, stdout, stderr := runCmd(t, childEnv(), args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line on stderr", args, code, stdout, stderr)
		}
	}
}
