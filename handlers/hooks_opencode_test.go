package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// openCodeSession is the OpenCode session the samples ask in.
const openCodeSession = "ses_dc0860878ffe4tDpb3dBtTBr5O"

// openCodeBody is an OpenCode 1.18.33 permission.asked event's properties for a bash
// command, as `gatehouse bridge opencode` posts them (with the session's directory).
func openCodeBody(id, command string) map[string]any {
	return map[string]any{"id": id, "sessionID": openCodeSession, "permission": "bash",
		"patterns": []any{command}, "metadata": map[string]any{"command": command}, "always": []any{strings.Fields(command)[0] + " *"},
		"tool": map[string]any{"messageID": "msg_23f79f827001I5f0KHdAqiQWNI", "callID": "call_1"}, "directory": "/work/repo"}
}

// TestOpenCodeHooks: POST /v1/hooks/opencode maps OpenCode's sessionID to an
// "OpenCode" session; the prompt says who asks and carries the shell kind (so risk and
// rules apply); a decline's reason and "approve and remember" come back as OpenCode's
// reply body; a permission.replied notice withdraws the prompt it settles.
func TestOpenCodeHooks(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		c := srv.Client("alice@example.com")
		const path = "/v1/hooks/opencode"
		parked := c.ParkAsync(path, openCodeBody("per_1", "rm -rf /"))
		sid, eid := firstPending(t, c)
		sess := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)
		if title, _ := sess["title"].(string); !strings.HasPrefix(title, "OpenCode ses_dc08 in /work/repo") {
			t.Fatalf("session = %v", sess)
		}
		ev := sess["pending_elicitations"].([]any)[0].(map[string]any)
		params := ev["params"].(map[string]any)
		if params["message"] != "OpenCode wants to run **rm -rf /**" || params["tool_kind"] != "shell" || params["tool_name"] != "Bash" {
			t.Fatalf("prompt params = %v", params)
		}
		if level, _ := riskOf(t, ev["risk"]); level != "critical" && level != "high" {
			t.Errorf("risk of rm -rf / = %v", ev["risk"])
		}
		resolveAs(t, c, sid, eid, "decline", map[string]any{"feedback": "not on a Friday"})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"message":"not on a Friday","reply":"reject"}` {
			t.Fatalf("decline = %s", got)
		}

		parked, eid, _ = c.ParkAt(t, sid, path, openCodeBody("per_2", "make test"))
		resolveAs(t, c, sid, eid, "accept", map[string]any{"remember": map[string]any{"suggestion": 0}})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"reply":"always"}` {
			t.Fatalf("accept and remember = %s", got)
		}
		parked, eid, _ = c.ParkAt(t, sid, path, openCodeBody("per_3", "make lint"))
		if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve",
			map[string]any{"action": "accept", "content": map[string]any{"remember": map[string]any{"suggestion": 1}}}); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "content.remember.suggestion") {
			t.Errorf("remembering a suggestion OpenCode did not offer: %d %s", r.Status, r.Body)
		}
		resolveAs(t, c, sid, eid, "accept", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"reply":"once"}` {
			t.Fatalf("accept = %s", got)
		}

		// Answered in OpenCode's own UI: the bridge hangs up and says so.
		parked, eid, _ = c.ParkAt(t, sid, path, openCodeBody("per_4", "make deploy"))
		r := c.Do(t, http.MethodPost, path, map[string]any{"type": "permission.replied",
			"properties": map[string]any{"sessionID": openCodeSession, "requestID": "per_4", "reply": "once"}})
		if got := canonJSON(t, r.Body); r.Status != http.StatusOK || got != `{"retired":["`+eid+`"]}` {
			t.Fatalf("replied notice: %d %s", r.Status, got)
		}
		parked.Wait(t, 10*time.Second)
		if st := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t); st["status"] != "resolved" {
			t.Fatalf("withdrawn prompt = %v", st)
		}

		rule := c.Do(t, http.MethodPost, "/v1/rules", map[string]any{"tool": "Bash", "effect": "allow",
			"match": map[string]any{"kind": "prefix", "pattern": "git status"}, "scope": map[string]any{"kind": "session", "value": sid}})
		if rule.Status != http.StatusCreated {
			t.Fatalf("rule: %d %s", rule.Status, rule.Body)
		}
		r = c.Do(t, http.MethodPost, path, openCodeBody("per_5", "git status --short"))
		if got := canonJSON(t, r.Body); r.Status != http.StatusOK || got != `{"reply":"once"}` {
			t.Fatalf("a command the rule allows: %d %s", r.Status, got)
		}
	})
}

// TestOpenCodeSubAgentAndReattach: a sub-agent's ask (its child session named by
// rootSessionID) parks on a child of the top-level session's Gatehouse session and
// shows there; the bridge's re-attach id brings a second post to the same prompt.
func TestOpenCodeSubAgentAndReattach(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		const path = "/v1/hooks/opencode"
		first := c.ParkAsync(path, openCodeBody("per_1", "ls"))
		root, _ := firstPending(t, c)

		child := openCodeBody("per_child", "touch x")
		child["sessionID"], child["rootSessionID"] = "ses_child0001", openCodeSession
		child["_gatehouse_elicitation_id"] = "elicit_opencode_0123456789abcdef0123456789abcdef"
		parked, eid, ev := c.ParkAt(t, root, path, child)
		if eid != "elicit_opencode_0123456789abcdef0123456789abcdef" {
			t.Fatalf("prompt id %s, want the re-attach id", eid)
		}
		target, _ := ev["params"].(map[string]any)["target_session_id"].(string)
		if target == "" || target == root {
			t.Fatalf("the sub-agent's prompt is not on a child session: %v", ev)
		}
		s := c.Do(t, http.MethodGet, "/v1/sessions/"+target, nil).JSON(t)
		if s["parent_session_id"] != root || s["title"] != "subagent:ses_child0001" {
			t.Fatalf("child session = %v", s)
		}
		// The bridge, restarted, posts it again: whether this lands before the verdict or
		// after, it is the same prompt (another would wait, unanswered, past the deadline).
		again := c.ParkAsync(path, child)
		resolveAs(t, c, target, eid, "accept", nil)
		for _, p := range []*testserver.Parked{parked, again} {
			if got := canonJSON(t, p.Wait(t, 10*time.Second).Body); got != `{"reply":"once"}` {
				t.Fatalf("answer = %s", got)
			}
		}
		if n := len(pendingOf(t, c, target)); n != 0 {
			t.Fatalf("%d prompts left on the child session", n)
		}
		first.Cancel()
	})
}

// TestOpenCodeHooksBadInput: other events and bad payloads are 400s naming the
// field, never a 5xx and never a reply.
func TestOpenCodeHooksBadInput(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t))
	c := srv.Client("")
	with := func(k string, v any) map[string]any {
		m := openCodeBody("per_1", "ls")
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
		{"other event", "/v1/hooks/opencode", map[string]any{"type": "session.updated", "properties": map[string]any{}}, `does not handle \"session.updated\"`},
		{"event on the URL", "/v1/hooks/opencode/permission.replied", openCodeBody("per_1", "ls"), "permission.replied"},
		{"no session", "/v1/hooks/opencode", with("sessionID", nil), "sessionID"},
		{"no id", "/v1/hooks/opencode", with("id", nil), "id is required"},
		{"no permission", "/v1/hooks/opencode", with("permission", nil), "permission"},
		{"metadata string", "/v1/hooks/opencode", with("metadata", "ls"), "metadata"},
		{"no command", "/v1/hooks/opencode", with("metadata", map[string]any{}), "metadata.command"},
		{"patterns string", "/v1/hooks/opencode", with("patterns", "ls"), "patterns"},
		{"bad re-attach id", "/v1/hooks/opencode", with("_gatehouse_elicitation_id", "elicit_1"), "_gatehouse_elicitation_id"},
		{"session too long", "/v1/hooks/opencode", with("sessionID", strings.Repeat("s", 300)), "session_id"},
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
