package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// denyMessageOf reads the message of a deny in any of the hook answers that carry one:
// PermissionRequest's decision.message (Claude Code, Codex CLI) and PreToolUse's
// permissionDecisionReason. ok is false when the answer is not a deny.
func denyMessageOf(t *testing.T, body []byte) (msg string, ok bool) {
	t.Helper()
	var a struct {
		HookSpecificOutput struct {
			Decision *struct {
				Behavior string  `json:"behavior"`
				Message  *string `json:"message"`
			} `json:"decision"`
			PermissionDecision string  `json:"permissionDecision"`
			Reason             *string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("answer is not JSON: %s", body)
	}
	h := a.HookSpecificOutput
	switch {
	case h.Decision != nil && h.Decision.Behavior == "deny":
		if h.Decision.Message == nil {
			return "", true
		}
		return *h.Decision.Message, true
	case h.PermissionDecision == "deny":
		if h.Reason == nil {
			return "", true
		}
		return *h.Reason, true
	}
	return "", false
}

// parkedIn waits until a prompt not in seen is pending in one of c's sessions (a
// zero-config route makes its session on first sight) and returns the session and
// the prompt.
func parkedIn(t *testing.T, c *testserver.Client, seen map[string]bool) (string, string) {
	t.Helper()
	var sid, eid string
	coreUntil(t, "the hook's prompt is pending", func() bool {
		list, _ := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any)
		for _, s := range list {
			id, _ := s.(map[string]any)["id"].(string)
			pending, _ := c.Do(t, http.MethodGet, "/v1/sessions/"+id, nil).JSON(t)["pending_elicitations"].([]any)
			for _, p := range pending {
				if e, _ := p.(map[string]any)["elicitation_id"].(string); e != "" && !seen[e] {
					sid, eid = id, e
					return true
				}
			}
		}
		return false
	})
	seen[eid] = true
	return sid, eid
}

// TestEveryDenyCarriesAMessage: through every hook route whose answer has a place for
// a reason — Claude Code's PermissionRequest and PreToolUse (per session and
// zero-config) and the Codex CLI's — a decline or cancel carries the person's feedback,
// or, without any, "Denied by <person> in Gatehouse." naming who decided.
func TestEveryDenyCarriesAMessage(t *testing.T) {
	verdicts := []struct {
		name    string
		verdict map[string]any
		want    func(by string) string
	}{
		{"decline", map[string]any{"action": "decline"}, func(by string) string { return "Denied by " + by + " in Gatehouse." }},
		{"cancel", map[string]any{"action": "cancel"}, func(by string) string { return "Denied by " + by + " in Gatehouse." }},
		{"blank feedback", map[string]any{"action": "decline", "content": map[string]any{"feedback": "   "}},
			func(by string) string { return "Denied by " + by + " in Gatehouse." }},
		{"feedback", map[string]any{"action": "decline", "content": map[string]any{"feedback": "use staging"}},
			func(string) string { return "use staging" }},
	}
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "denies")
		grantLevel(t, alice, sid, "bob@example.com", "edit")

		routes := []struct {
			name string
			// park parks one hook with command cmd and returns the session and prompt.
			park    func(cmd string) (*testserver.Parked, string, string)
			decider *testserver.Client
		}{
			{"claude permission-request", func(cmd string) (*testserver.Parked, string, string) {
				p, eid, _ := alice.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/permission-request",
					claudeHookBody("PermissionRequest", "Bash", map[string]any{"command": cmd}))
				return p, sid, eid
			}, bob},
			{"claude pre-tool-use", func(cmd string) (*testserver.Parked, string, string) {
				p, eid, _ := alice.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/pre-tool-use",
					claudeHookBody("PreToolUse", "Bash", map[string]any{"command": cmd}))
				return p, sid, eid
			}, bob},
		}
		for _, z := range []struct{ name, user, path, event string }{
			{"claude zero-config PermissionRequest", "carol@example.com", "/v1/hooks/claude", "PermissionRequest"},
			{"claude zero-config PreToolUse", "dave@example.com", "/v1/hooks/claude", "PreToolUse"},
			{"codex cli PermissionRequest", "erin@example.com", "/v1/hooks/codex", "PermissionRequest"},
			{"codex cli PreToolUse", "frank@example.com", "/v1/hooks/codex", "PreToolUse"},
		} {
			c := srv.Client(z.user)
			seen := map[string]bool{}
			routes = append(routes, struct {
				name    string
				park    func(cmd string) (*testserver.Parked, string, string)
				decider *testserver.Client
			}{z.name, func(cmd string) (*testserver.Parked, string, string) {
				var body map[string]any
				if z.path == "/v1/hooks/codex" {
					body = codexCLIBody(z.event, cmd)
				} else {
					body = claudeHookBody(z.event, "Bash", map[string]any{"command": cmd})
				}
				p := c.ParkAsync(z.path, body)
				s, e := parkedIn(t, c, seen)
				return p, s, e
			}, c})
		}

		for _, r := range routes {
			for i, v := range verdicts {
				p, s, eid := r.park("make deploy-" + v.name + "-" + string(rune('a'+i)))
				if res := r.decider.Do(t, http.MethodPost, "/v1/sessions/"+s+"/elicitations/"+eid+"/resolve", v.verdict); res.Status != http.StatusAccepted {
					t.Fatalf("%s, %s: resolve %d %s", r.name, v.name, res.Status, res.Body)
				}
				ans := p.Wait(t, 10*time.Second)
				msg, ok := denyMessageOf(t, ans.Body)
				if want := v.want(r.decider.User); ans.Status != http.StatusOK || !ok || msg != want {
					t.Errorf("%s, %s: %d %s; want a deny with the message %q", r.name, v.name, ans.Status, ans.Body, want)
				}
			}
		}
	})
}
