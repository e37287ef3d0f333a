package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// agentSamples are, per agent with a zero-config route, its old route and a payload
// for each event it parks. Every such agent of the registry must have one.
var agentSamples = map[string]struct {
	oldRoute string
	body     func(event, command string) map[string]any
}{
	"claude": {"/v1/hooks/claude", func(event, command string) map[string]any {
		b := testserver.ClaudeBody("Bash", map[string]any{"command": command})
		b["hook_event_name"] = event
		switch event {
		case "PreToolUse":
			b["tool_use_id"] = "toolu_" + command
		case "Elicitation":
			delete(b, "tool_name")
			delete(b, "tool_input")
			b["mcp_server_name"], b["message"], b["mode"] = "deploy", "Which region for "+command+"?", "form"
			b["requested_schema"] = map[string]any{"type": "object", "properties": map[string]any{"region": map[string]any{"type": "string"}}}
		}
		return b
	}},
	"codex":   {"/v1/hooks/codex", codexCLIBody},
	"copilot": {"/v1/hooks/copilot", copilotBody},
	"cursor":  {"/v1/hooks/cursor", cursorBody},
	"gemini": {"/v1/hooks/gemini", func(event, command string) map[string]any {
		b := geminiBody("run_shell_command", map[string]any{"command": command})
		b["hook_event_name"] = event
		return b
	}},
	// OpenCode has no older route: its own is both.
	"opencode": {"/v1/hooks/opencode", func(_, command string) map[string]any { return openCodeBody("per_"+command, command) }},
}

// TestAgentRoutesAnswerAsTheirOldRoutes: for every agent of the registry and every
// event it parks, POST /v1/hooks/{agent}/{event} parks on the same session as the
// agent's old route and gives byte for byte the answer the old route gives for the
// same verdict (a decline with feedback, and an accept).
func TestAgentRoutesAnswerAsTheirOldRoutes(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		c := srv.Client("alice@example.com")
		zeroConfig := 0
		for _, a := range agents.Default().All() {
			sample, ok := agentSamples[a.Name()]
			if !ok {
				// A bridged agent posts to session routes through its bridge, not here.
				if _, bridged := a.(agents.Bridged); !bridged {
					t.Errorf("agent %s has no sample in agentSamples", a.Name())
				}
				continue
			}
			zeroConfig++
			sid := ""
			for i, event := range a.Events() {
				for _, verdict := range []struct {
					action  string
					content map[string]any
				}{{"decline", map[string]any{"feedback": "not on a Friday"}}, {"accept", nil}} {
					cmd := strings.ReplaceAll(a.Name()+" "+event+" "+verdict.action, " ", "-")
					answer := func(path string) string {
						t.Helper()
						var parked *testserver.Parked
						var eid string
						if sid == "" { // the first payload creates the session
							parked = c.ParkAsync(path, sample.body(event, cmd))
							sid, eid = firstPending(t, c)
						} else {
							parked, eid, _ = c.ParkAt(t, sid, path, sample.body(event, cmd))
						}
						resolveAs(t, c, sid, eid, verdict.action, verdict.content)
						r := parked.Wait(t, 10*time.Second)
						if r.Status != http.StatusOK {
							t.Fatalf("%s %s: %d %s", path, event, r.Status, r.Body)
						}
						if len(r.Body) == 0 {
							return ""
						}
						return canonJSON(t, r.Body)
					}
					cmd += "-old"
					old := answer(sample.oldRoute)
					cmd = strings.TrimSuffix(cmd, "-old") + "-new"
					got := answer("/v1/hooks/" + a.Name() + "/" + event)
					if got != old {
						t.Errorf("%s %s %s: new route answers %s, old route %s", a.Name(), event, verdict.action, got, old)
					}
					if i == 0 && verdict.action == "decline" && !strings.Contains(old, "not on a Friday") {
						t.Errorf("%s %s decline: %s does not carry the feedback", a.Name(), event, old)
					}
				}
			}
			if n := len(pendingSessions(t, c)); n != zeroConfig {
				t.Errorf("after %s: %d sessions, want %d (the new route parks on the old route's session)", a.Name(), n, zeroConfig)
			}
		}
	})
}

// TestAgentRouteErrors: an unknown agent is a 404 envelope; an event the agent does
// not park is a 400 naming the ones it does, on the URL or in the payload; an agent
// without a session of its own needs a session route.
func TestAgentRouteErrors(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		c := srv.Client("alice@example.com")
		for _, tc := range []struct {
			path   string
			body   map[string]any
			status int
			code   string
			want   []string
		}{
			{"/v1/hooks/gemini-x", codexCLIBody("PreToolUse", "ls"), 404, "not_found", []string{`"gemini-x"`, "claude", "codex"}},
			{"/v1/hooks/gemini-x/BeforeTool", codexCLIBody("PreToolUse", "ls"), 404, "not_found", []string{`"gemini-x"`}},
			{"/v1/hooks/claude/Stop", testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}), 400, "invalid_input",
				[]string{"event:", `"Stop"`, "PermissionRequest, PreToolUse, Elicitation, PermissionDenied or Notification"}},
			{"/v1/hooks/codex/Elicitation", codexCLIBody("PreToolUse", "ls"), 400, "invalid_input",
				[]string{"event:", `"Elicitation"`, "PermissionRequest or PreToolUse"}},
			{"/v1/hooks/codex", codexCLIBody("Stop", "ls"), 400, "invalid_input", []string{`"Stop"`, "PermissionRequest or PreToolUse"}},
			{"/v1/hooks/codex-app-server", testserver.CodexCommandBody(1, []string{"ls"}), 400, "invalid_input", []string{"session_id"}},
		} {
			r := c.Do(t, http.MethodPost, tc.path, tc.body)
			env, _ := r.JSON(t)["error"].(map[string]any)
			msg, _ := env["message"].(string)
			if r.Status != tc.status || env["code"] != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.path, r.Status, r.Body, tc.status, tc.code)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s: message %q does not name %s", tc.path, msg, w)
				}
			}
		}
		if n := len(pendingSessions(t, c)); n != 0 {
			t.Errorf("refused hooks created %d sessions", n)
		}
	})
}

// firstPending waits (with a deadline) for the caller's only session to show a
// pending prompt, and returns both.
func firstPending(t *testing.T, c *testserver.Client) (sid, eid string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range pendingSessions(t, c) {
			id := s.(map[string]any)["id"].(string)
			if list := pendingOf(t, c, id); len(list) > 0 {
				return id, list[0].(map[string]any)["elicitation_id"].(string)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no pending prompt showed up")
	return "", ""
}

// pendingSessions lists the caller's sessions.
func pendingSessions(t *testing.T, c *testserver.Client) []any {
	t.Helper()
	list, _ := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any)
	return list
}
