package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// rpcPost posts one JSON-RPC message to the session's /mcp and returns the decoded
// 200 body.
func rpcPost(t *testing.T, c *testserver.Client, sid string, msg any) map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/mcp", msg)
	if r.Status != http.StatusOK {
		t.Fatalf("mcp: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)
}

// rpcErrorCode returns the JSON-RPC error code and message of a response (0 when it
// is a result).
func rpcError(t *testing.T, body map[string]any) (int, string) {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok {
		return 0, ""
	}
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return int(code), msg
}

// TestMCPNeedsRunnerAndEditAccess: unknown session 404, no runner 503 with the
// envelope, reader 403, stranger 404, editor served.
func TestMCPNeedsRunnerAndEditAccess(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		url := db.NewURL(t)
		srv := testserver.Start(t, url, "--auth", "header")
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		ping := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"}
		r := alice.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/mcp", ping)
		if r.Status != http.StatusServiceUnavailable || dig(t, r.JSON(t), "error", "code") != "runner_unavailable" {
			t.Fatalf("no runner: %d %s", r.Status, r.Body)
		}
		if r := alice.Do(t, http.MethodPost, "/v1/sessions/conv_does_not_exist/mcp", ping); r.Status != 404 {
			t.Fatalf("unknown session: %d %s", r.Status, r.Body)
		}
		srv.Stop()

		srv = testserver.Start(t, url, "--auth", "header", "--runner-url", echoRunner(t).URL)
		alice, bob, carol, eve := srv.Client("alice@example.com"), srv.Client("bob@example.com"), srv.Client("carol@example.com"), srv.Client("eve@example.com")
		for user, level := range map[string]string{"bob@example.com": "read", "carol@example.com": "edit"} {
			if r := alice.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": user, "level": level}); r.Status >= 300 {
				t.Fatalf("grant: %d %s", r.Status, r.Body)
			}
		}
		for _, tc := range []struct {
			c      *testserver.Client
			status int
		}{{alice, 200}, {carol, 200}, {bob, 403}, {eve, 404}} {
			if r := tc.c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/mcp", ping); r.Status != tc.status {
				t.Errorf("%s: %d %s, want %d", tc.c.User, r.Status, r.Body, tc.status)
			}
		}
	})
}

// TestMCPProtocolErrors: JSON-RPC errors travel in 200 bodies with the right codes;
// notifications get 202 and no body; GET and DELETE are 405.
func TestMCPProtocolErrors(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner := echoRunner(t)
		srv := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL)
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		cases := []struct {
			name string
			body string
			code int
			id   any
		}{
			{"parse error", `{"jsonrpc":"2.0","id":1,`, -32700, nil},
			{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, nil},
			{"no jsonrpc", `{"id":2,"method":"ping"}`, -32600, float64(2)},
			{"no method", `{"jsonrpc":"2.0","id":"x"}`, -32600, "x"},
			{"unknown method", `{"jsonrpc":"2.0","id":3,"method":"resources/list"}`, -32601, float64(3)},
			{"tools/call without name", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}`, -32602, float64(4)},
			{"tools/call arguments not an object", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":"x"}}`, -32602, float64(5)},
		}
		for _, tc := range cases {
			body := rpcPost(t, c, sid, []byte(tc.body))
			if code, _ := rpcError(t, body); code != tc.code || body["id"] != tc.id || body["jsonrpc"] != "2.0" {
				t.Errorf("%s: %v, want code %d id %v", tc.name, body, tc.code, tc.id)
			}
		}
		r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/mcp", map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
		if r.Status != http.StatusAccepted || len(r.Body) != 0 {
			t.Fatalf("notification: %d %q", r.Status, r.Body)
		}
		if r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/mcp", nil); r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
			t.Errorf("GET: %d %s", r.Status, r.Body)
		}
		if r := c.Do(t, http.MethodDelete, "/v1/sessions/"+sid+"/mcp", nil); r.Status != http.StatusNoContent {
			t.Errorf("DELETE: %d %s", r.Status, r.Body)
		}
		resp, err := c.SendRaw(context.Background(), http.MethodPost, "/v1/sessions/"+sid+"/mcp", "text/plain", []byte("{}"))
		if err != nil || resp.Status != http.StatusUnsupportedMediaType {
			t.Fatalf("text/plain: %v %+v", err, resp)
		}
		if n := len(runner.Calls()); n != 0 {
			t.Fatalf("malformed calls reached the runner %d times", n)
		}
	})
}

// TestMCPHandshakeAndToolsList: initialize echoes a supported version,
// server/discover names 2026-07-28, tools/list is the runner's.
func TestMCPHandshakeAndToolsList(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner := echoRunner(t)
		srv := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL)
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")

		init := rpcPost(t, c, sid, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
			"params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
		if dig(t, init, "result", "protocolVersion") != "2025-06-18" || dig(t, init, "result", "capabilities", "tools") == nil ||
			dig(t, init, "result", "serverInfo", "name") != "gatehouse" {
			t.Fatalf("initialize: %v", init)
		}
		disc := rpcPost(t, c, sid, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "server/discover"})
		if v := dig(t, disc, "result", "supportedVersions").([]any); v[0] != "2026-07-28" {
			t.Fatalf("discover: %v", disc)
		}
		list := rpcPost(t, c, sid, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
		tools := dig(t, list, "result", "tools").([]any)
		if len(tools) != 1 || dig(t, tools[0], "name") != "echo" {
			t.Fatalf("tools/list: %v", list)
		}
		if calls := runner.Calls(); len(calls) != 1 || mustJSON(calls[0]) != `{"method":"tools/list","params":{}}` {
			t.Fatalf("runner calls: %v", calls)
		}
		call := rpcPost(t, c, sid, rpcCall("c-1", "echo", map[string]any{"text": "hi"}, nil))
		if got := mustJSON(call); got != `{"id":"c-1","jsonrpc":"2.0","result":{"content":[{"text":"ran echo {\"text\":\"hi\"}","type":"text"}]}}` {
			t.Fatalf("tools/call: %s", got)
		}
	})
}

// TestMCPRunnerFailures: a runner error or a broken runner is a JSON-RPC error, not
// a 5xx.
func TestMCPRunnerFailures(t *testing.T) {
	srvRunner := newFakeRunner(t, func(n int, _ map[string]any) any {
		if n == 1 {
			return map[string]any{"error": map[string]any{"code": -1, "message": "tool crashed"}}
		}
		return map[string]any{"result": map[string]any{"nothing": true}}
	})
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--runner-url", srvRunner.URL)
	c := srv.Client("")
	sid := c.CreateSession(t, c.CreateAgent(t), "", "")
	if code, msg := rpcError(t, rpcPost(t, c, sid, rpcCall(1, "echo", nil, nil))); code != -32000 || msg != "tool crashed" {
		t.Fatalf("runner error: %d %q", code, msg)
	}
	if code, _ := rpcError(t, rpcPost(t, c, sid, rpcCall(2, "echo", nil, nil))); code != -32000 {
		t.Fatalf("unexpected runner answer: %d", code)
	}
	srvRunner.Close() // now unreachable
	if code, msg := rpcError(t, rpcPost(t, c, sid, rpcCall(3, "echo", nil, nil))); code != -32000 || !strings.Contains(msg, "runner") {
		t.Fatalf("unreachable runner: %d %q", code, msg)
	}
}

// TestMCPInputRequiredEdgeCases: no answer within --mcp-input-timeout reaches the
// runner as a decline; a verdict's content is passed on; a second input_required is
// an error and the runner is not called a third time.
func TestMCPInputRequiredEdgeCases(t *testing.T) {
	inputRequired := map[string]any{"result": map[string]any{"input_required": map[string]any{
		"requestState": "S", "inputRequests": map[string]any{
			"k1": map[string]any{"params": map[string]any{"message": "name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}},
			"k2": map[string]any{"params": map[string]any{"message": "sure?"}},
		}}}}
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner := newFakeRunner(t, func(n int, body map[string]any) any {
			if n%2 == 1 {
				return inputRequired
			}
			if strings.Contains(mustJSON(body), `"twice"`) {
				return inputRequired
			}
			return map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}}
		})
		srv := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL, "--mcp-input-timeout", "300ms")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")

		// Nobody answers: both inputs time out and are declined.
		body := rpcPost(t, c, sid, rpcCall(1, "tool", map[string]any{}, nil))
		if mustJSON(dig(t, body, "result", "content")) != `[{"text":"done","type":"text"}]` {
			t.Fatalf("after timeout: %v", body)
		}
		if got := mustJSON(dig(t, runner.Calls()[1], "params", "inputResponses")); got != `{"k1":{"action":"decline"},"k2":{"action":"decline"}}` {
			t.Fatalf("timed-out inputResponses = %s", got)
		}

		// Accept k1 with content, decline k2 — on a server whose input timeout cannot
		// run out before the test has answered, however loaded the machine is.
		quickC, quickSID := c, sid
		patient := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL, "--mcp-input-timeout", "1m")
		c = patient.Client("")
		sid = c.CreateSession(t, c.CreateAgent(t), "", "")
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		call := c.ParkAsync("/v1/sessions/"+sid+"/mcp", rpcCall(2, "tool", map[string]any{}, nil))
		byKey := map[string]string{}
		for i := 0; i < 2; i++ {
			ev := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
			byKey[dig(t, ev, "params", "mcp_input_key").(string)] = ev["elicitation_id"].(string)
		}
		for key, verdict := range map[string]map[string]any{
			"k1": {"action": "accept", "content": map[string]any{"name": "Ada"}}, "k2": {"action": "decline"},
		} {
			if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+byKey[key]+"/resolve", verdict); r.Status != 202 {
				t.Fatalf("resolve %s: %d %s", key, r.Status, r.Body)
			}
		}
		if ans := call.Wait(t, 10*time.Second); ans.Status != 200 || dig(t, ans.JSON(t), "error") != nil {
			t.Fatalf("answered: %d %s", ans.Status, ans.Body)
		}
		if got := mustJSON(dig(t, runner.Calls()[3], "params", "inputResponses")); got != `{"k1":{"action":"accept","content":{"name":"Ada"}},"k2":{"action":"decline"}}` {
			t.Fatalf("inputResponses = %s", got)
		}

		// The MCP server asks twice (nobody answers; the short timeout declines): an error
		// after exactly two executes.
		before := len(runner.Calls())
		body = rpcPost(t, quickC, quickSID, rpcCall(3, "tool", map[string]any{"mode": "twice"}, nil))
		if code, msg := rpcError(t, body); code != -32000 || !strings.Contains(msg, "second time") {
			t.Fatalf("second input_required: %v", body)
		}
		if n := len(runner.Calls()) - before; n != 2 {
			t.Fatalf("runner called %d times for one call, want 2", n)
		}
	})
}

// TestMCPEventVerdictForwardedToRunner: a verdict on a runner-owned prompt (an
// mcp_elicitation control event) is posted to the runner's /events as an approval.
func TestMCPEventVerdictForwardedToRunner(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner := echoRunner(t)
		srv := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL)
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/events", map[string]any{"type": "mcp_elicitation",
			"data": map[string]any{"message": "MCP server asks: proceed with deletion?"}})
		if r.Status != 202 {
			t.Fatalf("mcp_elicitation: %d %s", r.Status, r.Body)
		}
		eid := r.JSON(t)["elicitation_id"].(string)
		if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve",
			map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}); r.Status != 202 {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		ev := runner.WaitEvent(t, 10*time.Second)
		if ev["_path"] != "/v1/sessions/"+sid+"/events" || ev["type"] != "approval" ||
			mustJSON(ev["data"]) != `{"action":"accept","content":{"confirm":true},"elicitation_id":"`+eid+`"}` {
			t.Fatalf("forwarded event = %v", ev)
		}
		// Prompts Gatehouse itself waits on (a Claude hook) are not the runner's business.
		parked, heid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})
		c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+heid+"/resolve", map[string]any{"action": "accept"})
		parked.Wait(t, 10*time.Second)
		select {
		case ev := <-runner.events:
			t.Fatalf("a hook verdict was forwarded: %v", ev)
		default:
		}
	})
}
