package handlers_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSeedChildPolicyElicitationBubblesToParentStream: a policy ASK under a child is
// visible on the parent's stream with target_session_id, resolvable through the
// child, and the evaluate call then answers ALLOW.
func TestSeedChildPolicyElicitationBubblesToParentStream(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--policy-file", policyFile(t, askBashPolicy))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		parent := c.CreateSession(t, agent, "", "")
		child := c.CreateSession(t, agent, parent, "worker:task")

		st := c.OpenStream(t, "/v1/sessions/"+parent+"/stream")
		st.WaitHeartbeat(t)
		evaluate := c.ParkAsync("/v1/sessions/"+child+"/policies/evaluate", toolCallEvent("Bash", map[string]any{"command": "date"}))

		ev := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
		eid, _ := ev["elicitation_id"].(string)
		if eid == "" {
			t.Fatalf("no elicitation_id: %v", ev)
		}
		params := ev["params"].(map[string]any)
		if params["target_session_id"] != child || params["message"] != "admin__ask_bash: Approve child tool call" || params["phase"] != "tool_call" {
			t.Fatalf("mirrored params = %v", params)
		}
		if params["policy_name"] != "admin__ask_bash" || params["mode"] != "url" || params["url"] != "/approve/"+child+"/"+eid {
			t.Fatalf("policy prompt params = %v", params)
		}

		r := c.Do(t, http.MethodPost, "/v1/sessions/"+child+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		resolved := st.WaitFor(t, "response.elicitation_resolved", 10*time.Second)
		if want := `{"elicitation_id":"` + eid + `","type":"response.elicitation_resolved"}`; mustJSON(resolved.Map(t)) != want {
			t.Fatalf("resolved event = %s", resolved.Data)
		}
		ans := evaluate.Wait(t, 10*time.Second)
		if ans.Status != http.StatusOK || ans.JSON(t)["result"] != "POLICY_ACTION_ALLOW" {
			t.Fatalf("evaluate: %d %s", ans.Status, ans.Body)
		}
	})
}

// TestSeedChildMCPInputRequiredBubblesToParentStream: the runner's input_required on
// a child's /mcp call parks a prompt the parent sees; accepting it through the child
// reaches the runner's retry as inputResponses, and the tool output comes back.
func TestSeedChildMCPInputRequiredBubblesToParentStream(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner := newFakeRunner(t, func(n int, body map[string]any) any {
			switch n {
			case 1:
				return map[string]any{"result": map[string]any{"input_required": map[string]any{
					"requestState": "mrtr_state_1",
					"inputRequests": map[string]any{"mcp_eid_1": map[string]any{"params": map[string]any{
						"mode": "form", "message": "MCP server asks: overwrite file?",
						"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}},
					}}},
				}}}
			case 2:
				return map[string]any{"result": map[string]any{"output": "tool ran"}}
			}
			t.Errorf("runner execute called %d times: one input_required round plus one retry is the limit", n)
			return map[string]any{"error": map[string]any{"message": "too many calls"}}
		})
		srv := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL)
		c := srv.Client("")
		agent := c.CreateAgent(t)
		parent := c.CreateSession(t, agent, "", "")
		child := c.CreateSession(t, agent, parent, "worker:task")

		st := c.OpenStream(t, "/v1/sessions/"+parent+"/stream")
		st.WaitHeartbeat(t)
		call := c.ParkAsync("/v1/sessions/"+child+"/mcp", rpcCall(7, "mcp__test__echo", map[string]any{}, nil))

		ev := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
		params := ev["params"].(map[string]any)
		if params["target_session_id"] != child || params["message"] != "MCP server asks: overwrite file?" {
			t.Fatalf("mirrored params = %v", params)
		}
		eid := ev["elicitation_id"].(string)
		r := c.Do(t, http.MethodPost, "/v1/sessions/"+child+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if got := st.WaitFor(t, "response.elicitation_resolved", 10*time.Second).Map(t)["elicitation_id"]; got != eid {
			t.Fatalf("resolved event for %v, want %s", got, eid)
		}
		ans := call.Wait(t, 10*time.Second)
		if ans.Status != http.StatusOK {
			t.Fatalf("mcp: %d %s", ans.Status, ans.Body)
		}
		body := ans.JSON(t)
		if _, has := body["error"]; has {
			t.Fatalf("MCP proxy returned an error: %s", ans.Body)
		}
		if got := mustJSON(dig(t, body, "result", "content")); got != `[{"text":"tool ran","type":"text"}]` {
			t.Fatalf("content = %s", got)
		}
		if body["id"] != float64(7) {
			t.Fatalf("id = %v", body["id"])
		}
		calls := runner.Calls()
		if len(calls) != 2 {
			t.Fatalf("runner calls = %d", len(calls))
		}
		if got := mustJSON(dig(t, calls[1], "params", "inputResponses")); got != `{"mcp_eid_1":{"action":"accept"}}` {
			t.Fatalf("retry inputResponses = %s", got)
		}
		if got := dig(t, calls[1], "params", "requestState"); got != "mrtr_state_1" {
			t.Fatalf("retry requestState = %v", got)
		}
		if calls[0]["method"] != "tools/call" || mustJSON(calls[0]["params"]) != `{"arguments":{},"name":"mcp__test__echo"}` {
			t.Fatalf("first execute = %s", mustJSON(calls[0]))
		}
	})
}
