package handlers_test

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// revokeWithin is how soon a revoked stream must end: far under the 15 s heartbeat, at
// which streams used to notice.
const revokeWithin = 3 * time.Second

// metricValue reads one unlabelled sample from /metrics (the server runs with
// --metrics-addr).
func metricValue(t *testing.T, srv *testserver.Server, name string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(srv.Scrape(t)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s = %q", name, v)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

func grantLevel(t *testing.T, owner *testserver.Client, sid, user, level string) {
	t.Helper()
	r := owner.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": user, "level": level})
	if r.Status != http.StatusOK {
		t.Fatalf("grant %s %s: %d %s", user, level, r.Status, r.Body)
	}
}

func revoke(t *testing.T, owner *testserver.Client, sid, user string) {
	t.Helper()
	if r := owner.Do(t, http.MethodDelete, "/v1/sessions/"+sid+"/permissions?user="+user, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke %s: %d %s", user, r.Status, r.Body)
	}
}

// TestInboxStreamIgnoresOtherTrees: prompts opened in trees bob cannot see cost bob's
// live inbox nothing — not one inbox build — while one in his own tree costs one.
func TestInboxStreamIgnoresOtherTrees(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--metrics-addr", "127.0.0.1:0")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		alpha := alice.CreateSession(t, alice.CreateAgent(t), "", "alpha")
		worker := alice.CreateSession(t, alice.CreateAgent(t), alpha, "alpha-worker")
		grantLevel(t, alice, alpha, "bob@example.com", "read") // visible, but nothing to decide
		bobs := bob.CreateSession(t, bob.CreateAgent(t), "", "bob's")
		// The setup announced bob's grants (the read grant, his new tree) over the bus;
		// on Postgres those notes reach this replica's listener asynchronously. One that
		// arrived after the inbox stream opened would rightly make it re-check and
		// re-build once — a build no prompt caused. The listener hands on notifications
		// in commit order, so once a sentinel published after the setup is here, every
		// note of the setup has been taken in, before the inbox stream exists.
		api := bob.OpenStream(t, "/v1/sessions/"+bobs+"/stream")
		api.WaitHeartbeat(t)
		coreUntilSentinel(t, bob, api, bobs)
		api.Close()

		st := bob.OpenStream(t, "/inbox/events")
		st.WaitFor(t, "inbox", 10*time.Second)
		before := metricValue(t, srv, "gatehouse_inbox_loads_total")
		const n = 20
		for i := range n {
			sid := alpha
			if i%2 == 1 {
				sid = worker
			}
			openMCPForm(t, alice, sid, "alice's prompt "+strconv.Itoa(i), map[string]any{})
		}
		// A prompt in bob's own tree: bob's stream is in order, so once its frame is
		// here every earlier event has been seen (or, rightly, never delivered).
		mine := openMCPForm(t, bob, bobs, "bob's prompt", map[string]any{})
		f := st.WaitFor(t, "inbox", 10*time.Second)
		if ids := cardIDs(fragment(t, f)); len(ids) != 1 || ids[0] != mine {
			t.Fatalf("bob's inbox = %v, want just %s", ids, mine)
		}
		if got := metricValue(t, srv, "gatehouse_inbox_loads_total") - before; got != 1 {
			t.Fatalf("%d prompts in trees bob cannot decide in, then one in his: %v inbox builds, want 1", n, got)
		}
	})
}

// TestInboxStreamPacesBursts: a burst of prompts in a visible tree costs a bounded
// number of inbox builds (at most one per stream.RenderEvery, plus the edges), and the
// last frame still shows them all.
func TestInboxStreamPacesBursts(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--metrics-addr", "127.0.0.1:0")
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "alpha")
		st := alice.OpenStream(t, "/inbox/events")
		st.WaitFor(t, "inbox", 10*time.Second)
		before := metricValue(t, srv, "gatehouse_inbox_loads_total")

		const n = 40
		start := time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r, err := alice.Send(t.Context(), http.MethodPost, "/v1/sessions/"+sid+"/events", map[string]any{
					"type": "mcp_elicitation", "data": map[string]any{"message": "burst " + strconv.Itoa(i), "requestedSchema": map[string]any{}}})
				if err != nil || r.Status != http.StatusAccepted {
					t.Errorf("open prompt %d: %v %v", i, err, r)
				}
			})
		}
		wg.Wait()
		frames := 0
		for {
			f := st.WaitFor(t, "inbox", 10*time.Second)
			frames++
			if len(cardIDs(fragment(t, f))) == n {
				break
			}
		}
		elapsed := time.Since(start)
		builds := metricValue(t, srv, "gatehouse_inbox_loads_total") - before
		bound := float64(elapsed/stream.RenderEvery) + 2
		t.Logf("%d prompts over %s: %d frames, %v inbox builds (bound %v)", n, elapsed, frames, builds, bound)
		if builds > bound || builds >= n {
			t.Fatalf("%d prompts over %s cost %v inbox builds, want at most %v", n, elapsed, builds, bound)
		}
	})
}

// TestStreamCapPerPerson: with --max-streams-per-user 2, a person's third stream (API
// or page) is refused with 429 — the JSON envelope or a plain page — while others are
// unaffected, and closing one of the two frees a slot.
func TestStreamCapPerPerson(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--max-streams-per-user", "2")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		api := alice.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		api.WaitHeartbeat(t)
		page := alice.OpenStream(t, "/sessions/"+sid+"/events")
		page.WaitFor(t, "session", 10*time.Second)

		_, r := alice.TryOpenStream(t, "/v1/sessions/"+sid+"/stream")
		if r == nil || r.Status != http.StatusTooManyRequests {
			t.Fatalf("third API stream: %+v, want 429", r)
		}
		if e, _ := r.JSON(t)["error"].(map[string]any); e["code"] != "too_many_requests" || e["message"] == "" {
			t.Fatalf("429 envelope: %s", r.Body)
		}
		_, r = alice.TryOpenStream(t, "/inbox/events")
		if r == nil || r.Status != http.StatusTooManyRequests || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("third page stream: %+v, want a 429 page", r)
		}
		bob.OpenStream(t, "/inbox/events").WaitFor(t, "inbox", 10*time.Second) // another person's count

		api.Close()
		// The server learns of the hang-up on its own schedule: retry until the slot is
		// free, with a deadline.
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, r := alice.TryOpenStream(t, "/v1/sessions/"+sid+"/stream")
			if st != nil {
				st.WaitHeartbeat(t)
				break
			}
			if r.Status != http.StatusTooManyRequests || time.Now().After(deadline) {
				t.Fatalf("after closing a stream: %d %s", r.Status, r.Body)
			}
			time.Sleep(20 * time.Millisecond) // polling the server's state, not synchronising
		}
		if _, r := alice.TryOpenStream(t, "/inbox/events"); r == nil || r.Status != http.StatusTooManyRequests {
			t.Fatalf("the freed slot was counted twice: %+v", r)
		}
	})
}

// TestRevokedGrantEndsStreams: lowering bob's grant from edit to read ends his approval
// page stream at once (deciding needs edit) and drops the prompt from his live inbox,
// while his read streams go on; removing the grant ends those too — each well before
// the next heartbeat.
func TestRevokedGrantEndsStreams(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "shared")
		grantLevel(t, alice, sid, "bob@example.com", "edit")
		eid := openMCPForm(t, alice, sid, "for bob", map[string]any{})

		api := bob.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		api.WaitHeartbeat(t)
		page := bob.OpenStream(t, "/sessions/"+sid+"/events")
		page.WaitFor(t, "session", 10*time.Second)
		approve := bob.OpenStream(t, "/approve/"+sid+"/"+eid+"/events")
		approve.WaitFor(t, "ready", 10*time.Second)
		inbox := bob.OpenStream(t, "/inbox/events")
		if ids := cardIDs(fragment(t, inbox.WaitFor(t, "inbox", 10*time.Second))); len(ids) != 1 || ids[0] != eid {
			t.Fatalf("bob's inbox with edit access: %v", ids)
		}

		grantLevel(t, alice, sid, "bob@example.com", "read")
		approve.WaitClosed(t, revokeWithin)
		if ids := cardIDs(fragment(t, inbox.WaitFor(t, "inbox", revokeWithin))); len(ids) != 0 {
			t.Fatalf("bob's inbox after losing edit: %v", ids)
		}
		// Reading is still allowed: the API stream carries the next prompt.
		next := openMCPForm(t, alice, sid, "still readable", map[string]any{})
		if got := api.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)["elicitation_id"]; got != next {
			t.Fatalf("read stream after the downgrade saw %v, want %s", got, next)
		}

		revoke(t, alice, sid, "bob@example.com")
		api.WaitClosed(t, revokeWithin)
		page.WaitClosed(t, revokeWithin)
		if r := bob.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil); r.Status != http.StatusNotFound {
			t.Fatalf("bob after revocation: %d", r.Status)
		}
	})
}

// TestRevokeEndsStreamOnOtherReplica: the grant-changed note travels over Postgres
// NOTIFY, so revoking on replica A ends bob's stream on replica B at once.
func TestRevokeEndsStreamOnOtherReplica(t *testing.T) {
	db := testserver.PostgresDB(t)
	url := db.NewURL(t)
	a := testserver.Start(t, url, "--auth", "header")
	b := testserver.Start(t, url, "--auth", "header")
	alice, bob := a.Client("alice@example.com"), b.Client("bob@example.com")
	sid := alice.CreateSession(t, alice.CreateAgent(t), "", "shared")
	grantLevel(t, alice, sid, "bob@example.com", "read")
	st := bob.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	st.WaitHeartbeat(t)
	page := bob.OpenStream(t, "/sessions/"+sid+"/events")
	page.WaitFor(t, "session", 10*time.Second)
	revoke(t, alice, sid, "bob@example.com")
	st.WaitClosed(t, revokeWithin)
	page.WaitClosed(t, revokeWithin)
}
