package handlers_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/app"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

const evaluatePolicies = `policies:
  - name: deny_rm
    on: ["tool_call:Bash"]
    when: 'data.arguments.command.startsWith("rm ")'
    action: DENY
    reason: no deleting
  - name: admin__ask_bash
    on: [tool_call]
    when: 'data.name == "Bash"'
    action: ASK
    reason: Approve child tool call
  - name: ask_results
    on: [tool_result]
    action: ASK
  - name: broken
    on: ["tool_call:Broken"]
    when: 'data.arguments.missing == 1'
    action: ASK
  - name: no_admin_impersonation
    when: 'context.actor.run_as == "admin@example.com"'
    action: DENY
    reason: admin is special
`

// TestPolicyEvaluateValidation: malformed bodies are 400 (415 for non-JSON), an
// unknown session is 404, and nothing answers 5xx.
func TestPolicyEvaluateValidation(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--policy-file", policyFile(t, evaluatePolicies))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		path := "/v1/sessions/" + sid + "/policies/evaluate"
		ev := func(typ string, data any, extra ...string) string {
			s := `{"event":{"type":"` + typ + `","target":"","data":` + mustJSON(data)
			for _, e := range extra {
				s += "," + e
			}
			return s + "}}"
		}
		cases := []struct {
			name   string
			path   string
			body   string
			status int
		}{
			{"not json", path, `{"event":`, 400},
			{"array body", path, `[1]`, 400},
			{"no event", path, `{}`, 400},
			{"event not an object", path, `{"event":"PHASE_TOOL_CALL"}`, 400},
			{"type without PHASE_ prefix", path, ev("TOOL_CALL", map[string]any{"name": "Bash", "arguments": map[string]any{}}), 400},
			{"unknown phase", path, ev("PHASE_TOOL", map[string]any{}), 400},
			{"lower-case phase", path, ev("phase_tool_call", map[string]any{"name": "Bash"}), 400},
			{"missing data", path, `{"event":{"type":"PHASE_LLM_REQUEST"}}`, 400},
			{"data not an object", path, ev("PHASE_LLM_REQUEST", []any{1}), 400},
			{"tool call without name", path, ev("PHASE_TOOL_CALL", map[string]any{"arguments": map[string]any{}}), 400},
			{"tool call with empty name", path, ev("PHASE_TOOL_CALL", map[string]any{"name": " ", "arguments": map[string]any{}}), 400},
			{"tool call name not a string", path, ev("PHASE_TOOL_CALL", map[string]any{"name": 3}), 400},
			{"arguments not an object", path, ev("PHASE_TOOL_CALL", map[string]any{"name": "Bash", "arguments": "ls"}), 400},
			{"arguments null", path, ev("PHASE_TOOL_CALL", map[string]any{"name": "Bash", "arguments": nil}), 400},
			{"context not an object", path, ev("PHASE_LLM_REQUEST", map[string]any{}, `"context":[1]`), 400},
			{"unknown session", "/v1/sessions/conv_does_not_exist/policies/evaluate", ev("PHASE_LLM_REQUEST", map[string]any{}), 404},
			{"malformed session id", "/v1/sessions/../policies/evaluate", ev("PHASE_LLM_REQUEST", map[string]any{}), 404},
			{"valid llm request", path, ev("PHASE_LLM_REQUEST", map[string]any{"model": "m"}), 200},
			{"valid tool call without arguments", path, ev("PHASE_TOOL_CALL", map[string]any{"name": "Edit"}), 200},
		}
		for _, tc := range cases {
			r := c.Do(t, http.MethodPost, tc.path, []byte(tc.body))
			if r.Status != tc.status {
				t.Errorf("%s: status %d, want %d: %s", tc.name, r.Status, tc.status, r.Body)
				continue
			}
			if tc.status >= 400 && tc.status != 404 {
				if code := dig(t, r.JSON(t), "error", "code"); code != "invalid_input" {
					t.Errorf("%s: error code %v", tc.name, code)
				}
			}
		}
		resp, err := c.SendRaw(context.Background(), http.MethodPost, path, "text/plain", []byte("hello"))
		if err != nil || resp.Status != http.StatusUnsupportedMediaType {
			t.Fatalf("text/plain: %v %+v", err, resp)
		}
	})
}

// TestPolicyEvaluateAnswers: DENY, ALLOW and fail-closed answers over HTTP, and the
// actor in the event is the caller, not what the body claims.
func TestPolicyEvaluateAnswers(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--policy-file", policyFile(t, evaluatePolicies))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		path := "/v1/sessions/" + sid + "/policies/evaluate"
		cases := []struct {
			name string
			body map[string]any
			want string
		}{
			{"deny short-circuits before the ask", toolCallEvent("Bash", map[string]any{"command": "rm -rf /"}),
				`{"reason":"no deleting","result":"POLICY_ACTION_DENY"}`},
			{"nothing matches", toolCallEvent("Edit", map[string]any{"file": "a.go"}), `{"result":"POLICY_ACTION_ALLOW"}`},
			{"evaluation error fails closed", toolCallEvent("Broken", nil),
				`{"reason":"policy 'broken' failed: no such key: missing","result":"POLICY_ACTION_DENY"}`},
			{"a claimed actor is overwritten by the caller", map[string]any{"event": map[string]any{"type": "PHASE_LLM_REQUEST",
				"data": map[string]any{}, "context": map[string]any{"actor": map[string]any{"run_as": "admin@example.com"}}}},
				`{"result":"POLICY_ACTION_ALLOW"}`},
			{"ask on a tool result is answered, not parked", map[string]any{"event": map[string]any{"type": "PHASE_TOOL_RESULT",
				"data": map[string]any{"name": "Bash", "output": "x"}}}, `{"reason":"ask_results: approval required","result":"POLICY_ACTION_ASK"}`},
		}
		for _, tc := range cases {
			r := c.Do(t, http.MethodPost, path, tc.body)
			if r.Status != http.StatusOK || mustJSON(r.JSON(t)) != tc.want {
				t.Errorf("%s: %d %s, want %s", tc.name, r.Status, r.Body, tc.want)
			}
		}
		if n := len(pendingOf(t, c, sid)); n != 0 {
			t.Fatalf("%d prompts parked, want none", n)
		}
	})
}

// parkPolicyASK posts the Bash tool call to evaluate in the background and returns it
// with the request event seen on the session's stream.
func parkPolicyASK(t *testing.T, c *testserver.Client, sid string) (*testserver.Parked, map[string]any) {
	t.Helper()
	st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	defer st.Close()
	st.WaitHeartbeat(t)
	p := c.ParkAsync("/v1/sessions/"+sid+"/policies/evaluate", toolCallEvent("Bash", map[string]any{"command": "date"}))
	return p, st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
}

// TestPolicyEvaluateVerdicts: decline → DENY "Approval was declined.", cancel → DENY
// "Approval was not granted.", and form mode publishes no url.
func TestPolicyEvaluateVerdicts(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--policy-file", policyFile(t, askBashPolicy), "--elicitation-mode", "form")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		for _, tc := range []struct{ action, want string }{
			{"decline", `{"reason":"Approval was declined.","result":"POLICY_ACTION_DENY"}`},
			{"cancel", `{"reason":"Approval was not granted.","result":"POLICY_ACTION_DENY"}`},
			{"accept", `{"result":"POLICY_ACTION_ALLOW"}`},
		} {
			p, ev := parkPolicyASK(t, c, sid)
			params := ev["params"].(map[string]any)
			if _, has := params["url"]; has || params["mode"] != "form" || mustJSON(params["requestedSchema"]) != "{}" ||
				params["tool_name"] != "Bash" || params["content_preview"] != `Bash({"command":"date"})` {
				t.Fatalf("form-mode params = %v", params)
			}
			eid := ev["elicitation_id"].(string)
			if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": tc.action}); r.Status != 202 {
				t.Fatalf("resolve: %d %s", r.Status, r.Body)
			}
			if ans := p.Wait(t, 10*time.Second); ans.Status != 200 || mustJSON(ans.JSON(t)) != tc.want {
				t.Fatalf("%s: %d %s, want %s", tc.action, ans.Status, ans.Body, tc.want)
			}
		}
	})
}

// TestPolicyEvaluateTimeout: no verdict within --elicitation-timeout is DENY "Approval
// was not granted." and the prompt is retired.
func TestPolicyEvaluateTimeout(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--policy-file", policyFile(t, askBashPolicy), "--elicitation-timeout", "500ms")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		p, ev := parkPolicyASK(t, c, sid)
		ans := p.Wait(t, 10*time.Second)
		if ans.Status != 200 || mustJSON(ans.JSON(t)) != `{"reason":"Approval was not granted.","result":"POLICY_ACTION_DENY"}` {
			t.Fatalf("timeout answer: %d %s", ans.Status, ans.Body)
		}
		if got := st.WaitFor(t, "response.elicitation_resolved", 10*time.Second).Map(t)["elicitation_id"]; got != ev["elicitation_id"] {
			t.Fatalf("resolved event for %v", got)
		}
	})
}

// TestPolicyEvaluateReaderGetsASK: a caller with read access only gets the ASK back;
// nothing is parked for a person to decide on their behalf.
func TestPolicyEvaluateReaderGetsASK(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--policy-file", policyFile(t, askBashPolicy))
		alice, bob, eve := srv.Client("alice@example.com"), srv.Client("bob@example.com"), srv.Client("eve@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		if r := alice.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": "bob@example.com", "level": "read"}); r.Status >= 300 {
			t.Fatalf("grant: %d %s", r.Status, r.Body)
		}
		r := bob.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/policies/evaluate", toolCallEvent("Bash", map[string]any{"command": "date"}))
		if r.Status != 200 || mustJSON(r.JSON(t)) != `{"reason":"admin__ask_bash: Approve child tool call","result":"POLICY_ACTION_ASK"}` {
			t.Fatalf("reader: %d %s", r.Status, r.Body)
		}
		if n := len(pendingOf(t, alice, sid)); n != 0 {
			t.Fatalf("a reader's ASK parked %d prompts", n)
		}
		if r := eve.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/policies/evaluate", toolCallEvent("Bash", nil)); r.Status != 404 {
			t.Fatalf("stranger: %d %s", r.Status, r.Body)
		}
	})
}

// TestInvalidPolicyFileStopsTheServer: the app refuses to start, naming file and line.
func TestInvalidPolicyFileStopsTheServer(t *testing.T) {
	path := policyFile(t, "policies:\n  - name: ok\n    action: ASK\n  - name: bad\n    when: 'data.name =='\n    action: DENY\n")
	cfg, err := config.Load("test", []string{"--database-url", "sqlite://" + t.TempDir() + "/g.db", "--policy-file", path},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		a.Close()
		t.Fatal("the server started with an invalid policy file")
	}
	for _, want := range []string{path, "line 5", "policy 'bad'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
