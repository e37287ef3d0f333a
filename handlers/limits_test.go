package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// limitsPolicies ASKs about Bash (policy evaluations) and deploy (MCP calls); anything
// else is allowed at once.
const limitsPolicies = `policies:
  - name: ask_bash
    on: [tool_call]
    when: 'data.name == "Bash"'
    action: ASK
  - name: ask_deploy
    on: [tool_call]
    when: 'data.name == "deploy"'
    action: ASK
`

// wantTooManyParked requires r to be the 429 envelope of the parked-request cap: code
// too_many_requests, a message naming the cap and how many are parked.
func wantTooManyParked(t *testing.T, what string, r *testserver.Response, parked, max int) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("%s: %d %s, want 429", what, r.Status, r.Body)
	}
	e, _ := r.JSON(t)["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e["code"] != "too_many_requests" || !strings.Contains(msg, "too many parked requests") ||
		!strings.Contains(msg, fmt.Sprintf("%d of yours", parked)) || !strings.Contains(msg, fmt.Sprintf("at most %d per person", max)) {
		t.Fatalf("%s: envelope %s, want too_many_requests saying %d parked, at most %d", what, r.Body, parked, max)
	}
}

// postAtCap posts a request that must be answered at once (refused, or answered without
// a wait); one that parks instead fails the test after coreWait rather than hanging it.
func postAtCap(t *testing.T, c *testserver.Client, path string, body any) *testserver.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), coreWait)
	defer cancel()
	return c.DoCtx(ctx, t, http.MethodPost, path, body) // a deadline passed fails the test
}

// mcpHeldCall posts a tools/call as a client of a revision before multi round-trip
// results, which declared no URL elicitation: a call a person must approve is held
// open (the proxy's askHold). It returns the status and body of the answer.
func mcpHeldCall(t *testing.T, srv *testserver.Server, user, sid string, id int, tool string) (int, []byte) {
	t.Helper()
	raw, _ := json.Marshal(rpcCall(id, tool, map[string]any{}, nil))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/sessions/"+sid+"/mcp", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("X-Forwarded-Email", user)
	ctx, cancel := context.WithTimeout(context.Background(), coreWait)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("mcp call was not answered within %s (parked beyond the cap?): %v", coreWait, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestParkedPerPersonCap: with --max-parked-per-person 3, a person with three requests
// waiting for a verdict is refused a fourth — on the hook routes, a policy ASK and a
// held MCP call alike — with 429 too_many_requests naming the cap, and nothing is
// opened for it; what is answered at once (a policy ALLOW, a retry of a decided
// prompt) is still answered; another person still parks; and once one of the three is
// answered the first person parks again.
func TestParkedPerPersonCap(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner := echoRunner(t)
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--max-parked-per-person", "3",
			"--policy-file", policyFile(t, limitsPolicies), "--runner-url", runner.URL)
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		asid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		bsid := bob.CreateSession(t, bob.CreateAgent(t), "", "")
		ast := coreOpenStream(t, alice, asid)

		bash := func(i int) map[string]any {
			return testserver.ClaudeBody("Bash", map[string]any{"command": fmt.Sprintf("echo %d", i)})
		}
		// The first carries a re-attach id, as `gatehouse hook` sends, to retry it below.
		first := bash(0)
		first["_gatehouse_elicitation_id"] = ids.New(ids.ElicitationPrefix + "claude_")
		var parked []*testserver.Parked
		var eids []string
		for i := range 3 {
			body := bash(i)
			if i == 0 {
				body = first
			}
			p, ev := corePark(t, alice, ast, asid, body)
			parked, eids = append(parked, p), append(eids, ev["elicitation_id"].(string))
		}

		wantTooManyParked(t, "session hook", postAtCap(t, alice, coreHookPath(asid), bash(3)), 3, 3)
		wantTooManyParked(t, "zero-config hook", postAtCap(t, alice, "/v1/hooks/claude", bash(4)), 3, 3)
		evaluate := "/v1/sessions/" + asid + "/policies/evaluate"
		wantTooManyParked(t, "policy ASK", postAtCap(t, alice, evaluate, toolCallEvent("Bash", map[string]any{"command": "ls"})), 3, 3)
		status, body := mcpHeldCall(t, srv, "alice@example.com", asid, 9, "deploy")
		var rpc struct {
			ID    int `json:"id"`
			Error struct {
				Message string
				Data    map[string]any
			}
		}
		if err := json.Unmarshal(body, &rpc); err != nil || status != http.StatusTooManyRequests || rpc.ID != 9 ||
			rpc.Error.Data["code"] != "too_many_requests" || !strings.Contains(rpc.Error.Message, "too many parked requests") {
			t.Fatalf("held MCP call at the cap: %d %s, want 429 with a JSON-RPC error (data.code too_many_requests)", status, body)
		}
		if n := len(pendingOf(t, alice, asid)); n != 3 {
			t.Fatalf("%d prompts pending, want the 3 parked (nothing opened for the refused)", n)
		}

		// Answered at once, so not refused: a policy ALLOW.
		if r := postAtCap(t, alice, evaluate, toolCallEvent("Edit", nil)); r.Status != http.StatusOK || r.JSON(t)["result"] != "POLICY_ACTION_ALLOW" {
			t.Fatalf("policy ALLOW at the cap: %d %s", r.Status, r.Body)
		}

		// Another person is not held back by alice's count.
		bst := coreOpenStream(t, bob, bsid)
		bp, _ := corePark(t, bob, bst, bsid, bash(5))
		defer bp.Cancel()

		// One of alice's is answered: its slot is free, and she parks again.
		if r := postAtCap(t, alice, coreResolvePath(asid, eids[0]), map[string]any{"action": "accept"}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if r := parked[0].Wait(t, coreWait); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"allow"`) {
			t.Fatalf("answered park: %d %s", r.Status, r.Body)
		}
		again, _ := corePark(t, alice, ast, asid, bash(6))
		defer again.Cancel()
		wantTooManyParked(t, "at the cap again", postAtCap(t, alice, coreHookPath(asid), bash(7)), 3, 3)

		// At the cap, a retry of the decided prompt is answered at once with its verdict.
		if r := postAtCap(t, alice, coreHookPath(asid), first); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"allow"`) {
			t.Fatalf("retry of a decided prompt at the cap: %d %s, want its verdict", r.Status, r.Body)
		}

		for _, p := range parked[1:] {
			p.Cancel()
		}
	})
}

// TestUpstreamProcessesPerPersonCap: behind the real server, with the real stdio
// server-everything as the upstream and --max-upstream-processes-per-person 2, a person
// whose MCP calls run the server in two sessions is refused it in a third — tools/call
// and tools/list answer 429 with a JSON-RPC error (data.code too_many_requests) naming
// the cap — while another person still starts it; ending one of the MCP sessions
// (DELETE) frees the slot.
func TestUpstreamProcessesPerPersonCap(t *testing.T) {
	node := testnpm.Node(t)
	js := testnpm.NodeModule(t, "@modelcontextprotocol/server-everything/dist/index.js")
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		cfg := filepath.Join(t.TempDir(), "servers.yaml")
		yml := "servers:\n  everything:\n    command: " + node + "\n    args: [" + strconv.Quote(js) + ", stdio]\n    timeout: 60s\n"
		if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--mcp-servers", cfg, "--max-upstream-processes-per-person", "2")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		agent := alice.CreateAgent(t)
		var sids []string
		for range 3 {
			sids = append(sids, alice.CreateSession(t, agent, "", ""))
		}
		sum := func(id int) map[string]any {
			return rpcCall(id, "everything__get-sum", map[string]any{"a": 1, "b": 2}, nil)
		}
		ran := func(c *testserver.Client, sid string, id int) {
			t.Helper()
			if body := rpcPost(t, c, sid, sum(id)); !strings.Contains(mustJSON(dig(t, body, "result", "content")), "3") {
				t.Fatalf("get-sum in %s: %v", sid, body)
			}
		}
		refused := func(what string, msg map[string]any) {
			t.Helper()
			r := alice.Do(t, http.MethodPost, "/v1/sessions/"+sids[2]+"/mcp", msg)
			var rpc struct {
				Error struct {
					Code    int
					Message string
					Data    map[string]any
				}
			}
			if err := json.Unmarshal(r.Body, &rpc); err != nil || r.Status != http.StatusTooManyRequests ||
				rpc.Error.Data["code"] != "too_many_requests" ||
				!strings.Contains(rpc.Error.Message, "too many MCP server processes: 2 of yours are running here (at most 2 per person)") {
				t.Fatalf("%s in a third session: %d %s, want 429 with a JSON-RPC error naming the cap", what, r.Status, r.Body)
			}
		}
		ran(alice, sids[0], 1)
		ran(alice, sids[1], 2)
		refused("tools/call", sum(3))
		refused("tools/list", map[string]any{"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
		ran(alice, sids[0], 5) // a running session goes on

		bsid := bob.CreateSession(t, bob.CreateAgent(t), "", "")
		ran(bob, bsid, 6)

		if r := alice.Do(t, http.MethodDelete, "/v1/sessions/"+sids[0]+"/mcp", nil); r.Status != http.StatusNoContent {
			t.Fatalf("end the MCP session: %d %s", r.Status, r.Body)
		}
		ran(alice, sids[2], 7)
	})
}
