package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

func claudeSettingsRun(t *testing.T, env map[string]string, args ...string) (int, map[string]any, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := run(append([]string{"claude-settings"}, args...), func(k string) string { return env[k] }, &out, &errw)
	var m map[string]any
	if code == 0 {
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, out.String())
		}
	}
	return code, m, errw.String()
}

// hookOf returns the single http hook configured for event, and its matcher entry.
func hookOf(t *testing.T, settings map[string]any, event string) (map[string]any, map[string]any) {
	t.Helper()
	list, ok := settings["hooks"].(map[string]any)[event].([]any)
	if !ok || len(list) != 1 {
		t.Fatalf("no %s hook in %v", event, settings)
	}
	entry := list[0].(map[string]any)
	hooks := entry["hooks"].([]any)
	if len(hooks) != 1 {
		t.Fatalf("%s: %d hooks", event, len(hooks))
	}
	return hooks[0].(map[string]any), entry
}

func TestClaudeSettingsDefaults(t *testing.T) {
	code, s, _ := claudeSettingsRun(t, nil)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := len(s["hooks"].(map[string]any)); n != 1 {
		t.Fatalf("default snippet has %d events, want PermissionRequest only: %v", n, s)
	}
	h, entry := hookOf(t, s, "PermissionRequest")
	if h["type"] != "http" || h["url"] != "http://127.0.0.1:8080/v1/hooks/claude" || h["timeout"] != float64(24*3600+30) {
		t.Fatalf("hook = %v", h)
	}
	if _, ok := h["headers"]; ok {
		t.Fatalf("no identity header without header auth: %v", h)
	}
	if _, ok := entry["matcher"]; ok {
		t.Fatalf("no matcher means every tool: %v", entry)
	}
}

func TestClaudeSettingsHeaderAuthPublicURLAndEvents(t *testing.T) {
	code, s, notes := claudeSettingsRun(t, nil, "--public-url", "https://gatehouse.example.com/", "--auth", "header",
		"--elicitation-timeout", "1h", "--events", "PermissionRequest, PreToolUse,Elicitation", "--matcher", "Bash|Write")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, notes)
	}
	for _, ev := range []string{"PermissionRequest", "PreToolUse", "Elicitation"} {
		h, entry := hookOf(t, s, ev)
		if h["url"] != "https://gatehouse.example.com/v1/hooks/claude" || h["timeout"] != float64(3630) {
			t.Errorf("%s hook = %v", ev, h)
		}
		if got, _ := json.Marshal(h["headers"]); string(got) != `{"X-Forwarded-Email":"$GATEHOUSE_USER"}` {
			t.Errorf("%s headers = %s", ev, got)
		}
		if got, _ := json.Marshal(h["allowedEnvVars"]); string(got) != `["GATEHOUSE_USER"]` {
			t.Errorf("%s allowedEnvVars = %s", ev, got)
		}
		wantMatcher := "Bash|Write"
		if ev == "Elicitation" {
			wantMatcher = ""
		}
		if m, _ := entry["matcher"].(string); m != wantMatcher {
			t.Errorf("%s matcher = %q, want %q", ev, m, wantMatcher)
		}
	}
	if !strings.Contains(notes, "GATEHOUSE_USER") {
		t.Errorf("header auth should tell the user to set the identity variable: %q", notes)
	}
}

func TestClaudeSettingsReadsTheServersEnvironment(t *testing.T) {
	env := map[string]string{"GATEHOUSE_ADDR": "0.0.0.0:9090", "GATEHOUSE_AUTH": "header", "GATEHOUSE_AUTH_HEADER": "X-Email",
		"GATEHOUSE_ELICITATION_TIMEOUT": "90s"}
	code, s, _ := claudeSettingsRun(t, env, "--identity-env", "MY_EMAIL")
	if code != 0 {
		t.Fatal("exit", code)
	}
	h, _ := hookOf(t, s, "PermissionRequest")
	if h["url"] != "http://127.0.0.1:9090/v1/hooks/claude" || h["timeout"] != float64(120) {
		t.Fatalf("hook = %v", h)
	}
	if got, _ := json.Marshal(h["headers"]); string(got) != `{"X-Email":"$MY_EMAIL"}` {
		t.Fatalf("headers = %s", got)
	}
	// A flag wins over its environment twin.
	_, s, _ = claudeSettingsRun(t, env, "--auth", "none", "--addr", "[::1]:7000")
	h, _ = hookOf(t, s, "PermissionRequest")
	if _, ok := h["headers"]; ok || h["url"] != "http://[::1]:7000/v1/hooks/claude" {
		t.Fatalf("flags must win: %v", h)
	}
}

func TestClaudeSettingsCapsTimeoutAndWarnsOnPrivateAddresses(t *testing.T) {
	code, s, notes := claudeSettingsRun(t, nil, "--elicitation-timeout", "720h", "--addr", "192.168.1.20:8080")
	if code != 0 {
		t.Fatal("exit", code)
	}
	h, _ := hookOf(t, s, "PermissionRequest")
	if h["timeout"] != float64(7*24*3600) {
		t.Errorf("timeout = %v, want the 7-day cap", h["timeout"])
	}
	if !strings.Contains(notes, "capped") || !strings.Contains(notes, "private-range") {
		t.Errorf("notes = %q", notes)
	}
	if _, _, notes := claudeSettingsRun(t, nil, "--addr", "127.0.0.1:8080"); strings.Contains(notes, "private-range") {
		t.Errorf("loopback is fine: %q", notes)
	}
}

func TestClaudeSettingsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--events", "PermissionRequest,Stop"},
		{"--events", " , "},
		{"--public-url", "ftp://example.com"},
		{"--public-url", "gatehouse.example.com"},
		{"--addr", "nohostport"},
		{"--auth", "oauth"},
		{"--auth", "header", "--identity-env", "1BAD"},
		{"--elicitation-timeout", "forever"},
		{"--nope"},
		{"extra"},
	} {
		if code, _, stderr := claudeSettingsRun(t, nil, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, stderr)
		}
	}
}

// TestClaudeSettingsSnippetReachesTheServer posts a PermissionRequest exactly as Claude
// Code would from the printed snippet (url, headers with the variable filled in) to a
// real server: the hook is accepted and the caller gets a session of their own.
func TestClaudeSettingsSnippetReachesTheServer(t *testing.T) {
	dbs := testserver.Databases(t)
	srv := testserver.Start(t, dbs[0].NewURL(t), "--auth", "header", "--elicitation-timeout", "100ms")
	_, s, _ := claudeSettingsRun(t, nil, "--public-url", srv.URL, "--auth", "header", "--elicitation-timeout", "100ms")
	h, _ := hookOf(t, s, "PermissionRequest")
	body, _ := json.Marshal(testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}))
	req, _ := http.NewRequest(http.MethodPost, h["url"].(string), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	vars := map[string]string{"GATEHOUSE_USER": "carol@example.com"}
	for k, v := range h["headers"].(map[string]any) {
		req.Header.Set(k, os.Expand(v.(string), func(name string) string { return vars[name] }))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("hook answered %d", resp.StatusCode)
	}
	list := srv.Client("carol@example.com").Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)
	if sessions, _ := list["sessions"].([]any); len(sessions) != 1 {
		t.Fatalf("carol's sessions = %v", list)
	}
}

// TestClaudeSettingsTokenEnv: the http hook sends the API token from an environment
// variable Claude Code is allowed to read; a token identifies its owner, so it replaces
// the identity header in header mode.
func TestClaudeSettingsTokenEnv(t *testing.T) {
	for _, auth := range []string{"none", "header"} {
		code, s, notes := claudeSettingsRun(t, nil, "--token-env", "GATEHOUSE_TOKEN", "--auth", auth, "--public-url", "https://gh.example.com")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", auth, code, notes)
		}
		h, _ := hookOf(t, s, "PermissionRequest")
		if got, _ := json.Marshal(h["headers"]); string(got) != `{"Authorization":"Bearer $GATEHOUSE_TOKEN"}` {
			t.Errorf("%s: headers = %s", auth, got)
		}
		if got, _ := json.Marshal(h["allowedEnvVars"]); string(got) != `["GATEHOUSE_TOKEN"]` {
			t.Errorf("%s: allowedEnvVars = %s", auth, got)
		}
		if !strings.Contains(notes, "GATEHOUSE_TOKEN") || !strings.Contains(notes, "https://gh.example.com/settings/tokens") {
			t.Errorf("%s: notes = %q", auth, notes)
		}
	}
	if _, _, notes := claudeSettingsRun(t, nil, "--token-env", "T", "--public-url", "http://gh.example.com"); !strings.Contains(notes, "clear") {
		t.Errorf("a token over plain http to another host deserves a warning: %q", notes)
	}
	if code, _, _ := claudeSettingsRun(t, nil, "--token-env", "1-bad"); code != 2 {
		t.Errorf("bad --token-env name: exit %d", code)
	}
}

// TestClaudeSettingsCommandHook: --command prints a command hook running the forwarder,
// which reads GATEHOUSE_TOKEN itself or the variable --token-env names.
func TestClaudeSettingsCommandHook(t *testing.T) {
	code, s, notes := claudeSettingsRun(t, nil, "--command", "--addr", "192.168.1.20:8080", "--events", "PreToolUse", "--elicitation-timeout", "1h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, notes)
	}
	h, _ := hookOf(t, s, "PreToolUse")
	if h["type"] != "command" || h["command"] != "gatehouse hook claude --url http://192.168.1.20:8080" || h["timeout"] != float64(3630) {
		t.Errorf("hook = %v", h)
	}
	if _, ok := h["url"]; ok {
		t.Errorf("a command hook has no url: %v", h)
	}
	if strings.Contains(notes, "private-range") {
		t.Errorf("command hooks reach private addresses: %q", notes)
	}
	code, s, _ = claudeSettingsRun(t, nil, "--command", "--gatehouse-bin", "/opt/my tools/gatehouse", "--auth", "header", "--token-env", "MY_TOKEN")
	if code != 0 {
		t.Fatal("exit", code)
	}
	h, _ = hookOf(t, s, "PermissionRequest")
	if h["command"] != "'/opt/my tools/gatehouse' hook claude --url http://127.0.0.1:8080 --token-env MY_TOKEN" {
		t.Errorf("command = %v", h["command"])
	}
	if _, ok := h["headers"]; ok {
		t.Errorf("a command hook sends no headers of its own: %v", h)
	}
	// Header auth needs an identity the command hook can send: a token.
	if code, _, stderr := claudeSettingsRun(t, nil, "--command", "--auth", "header"); code != 2 || !strings.Contains(stderr, "--token-env") {
		t.Errorf("--command --auth header without a token: exit %d, %q", code, stderr)
	}
}

// TestClaudeSettingsTokenSnippetReachesTheServer posts a hook as Claude Code would from
// the --token-env snippet (the variable filled in) from a peer the server does not trust
// for identity headers: the token's owner gets the session.
func TestClaudeSettingsTokenSnippetReachesTheServer(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8", "--elicitation-timeout", "100ms")
	_, token := srv.IssueToken(t, "dana@example.com", "hooks", "", time.Time{})
	_, s, _ := claudeSettingsRun(t, nil, "--public-url", srv.URL, "--token-env", "GATEHOUSE_TOKEN", "--elicitation-timeout", "100ms")
	h, _ := hookOf(t, s, "PermissionRequest")
	body, _ := json.Marshal(testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}))
	req, _ := http.NewRequest(http.MethodPost, h["url"].(string), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h["headers"].(map[string]any) {
		req.Header.Set(k, os.Expand(v.(string), func(string) string { return token }))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("hook answered %d", resp.StatusCode)
	}
	_, owner := srv.IssueToken(t, "dana@example.com", "", "", time.Time{})
	list := srv.TokenClient(owner).Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)
	if sessions, _ := list["sessions"].([]any); len(sessions) != 1 {
		t.Fatalf("dana's sessions = %v", list)
	}
}

// TestClaudeSettingsOIDC: next to a server run with --auth oidc (flag or
// GATEHOUSE_AUTH), the snippet's hooks carry an API token — signing in with the
// provider is for browsers.
func TestClaudeSettingsOIDC(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"--auth", "oidc", "--public-url", "https://gh.example.com"}},
		{map[string]string{"GATEHOUSE_AUTH": "oidc", "GATEHOUSE_PUBLIC_URL": "https://gh.example.com"}, nil},
	} {
		code, s, notes := claudeSettingsRun(t, tc.env, tc.args...)
		if code != 0 {
			t.Fatalf("%v %v: exit %d: %s", tc.env, tc.args, code, notes)
		}
		h, _ := hookOf(t, s, "PermissionRequest")
		if got, _ := json.Marshal(h["headers"]); string(got) != `{"Authorization":"Bearer $GATEHOUSE_TOKEN"}` {
			t.Errorf("%v %v: headers = %s", tc.env, tc.args, got)
		}
		if !strings.Contains(notes, "GATEHOUSE_TOKEN") {
			t.Errorf("%v %v: notes = %q", tc.env, tc.args, notes)
		}
	}
}
