package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// codexCLIBody is a Codex 0.171 hook body as `codex exec` sends it.
func codexCLIBody(event, command string) map[string]any {
	input := map[string]any{"command": command}
	b := map[string]any{
		"session_id": "01a2316b-a717-75b3-9a75-e38b7072e047", "turn_id": "01a2316b-a739-7802-8df5-282ded863613",
		"transcript_path": nil, "cwd": "/work/repo", "hook_event_name": event, "model": "gpt-5.1-codex",
		"permission_mode": "default", "tool_name": "Bash", "tool_input": input,
	}
	if event == "PreToolUse" {
		b["tool_use_id"] = "call_1"
	} else {
		input["description"] = "Run the tests"
	}
	return b
}

// TestCodexCLIHooks: POST /v1/hooks/codex maps Codex's session_id to a session under a
// "Codex" agent, created on first sight; PreToolUse and PermissionRequest for one
// command share one prompt; answers are Codex's hook output.
func TestCodexCLIHooks(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--elicitation-timeout", "2s")
		c := srv.Client("alice@example.com")
		const path = "/v1/hooks/codex"
		if r := c.Do(t, http.MethodPost, path, codexCLIBody("PermissionRequest", "ls")); r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("first payload: %d %q, want the empty no-verdict 200", r.Status, r.Body)
		}
		sessions, _ := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any)
		if len(sessions) != 1 {
			t.Fatalf("sessions after the first payload: %v", sessions)
		}
		root := sessions[0].(map[string]any)
		sid := root["id"].(string)
		if title, _ := root["title"].(string); !strings.HasPrefix(title, "Codex 01a2316b in /work/repo") {
			t.Fatalf("created session = %v", root)
		}
		agent := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/agent", nil).JSON(t)
		if agent["name"] != "Codex" {
			t.Fatalf("agent = %v", agent)
		}

		// PreToolUse parks; approving it decides nothing in Codex's terms ({}).
		parked, eid, ev := c.ParkAt(t, sid, path, codexCLIBody("PreToolUse", "make test"))
		params := ev["params"].(map[string]any)
		if params["message"] != "Codex wants to run **make test**" || params["vendor"] != "Codex" {
			t.Fatalf("prompt params = %v", params)
		}
		resolveAs(t, c, sid, eid, "accept", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{}` {
			t.Fatalf("PreToolUse accept = %s", got)
		}
		// Codex's PermissionRequest for the same command re-attaches: allowed at once.
		r := c.Do(t, http.MethodPost, path, codexCLIBody("PermissionRequest", "make test"))
		if got := canonJSON(t, r.Body); r.Status != http.StatusOK || got != `{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}` {
			t.Fatalf("PermissionRequest after the approved PreToolUse: %d %s", r.Status, got)
		}

		// Another command: its own prompt; a rejection's reason is the deny message.
		parked, eid2, _ := c.ParkAt(t, sid, path, codexCLIBody("PermissionRequest", "rm -rf build"))
		if eid2 == eid {
			t.Fatal("another command re-used the prompt")
		}
		resolveAs(t, c, sid, eid2, "decline", map[string]any{"feedback": "not now"})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"not now"},"hookEventName":"PermissionRequest"}}` {
			t.Fatalf("decline = %s", got)
		}
		if s, _ := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any); len(s) != 1 {
			t.Fatalf("one Codex session made %d Gatehouse sessions", len(s))
		}

		// The same session id from someone else is their own session.
		bob := srv.Client("bob@example.com")
		if r := bob.Do(t, http.MethodPost, path, codexCLIBody("PermissionRequest", "ls")); r.Status != http.StatusOK {
			t.Fatalf("bob: %d %s", r.Status, r.Body)
		}
		bs, _ := bob.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any)
		if len(bs) != 1 || bs[0].(map[string]any)["id"] == sid {
			t.Fatalf("bob's sessions = %v", bs)
		}
	})
}

// TestCodexCLIHooksBadInput: unhandled events, missing ids and bad tool payloads are
// 400s that create nothing.
func TestCodexCLIHooksBadInput(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t))
	c := srv.Client("")
	with := func(k string, v any) map[string]any {
		m := codexCLIBody("PermissionRequest", "ls")
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name string
		body any
		want string
	}{
		{"stop event", with("hook_event_name", "Stop"), `does not handle "Stop" hooks`},
		{"no event", with("hook_event_name", nil), "hook_event_name"},
		{"no session id", with("session_id", nil), "session_id"},
		{"long session id", with("session_id", strings.Repeat("s", 201)), "session_id"},
		{"no tool", with("tool_name", nil), "tool_name"},
		{"input string", with("tool_input", "ls"), "tool_input"},
		{"no command", with("tool_input", map[string]any{"description": "x"}), "tool_input.command"},
		{"array body", []any{1}, "JSON object"},
	}
	for _, tc := range cases {
		r := c.Do(t, http.MethodPost, "/v1/hooks/codex", tc.body)
		msg, _ := r.JSON(t)["error"].(map[string]any)["message"].(string)
		if r.Status != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %s, want 400 mentioning %q", tc.name, r.Status, r.Body, tc.want)
		}
	}
	r, err := c.SendRaw(context.Background(), http.MethodPost, "/v1/hooks/codex", "text/plain", []byte("{}"))
	if err != nil || r.Status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %v %v", r, err)
	}
	if s, _ := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any); len(s) != 0 {
		t.Fatalf("bad payloads created sessions: %v", s)
	}
}
