package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// Helpers shared by the core suite (seed ports, guards, lifecycle, bad input). Their
// names carry a "core" prefix so they do not collide with other areas' helpers in this
// package.

// coreWait bounds every wait for a frame or an answer. Generous, because a 2-core
// machine running -race on two databases is slow; a passing test never waits this long.
const coreWait = 15 * time.Second

func coreHookPath(sid string) string { return "/v1/sessions/" + sid + "/hooks/permission-request" }

func coreResolvePath(sid, eid string) string {
	return "/v1/sessions/" + sid + "/elicitations/" + eid + "/resolve"
}

func coreElicitationPath(sid, eid string) string {
	return "/v1/sessions/" + sid + "/elicitations/" + eid
}

func coreStreamPath(sid string) string { return "/v1/sessions/" + sid + "/stream" }

// coreOpenStream subscribes to a session's stream and waits for its first heartbeat,
// after which nothing published is missed.
func coreOpenStream(t *testing.T, c *testserver.Client, sid string) *testserver.Stream {
	t.Helper()
	st := c.OpenStream(t, coreStreamPath(sid))
	st.WaitHeartbeat(t)
	return st
}

// corePark posts a Claude PermissionRequest hook body on session sid in the background
// and returns the parked request with the request event seen on st (a stream of sid or
// of one of its ancestors, already past its heartbeat).
func corePark(t *testing.T, c *testserver.Client, st *testserver.Stream, sid string, body map[string]any) (*testserver.Parked, map[string]any) {
	t.Helper()
	p := c.ParkAsync(coreHookPath(sid), body)
	ev := st.WaitFor(t, "response.elicitation_request", coreWait).Map(t)
	if ev["type"] != "response.elicitation_request" || ev["method"] != "elicitation/create" {
		t.Fatalf("request event = %v", ev)
	}
	if eid, _ := ev["elicitation_id"].(string); eid == "" {
		t.Fatalf("request event without elicitation_id: %v", ev)
	}
	return p, ev
}

// coreParams returns a request event's params.
func coreParams(t *testing.T, ev map[string]any) map[string]any {
	t.Helper()
	p, ok := ev["params"].(map[string]any)
	if !ok {
		t.Fatalf("event has no params object: %v", ev)
	}
	return p
}

// coreResolve posts a verdict on sid's resolve URL, expects 202 and returns the outcome body.
func coreResolve(t *testing.T, c *testserver.Client, sid, eid string, verdict any) map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodPost, coreResolvePath(sid, eid), verdict)
	if r.Status != http.StatusAccepted {
		t.Fatalf("resolve %s via %s: %d %s", eid, sid, r.Status, r.Body)
	}
	out := r.JSON(t)
	if out["queued"] != false {
		t.Fatalf("resolve answer lacks queued:false: %s", r.Body)
	}
	return out
}

// coreMustResolve resolves and insists this verdict was the one that decided the prompt.
func coreMustResolve(t *testing.T, c *testserver.Client, sid, eid string, verdict any) {
	t.Helper()
	if out := coreResolve(t, c, sid, eid, verdict); out["outcome"] != "resolved" {
		t.Fatalf("resolve %s via %s: outcome %v, want resolved", eid, sid, out)
	}
}

// coreDecision waits for a parked PermissionRequest hook and returns its decision object.
func coreDecision(t *testing.T, p *testserver.Parked) map[string]any {
	t.Helper()
	r := p.Wait(t, coreWait)
	if r.Status != http.StatusOK {
		t.Fatalf("hook answered %d %s", r.Status, r.Body)
	}
	var ans struct {
		Out map[string]any `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(r.Body, &ans); err != nil || ans.Out == nil {
		t.Fatalf("hook answer is not a hook decision: %v %s", err, r.Body)
	}
	if ans.Out["hookEventName"] != "PermissionRequest" {
		t.Fatalf("hookEventName = %v", ans.Out["hookEventName"])
	}
	d, ok := ans.Out["decision"].(map[string]any)
	if !ok {
		t.Fatalf("hook answer has no decision: %s", r.Body)
	}
	return d
}

// coreWantBehavior waits for the hook and checks its decision's behavior.
func coreWantBehavior(t *testing.T, p *testserver.Parked, want string) map[string]any {
	t.Helper()
	d := coreDecision(t, p)
	if d["behavior"] != want {
		t.Fatalf("hook behavior = %v, want %s (decision %v)", d["behavior"], want, d)
	}
	return d
}

// coreGetElicitation reads a prompt's state through the API (200 expected).
func coreGetElicitation(t *testing.T, c *testserver.Client, sid, eid string) map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodGet, coreElicitationPath(sid, eid), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET elicitation %s: %d %s", eid, r.Status, r.Body)
	}
	return r.JSON(t)
}

// coreWantPending checks that the row is still pending: the database is the truth about
// whether a parked hook is still waiting for a verdict.
func coreWantPending(t *testing.T, c *testserver.Client, sid, eid string) {
	t.Helper()
	if got := coreGetElicitation(t, c, sid, eid); got["status"] != "pending" {
		t.Fatalf("elicitation %s is %v, want pending", eid, got)
	}
}

// coreWaitResolved waits on st for the resolved event of eid and checks its data is
// exactly {"type":"response.elicitation_resolved","elicitation_id":eid}.
func coreWaitResolved(t *testing.T, st *testserver.Stream, eid string) {
	t.Helper()
	deadline := time.Now().Add(coreWait)
	for time.Now().Before(deadline) {
		f := st.WaitFor(t, "response.elicitation_resolved", time.Until(deadline))
		var got map[string]any
		if err := json.Unmarshal([]byte(f.Data), &got); err != nil {
			t.Fatalf("resolved frame is not JSON: %s", f.Data)
		}
		if got["elicitation_id"] != eid {
			continue // another prompt's
		}
		want := map[string]any{"type": "response.elicitation_resolved", "elicitation_id": eid}
		if !jsonEqual(got, want) {
			t.Fatalf("resolved event = %s, want exactly %v", f.Data, want)
		}
		return
	}
	t.Fatalf("no resolved event for %s within %s", eid, coreWait)
}

// coreUntilSentinel posts an interrupt on sid (whose stream, or an ancestor's, is st) and
// returns every frame st delivered before the resulting session.interrupted frame. It
// proves that something did NOT happen without sleeping: anything published before the
// sentinel is in the returned slice.
func coreUntilSentinel(t *testing.T, c *testserver.Client, st *testserver.Stream, sid string) []testserver.Frame {
	t.Helper()
	r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/events", map[string]any{"type": "interrupt"})
	if r.Status != http.StatusAccepted {
		t.Fatalf("interrupt: %d %s", r.Status, r.Body)
	}
	var before []testserver.Frame
	for {
		f := st.Next(t, coreWait)
		if f.Event == "session.interrupted" {
			return before
		}
		before = append(before, f)
	}
}

// coreWantEnvelope checks an error answer: the status, and a body that is exactly the
// envelope {"error":{"code":code,"message":"…"}} with a non-empty message.
func coreWantEnvelope(t *testing.T, r *testserver.Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); len(ct) < 16 || ct[:16] != "application/json" {
		t.Fatalf("error Content-Type = %q, want application/json", ct)
	}
	var env map[string]map[string]any
	if err := json.Unmarshal(r.Body, &env); err != nil || len(env) != 1 || env["error"] == nil {
		t.Fatalf("body is not the error envelope: %s", r.Body)
	}
	e := env["error"]
	msg, _ := e["message"].(string)
	if len(e) != 2 || e["code"] != code || msg == "" {
		t.Fatalf("envelope = %s, want code %q and a message", r.Body, code)
	}
}

// coreUntil polls cond until it holds, failing after the deadline. It is for state the
// server exposes no event for (how many requests are parked in-process).
func coreUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(coreWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// coreAskUserQuestionBody is the seed's AskUserQuestion PermissionRequest body.
func coreAskUserQuestionBody() map[string]any {
	b := testserver.ClaudeBody("AskUserQuestion", map[string]any{
		"questions": []any{map[string]any{
			"question":    "Which database should the worker target?",
			"header":      "Database",
			"multiSelect": false,
			"options": []any{
				map[string]any{"label": "postgres", "description": "Primary store"},
				map[string]any{"label": "sqlite", "description": "Local dev"},
			},
		}},
	})
	b["session_id"] = "claude_sess_ask"
	return b
}

// coreHealthy checks that the server still answers /healthz with 200 {"status":"ok"}.
func coreHealthy(t *testing.T, c *testserver.Client) {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/healthz", nil)
	if r.Status != http.StatusOK || r.JSON(t)["status"] != "ok" {
		t.Fatalf("/healthz: %d %s", r.Status, r.Body)
	}
}
