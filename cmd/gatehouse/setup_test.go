package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetupInstall runs `gatehouse setup <agent> --install` as a person would, into a
// temporary HOME: a fresh HOME gets a valid settings file; an existing one keeps its
// other keys and gets a backup; a second run changes nothing; a file that is not valid
// JSON is left untouched and named.
func TestSetupInstall(t *testing.T) {
	home := t.TempDir()
	env := childEnv("HOME="+home, "GATEHOUSE_URL=http://127.0.0.1:1")
	settings := filepath.Join(home, ".claude", "settings.json")

	code, stdout, stderr := runCmd(t, env, "setup", "claude", "--install")
	if code != 0 || !strings.Contains(stdout, "wrote "+settings) {
		t.Fatalf("fresh HOME: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "no Gatehouse answers at http://127.0.0.1:1") {
		t.Errorf("an unreachable --url is not reported:\n%s", stderr)
	}
	var doc struct {
		Model string                      `json:"model"`
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	readJSON(t, settings, &doc)
	if len(doc.Hooks["PermissionRequest"]) != 1 {
		t.Fatalf("fresh file hooks: %+v", doc.Hooks)
	}

	mine := `{"model":"opus","hooks":{"PermissionRequest":[{"matcher":"Read","hooks":[{"type":"command","command":"my-own-hook"}]}]}}`
	if err := os.WriteFile(settings, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCmd(t, env, "setup", "claude", "--install")
	if code != 0 || !strings.Contains(stdout, "+            \"command\": \"gatehouse hook claude") {
		t.Fatalf("existing file: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(settings + ".bak"); string(b) != mine {
		t.Fatalf("backup holds %q, want the old file", b)
	}
	first, _ := os.ReadFile(settings)
	readJSON(t, settings, &doc)
	if doc.Model != "opus" || len(doc.Hooks["PermissionRequest"]) != 2 || !strings.Contains(string(first), "my-own-hook") {
		t.Fatalf("merge lost the person's settings or missed ours:\n%s", first)
	}

	code, stdout, _ = runCmd(t, env, "setup", "claude", "--install")
	second, _ := os.ReadFile(settings)
	if code != 0 || !strings.Contains(stdout, "nothing to change") || string(second) != string(first) {
		t.Fatalf("second run changed the file (exit %d): %s\n%s", code, stdout, second)
	}

	if err := os.WriteFile(settings, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, env, "setup", "claude", "--install")
	if b, _ := os.ReadFile(settings); code != 1 || string(b) != "{not json" || !strings.Contains(stderr, settings+": not valid JSON") {
		t.Fatalf("invalid file: exit %d, file %q, stderr %s", code, b, stderr)
	}
}

// TestSetupInstallCodexKeepsTheRest: the Codex block goes into config.toml between
// markers; every byte outside it stays, and a re-install replaces the block in place.
func TestSetupInstallCodexKeepsTheRest(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	before, after := "model = \"o3\"  # mine\n\n", "\n[profile.fast]\nmodel = \"o4-mini\"\n"
	env := childEnv("HOME="+home, "GATEHOUSE_URL=http://127.0.0.1:1")
	if err := os.WriteFile(cfg, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCmd(t, env, "setup", "codex", "--install"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, _ := os.ReadFile(cfg)
	// The person adds a table after the block; the next install keeps it.
	if err := os.WriteFile(cfg, append(b, after...), 0o600); err != nil {
		t.Fatal(err)
	}
	env2 := childEnv("HOME="+home, "GATEHOUSE_URL=http://127.0.0.1:2")
	if code, stdout, stderr := runCmd(t, env2, "setup", "codex", "--install"); code != 0 {
		t.Fatalf("re-install: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got, _ := os.ReadFile(cfg)
	s := string(got)
	if !strings.HasPrefix(s, before) || !strings.HasSuffix(s, "# <<< gatehouse <<<\n"+after) {
		t.Fatalf("bytes outside the block changed:\n%s", s)
	}
	if strings.Count(s, "# >>> gatehouse >>>") != 1 || strings.Contains(s, "127.0.0.1:1") || !strings.Contains(s, "127.0.0.1:2") {
		t.Fatalf("the block was not replaced in place:\n%s", s)
	}
}

// TestSetupPrintsWithoutInstall: without --install the snippet goes to stdout and
// nothing is written; an unknown agent is a usage error naming the agents.
func TestSetupPrintsWithoutInstall(t *testing.T) {
	home := t.TempDir()
	env := childEnv("HOME="+home, "GATEHOUSE_URL=http://127.0.0.1:1")
	code, stdout, _ := runCmd(t, env, "setup", "claude")
	if code != 0 || !json.Valid([]byte(stdout)) || !strings.Contains(stdout, "gatehouse hook claude --url http://127.0.0.1:1") {
		t.Fatalf("exit %d, stdout %s", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude")); !os.IsNotExist(err) {
		t.Fatalf("printing wrote into HOME: %v", err)
	}
	code, _, stderr := runCmd(t, env, "setup", "nope")
	if code != 2 || !strings.Contains(stderr, "name an agent: claude, codex") {
		t.Fatalf("unknown agent: exit %d, stderr %s", code, stderr)
	}
}

// TestHelpListsSubcommands: `gatehouse --help` names the subcommands, not serve's flags.
func TestHelpListsSubcommands(t *testing.T) {
	for _, arg := range []string{"--help", "help", "-h"} {
		code, stdout, stderr := runCmd(t, childEnv(), arg)
		if code != 0 {
			t.Fatalf("%s: exit %d %s", arg, code, stderr)
		}
		for _, want := range []string{"serve", "setup <agent>", "hook <agent>", "audit verify", "version"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s does not list %q:\n%s", arg, want, stdout)
			}
		}
	}
	if code, stdout, _ := runCmd(t, childEnv(), "--version"); code != 0 || !strings.HasPrefix(stdout, "gatehouse ") {
		t.Fatalf("--version: exit %d %q", code, stdout)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
}

// TestSetupClaudeInstallsEscalationHooks: `gatehouse setup claude` installs, beside
// PermissionRequest, the three hooks of escalated refusals together — PermissionDenied
// (the refusal), a PreToolUse that lets only an approved retry through (so no other
// tool call waits for a person), and Notification.
func TestSetupClaudeInstallsEscalationHooks(t *testing.T) {
	home := t.TempDir()
	env := childEnv("HOME="+home, "GATEHOUSE_URL=http://127.0.0.1:1")
	if code, stdout, stderr := runCmd(t, env, "setup", "claude", "--install"); code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	readJSON(t, filepath.Join(home, ".claude", "settings.json"), &doc)
	for _, ev := range []string{"PermissionRequest", "PermissionDenied", "PreToolUse", "Notification"} {
		if len(doc.Hooks[ev]) != 1 || len(doc.Hooks[ev][0].Hooks) != 1 {
			t.Fatalf("%s: %+v", ev, doc.Hooks[ev])
		}
	}
	pre := doc.Hooks["PreToolUse"][0].Hooks[0]
	if !strings.HasSuffix(pre.Command, " --grants-only") || pre.Timeout > 60 {
		t.Fatalf("PreToolUse hook %+v, want a quick grants-only forward", pre)
	}
	if c := doc.Hooks["PermissionDenied"][0].Hooks[0].Command; strings.Contains(c, "--grants-only") || !strings.Contains(c, "hook claude") {
		t.Fatalf("PermissionDenied hook %q", c)
	}
}
