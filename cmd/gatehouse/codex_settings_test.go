package main

import (
	"bytes"
	"strings"
	"testing"
)

func codexSettingsRun(env map[string]string, args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := run(append([]string{"codex-settings"}, args...), func(k string) string { return env[k] }, &out, &errw)
	return code, out.String(), errw.String()
}

// TestCodexSettings: the printed block configures both events as command hooks running
// `gatehouse hook codex` with the URL and token variable, a timeout above the server's
// wait, PreToolUse for shell commands only; the notes say how to trust the hooks.
func TestCodexSettings(t *testing.T) {
	code, out, notes := codexSettingsRun(map[string]string{"GATEHOUSE_ELICITATION_TIMEOUT": "1h"},
		"--url", "https://gatehouse.example.com/", "--token-env", "GATEHOUSE_TOKEN")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, notes)
	}
	const cmd = `command = "gatehouse hook codex --url https://gatehouse.example.com --token-env GATEHOUSE_TOKEN"`
	if strings.Count(out, cmd) != 2 || strings.Count(out, "timeout = 3630\n") != 2 || strings.Count(out, `type = "command"`) != 2 {
		t.Fatalf("hooks block:\n%s", out)
	}
	for _, want := range []string{"[[hooks.PermissionRequest]]\n", "[[hooks.PermissionRequest.hooks]]\n",
		"[[hooks.PreToolUse]]\nmatcher = \"Bash\"", "[[hooks.PreToolUse.hooks]]\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("block lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "[[hooks.PermissionRequest]]") > strings.Index(out, "[[hooks.PermissionRequest.hooks]]") {
		t.Errorf("the matcher group must come before its hooks:\n%s", out)
	}
	for _, want := range []string{"Trust", "--dangerously-bypass-hook-trust", "--approve-for-me", "export GATEHOUSE_TOKEN="} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(out, "note:") || strings.Contains(notes, "[[hooks") {
		t.Errorf("block and notes are mixed up:\nstdout:\n%s\nstderr:\n%s", out, notes)
	}
}

// TestCodexSettingsDefaultsAndBadInput: GATEHOUSE_URL is the default URL, no token
// variable means no --token-env, an odd binary path is quoted for the shell, and bad
// flags are refused with exit 2.
func TestCodexSettingsDefaultsAndBadInput(t *testing.T) {
	code, out, _ := codexSettingsRun(map[string]string{"GATEHOUSE_URL": "http://10.0.0.5:8080"}, "--command", "/opt/my tools/gatehouse")
	if code != 0 || !strings.Contains(out, `command = "'/opt/my tools/gatehouse' hook codex --url http://10.0.0.5:8080"`) ||
		!strings.Contains(out, "timeout = 86430\n") || strings.Contains(out, "--token-env") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	_, out, _ = codexSettingsRun(nil)
	if !strings.Contains(out, "--url http://127.0.0.1:8080\"") {
		t.Fatalf("default URL:\n%s", out)
	}
	for _, args := range [][]string{
		{"--url", "gatehouse.example.com"},
		{"--url", "ftp://x"},
		{"--token-env", "MY-TOKEN"},
		{"--token-env", "1TOKEN"},
		{"--command", `gate"house`},
		{"--elicitation-timeout", "0s"},
		{"extra"},
	} {
		if code, out, errw := codexSettingsRun(nil, args...); code != 2 || out != "" || errw == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and a reason", args, code, out, errw)
		}
	}
}
