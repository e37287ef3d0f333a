package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestFailoverToOtherReplica: two replicas on one Postgres. Hooks park on replica A
// (with re-attach ids) and show up on B's stream; A is killed with SIGKILL; half the
// prompts are decided on B while nobody waits; then every client re-parks against B
// with the same ids. The decided half answers at once with its verdict, the rest
// re-attach and answer when decided on B. Nothing decided is lost or undecided.
func TestFailoverToOtherReplica(t *testing.T) {
	db := testserver.PostgresDB(t)
	const n = 40
	dbURL := db.NewURL(t)
	a := startServe(t, dbURL)
	b := startServe(t, dbURL)
	ca, cb := a.Client(), b.Client()
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "failover")
	hookPath := "/v1/sessions/" + sid + "/hooks/permission-request"

	onB := cb.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	onB.WaitHeartbeat(t)
	eids := make([]string, n)
	for i := range eids {
		eids[i] = ids.New("elicit_claude_")
		ca.ParkAsync(hookPath, claudeHookWithID(i, eids[i]))
	}
	seen := map[string]bool{}
	for len(seen) < n {
		seen[onB.WaitFor(t, "response.elicitation_request", 30*time.Second).Map(t)["elicitation_id"].(string)] = true
	}
	for _, eid := range eids {
		if !seen[eid] {
			t.Fatalf("replica B's stream never showed %s", eid)
		}
	}

	a.Kill(t)

	elicitPath := func(eid string) string { return "/v1/sessions/" + sid + "/elicitations/" + eid }
	resolve := func(i int) {
		t.Helper()
		r := cb.Do(t, http.MethodPost, elicitPath(eids[i])+"/resolve", map[string]any{"action": restartAction(i)})
		if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "resolved" {
			t.Fatalf("resolve %d on B: %d %s", i, r.Status, r.Body)
		}
	}
	for i := 0; i < n; i += 2 {
		resolve(i)
	}
	again := make([]*testserver.Parked, n)
	for i := range eids {
		again[i] = cb.ParkAsync(hookPath, claudeHookWithID(i, eids[i]))
	}
	for i := 0; i < n; i += 2 {
		if got, want := hookBehavior(t, again[i].Wait(t, 10*time.Second)), behaviorFor(restartAction(i)); got != want {
			t.Fatalf("hook %d, decided on B while its replica was dead, answered %s, want %s", i, got, want)
		}
	}
	for i := 1; i < n; i += 2 {
		if again[i].Done() {
			t.Fatalf("hook %d answered before anyone decided", i)
		}
	}
	for i := 1; i < n; i += 2 {
		resolve(i)
	}
	for i := 1; i < n; i += 2 {
		if got, want := hookBehavior(t, again[i].Wait(t, 10*time.Second)), behaviorFor(restartAction(i)); got != want {
			t.Fatalf("re-attached hook %d answered %s, want %s", i, got, want)
		}
	}
	// A second verdict changes nothing.
	r := cb.Do(t, http.MethodPost, elicitPath(eids[0])+"/resolve", map[string]any{"action": "decline"})
	if r.JSON(t)["outcome"] != "already_resolved" {
		t.Fatalf("second verdict: %s", r.Body)
	}
	if m := cb.Do(t, http.MethodGet, elicitPath(eids[0]), nil).JSON(t); m["action"] != restartAction(0) {
		t.Fatalf("prompt 0 now reads %v", m)
	}
}
