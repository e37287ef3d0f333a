package handlers_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// outageBound is the longest any request may take while the database goes away and
// comes back: the statement timeout (store.DefaultTimeout, 15 s) with room to spare.
// A request that takes longer is hanging.
const outageBound = 25 * time.Second

// requestLog records every request a test sends around an outage, to check at the end
// that each was answered in time and that no 5xx other than the database's 503 was
// seen.
type requestLog struct {
	mu       sync.Mutex
	problems []string
	n503     int
	total    int
}

// do sends one request and records how it went; it returns the response, or nil
// when there was none (a transport error or a timeout: a problem).
func (l *requestLog) do(c *testserver.Client, method, path string, body any) *testserver.Response {
	ctx, cancel := context.WithTimeout(context.Background(), outageBound)
	defer cancel()
	start := time.Now()
	r, err := c.Send(ctx, method, path, body)
	took := time.Since(start)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	switch {
	case err != nil:
		l.problems = append(l.problems, fmt.Sprintf("%s %s: no answer after %s: %v", method, path, took.Round(time.Millisecond), err))
		return nil
	case r.Status == http.StatusServiceUnavailable:
		l.n503++
		if msg := unavailableEnvelope(r); msg != "" {
			l.problems = append(l.problems, fmt.Sprintf("%s %s: %s", method, path, msg))
		}
	case r.Status >= 500:
		l.problems = append(l.problems, fmt.Sprintf("%s %s: %d %s", method, path, r.Status, r.Body))
	}
	return r
}

func (l *requestLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.problems {
		t.Error(p)
	}
	t.Logf("%d requests around the outage, %d answered 503", l.total, l.n503)
}

// unavailableEnvelope returns "" when r is the API's "database unavailable" answer —
// 503, Retry-After, {"error":{"code":"unavailable","message":…}} — or what is wrong.
func unavailableEnvelope(r *testserver.Response) string {
	var env struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Error.Code != "unavailable" || env.Error.Message == "" {
		return fmt.Sprintf("503 without the unavailable envelope: %s", r.Body)
	}
	if r.Header.Get("Retry-After") == "" {
		return "503 without Retry-After"
	}
	return ""
}

func describe(r *testserver.Response) string {
	if r == nil {
		return "no answer"
	}
	return fmt.Sprintf("%d %s", r.Status, r.Body)
}

// waitHealth polls /healthz until it answers want, failing the test after within.
// The server cannot announce that the database came or went, so we ask.
func waitHealth(t *testing.T, srv *testserver.Server, want int, within time.Duration) {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(within)
	last := 0
	for {
		resp, err := hc.Get(srv.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			last = resp.StatusCode
			if last == want {
				return
			}
			if last != http.StatusOK && last != http.StatusServiceUnavailable {
				t.Fatalf("/healthz answered %d", last)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz still %d (err %v) after %s, want %d", last, err, within, want)
		}
		time.Sleep(25 * time.Millisecond) // polling /healthz, not synchronising
	}
}

// TestPostgresRestartUnderLoad restarts the database under two replicas while
// requests flow. Hooks are parked on replica A; verdicts are given on replica B, so
// they reach A's hooks only through A's LISTEN connection, which the restart kills.
//
// It proves: /healthz is 503 while the database is down and 200 once it (and the
// listener) is back; a request blocked in the database when it stops, and requests
// sent while it is down, get the 503 envelope promptly — no hang, no 500 — and so does
// every request of a background load; verdicts committed before the restart are all
// still there after it; hooks parked before the restart keep waiting through it (even
// when a verdict attempt on their own replica fails meanwhile, and though their leases
// lapse during the outage) and get the verdict given after it; a stream resumed with its Last-Event-ID after the restart sees the
// events published after it.
func TestPostgresRestartUnderLoad(t *testing.T) {
	cl := testserver.StartCluster(t)
	url := cl.CreateDB(t)
	// A short disconnect grace, and an outage longer than it: the leases of the parked
	// prompts lapse while nobody can renew them, which must not count as their
	// waiters being gone. B sweeps lapsed leases twice as often as A renews its own,
	// so once the database is back B would be first to see A's lapsed leases.
	const grace = 500 * time.Millisecond
	a := testserver.Start(t, url, "--disconnect-grace", grace.String())
	b := testserver.Start(t, url, "--disconnect-grace", (grace / 2).String())
	ca, cb := a.Client(""), b.Client("")
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "")
	hookPath := "/v1/sessions/" + sid + "/hooks/permission-request"
	resolvePath := func(eid string) string { return "/v1/sessions/" + sid + "/elicitations/" + eid + "/resolve" }
	getPath := func(eid string) string { return "/v1/sessions/" + sid + "/elicitations/" + eid }
	park := func(n int) (*testserver.Parked, string) {
		t.Helper()
		eid := fmt.Sprintf("elicit_claude_%032x", n)
		body := testserver.ClaudeBody("Bash", map[string]any{"command": fmt.Sprintf("echo %d", n)})
		body["_gatehouse_elicitation_id"] = eid
		p, got, _ := ca.ParkAt(t, sid, hookPath, body)
		if got != eid {
			t.Fatalf("parked %s, want the re-attach id %s", got, eid)
		}
		return p, eid
	}
	answer := map[string]string{"accept": `"behavior":"allow"`, "decline": `"behavior":"deny"`}

	// Verdicts committed before the restart.
	before := map[string]string{} // eid → action
	for i, action := range []string{"accept", "decline", "accept"} {
		p, eid := park(100 + i)
		if r := cb.Do(t, http.MethodPost, resolvePath(eid), map[string]any{"action": action}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve %s: %d %s", eid, r.Status, r.Body)
		}
		if r := p.Wait(t, 10*time.Second); !strings.Contains(string(r.Body), answer[action]) {
			t.Fatalf("hook %s answered %s, want %s", eid, r.Body, answer[action])
		}
		before[eid] = action
	}

	// A stream on A, and hooks parked across the restart.
	st := ca.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	st.WaitHeartbeat(t)
	var parked []*testserver.Parked
	var parkedIDs []string
	lastID := ""
	for i := range 3 {
		p, eid := park(200 + i)
		parked, parkedIDs = append(parked, p), append(parkedIDs, eid)
		f := st.WaitFor(t, "response.elicitation_request", 10*time.Second)
		if f.ID == "" {
			t.Fatalf("request frame without a sequence id: %+v", f)
		}
		lastID = f.ID
	}

	// Background load on both replicas for the whole outage.
	var log requestLog
	stopLoad := make(chan struct{})
	var load sync.WaitGroup
	var decidedIDs []string
	for eid := range before {
		decidedIDs = append(decidedIDs, eid)
	}
	for w, c := range []*testserver.Client{ca, cb, ca, cb} {
		load.Add(1)
		go func() {
			defer load.Done()
			for i := 0; ; i++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				eid := decidedIDs[(w+i)%len(decidedIDs)]
				if i%2 == 0 {
					log.do(c, http.MethodGet, getPath(eid), nil)
				} else {
					log.do(c, http.MethodPost, resolvePath(eid), map[string]any{"action": "decline"})
				}
			}
		}()
	}

	// A request in flight inside the database when it stops: a verdict blocked on a
	// row lock held by another connection.
	side, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	lock, err := side.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback() //nolint:errcheck // the restart ends it
	if _, err := lock.Exec("SELECT 1 FROM elicitations WHERE id = $1 FOR UPDATE", parkedIDs[0]); err != nil {
		t.Fatal(err)
	}
	inFlight := make(chan *testserver.Response, 1)
	go func() {
		inFlight <- log.do(cb, http.MethodPost, resolvePath(parkedIDs[0]), map[string]any{"action": "decline"})
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var waiting int
		if err := side.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the verdict never blocked on the row lock")
		}
		time.Sleep(10 * time.Millisecond) // polling the catalog, not synchronising with the server
	}

	// The database goes away.
	cl.Stop(t)
	stopped := time.Now()
	// committedAtStop: the stop ended the lock holder first and the verdict committed in
	// the moment before its own backend was told to end — a decision made and kept, so
	// it answered 202 and stands. Otherwise it must be the 503 envelope, deciding nothing.
	committedAtStop := false
	select {
	case r := <-inFlight:
		switch {
		case r != nil && r.Status == http.StatusAccepted:
			committedAtStop = true
			t.Logf("in-flight verdict committed as the database stopped")
		case r == nil || r.Status != http.StatusServiceUnavailable:
			t.Fatalf("the verdict in flight when the database stopped answered %s, want 503 (or 202 when it committed first)", describe(r))
		default:
			t.Logf("in-flight verdict answered 503 %s after the stop", time.Since(stopped).Round(time.Millisecond))
		}
	case <-time.After(outageBound):
		t.Fatalf("the verdict in flight when the database stopped was not answered within %s", outageBound)
	}
	waitHealth(t, a, http.StatusServiceUnavailable, 10*time.Second)
	waitHealth(t, b, http.StatusServiceUnavailable, 10*time.Second)

	// While it is down: reads, new hooks and verdicts answer 503 — including a verdict
	// on replica A for a hook parked on A, whose failure wakes that hook to re-read its
	// row (which it cannot): the hook must keep waiting, not fail.
	for _, req := range []struct {
		c      *testserver.Client
		method string
		path   string
		body   any
	}{
		{ca, http.MethodGet, getPath(parkedIDs[1]), nil},
		{ca, http.MethodPost, resolvePath(parkedIDs[1]), map[string]any{"action": "accept"}},
		{cb, http.MethodPost, resolvePath(parkedIDs[2]), map[string]any{"action": "accept"}},
		{ca, http.MethodPost, hookPath, testserver.ClaudeBody("Bash", map[string]any{"command": "while down"})},
	} {
		if r := log.do(req.c, req.method, req.path, req.body); r == nil || r.Status != http.StatusServiceUnavailable {
			t.Fatalf("%s %s while the database is down: %s, want 503", req.method, req.path, describe(r))
		}
	}
	for i, p := range parked {
		if p.Done() && !(i == 0 && committedAtStop) {
			r := p.Wait(t, time.Second)
			t.Fatalf("hook %s answered while the database was down: %d %s", parkedIDs[i], r.Status, r.Body)
		}
	}

	// The outage lasts a few graces (simulated time passing, not synchronisation).
	if rest := 4*grace - time.Since(stopped); rest > 0 {
		time.Sleep(rest)
	}
	for i, p := range parked {
		if p.Done() && !(i == 0 && committedAtStop) {
			r := p.Wait(t, time.Second)
			t.Fatalf("hook %s answered while the database was down: %d %s", parkedIDs[i], r.Status, r.Body)
		}
	}

	// It comes back.
	cl.Start(t)
	waitHealth(t, a, http.StatusOK, 30*time.Second)
	waitHealth(t, b, http.StatusOK, 30*time.Second)
	close(stopLoad)
	load.Wait()
	log.check(t)
	if log.n503 < 5 {
		t.Fatalf("only %d requests answered 503: the outage was not exercised", log.n503)
	}

	// Nothing decided before the restart was lost.
	for eid, action := range before {
		r := cb.Do(t, http.MethodGet, getPath(eid), nil)
		if got := r.JSON(t); r.Status != http.StatusOK || got["status"] != "resolved" || got["action"] != action {
			t.Fatalf("verdict %s after the restart: %d %s, want resolved with %s", eid, r.Status, r.Body, action)
		}
	}

	// The hooks parked before the restart are still waiting; verdicts given on B now
	// reach them on A (A's listener is back), and a stream resumed from before the
	// restart sees them.
	resumed := ca.OpenStream(t, "/v1/sessions/"+sid+"/stream?last_event_id="+lastID)
	// The resume replays what was logged after lastID before its first heartbeat — the
	// verdict committed at the stop, once the repair sweep has logged it — so those
	// frames count too (WaitHeartbeat would skip them).
	seen := map[string]bool{}
	for f := resumed.Next(t, 10*time.Second); f.Event != "session.heartbeat"; f = resumed.Next(t, 10*time.Second) {
		if f.Event == "response.elicitation_resolved" {
			seen[f.Map(t)["elicitation_id"].(string)] = true
		}
	}
	actions := []string{"accept", "decline", "accept"}
	for i, eid := range parkedIDs {
		if i == 0 && committedAtStop {
			actions[0] = "decline" // decided at the stop; a second verdict finds it decided
			if r := cb.Do(t, http.MethodPost, resolvePath(eid), map[string]any{"action": "accept"}); r.JSON(t)["outcome"] != "already_resolved" {
				t.Fatalf("verdict on %s, decided at the stop: %d %s", eid, r.Status, r.Body)
			}
			continue
		}
		if parked[i].Done() {
			r := parked[i].Wait(t, time.Second)
			t.Fatalf("hook %s answered before its verdict: %d %s", eid, r.Status, r.Body)
		}
		r := cb.Do(t, http.MethodPost, resolvePath(eid), map[string]any{"action": actions[i]})
		if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "resolved" {
			t.Fatalf("verdict on %s after the restart: %d %s (a failed attempt during the outage must not have decided it)", eid, r.Status, r.Body)
		}
	}
	for i, eid := range parkedIDs {
		if r := parked[i].Wait(t, 10*time.Second); r.Status != http.StatusOK || !strings.Contains(string(r.Body), answer[actions[i]]) {
			t.Fatalf("hook %s parked across the restart answered %d %s, want %s", eid, r.Status, r.Body, answer[actions[i]])
		}
	}
	wait := 10 * time.Second
	if committedAtStop {
		// Its resolved event could not be logged as the database stopped: the repair
		// sweep logs it once the database is back and the outage hold is over, on a
		// loaded machine some seconds later.
		wait = 45 * time.Second
	}
	for len(seen) < len(parkedIDs) {
		f := resumed.WaitFor(t, "response.elicitation_resolved", wait)
		seen[f.Map(t)["elicitation_id"].(string)] = true
	}
	for _, eid := range parkedIDs {
		if !seen[eid] {
			t.Fatalf("the resumed stream on A missed the verdict on %s (saw %v)", eid, seen)
		}
	}
}

// TestListenerResyncAfterMissedVerdict: replica A's LISTEN connection is cut and cannot
// come back for a while (the database refuses new connections), and meanwhile replica
// B decides A's parked prompt — a notification A never hears. /healthz on A says 503
// while its listener is down; once it reconnects, A's waiters re-read their rows, so
// the hook gets the verdict anyway, and A's streams are told to resume from the log,
// where the missed event is.
func TestListenerResyncAfterMissedVerdict(t *testing.T) {
	cl := testserver.StartCluster(t)
	dbURL := cl.CreateDB(t)
	a := testserver.Start(t, dbURL)
	b := testserver.Start(t, dbURL)
	ca, cb := a.Client(""), b.Client("")
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "")
	st := ca.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	st.WaitHeartbeat(t)
	parkedHook, eid, _ := ca.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "date"})
	lastID := st.WaitFor(t, "response.elicitation_request", 10*time.Second).ID
	// B decides through a connection it already has: warm its pool.
	if r := cb.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil); r.Status != http.StatusOK {
		t.Fatalf("get on B: %d %s", r.Status, r.Body)
	}

	admin, err := sql.Open("pgx", cl.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := dbURL[strings.LastIndex(dbURL, "/")+1 : strings.Index(dbURL, "?")]
	if _, err := admin.Exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	allowed := false
	allow := func() {
		if !allowed {
			allowed = true
			if _, err := admin.Exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS true"); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer allow()
	if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND query LIKE 'LISTEN%'`, name); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, a, http.StatusServiceUnavailable, 10*time.Second)

	r := cb.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
	if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "resolved" {
		t.Fatalf("verdict on B while A cannot listen: %d %s", r.Status, r.Body)
	}
	allow()
	waitHealth(t, a, http.StatusOK, 15*time.Second)
	if ans := parkedHook.Wait(t, 10*time.Second); !strings.Contains(string(ans.Body), `"behavior":"allow"`) {
		t.Fatalf("hook on A answered %d %s, want the verdict given while A's listener was down", ans.Status, ans.Body)
	}
	resumed := ca.OpenStream(t, "/v1/sessions/"+sid+"/stream?last_event_id="+lastID)
	if f := resumed.WaitFor(t, "response.elicitation_resolved", 10*time.Second); f.Map(t)["elicitation_id"] != eid {
		t.Fatalf("resumed stream on A: %s, want the resolution of %s", f.Data, eid)
	}
}
