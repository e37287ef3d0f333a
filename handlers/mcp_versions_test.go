package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// mcpClient speaks raw streamable HTTP to /mcp the way a client of one protocol
// revision does: the MCP-Protocol-Version header and, after initialize, the
// Mcp-Session-Id the server issued.
type mcpClient struct {
	url     string
	version string
	session string
}

// post sends one message and returns the HTTP response (the caller closes it).
func (m *mcpClient) post(ctx context.Context, t *testing.T, msg any) *http.Response {
	t.Helper()
	raw, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if m.version != "" {
		req.Header.Set("MCP-Protocol-Version", m.version)
	}
	if m.session != "" {
		req.Header.Set("Mcp-Session-Id", m.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	return resp
}

// call posts and decodes a plain JSON answer.
func (m *mcpClient) call(t *testing.T, msg any) map[string]any {
	t.Helper()
	resp := m.post(context.Background(), t, msg)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d (%s): %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("answer is not JSON: %s", raw)
	}
	return body
}

// initialize performs the handshake of an older revision with the given elicitation
// capability (nil: none declared) and keeps the Mcp-Session-Id.
func (m *mcpClient) initialize(t *testing.T, version string, elicitation map[string]any) {
	t.Helper()
	caps := map[string]any{}
	if elicitation != nil {
		caps["elicitation"] = elicitation
	}
	resp := m.post(context.Background(), t, map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
		"params": map[string]any{"protocolVersion": version, "capabilities": caps, "clientInfo": map[string]any{"name": "raw", "version": "1"}}})
	resp.Body.Close()
	m.session = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || m.session == "" {
		t.Fatalf("initialize: %d, Mcp-Session-Id %q", resp.StatusCode, m.session)
	}
	m.version = version
	if r := m.post(context.Background(), t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", r.StatusCode)
	} else {
		r.Body.Close()
	}
}

// sseEvents reads "data:" payloads of an SSE response, one per event, until EOF.
func sseEvents(body io.Reader) <-chan map[string]any {
	out := make(chan map[string]any, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					out <- m
				}
			}
		}
	}()
	return out
}

func nextEvent(t *testing.T, ch <-chan map[string]any, within time.Duration) map[string]any {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return m
	case <-time.After(within):
		t.Fatalf("no SSE event within %s", within)
	}
	return nil
}

// versionsFixture is a server with the ASK policy for deploy, a counting runner, and
// a stream on the session that sees every prompt.
func versionsFixture(t *testing.T, db testserver.DB, flags ...string) (*mrtrFixture, *mcpClient) {
	t.Helper()
	f := newMRTRFixture(t, db, flags...)
	return f, &mcpClient{url: f.srv.URL + "/v1/sessions/" + f.sid + "/mcp"}
}

// TestMCPOlderURLClient: a 2025-11-25 client that declared URL mode never sees
// input_required; it gets -32042 with the absolute approval link, and sending the same
// call again finds that prompt (no second one) until a person decides: accepted runs
// the tool once, declined is an isError result naming who and why.
func TestMCPOlderURLClient(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f, m := versionsFixture(t, db, "--public-url", "https://gatehouse.example")
		m.initialize(t, "2025-11-25", map[string]any{"form": map[string]any{}, "url": map[string]any{}})
		list := m.call(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
		if res := dig(t, list, "result").(map[string]any); res["resultType"] != nil || res["ttlMs"] != nil {
			t.Fatalf("an older client got 2026-07-28 result fields: %v", res)
		}
		args := map[string]any{"env": "prod"}
		first := m.call(t, rpcCall(2, "deploy", args, nil))
		code, _ := rpcError(t, first)
		if code != -32042 {
			t.Fatalf("want -32042, got %v", first)
		}
		el := dig(t, first, "error", "data").(map[string]any)["elicitations"].([]any)[0].(map[string]any)
		eid, _ := el["elicitationId"].(string)
		if el["mode"] != "url" || el["url"] != "https://gatehouse.example/approve/"+f.sid+"/"+eid || el["message"] != "ask_deploy: Deploys need a person" {
			t.Fatalf("elicitation = %v", el)
		}
		if ev := f.stream.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t); ev["elicitation_id"] != eid {
			t.Fatalf("published %v, -32042 names %s", ev["elicitation_id"], eid)
		}
		// The same call again, before anyone decided: the same prompt, handed out again.
		again := m.call(t, rpcCall(3, "deploy", args, nil))
		if code, _ := rpcError(t, again); code != -32042 || dig(t, again, "error", "data").(map[string]any)["elicitations"].([]any)[0].(map[string]any)["elicitationId"] != eid {
			t.Fatalf("retry while pending: %v", again)
		}
		f.srv.DecideOnPage(t, "", f.sid, eid, "accept", "")
		done := m.call(t, rpcCall(4, "deploy", args, nil))
		if got := mustJSON(dig(t, done, "result")); got != `{"content":[{"text":"ran deploy {\"env\":\"prod\"}","type":"text"}]}` {
			t.Fatalf("after approval: %s", got)
		}
		if n := f.runner.ToolRuns(); n != 1 {
			t.Fatalf("runner calls = %d, want 1", n)
		}

		// Declined: an isError result with who and why; the tool never runs.
		other := map[string]any{"env": "dev"}
		e2 := m.call(t, rpcCall(5, "deploy", other, nil))
		eid2 := dig(t, e2, "error", "data").(map[string]any)["elicitations"].([]any)[0].(map[string]any)["elicitationId"].(string)
		f.srv.DecideOnPage(t, "", f.sid, eid2, "decline", "not on a Friday")
		wantToolError(t, m.call(t, rpcCall(6, "deploy", other, nil)), "Declined by local in Gatehouse: not on a Friday")
		if n := f.runner.ToolRuns(); n != 1 {
			t.Fatalf("runner calls = %d after a decline, want 1", n)
		}
	})
}

// TestMCPHeldCall: an older client without URL mode (elicitation {} = form only) gets
// its tools/call held open as an SSE stream: progress notifications name the approval
// link while a person decides, then the tool's result. A client that hangs up and
// sends the call again re-attaches to the same prompt.
func TestMCPHeldCall(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f, m := versionsFixture(t, db)
		m.initialize(t, "2025-11-25", map[string]any{})
		args := map[string]any{"env": "prod"}
		withToken := map[string]any{"_meta": map[string]any{"progressToken": "p1"}}

		// The first attempt hangs up after the first progress note.
		ctx, hangUp := context.WithCancel(context.Background())
		resp := m.post(ctx, t, rpcCall(1, "deploy", args, withToken))
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("content type %q, want an SSE stream", ct)
		}
		note := nextEvent(t, sseEvents(resp.Body), 10*time.Second)
		if note["method"] != "notifications/progress" || dig(t, note, "params", "progressToken") != "p1" {
			t.Fatalf("first event = %v", note)
		}
		ev := f.stream.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
		eid := ev["elicitation_id"].(string)
		if msg, _ := dig(t, note, "params", "message").(string); !strings.Contains(msg, f.srv.URL+"/approve/"+f.sid+"/"+eid) {
			t.Fatalf("progress message %q does not name the absolute approval link", msg)
		}
		hangUp()
		resp.Body.Close()

		// Sent again: the same prompt (the progress names it), held until the verdict.
		resp = m.post(context.Background(), t, rpcCall(2, "deploy", args, withToken))
		defer resp.Body.Close()
		events := sseEvents(resp.Body)
		note = nextEvent(t, events, 10*time.Second)
		if msg, _ := dig(t, note, "params", "message").(string); !strings.Contains(msg, "/approve/"+f.sid+"/"+eid) {
			t.Fatalf("the retry got another prompt: %v", note)
		}
		f.srv.DecideOnPage(t, "", f.sid, eid, "accept", "")
		final := nextEvent(t, events, 10*time.Second)
		if got := mustJSON(final); got != `{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"ran deploy {\"env\":\"prod\"}","type":"text"}]}}` {
			t.Fatalf("answer = %s", got)
		}
		if n := f.runner.ToolRuns(); n != 1 {
			t.Fatalf("runner calls = %d, want 1", n)
		}

		// Without a progress token: SSE comments keep it alive; a decline ends it
		// with an isError result.
		resp2 := m.post(context.Background(), t, rpcCall(3, "deploy", map[string]any{"env": "dev"}, nil))
		defer resp2.Body.Close()
		ev2 := f.stream.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
		f.srv.DecideOnPage(t, "", f.sid, ev2["elicitation_id"].(string), "decline", "")
		wantToolError(t, nextEvent(t, sseEvents(resp2.Body), 10*time.Second), "Declined by local")
		if n := f.runner.ToolRuns(); n != 1 {
			t.Fatalf("runner calls = %d after a decline, want 1", n)
		}
	})
}

// TestMCPLatestClientResults: 2026-07-28 results carry resultType "complete" (and
// tools/list its cache fields); a client whose capabilities name no elicitation is
// never sent one (-32021); the same call sent again without requestState gets the
// same prompt, not a second one.
func TestMCPLatestClientResults(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f, m := versionsFixture(t, db)
		m.version = "2026-07-28"
		meta := func(elicitation map[string]any) map[string]any {
			caps := map[string]any{}
			if elicitation != nil {
				caps["elicitation"] = elicitation
			}
			return map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
				"io.modelcontextprotocol/clientCapabilities": caps}}
		}
		list := m.call(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": meta(nil)})
		if res := dig(t, list, "result").(map[string]any); res["resultType"] != "complete" || res["ttlMs"] != float64(0) || res["cacheScope"] != "private" {
			t.Fatalf("tools/list = %v", res)
		}
		echo := m.call(t, rpcCall(2, "echo", map[string]any{}, meta(nil)))
		if dig(t, echo, "result", "resultType") != "complete" {
			t.Fatalf("tools/call = %v", echo)
		}
		if code, _ := rpcError(t, m.call(t, rpcCall(3, "deploy", map[string]any{}, meta(nil)))); code != -32021 {
			t.Fatalf("a client without elicitation was asked anyway")
		}
		url := meta(map[string]any{"url": map[string]any{}})
		first := m.call(t, rpcCall(4, "deploy", map[string]any{"env": "prod"}, url))
		second := m.call(t, rpcCall(5, "deploy", map[string]any{"env": "prod"}, url))
		k1 := keysOf(dig(t, first, "result", "inputRequests"))
		k2 := keysOf(dig(t, second, "result", "inputRequests"))
		if len(k1) != 1 || k1[0] != k2[0] {
			t.Fatalf("a retry without requestState opened another prompt: %v vs %v", k1, k2)
		}
		if n := len(dig(t, f.c.Do(t, http.MethodGet, "/v1/sessions/"+f.sid, nil).JSON(t), "pending_elicitations").([]any)); n != 1 {
			t.Fatalf("pending prompts = %d, want 1", n)
		}
	})
}

// TestMCPApprovalTTL: an approval handed to a client that never comes back expires
// after --mcp-approval-ttl, with the resolved event, and a late retry is told so.
func TestMCPApprovalTTL(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f, _ := versionsFixture(t, db, "--mcp-approval-ttl", "1s")
		eid, _, state, _ := f.ask(t, 1, map[string]any{"env": "prod"}, nil)
		ev := f.stream.WaitFor(t, "response.elicitation_resolved", 15*time.Second).Map(t)
		if ev["elicitation_id"] != eid {
			t.Fatalf("resolved %v, want %s", ev, eid)
		}
		wantToolError(t, rpcPost(t, f.c, f.sid, rpcCall(2, "deploy", map[string]any{"env": "prod"}, map[string]any{"requestState": state})), "expired")
		if n := f.runner.ToolRuns(); n != 0 {
			t.Fatalf("runner calls = %d", n)
		}
	})
}

// TestMCPLinksAndSessionIDs: without --public-url the link uses the request's host,
// X-Forwarded-Host counts only from a trusted proxy, and an Mcp-Session-Id the server
// never issued is a 404 (the client initializes again).
func TestMCPLinksAndSessionIDs(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		for _, tc := range []struct {
			name, trusted, want string
		}{
			{"trusted proxy", "127.0.0.1/32", "https://approve.example"},
			{"untrusted peer", "10.0.0.0/8", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newMRTRFixture(t, db, "--trusted-proxies", tc.trusted)
				want := tc.want
				if want == "" {
					want = f.srv.URL
				}
				raw, _ := json.Marshal(rpcCall(1, "deploy", map[string]any{}, nil))
				req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/v1/sessions/"+f.sid+"/mcp", bytes.NewReader(raw))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Forwarded-Host", "approve.example")
				req.Header.Set("X-Forwarded-Proto", "https")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var body map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&body)
				for _, r := range dig(t, body, "result", "inputRequests").(map[string]any) {
					if u, _ := dig(t, r, "params", "url").(string); !strings.HasPrefix(u, want+"/approve/"+f.sid+"/") {
						t.Fatalf("url %q, want it under %s", u, want)
					}
				}
			})
		}
		_, m := versionsFixture(t, db)
		m.version, m.session = "2025-11-25", "ghc1.forged.AAAA"
		resp := m.post(context.Background(), t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("unknown Mcp-Session-Id: %d, want 404", resp.StatusCode)
		}
	})
}

func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
