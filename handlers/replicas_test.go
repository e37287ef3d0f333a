package handlers_test

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestTwoReplicasOnePostgres: a prompt parked on replica A is resolved through replica
// B; both replicas' streams see the request and the resolution, and A's hook wakes.
func TestTwoReplicasOnePostgres(t *testing.T) {
	db := testserver.PostgresDB(t)
	url := db.NewURL(t)
	a := testserver.Start(t, url)
	b := testserver.Start(t, url)
	ca, cb := a.Client(""), b.Client("")
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "")

	streamB := cb.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	streamB.WaitHeartbeat(t)
	parked, eid, _ := ca.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "date"})

	req := streamB.WaitFor(t, "response.elicitation_request", 10*time.Second)
	if got := req.Map(t)["elicitation_id"]; got != eid {
		t.Fatalf("replica B saw request %v, want %s", got, eid)
	}
	streamA := ca.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	streamA.WaitHeartbeat(t)

	r := cb.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
	if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "resolved" {
		t.Fatalf("resolve on B: %d %s", r.Status, r.Body)
	}
	ans := parked.Wait(t, 10*time.Second)
	if !json.Valid(ans.Body) || !strings.Contains(string(ans.Body), `"behavior":"allow"`) {
		t.Fatalf("hook parked on A answered %d %s", ans.Status, ans.Body)
	}
	want := `{"elicitation_id":"` + eid + `","type":"response.elicitation_resolved"}`
	for name, st := range map[string]*testserver.Stream{"A": streamA, "B": streamB} {
		f := st.WaitFor(t, "response.elicitation_resolved", 10*time.Second)
		if f.Data != want {
			t.Fatalf("replica %s resolved frame = %s", name, f.Data)
		}
		if f.ID == "" {
			t.Fatalf("replica %s resolved frame has no sequence id", name)
		}
	}
}

// TestListenerReconnect kills the replica's LISTEN connection from the server side; the
// bus reconnects and a verdict given on another replica still wakes the parked hook.
func TestListenerReconnect(t *testing.T) {
	db := testserver.PostgresDB(t)
	url := db.NewURL(t)
	a := testserver.Start(t, url)
	b := testserver.Start(t, url)
	ca, cb := a.Client(""), b.Client("")
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "")
	parked, eid, _ := ca.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "date"})

	conn, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	listeners := func() map[int]bool {
		rows, err := conn.Query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()
			AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int]bool{}
		for rows.Next() {
			var pid int
			_ = rows.Scan(&pid)
			out[pid] = true
		}
		return out
	}
	old := listeners()
	if len(old) != 2 {
		t.Fatalf("found %d listener connections, want one per replica (2)", len(old))
	}
	for pid := range old {
		if _, err := conn.Exec(`SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until both replicas listen again on new connections.
	deadline := time.Now().Add(15 * time.Second)
	for {
		fresh := 0
		for pid := range listeners() {
			if !old[pid] {
				fresh++
			}
		}
		if fresh >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listeners did not reconnect: %d new LISTEN connections", fresh)
		}
		select {
		case <-parked.DoneChan():
			t.Fatal("hook answered before any verdict")
		case <-time.After(50 * time.Millisecond): // polling the catalog, not synchronising with the server
		}
	}
	r := cb.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"})
	if r.JSON(t)["outcome"] != "resolved" {
		t.Fatalf("resolve: %s", r.Body)
	}
	if ans := parked.Wait(t, 10*time.Second); !strings.Contains(string(ans.Body), `"behavior":"deny"`) {
		t.Fatalf("hook answered %s", ans.Body)
	}
}

// TestLastEventIDResume: a stream that drops and reconnects with Last-Event-ID gets
// exactly the events it missed, in order, with their sequence ids.
func TestLastEventIDResume(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")

		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		p1 := c.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request", testserver.ClaudeBody("Bash", map[string]any{"command": "one"}))
		first := st.WaitFor(t, "response.elicitation_request", 10*time.Second)
		if first.ID == "" {
			t.Fatal("request frame has no id")
		}
		e1 := first.Map(t)["elicitation_id"].(string)
		st.Close()

		// While disconnected: resolve e1 and park a second prompt.
		c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+e1+"/resolve", map[string]any{"action": "accept"})
		p1.Wait(t, 10*time.Second)
		watch := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		watch.WaitHeartbeat(t)
		p2 := c.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request", testserver.ClaudeBody("Bash", map[string]any{"command": "two"}))
		e2 := watch.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)["elicitation_id"].(string)
		defer p2.Cancel()

		resumed := c.OpenStream(t, "/v1/sessions/"+sid+"/stream?last_event_id="+first.ID)
		f1 := resumed.Next(t, 5*time.Second)
		f2 := resumed.Next(t, 5*time.Second)
		f3 := resumed.Next(t, 5*time.Second)
		if f1.Event != "response.elicitation_resolved" || f1.Map(t)["elicitation_id"] != e1 {
			t.Fatalf("first resumed frame = %+v", f1)
		}
		if f2.Event != "response.elicitation_request" || f2.Map(t)["elicitation_id"] != e2 {
			t.Fatalf("second resumed frame = %+v", f2)
		}
		if f3.Event != "session.heartbeat" {
			t.Fatalf("third frame = %+v, want the heartbeat after the resume", f3)
		}
		base, _ := strconv.Atoi(first.ID)
		if f1.ID != strconv.Itoa(base+1) || f2.ID != strconv.Itoa(base+2) {
			t.Fatalf("resumed ids %s, %s after %s: want consecutive", f1.ID, f2.ID, first.ID)
		}
	})
}

// TestReattachOnOtherReplicaSurvivesGrace: a hook's client hangs up on replica A and
// re-parks with the same id on replica B within the grace period. A's grace timer must
// not abandon the prompt under B's waiting client: the verdict given after A's grace
// ran out still reaches the hook on B.
func TestReattachOnOtherReplicaSurvivesGrace(t *testing.T) {
	db := testserver.PostgresDB(t)
	url := db.NewURL(t)
	const grace = 400 * time.Millisecond
	a := testserver.Start(t, url, "--disconnect-grace", grace.String())
	b := testserver.Start(t, url, "--disconnect-grace", grace.String())
	ca, cb := a.Client(""), b.Client("")
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "")
	eid := "elicit_claude_" + strings.Repeat("ab", 16)
	body := testserver.ClaudeBody("Bash", map[string]any{"command": "date"})
	body["_gatehouse_elicitation_id"] = eid
	path := "/v1/sessions/" + sid + "/hooks/permission-request"

	st := cb.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	st.WaitHeartbeat(t)
	first := ca.ParkAsync(path, body)
	st.WaitFor(t, "response.elicitation_request", 10*time.Second)
	hungUp := time.Now()
	first.Cancel()                     // the client hangs up on A …
	second := cb.ParkAsync(path, body) // … and retries on B with the same id
	deadline := time.Now().Add(10 * time.Second)
	for b.App.Elicit.Parked() == 0 { // B holds the retry (polled with a deadline)
		if time.Now().After(deadline) {
			t.Fatal("the retry never parked on B")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Scenario time, not synchronisation: let A's grace period run out.
	time.Sleep(time.Until(hungUp.Add(grace + 300*time.Millisecond)))
	if second.Done() {
		t.Fatalf("the retry on B was answered without a verdict: %+v", second.Wait(t, time.Second))
	}
	r := cb.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
	if r.JSON(t)["outcome"] != "resolved" {
		t.Fatalf("resolve after A's grace: %s (the prompt was abandoned under B's client)", r.Body)
	}
	if ans := second.Wait(t, 10*time.Second); !strings.Contains(string(ans.Body), `"behavior":"allow"`) {
		t.Fatalf("retry on B answered %d %q", ans.Status, ans.Body)
	}
}
