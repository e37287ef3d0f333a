package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testserver"
)

// TestSIGTERMAnswersParkedHooksAndExits parks hooks, keeps a live stream open, and
// sends SIGTERM: every parked hook gets the "no verdict" answer (200, empty body), the
// process exits 0 within 10 s, and after a restart on the same database the rows read
// as abandoned.
func TestSIGTERMAnswersParkedHooksAndExits(t *testing.T) {
	const n = 5
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		dbURL := db.NewURL(t)
		first := startServe(t, dbURL)
		c := first.Client()
		sid := c.CreateSession(t, c.CreateAgent(t), "", "shutdown")

		// A watcher stays subscribed through the shutdown: it must not hold the exit up.
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		parked := make([]*testserver.Parked, n)
		for i := range parked {
			parked[i] = c.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request",
				testserver.ClaudeBody("Bash", map[string]any{"command": "sleep 1", "i": i}))
		}
		eids := map[string]bool{}
		for len(eids) < n {
			f := st.WaitFor(t, "response.elicitation_request", 30*time.Second)
			eids[f.Map(t)["elicitation_id"].(string)] = true
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

		second := startServe(t, dbURL)
		c = second.Client()
		for eid := range eids {
			m := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
			if m["status"] != "resolved" || m["outcome"] != "abandoned" {
				t.Errorf("after graceful shutdown %s = %v, want status resolved, outcome abandoned", eid, m)
			}
		}
		if got := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)["pending_elicitations"]; got != nil && len(got.([]any)) != 0 {
			t.Errorf("prompts still pending after graceful shutdown: %v", got)
		}
	})
}
