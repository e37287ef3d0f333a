package gemini

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

type installed struct {
	Hooks struct {
		BeforeTool []matcherGroup `json:"BeforeTool"`
	} `json:"hooks"`
}

// TestSettingsDefault: one BeforeTool command hook for the tools that change
// something, its timeout in milliseconds a margin above the server's wait and
// --answer-within a margin below it (Gemini runs the tool when the hook times out).
func TestSettingsDefault(t *testing.T) {
	s, err := Agent{}.Settings(models.SettingsOptions{URL: "https://gh.example.com", Command: "/opt/gate house/gatehouse",
		TokenEnv: "GATEHOUSE_TOKEN", Wait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var got installed
	if err := json.Unmarshal([]byte(s.Text), &got); err != nil {
		t.Fatalf("%v\n%s", err, s.Text)
	}
	if len(got.Hooks.BeforeTool) != 1 || got.Hooks.BeforeTool[0].Matcher != GatedTools || len(got.Hooks.BeforeTool[0].Hooks) != 1 {
		t.Fatalf("BeforeTool = %+v", got.Hooks.BeforeTool)
	}
	want := hook{Type: "command", Name: "gatehouse", Timeout: 3630000,
		Command: `'/opt/gate house/gatehouse' hook gemini --url https://gh.example.com --token-env GATEHOUSE_TOKEN --answer-within 1h0m15s`}
	if h := got.Hooks.BeforeTool[0].Hooks[0]; h != want {
		t.Errorf("hook = %+v\nwant %+v", h, want)
	}
	if s.File.Path("/home/u", func(string) string { return "" }) != "/home/u/.gemini/settings.json" ||
		s.File.Path("/home/u", func(k string) string { return map[string]string{"GEMINI_CLI_HOME": "/g"}[k] }) != "/g/.gemini/settings.json" ||
		s.File.Format != models.FormatJSON {
		t.Errorf("file = %+v", s.File)
	}
	if !strings.Contains(strings.Join(s.Notes, "\n"), "GEMINI_CLI_") {
		t.Errorf("no note on Gemini's redaction of token variables: %q", s.Notes)
	}
}

// TestGatedTools: the matcher Gemini applies (a regular expression over its tool
// names) selects shell commands, edits, writes and MCP tools, not reads.
func TestGatedTools(t *testing.T) {
	re := regexp.MustCompile(GatedTools)
	for tool, gated := range map[string]bool{"run_shell_command": true, "replace": true, "write_file": true, "mcp_docs_search": true,
		"read_file": false, "glob": false, "grep_search": false, "list_directory": false, "mcp_": false, "xrun_shell_command": false} {
		if re.MatchString(tool) != gated {
			t.Errorf("%s: gated %v, want %v", tool, !gated, gated)
		}
	}
}

// TestSettingsOptions: a matcher replaces the default; the week's cap is said; bad
// options are refused naming the option.
func TestSettingsOptions(t *testing.T) {
	s, err := Agent{}.Settings(models.SettingsOptions{URL: "http://127.0.0.1:8080", Command: "gatehouse", Wait: 30 * 24 * time.Hour, Matcher: ".*"})
	if err != nil {
		t.Fatal(err)
	}
	var got installed
	if err := json.Unmarshal([]byte(s.Text), &got); err != nil {
		t.Fatal(err)
	}
	if h := got.Hooks.BeforeTool[0]; h.Matcher != ".*" || h.Hooks[0].Timeout != 604800000 || !strings.HasSuffix(h.Hooks[0].Command, "--answer-within 167h59m45s") {
		t.Errorf("BeforeTool = %+v", h)
	}
	if !strings.Contains(strings.Join(s.Notes, "\n"), "capped") {
		t.Errorf("notes do not say the timeout is capped: %q", s.Notes)
	}
	for _, bad := range []models.SettingsOptions{
		{URL: "http://x", Command: `gate"house`},
		{URL: "http://x", Command: ""},
		{URL: "http://x", Command: "gatehouse", TokenEnv: "1X"},
	} {
		if _, err := (Agent{}).Settings(bad); err == nil || !strings.HasPrefix(err.Error(), "--") {
			t.Errorf("%+v: %v, want an error naming the option", bad, err)
		}
	}
}
