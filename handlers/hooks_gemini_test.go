package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// geminiBody is a Gemini CLI 0.61 BeforeTool payload for a tool call.
func geminiBody(tool string, input map[string]any) map[string]any {
	return map[string]any{"session_id": "9b0e6c1a-5f0d-4a7c-8e2b-3c4d5e6f7a8b", "transcript_path": "/home/u/.gemini/tmp/chats/s.json",
		"cwd": "/work/repo", "hook_event_name": "BeforeTool", "timestamp": "2026-12-02T10:00:00.000Z",
		"tool_name": tool, "tool_input": input}
}

// TestGeminiHooks: POST /v1/hooks/gemini maps Gemini's session_id to a "Gemini CLI"
// session; the prompt says who asks and carries the shell kind (so risk and the
// command views apply); answers are Gemini's hook output; an allow rule written for
// Bash answers a Gemini shell command without a person.
func TestGeminiHooks(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		c := srv.Client("alice@example.com")
		const path = "/v1/hooks/gemini"
		parked := c.ParkAsync(path, geminiBody("run_shell_command", map[string]any{"command": "rm -rf /", "description": "Clean up"}))
		sid, eid := firstPending(t, c)
		sess := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)
		if title, _ := sess["title"].(string); !strings.HasPrefix(title, "Gemini CLI 9b0e6c1a in /work/repo") {
			t.Fatalf("session = %v", sess)
		}
		ev := sess["pending_elicitations"].([]any)[0].(map[string]any)
		params := ev["params"].(map[string]any)
		if params["message"] != "Gemini CLI wants to run **rm -rf /**" || params["tool_kind"] != "shell" || params["tool_name"] != "Bash" {
			t.Fatalf("prompt params = %v", params)
		}
		if level, _ := riskOf(t, ev["risk"]); level != "critical" && level != "high" {
			t.Errorf("risk of rm -rf / = %v", ev["risk"])
		}
		resolveAs(t, c, sid, eid, "decline", map[string]any{"feedback": "not on a Friday"})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"decision":"deny","reason":"not on a Friday"}` {
			t.Fatalf("decline = %s", got)
		}

		parked, eid, _ = c.ParkAt(t, sid, path, geminiBody("write_file", map[string]any{"file_path": "notes.md", "content": "hi"}))
		resolveAs(t, c, sid, eid, "accept", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"decision":"allow"}` {
			t.Fatalf("accept = %s", got)
		}

		rule := c.Do(t, http.MethodPost, "/v1/rules", map[string]any{"tool": "Bash", "effect": "allow",
			"match": map[string]any{"kind": "prefix", "pattern": "git status"}, "scope": map[string]any{"kind": "session", "value": sid}})
		if rule.Status != http.StatusCreated {
			t.Fatalf("rule: %d %s", rule.Status, rule.Body)
		}
		r := c.Do(t, http.MethodPost, path, geminiBody("run_shell_command", map[string]any{"command": "git status --short"}))
		if got := canonJSON(t, r.Body); r.Status != http.StatusOK || got != `{"decision":"allow"}` {
			t.Fatalf("a command the rule allows: %d %s", r.Status, got)
		}
	})
}

// TestGeminiHooksBadInput: unhandled events and bad payloads are 400s naming the
// field, never a 5xx and never an allow.
func TestGeminiHooksBadInput(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t))
	c := srv.Client("")
	with := func(k string, v any) map[string]any {
		m := geminiBody("run_shell_command", map[string]any{"command": "ls"})
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name, path string
		body       any
		want       string
	}{
		{"after tool", "/v1/hooks/gemini", with("hook_event_name", "AfterTool"), `does not handle \"AfterTool\"`},
		{"no event", "/v1/hooks/gemini", with("hook_event_name", nil), "hook_event_name"},
		{"event on the URL", "/v1/hooks/gemini/AfterTool", with("hook_event_name", nil), "AfterTool"},
		{"no session", "/v1/hooks/gemini", with("session_id", nil), "session_id"},
		{"session number", "/v1/hooks/gemini", with("session_id", 5), "session_id"},
		{"no tool", "/v1/hooks/gemini", with("tool_name", nil), "tool_name"},
		{"input string", "/v1/hooks/gemini", with("tool_input", "ls"), "tool_input"},
		{"no command", "/v1/hooks/gemini", with("tool_input", map[string]any{"description": "x"}), "tool_input.command"},
		{"mcp context list", "/v1/hooks/gemini", with("mcp_context", []any{1}), "mcp_context"},
	}
	for _, tc := range cases {
		r := c.Do(t, http.MethodPost, tc.path, tc.body)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tc.want) || !strings.Contains(string(r.Body), `"invalid_input"`) {
			t.Errorf("%s: %d %s, want a 400 naming %q", tc.name, r.Status, r.Body, tc.want)
		}
	}
	if s, _ := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any); len(s) != 0 {
		t.Errorf("bad payloads created sessions: %v", s)
	}
}
