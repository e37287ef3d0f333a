package handlers_test

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// coreReattachID mints a client-chosen re-attach id (elicit_claude_<32 hex>).
func coreReattachID(t *testing.T) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "elicit_claude_" + hex.EncodeToString(b[:])
}

// TestElicitationTimeoutAnswersNoVerdict: past --elicitation-timeout the hook gets an
// empty 200 (Claude Code falls back to its own prompt), the row is expired and the
// resolved event is published.
func TestElicitationTimeoutAnswersNoVerdict(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--elicitation-timeout", "1s")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)
		parked, ev := corePark(t, c, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": "sleep 1000"}))
		eid := ev["elicitation_id"].(string)

		r := parked.Wait(t, coreWait)
		if r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("timed-out hook: %d %q, want 200 with an empty body", r.Status, r.Body)
		}
		coreWaitResolved(t, st, eid)
		got := coreGetElicitation(t, c, sid, eid)
		if got["status"] != "resolved" || got["outcome"] != "expired" {
			t.Fatalf("GET after timeout = %v", got)
		}
		if _, ok := got["action"]; ok {
			t.Fatalf("expired prompt reports an action: %v", got)
		}
		// A late verdict does not overturn the expiry.
		if out := coreResolve(t, c, sid, eid, map[string]any{"action": "accept"}); out["outcome"] != "already_resolved" {
			t.Fatalf("verdict after expiry = %v", out)
		}
		if n := len(coreSessionPending(t, c, sid)); n != 0 {
			t.Fatalf("%d pending after expiry", n)
		}
	})
}

// TestClientDisconnectAbandonsAfterGrace: when the hook's client hangs up, the prompt
// stays pending through --disconnect-grace, then becomes abandoned with the resolved
// event published.
func TestClientDisconnectAbandonsAfterGrace(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--disconnect-grace", "300ms")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)
		parked, ev := corePark(t, c, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}))
		eid := ev["elicitation_id"].(string)

		parked.Cancel()
		coreWaitResolved(t, st, eid)
		got := coreGetElicitation(t, c, sid, eid)
		if got["status"] != "resolved" || got["outcome"] != "abandoned" {
			t.Fatalf("GET after grace = %v", got)
		}
		if out := coreResolve(t, c, sid, eid, map[string]any{"action": "accept"}); out["outcome"] != "already_resolved" {
			t.Fatalf("verdict after abandonment = %v", out)
		}
	})
}

// TestReparkWithinGraceReattaches: a hook that carries _gatehouse_elicitation_id from the
// start, hangs up, and retries with the same id within the grace re-attaches to the same
// prompt — no second request event — and the verdict reaches the retry.
func TestReparkWithinGraceReattaches(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		// The grace is long so that the retry is certainly inside it; the test never
		// waits for it to run out.
		srv := testserver.Start(t, db.NewURL(t), "--disconnect-grace", "30s")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)
		id := coreReattachID(t)
		body := testserver.ClaudeBody("Bash", map[string]any{"command": "go test ./..."})
		body["_gatehouse_elicitation_id"] = id

		first, ev := corePark(t, c, st, sid, body)
		if ev["elicitation_id"] != id {
			t.Fatalf("prompt id = %v, want the client's %s", ev["elicitation_id"], id)
		}
		coreUntil(t, "the first hook is parked", func() bool { return srv.App.Elicit.Parked() == 1 })
		first.Cancel()
		coreUntil(t, "the server notices the hang-up", func() bool { return srv.App.Elicit.Parked() == 0 })
		coreWantPending(t, c, sid, id)

		retry := c.ParkAsync(coreHookPath(sid), body)
		coreUntil(t, "the retry is parked", func() bool { return srv.App.Elicit.Parked() == 1 })
		if retry.Done() {
			t.Fatal("the retry answered before any verdict")
		}
		coreWantPending(t, c, sid, id)
		if pend := coreSessionPending(t, c, sid); len(pend) != 1 || pend[0].(map[string]any)["elicitation_id"] != id {
			t.Fatalf("pending after re-attach = %v", pend)
		}

		coreMustResolve(t, c, sid, id, map[string]any{"action": "accept"})
		coreWantBehavior(t, retry, "allow")
		// The stream saw the verdict but no second request for the same prompt.
		frames := coreUntilSentinel(t, c, st, sid)
		resolved := 0
		for _, f := range frames {
			switch f.Event {
			case "response.elicitation_request":
				t.Fatalf("re-attach published another request: %s", f.Data)
			case "response.elicitation_resolved":
				resolved++
			}
		}
		if resolved != 1 {
			t.Fatalf("%d resolved events, want 1", resolved)
		}
		if got := coreGetElicitation(t, c, sid, id); got["action"] != "accept" {
			t.Fatalf("stored = %v", got)
		}
	})
}

// TestReparkWithDecidedIDGetsVerdictAtOnce: a verdict given while nobody waited (the
// client hung up) is kept on the row, and the retry with the same id gets it at once.
func TestReparkWithDecidedIDGetsVerdictAtOnce(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--disconnect-grace", "30s")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)
		id := coreReattachID(t)
		body := testserver.ClaudeBody("Bash", map[string]any{"command": "npm publish"})
		body["_gatehouse_elicitation_id"] = id

		first, _ := corePark(t, c, st, sid, body)
		first.Cancel()
		coreUntil(t, "the server notices the hang-up", func() bool { return srv.App.Elicit.Parked() == 0 })
		coreMustResolve(t, c, sid, id, map[string]any{"action": "decline", "content": map[string]any{"feedback": "use the release job"}})

		retry := c.ParkAsync(coreHookPath(sid), body)
		d := coreWantBehavior(t, retry, "deny")
		if d["message"] != "use the release job" {
			t.Fatalf("retry decision = %v", d)
		}
	})
}

// TestReparkWithAnotherSessionsIDRefused: an id that belongs to another session's prompt
// cannot be used to attach to it (400), and that prompt is untouched.
func TestReparkWithAnotherSessionsIDRefused(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		a := c.CreateSession(t, agent, "", "")
		b := c.CreateSession(t, agent, "", "")
		stA := coreOpenStream(t, c, a)
		id := coreReattachID(t)
		body := testserver.ClaudeBody("Bash", map[string]any{"command": "ls"})
		body["_gatehouse_elicitation_id"] = id
		parked, _ := corePark(t, c, stA, a, body)

		r := c.Do(t, http.MethodPost, coreHookPath(b), body)
		coreWantEnvelope(t, r, http.StatusBadRequest, "invalid_input")
		// Malformed re-attach ids are refused too.
		for _, bad := range []string{"elicit_" + id[len("elicit_claude_"):], "elicit_claude_XYZ", "conv_" + id[len("elicit_claude_"):]} {
			body["_gatehouse_elicitation_id"] = bad
			coreWantEnvelope(t, c.Do(t, http.MethodPost, coreHookPath(b), body), http.StatusBadRequest, "invalid_input")
		}
		if parked.Done() {
			t.Fatal("the refused retry answered A's hook")
		}
		coreWantPending(t, c, a, id)
		coreMustResolve(t, c, a, id, map[string]any{"action": "accept"})
		coreWantBehavior(t, parked, "allow")
	})
}

// TestGraceRestartsOnEveryDisconnect: the grace period runs from the latest hang-up. A
// hook that hangs up, re-attaches, stays a while and hangs up again keeps its prompt
// pending for a full grace after the second hang-up — the first hang-up's timer must not
// abandon it early.
func TestGraceRestartsOnEveryDisconnect(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		const grace = time.Second
		srv := testserver.Start(t, db.NewURL(t), "--disconnect-grace", grace.String())
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)
		id := coreReattachID(t)
		body := testserver.ClaudeBody("Bash", map[string]any{"command": "make"})
		body["_gatehouse_elicitation_id"] = id
		parked := func(n int) func() bool { return func() bool { return srv.App.Elicit.Parked() == n } }

		first, _ := corePark(t, c, st, sid, body)
		coreUntil(t, "the hook is parked", parked(1))
		first.Cancel()
		coreUntil(t, "the server notices the first hang-up", parked(0))
		firstGraceEnds := time.Now().Add(grace)

		retry := c.ParkAsync(coreHookPath(sid), body)
		coreUntil(t, "the retry is parked", parked(1))
		// The scenario, not synchronization: the retry stays attached past the middle of
		// the first hang-up's grace, so that grace would end well before the second's.
		time.Sleep(time.Until(firstGraceEnds.Add(-grace / 3)))
		secondHangUp := time.Now()
		retry.Cancel()

		coreWaitResolved(t, st, id)
		if held := time.Since(secondHangUp); held < grace {
			t.Fatalf("prompt abandoned %s after the second hang-up, want at least the %s grace", held, grace)
		}
		if got := coreGetElicitation(t, c, sid, id); got["outcome"] != "abandoned" {
			t.Fatalf("after the grace = %v", got)
		}
	})
}

// TestShutdownKeepsPromptsPending: a graceful stop answers a parked hook with the
// no-verdict answer (empty 200) instead of leaving it hanging and ends open streams so
// the stop is prompt — but the prompt stays pending, as after a client hang-up: after
// a restart, a verdict given while nobody waited reaches the client that re-parks with
// its id.
func TestShutdownKeepsPromptsPending(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		url := db.NewURL(t)
		srv := testserver.Start(t, url)
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)
		body := testserver.ClaudeBody("Bash", map[string]any{"command": "ls"})
		body["_gatehouse_elicitation_id"] = coreReattachID(t)
		parked, ev := corePark(t, c, st, sid, body)
		eid := ev["elicitation_id"].(string)

		// An open stream (st) must not hold the shutdown up: it ends with the server.
		start := time.Now()
		srv.Stop()
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("graceful shutdown with an open stream took %s", took)
		}
		r := parked.Wait(t, coreWait)
		if r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("hook at shutdown: %d %q, want an empty 200", r.Status, r.Body)
		}

		again := testserver.Start(t, url)
		c2 := again.Client("")
		if got := coreGetElicitation(t, c2, sid, eid); got["status"] != "pending" {
			t.Fatalf("after restart = %v, want still pending", got)
		}
		coreMustResolve(t, c2, sid, eid, map[string]any{"action": "accept"})
		back := c2.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request", body)
		coreWantBehavior(t, back, "allow")
	})
}

// TestShutdownLetsRequestsFinish: a graceful stop closes the streams but lets a request
// that is working — here an MCP tool call waiting on its runner — finish and answer
// what it did, rather than ending its context and failing it half-way (a request that
// had just written a prompt or an answer would report a failure for what was done).
func TestShutdownLetsRequestsFinish(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		arrived, release := make(chan struct{}), make(chan struct{})
		runner := newFakeRunner(t, func(_ int, _ map[string]any) any {
			close(arrived)
			<-release
			return map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}}
		})
		srv := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL)
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)

		call := c.ParkAsync("/v1/sessions/"+sid+"/mcp", rpcCall(1, "echo", nil, nil))
		<-arrived
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			srv.Stop()
		}()
		// The stream ends with the stop, and the listener closes: the stop is under
		// way while the tool call is still at its runner.
		st.WaitClosed(t, coreWait)
		coreUntil(t, "the listener closes", func() bool {
			conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
			if err == nil {
				conn.Close()
			}
			return err != nil
		})
		close(release)
		r := call.Wait(t, coreWait)
		<-stopped
		if r.Status != http.StatusOK {
			t.Fatalf("tool call during a graceful stop: %d %s", r.Status, r.Body)
		}
		if got := dig(t, r.JSON(t), "result", "content"); mustJSON(got) != `[{"text":"done","type":"text"}]` {
			t.Fatalf("tool call during a graceful stop answered %s, want the runner's result", r.Body)
		}
	})
}
