package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// copilotBody is a Copilot CLI 1.0.102 hook payload of event for a bash command:
// preToolUse carries toolArgs and no hookName, permissionRequest names itself and
// carries toolInput.
func copilotBody(event, command string) map[string]any {
	b := map[string]any{"sessionId": "ce148d37-02c4-4ee4-85c0-1792c6c1709d", "timestamp": 1796360181349,
		"cwd": "/work/repo", "toolName": "bash"}
	if event == "permissionRequest" {
		b["hookName"], b["toolInput"], b["permissionSuggestions"] = event, map[string]any{"command": command}, []any{}
	} else {
		b["toolArgs"] = map[string]any{"command": command, "description": "Run it"}
	}
	return b
}

// TestCopilotHooks: POST /v1/hooks/copilot maps Copilot's sessionId to a "Copilot CLI"
// session; the prompt says who asks and carries the shell kind (so risk and the
// command views apply); answers are Copilot's hook output; an allow rule written for
// Bash answers a Copilot bash command without a person.
func TestCopilotHooks(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		c := srv.Client("alice@example.com")
		const path = "/v1/hooks/copilot"
		parked := c.ParkAsync(path, copilotBody("preToolUse", "rm -rf /"))
		sid, eid := firstPending(t, c)
		sess := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)
		if title, _ := sess["title"].(string); !strings.HasPrefix(title, "Copilot CLI ce148d37 in /work/repo") {
			t.Fatalf("session = %v", sess)
		}
		ev := sess["pending_elicitations"].([]any)[0].(map[string]any)
		params := ev["params"].(map[string]any)
		if params["message"] != "Copilot CLI wants to run **rm -rf /**" || params["tool_kind"] != "shell" || params["tool_name"] != "Bash" {
			t.Fatalf("prompt params = %v", params)
		}
		if level, _ := riskOf(t, ev["risk"]); level != "critical" && level != "high" {
			t.Errorf("risk of rm -rf / = %v", ev["risk"])
		}
		resolveAs(t, c, sid, eid, "decline", map[string]any{"feedback": "not on a Friday"})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"permissionDecision":"deny","permissionDecisionReason":"not on a Friday"}` {
			t.Fatalf("decline = %s", got)
		}

		parked, eid, _ = c.ParkAt(t, sid, path, copilotBody("permissionRequest", "make test"))
		resolveAs(t, c, sid, eid, "accept", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"behavior":"allow"}` {
			t.Fatalf("accept = %s", got)
		}

		rule := c.Do(t, http.MethodPost, "/v1/rules", map[string]any{"tool": "Bash", "effect": "allow",
			"match": map[string]any{"kind": "prefix", "pattern": "git status"}, "scope": map[string]any{"kind": "session", "value": sid}})
		if rule.Status != http.StatusCreated {
			t.Fatalf("rule: %d %s", rule.Status, rule.Body)
		}
		r := c.Do(t, http.MethodPost, path, copilotBody("preToolUse", "git status --short"))
		if got := canonJSON(t, r.Body); r.Status != http.StatusOK || got != `{"permissionDecision":"allow"}` {
			t.Fatalf("a command the rule allows: %d %s", r.Status, got)
		}
	})
}

// TestCopilotHooksBadInput: unhandled events and bad payloads are 400s naming the
// field, never a 5xx and never an allow.
func TestCopilotHooksBadInput(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t))
	c := srv.Client("")
	with := func(event, k string, v any) map[string]any {
		m := copilotBody(event, "ls")
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
		{"session start", "/v1/hooks/copilot", map[string]any{"hookName": "sessionStart", "sessionId": "s"}, `does not handle \"sessionStart\"`},
		{"post tool use", "/v1/hooks/copilot", with("preToolUse", "toolResult", map[string]any{"resultType": "success"}), "toolResult"},
		{"event on the URL", "/v1/hooks/copilot/postToolUse", copilotBody("preToolUse", "ls"), "postToolUse"},
		{"no session", "/v1/hooks/copilot", with("preToolUse", "sessionId", nil), "sessionId"},
		{"no tool", "/v1/hooks/copilot", with("permissionRequest", "toolName", nil), "toolName"},
		{"args string", "/v1/hooks/copilot", with("preToolUse", "toolArgs", "ls"), "toolArgs"},
		{"no command", "/v1/hooks/copilot", with("permissionRequest", "toolInput", map[string]any{"description": "x"}), "toolInput.command"},
		{"session number", "/v1/hooks/copilot", with("preToolUse", "sessionId", 5), "sessionId"},
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
