package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

const mcpPolicies = `policies:
  - name: never_nuke
    on: ["tool_call:nuke"]
    action: DENY
    reason: nobody nukes
  - name: ask_deploy
    on: ["tool_call:deploy"]
    action: ASK
    reason: Deploys need a person
`

// testSecret is the --session-secret of the MRTR tests, so a test can sign a state
// the way the server would (to prove the server checks more than the signature).
var testSecret = strings.Repeat("m", 32)

type mrtrFixture struct {
	srv    *testserver.Server
	c      *testserver.Client
	runner *fakeRunner
	sid    string
	other  string // another session of the same user
	stream *testserver.Stream
}

func newMRTRFixture(t *testing.T, db testserver.DB, flags ...string) *mrtrFixture {
	t.Helper()
	runner := echoRunner(t)
	// A retry of a pending approval waits --mcp-retry-wait for the verdict; keep it short.
	args := append([]string{"--runner-url", runner.URL, "--policy-file", policyFile(t, mcpPolicies), "--session-secret", testSecret,
		"--mcp-retry-wait", "200ms"}, flags...)
	srv := testserver.Start(t, db.NewURL(t), args...)
	c := srv.Client("")
	agent := c.CreateAgent(t)
	f := &mrtrFixture{srv: srv, c: c, runner: runner, sid: c.CreateSession(t, agent, "", ""), other: c.CreateSession(t, agent, "", "")}
	f.stream = c.OpenStream(t, "/v1/sessions/"+f.sid+"/stream")
	f.stream.WaitHeartbeat(t)
	return f
}

// ask calls deploy and returns the input request id, its params, the requestState and
// the published prompt params.
func (f *mrtrFixture) ask(t *testing.T, id any, args map[string]any, extra map[string]any) (string, map[string]any, string, map[string]any) {
	t.Helper()
	body := rpcPost(t, f.c, f.sid, rpcCall(id, "deploy", args, extra))
	res, ok := body["result"].(map[string]any)
	if !ok || res["resultType"] != "input_required" {
		t.Fatalf("want an input_required result, got %v", body)
	}
	reqs := res["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("inputRequests = %v", reqs)
	}
	var eid string
	for k := range reqs {
		eid = k
	}
	if dig(t, reqs[eid], "method") != "elicitation/create" {
		t.Fatalf("input request = %v", reqs[eid])
	}
	state, _ := res["requestState"].(string)
	ev := f.stream.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
	if ev["elicitation_id"] != eid {
		t.Fatalf("published %v, MRTR names %s", ev["elicitation_id"], eid)
	}
	return eid, dig(t, reqs[eid], "params").(map[string]any), state, ev["params"].(map[string]any)
}

func (f *mrtrFixture) resolve(t *testing.T, eid, action string) {
	t.Helper()
	if r := f.c.Do(t, http.MethodPost, "/v1/sessions/"+f.sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": action}); r.Status != 202 {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
}

func retryExtra(eid, state, action string) map[string]any {
	return map[string]any{"requestState": state, "inputResponses": map[string]any{eid: map[string]any{"action": action, "content": map[string]any{"approved": true}}}}
}

// wantToolError wants a tool result with isError whose text contains contains: how a
// person's "no" reaches the client (its model reads it), unlike protocol errors.
func wantToolError(t *testing.T, body map[string]any, contains string) {
	t.Helper()
	res, ok := body["result"].(map[string]any)
	if !ok || res["isError"] != true || !strings.Contains(mustJSON(res["content"]), contains) {
		t.Fatalf("want an isError result containing %q, got %v", contains, body)
	}
}

func wantRPCError(t *testing.T, body map[string]any, contains string) {
	t.Helper()
	code, msg := rpcError(t, body)
	if code != -32000 || !strings.Contains(msg, contains) {
		t.Fatalf("want JSON-RPC error -32000 containing %q, got %v", contains, body)
	}
}

// TestMCPPolicyDenyAndAskRoundTrip: DENY is a JSON-RPC error and runs nothing; ASK
// answers the §6.5 MRTR result at once (URL mode, absolute link), a retry while the
// prompt is pending waits --mcp-retry-wait and is handed the same prompt again, and
// the retry runs the tool only after a person accepted, for exactly the approved call.
func TestMCPPolicyDenyAndAskRoundTrip(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f := newMRTRFixture(t, db)
		body := rpcPost(t, f.c, f.sid, rpcCall(1, "nuke", map[string]any{}, nil))
		if code, msg := rpcError(t, body); code != -32000 || msg != "Denied by policy: nobody nukes" {
			t.Fatalf("deny: %v", body)
		}

		args := map[string]any{"env": "prod", "replicas": 3}
		eid, params, state, published := f.ask(t, 11, args, nil)
		want := `{"message":"ask_deploy: Deploys need a person","mode":"url","url":"` + f.srv.URL + `/approve/` + f.sid + `/` + eid + `"}`
		if got := mustJSON(params); got != want {
			t.Fatalf("MRTR params\n got %s\nwant %s", got, want)
		}
		if published["mode"] != "url" || published["url"] != "/approve/"+f.sid+"/"+eid || published["phase"] != "tool_call" ||
			published["policy_name"] != "ask_deploy" || published["message"] != "ask_deploy: Deploys need a person" {
			t.Fatalf("published prompt = %v", published)
		}
		if state == "" {
			t.Fatal("no requestState")
		}

		// The client claims acceptance before anyone decided: after the bounded wait it
		// is handed the same prompt again, and nothing runs.
		again := rpcPost(t, f.c, f.sid, rpcCall(12, "deploy", args, retryExtra(eid, state, "accept")))
		if res, _ := again["result"].(map[string]any); res == nil || res["resultType"] != "input_required" || dig(t, res["inputRequests"], eid) == nil {
			t.Fatalf("retry while pending: %v", again)
		}
		if n := len(f.runner.Calls()); n != 0 {
			t.Fatalf("the runner ran %d times before any approval", n)
		}

		f.resolve(t, eid, "accept")
		// The approval covers these arguments only, and this session only.
		wantRPCError(t, rpcPost(t, f.c, f.sid, rpcCall(13, "deploy", map[string]any{"env": "dev", "replicas": 3}, retryExtra(eid, state, "accept"))), "different tool call")
		wantRPCError(t, rpcPost(t, f.c, f.other, rpcCall(14, "deploy", args, retryExtra(eid, state, "accept"))), "another session")
		if n := len(f.runner.Calls()); n != 0 {
			t.Fatalf("the runner ran %d times for refused retries", n)
		}
		// Same arguments, keys in another order: runs.
		body = rpcPost(t, f.c, f.sid, []byte(`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"deploy","arguments":{"replicas":3,"env":"prod"},"requestState":"`+state+`","inputResponses":{"`+eid+`":{"action":"accept","content":{"approved":true}}}}}`))
		if got := mustJSON(body); got != `{"id":15,"jsonrpc":"2.0","result":{"content":[{"text":"ran deploy {\"env\":\"prod\",\"replicas\":3}","type":"text"}]}}` {
			t.Fatalf("approved retry: %s", got)
		}
		if n := len(f.runner.Calls()); n != 1 {
			t.Fatalf("runner calls = %d, want 1", n)
		}
		// The approval is spent: replaying the same retry, byte for byte, runs nothing.
		wantRPCError(t, rpcPost(t, f.c, f.sid, rpcCall(16, "deploy", args, retryExtra(eid, state, "accept"))), "already used")
		if n := len(f.runner.Calls()); n != 1 {
			t.Fatalf("a replayed requestState ran the tool again (runner calls = %d)", n)
		}
	})
}

// TestMCPRequestStateCannotBeForged: states we did not sign, states for prompts that
// are not accepted policy approvals of this session, and client-side declines never
// run the tool.
func TestMCPRequestStateCannotBeForged(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f := newMRTRFixture(t, db)
		args := map[string]any{"env": "prod"}
		eid, _, state, _ := f.ask(t, 1, args, nil)

		tampered := []byte(state)
		tampered[len("gh1.")+3] ^= 1
		otherKey := mcp.NewStateSigner(strings.Repeat("x", 32)).Sign(mcp.State{SessionID: f.sid, ElicitationID: eid, Tool: "deploy",
			ArgsHash: mcp.ArgumentsHash(json.RawMessage(`{"env":"prod"}`)), Expires: time.Now().Add(time.Hour).Unix()})
		for name, forged := range map[string]string{
			"seed-style plain state":   "mrtr_state_1",
			"unsigned json state":      `{"elicitation_id":"` + eid + `","session_id":"` + f.sid + `"}`,
			"tampered payload":         string(tampered),
			"signed with another key":  otherKey,
			"signature from elsewhere": state[:strings.LastIndexByte(state, '.')] + ".AAAA",
		} {
			t.Run(name, func(t *testing.T) {
				wantRPCError(t, rpcPost(t, f.c, f.sid, rpcCall(2, "deploy", args, retryExtra(eid, forged, "accept"))), "requestState rejected")
			})
		}

		// A person declines: the retry gets an isError result saying who declined.
		f.resolve(t, eid, "decline")
		wantToolError(t, rpcPost(t, f.c, f.sid, rpcCall(3, "deploy", args, retryExtra(eid, state, "accept"))), "Declined by local in Gatehouse")

		// A person cancels: no approval. (Other arguments: the same call just declined
		// would be answered with that decline instead of a new prompt.)
		args2 := map[string]any{"env": "staging"}
		eid2, _, state2, _ := f.ask(t, 4, args2, nil)
		f.resolve(t, eid2, "cancel")
		wantToolError(t, rpcPost(t, f.c, f.sid, rpcCall(5, "deploy", args2, retryExtra(eid2, state2, "accept"))), "was cancelled")

		// A person accepts but the client says it declined: the client's no stands.
		args3 := map[string]any{"env": "dev"}
		eid3, _, state3, _ := f.ask(t, 6, args3, nil)
		f.resolve(t, eid3, "accept")
		wantToolError(t, rpcPost(t, f.c, f.sid, rpcCall(7, "deploy", args3, retryExtra(eid3, state3, "decline"))), "Declined at the MCP client")

		// A correctly signed state naming a prompt that is not a policy approval (an
		// accepted Claude hook prompt of the same session) runs nothing.
		parked, hookEID, _ := f.c.ParkClaude(t, f.sid, f.sid, "Bash", map[string]any{"command": "ls"})
		f.resolve(t, hookEID, "accept")
		parked.Wait(t, 10*time.Second)
		signed := mcp.NewStateSigner(testSecret).Sign(mcp.State{SessionID: f.sid, ElicitationID: hookEID, Tool: "deploy",
			ArgsHash: mcp.ArgumentsHash(json.RawMessage(`{"env":"prod"}`)), Expires: time.Now().Add(time.Hour).Unix()})
		wantRPCError(t, rpcPost(t, f.c, f.sid, rpcCall(8, "deploy", args, retryExtra(hookEID, signed, "accept"))), "names no approval")

		if n := len(f.runner.Calls()); n != 0 {
			t.Fatalf("the runner ran %d times", n)
		}
		// And the legitimate path still works for the accepted prompt.
		body := rpcPost(t, f.c, f.sid, rpcCall(9, "deploy", args3, map[string]any{"requestState": state3}))
		if _, isErr := body["error"]; isErr || len(f.runner.Calls()) != 1 {
			t.Fatalf("accepted retry: %v", body)
		}
	})
}

// TestMCPAskFormModes: --elicitation-mode form gives form mode with no url; in URL mode
// a 2026-07-28 client whose capabilities lack URL elicitation gets form mode too,
// while one that declares it keeps URL mode.
func TestMCPAskFormModes(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f := newMRTRFixture(t, db, "--elicitation-mode", "form")
		_, params, _, published := f.ask(t, 1, map[string]any{}, nil)
		if _, has := params["url"]; has || params["mode"] != "form" {
			t.Fatalf("form mode MRTR params = %v", params)
		}
		if _, has := published["url"]; has || published["mode"] != "form" {
			t.Fatalf("form mode prompt = %v", published)
		}

		g := newMRTRFixture(t, db)
		formOnly := map[string]any{"_meta": map[string]any{mcp.MetaClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}}
		_, params, _, published = g.ask(t, 2, map[string]any{"n": 2}, formOnly)
		if _, has := params["url"]; has || params["mode"] != "form" || published["mode"] != "form" {
			t.Fatalf("form-only client: %v / %v", params, published)
		}
		withURL := map[string]any{"_meta": map[string]any{mcp.MetaClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}}}}
		eid, params, _, _ := g.ask(t, 3, map[string]any{"n": 3}, withURL)
		if params["mode"] != "url" || params["url"] != g.srv.URL+"/approve/"+g.sid+"/"+eid {
			t.Fatalf("url-capable client: %v", params)
		}
	})
}
