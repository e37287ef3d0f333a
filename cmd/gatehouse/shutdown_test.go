package main

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSIGTERMKeepsPromptsForTheNextProcess is a rolling restart: hooks are parked
// (with re-attach ids) and a live stream is open when SIGTERM arrives. Every parked
// hook gets the "no verdict" answer (200, empty body) and the process exits 0 within
// 10 s, but no prompt is lost: after a restart on the same database they are still
// pending; one decided while nobody waits hands its verdict to the client that
// re-parks with its id, another re-parked first gets the verdict given after, and the
// ones nobody comes back for are abandoned by the new process when the grace runs out.
func TestSIGTERMKeepsPromptsForTheNextProcess(t *testing.T) {
	const n = 5
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		dbURL := db.NewURL(t)
		first := startServe(t, dbURL, "--disconnect-grace", "3s")
		c := first.Client()
		sid := c.CreateSession(t, c.CreateAgent(t), "", "rolling restart")
		hookPath := "/v1/sessions/" + sid + "/hooks/permission-request"

		// A watcher stays subscribed through the shutdown: it must not hold the exit up.
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		eids := make([]string, n)
		parked := make([]*testserver.Parked, n)
		for i := range parked {
			eids[i] = ids.New("elicit_claude_")
			parked[i] = c.ParkAsync(hookPath, claudeHookWithID(i, eids[i]))
		}
		for seen := 0; seen < n; seen++ {
			st.WaitFor(t, "response.elicitation_request", 30*time.Second)
		}

		signalled := time.Now()
		first.Terminate(t)
		for i, p := range parked {
			r := p.Wait(t, 10*time.Second)
			if r.Status != http.StatusOK || len(r.Body) != 0 {
				t.Errorf("parked hook %d at shutdown answered %d %q, want 200 with an empty body", i, r.Status, r.Body)
			}
		}
		if code := first.WaitExit(t, 10*time.Second-time.Since(signalled)); code != 0 {
			t.Fatalf("exit code after SIGTERM = %d, want 0", code)
		}
		t.Logf("SIGTERM → exit took %s", time.Since(signalled).Round(time.Millisecond))

		metricsAddr := freeLoopbackAddr(t)
		second := startServe(t, dbURL, "--disconnect-grace", "3s", "--metrics-addr", metricsAddr)
		c = second.Client()
		watch := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		watch.WaitHeartbeat(t)
		for _, eid := range eids {
			if m := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t); m["status"] != "pending" {
				t.Fatalf("after a graceful restart %s = %v, want still pending", eid, m)
			}
		}
		// Decided while nobody waits, then re-parked: the verdict at once.
		if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eids[0]+"/resolve", map[string]any{"action": "accept"}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if got := decisionOf(t, c.ParkAsync(hookPath, claudeHookWithID(0, eids[0])).Wait(t, 10*time.Second)); got != "allow" {
			t.Fatalf("re-parked after the verdict: %q, want allow", got)
		}
		// Re-parked first (the lease is renewed on this process), decided after.
		back := c.ParkAsync(hookPath, claudeHookWithID(1, eids[1]))
		waitAttached(t, "http://"+metricsAddr, eids[1])
		if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eids[1]+"/resolve", map[string]any{"action": "decline"}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if got := decisionOf(t, back.Wait(t, 10*time.Second)); got != "deny" {
			t.Fatalf("re-parked before the verdict: %q, want deny", got)
		}
		// Nobody came back for the rest: abandoned when the grace ran out.
		abandoned := map[string]bool{}
		for len(abandoned) < n-2 {
			ev := watch.WaitFor(t, "response.elicitation_resolved", 30*time.Second).Map(t)
			if id, _ := ev["elicitation_id"].(string); id != eids[0] && id != eids[1] {
				abandoned[id] = true
			}
		}
		for _, eid := range eids[2:] {
			m := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
			if m["status"] != "resolved" || m["outcome"] != "abandoned" {
				t.Errorf("%s = %v, want abandoned after the grace", eid, m)
			}
		}
	})
}

// TestKilledReplicasPromptsEndOnTime: two replicas on one Postgres; hooks parked on A,
// and A is killed with SIGKILL. Nobody renews their leases any more, so replica B
// abandons them once the grace runs out — on time, although the process that parked
// them never got to.
func TestKilledReplicasPromptsEndOnTime(t *testing.T) {
	db := testserver.PostgresDB(t)
	dbURL := db.NewURL(t)
	const grace = 2 * time.Second
	a := startServe(t, dbURL, "--disconnect-grace", grace.String())
	b := startServe(t, dbURL, "--disconnect-grace", grace.String())
	ca, cb := a.Client(), b.Client()
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "killed replica")
	onB := cb.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	onB.WaitHeartbeat(t)
	const n = 4
	for i := 0; i < n; i++ {
		ca.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request", claudeHookWithID(i, ids.New("elicit_claude_")))
	}
	for seen := 0; seen < n; seen++ {
		onB.WaitFor(t, "response.elicitation_request", 30*time.Second)
	}
	killed := time.Now()
	a.Kill(t)
	for seen := 0; seen < n; seen++ {
		eid, _ := onB.WaitFor(t, "response.elicitation_resolved", 30*time.Second).Map(t)["elicitation_id"].(string)
		if m := cb.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t); m["outcome"] != "abandoned" {
			t.Fatalf("%s = %v, want abandoned", eid, m)
		}
	}
	if took := time.Since(killed); took > 3*grace+5*time.Second {
		t.Fatalf("prompts of the killed replica ended %s after the kill; the grace is %s", took, grace)
	}
}

// decisionOf reads the behavior of a Claude PermissionRequest answer ("" for none).
func decisionOf(t *testing.T, r *testserver.Response) string {
	t.Helper()
	if r.Status != http.StatusOK || len(r.Body) == 0 {
		return ""
	}
	var m struct {
		HookSpecificOutput struct {
			Decision struct {
				Behavior string `json:"behavior"`
			} `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal(r.Body, &m)
	return m.HookSpecificOutput.Decision.Behavior
}

// waitAttached waits until a re-parked hook is attached: its prompt's lease was
// renewed by the client coming back (the API shows it as pending either way, so the
// test watches the parked-waiters gauge instead).
func waitAttached(t *testing.T, metricsURL, eid string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(metricsURL + "/metrics")
		if err != nil {
			t.Fatalf("scrape: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if containsLine(string(body), "gatehouse_parked_waiters 1") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the re-parked hook for %s never attached", eid)
}

func containsLine(body, line string) bool {
	for len(body) > 0 {
		i := 0
		for i < len(body) && body[i] != '\n' {
			i++
		}
		if body[:i] == line {
			return true
		}
		if i == len(body) {
			break
		}
		body = body[i+1:]
	}
	return false
}
