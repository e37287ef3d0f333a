package handlers_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSeedResolveURLCrossSessionDoesNotResolve: a verdict posted under session B with
// A's elicitation id answers 202 but leaves A's prompt alone; A's hook stays parked until
// the verdict comes through A, and then allows.
func TestSeedResolveURLCrossSessionDoesNotResolve(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		a := c.CreateSession(t, agent, "", "")
		b := c.CreateSession(t, agent, "", "")
		stA := coreOpenStream(t, c, a)
		parked, ev := corePark(t, c, stA, a, testserver.ClaudeBody("Bash", map[string]any{"command": "ls -la"}))
		eid := ev["elicitation_id"].(string)

		out := coreResolve(t, c, b, eid, map[string]any{"action": "accept"})
		if out["outcome"] != "not_found" {
			t.Fatalf("cross-session outcome = %v, want not_found (never a false resolved)", out)
		}
		// The same through an approval event on B.
		r := c.Do(t, http.MethodPost, "/v1/sessions/"+b+"/events", map[string]any{
			"type": "approval", "data": map[string]any{"elicitation_id": eid, "action": "decline"}})
		if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "not_found" {
			t.Fatalf("cross-session approval event: %d %s", r.Status, r.Body)
		}
		// B's GET does not reveal A's prompt either.
		if got := coreGetElicitation(t, c, b, eid); got["status"] != "resolved" || got["message"] != nil {
			t.Fatalf("GET via B = %v", got)
		}
		if parked.Done() {
			t.Fatal("cross-session verdict answered A's hook")
		}
		coreWantPending(t, c, a, eid)
		// Nothing was decided, so nothing was announced on A.
		for _, f := range coreUntilSentinel(t, c, stA, a) {
			if f.Event == "response.elicitation_resolved" {
				t.Fatalf("cross-session verdict published %s", f.Data)
			}
		}

		coreMustResolve(t, c, a, eid, map[string]any{"action": "accept"})
		coreWantBehavior(t, parked, "allow")
	})
}

// TestSeedResolveURLCrossUserForbidden: with header auth, alice's session refuses bob's
// verdict (404: he has no access at all) and bob's GET of the prompt; alice's prompt is
// still pending afterwards and her own verdict decides it.
func TestSeedResolveURLCrossUserForbidden(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		bob := srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")

		// The seed's shape: a made-up id.
		r := bob.Do(t, http.MethodPost, coreResolvePath(sid, "elicit_whatever"), map[string]any{"action": "accept"})
		coreWantEnvelope(t, r, http.StatusNotFound, "not_found")

		// And with a real, parked prompt.
		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "rm -rf build"})
		r = bob.Do(t, http.MethodPost, coreResolvePath(sid, eid), map[string]any{"action": "accept"})
		coreWantEnvelope(t, r, http.StatusNotFound, "not_found")
		r = bob.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/events", map[string]any{
			"type": "approval", "data": map[string]any{"elicitation_id": eid, "action": "accept"}})
		coreWantEnvelope(t, r, http.StatusNotFound, "not_found")
		// Bob's own session cannot be used to reach alice's prompt either.
		bobSid := bob.CreateSession(t, bob.CreateAgent(t), "", "")
		if out := coreResolve(t, bob, bobSid, eid, map[string]any{"action": "accept"}); out["outcome"] != "not_found" {
			t.Fatalf("bob via his own session: %v", out)
		}
		coreWantPending(t, alice, sid, eid)

		coreMustResolve(t, alice, sid, eid, map[string]any{"action": "decline"})
		coreWantBehavior(t, parked, "deny")
		if got := coreGetElicitation(t, alice, sid, eid); got["resolved_by"] != "alice@example.com" {
			t.Fatalf("resolved_by = %v", got["resolved_by"])
		}
	})
}

// TestFirstVerdictWins: the second verdict on a decided prompt is 202 already_resolved
// with who and when, and the hook got the first verdict.
func TestFirstVerdictWins(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		bob := srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		r := alice.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": "bob@example.com", "level": "edit"})
		if r.Status != http.StatusOK {
			t.Fatalf("grant: %d %s", r.Status, r.Body)
		}
		st := coreOpenStream(t, alice, sid)
		parked, ev := corePark(t, alice, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": "make deploy"}))
		eid := ev["elicitation_id"].(string)

		before := time.Now().Add(-time.Minute)
		coreMustResolve(t, alice, sid, eid, map[string]any{"action": "decline", "content": map[string]any{"feedback": "not on a Friday"}})
		d := coreWantBehavior(t, parked, "deny")
		if d["message"] != "not on a Friday" {
			t.Fatalf("deny message = %v", d["message"])
		}

		for _, late := range []struct {
			c    *testserver.Client
			path string
			body map[string]any
		}{
			{bob, coreResolvePath(sid, eid), map[string]any{"action": "accept"}},
			{alice, coreResolvePath(sid, eid), map[string]any{"action": "cancel"}},
			{bob, "/v1/sessions/" + sid + "/events", map[string]any{"type": "approval",
				"data": map[string]any{"elicitation_id": eid, "action": "accept"}}},
		} {
			r := late.c.Do(t, http.MethodPost, late.path, late.body)
			if r.Status != http.StatusAccepted {
				t.Fatalf("late verdict: %d %s", r.Status, r.Body)
			}
			out := r.JSON(t)
			if out["outcome"] != "already_resolved" || out["resolved_by"] != "alice@example.com" {
				t.Fatalf("late verdict outcome = %s", r.Body)
			}
			at, err := time.Parse(time.RFC3339Nano, out["resolved_at"].(string))
			if err != nil || at.Before(before) || at.After(time.Now().Add(time.Minute)) {
				t.Fatalf("resolved_at = %v (%v)", out["resolved_at"], err)
			}
		}
		got := coreGetElicitation(t, alice, sid, eid)
		if got["action"] != "decline" || got["resolved_by"] != "alice@example.com" {
			t.Fatalf("stored verdict = %v", got)
		}
		// Exactly one resolved event for the one decision.
		n := 0
		for _, f := range coreUntilSentinel(t, alice, st, sid) {
			if f.Event == "response.elicitation_resolved" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d resolved events, want 1", n)
		}
	})
}
