package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSeedResolveURLAllowRoundTrip: resolve accept → 202 and the hook answers exactly
// the allow decision.
func TestSeedResolveURLAllowRoundTrip(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls -la"})

		r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if got := r.JSON(t)["outcome"]; got != "resolved" {
			t.Fatalf("outcome = %v, want resolved", got)
		}
		ans := parked.Wait(t, 10*time.Second)
		if ans.Status != http.StatusOK {
			t.Fatalf("hook: %d %s", ans.Status, ans.Body)
		}
		var got, want any
		_ = json.Unmarshal(ans.Body, &got)
		_ = json.Unmarshal([]byte(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`), &want)
		if !jsonEqual(got, want) {
			t.Fatalf("hook answer = %s", ans.Body)
		}
	})
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestSeedResolveURLDeclineRoundTrip: an Edit prompt declined on the resolve URL → 202
// and the hook denies.
func TestSeedResolveURLDeclineRoundTrip(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)
		parked, ev := corePark(t, c, st, sid, testserver.ClaudeBody("Edit", map[string]any{
			"file_path": "/tmp/cwd/main.go", "old_string": "a", "new_string": "b"}))
		if p := coreParams(t, ev); p["tool_name"] != "Edit" || p["target_session_id"] != nil {
			t.Fatalf("params = %v", p)
		}
		eid := ev["elicitation_id"].(string)

		coreMustResolve(t, c, sid, eid, map[string]any{"action": "decline"})
		d := coreWantBehavior(t, parked, "deny")
		if len(d) != 2 || d["message"] != "Denied by local in Gatehouse." {
			t.Fatalf("plain decline = %v, want only the deny and its message naming who denied", d)
		}
		coreWaitResolved(t, st, eid)
	})
}

// TestSeedResolveURLCancelRoundTrip: cancel → 202, the hook denies, and the session has
// no pending prompt left.
func TestSeedResolveURLCancelRoundTrip(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls -la"})
		if n := len(coreSessionPending(t, c, sid)); n != 1 {
			t.Fatalf("pending before cancel = %d, want 1", n)
		}

		coreMustResolve(t, c, sid, eid, map[string]any{"action": "cancel"})
		coreWantBehavior(t, parked, "deny")
		if n := len(coreSessionPending(t, c, sid)); n != 0 {
			t.Fatalf("pending after cancel = %d, want 0", n)
		}
		if got := coreGetElicitation(t, c, sid, eid); got["action"] != "cancel" {
			t.Fatalf("stored verdict = %v", got)
		}
	})
}

// TestSeedResolveURLUnknownSessionReturns404 and TestSeedResolveURLRejectsInvalidAction:
// an unknown session is a 404, an action outside accept/decline/cancel a 422 — and the
// 422 comes first, even on an unknown session.
func TestSeedResolveURLUnknownSessionAndInvalidAction(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")

		r := c.Do(t, http.MethodPost, coreResolvePath("conv_does_not_exist", "elicit_nope"), map[string]any{"action": "accept"})
		coreWantEnvelope(t, r, http.StatusNotFound, "not_found")
		r = c.Do(t, http.MethodPost, coreResolvePath("conv_"+strings.Repeat("0", 32), "elicit_nope"), map[string]any{"action": "accept"})
		coreWantEnvelope(t, r, http.StatusNotFound, "not_found")

		r = c.Do(t, http.MethodPost, coreResolvePath(sid, "elicit_anything"), map[string]any{"action": "approve"})
		coreWantEnvelope(t, r, http.StatusUnprocessableEntity, "validation_failed")
		r = c.Do(t, http.MethodPost, coreResolvePath("conv_does_not_exist", "elicit_nope"), map[string]any{"action": "approve"})
		coreWantEnvelope(t, r, http.StatusUnprocessableEntity, "validation_failed")

		// A well-formed verdict for an id nobody parked is "not_found", never "resolved".
		if out := coreResolve(t, c, sid, "elicit_"+strings.Repeat("a", 32), map[string]any{"action": "accept"}); out["outcome"] != "not_found" {
			t.Fatalf("unknown id outcome = %v", out)
		}
	})
}

// coreSessionPending returns GET /v1/sessions/{sid}'s pending_elicitations.
func coreSessionPending(t *testing.T, c *testserver.Client, sid string) []any {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET session: %d %s", r.Status, r.Body)
	}
	list, ok := r.JSON(t)["pending_elicitations"].([]any)
	if !ok {
		t.Fatalf("session has no pending_elicitations list: %s", r.Body)
	}
	return list
}
