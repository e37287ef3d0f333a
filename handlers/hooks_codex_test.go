package handlers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

func codexPath(sid string) string { return "/v1/sessions/" + sid + "/hooks/codex-elicitation-request" }

// codexRequests are realistic app-server requests, one per supported method, keyed by
// a short name (the JSON-RPC id is filled in per case).
func codexRequests() map[string]map[string]any {
	return map[string]map[string]any{
		"command": {"method": "item/commandExecution/requestApproval", "params": map[string]any{
			"threadId": "thr", "turnId": "turn", "itemId": "item", "command": "npm test", "cwd": "/repo", "reason": "run the tests"}},
		"file": {"method": "item/fileChange/requestApproval", "params": map[string]any{
			"threadId": "thr", "turnId": "turn", "itemId": "item", "reason": "write the fix", "grantRoot": "/repo/src"}},
		"permissions": {"method": "item/permissions/requestApproval", "params": map[string]any{
			"cwd": "/repo", "reason": "fetch modules", "permissions": map[string]any{"network": map[string]any{"enabled": true}}}},
		"input": {"method": "item/tool/requestUserInput", "params": map[string]any{"threadId": "thr", "turnId": "turn", "itemId": "item",
			"questions": []any{
				map[string]any{"id": "db", "header": "Database", "question": "Which database?", "isOther": false, "isSecret": false,
					"options": []any{map[string]any{"label": "postgres", "description": ""}, map[string]any{"label": "sqlite", "description": ""}}},
				map[string]any{"id": "langs", "header": "Languages", "question": "Which languages?", "isOther": true, "isSecret": false, "options": nil},
			}}},
		"mcp_form": {"method": "mcpServer/elicitation/request", "params": map[string]any{"threadId": "thr", "turnId": "turn",
			"serverName": "deploy", "mode": "form", "message": "Which environment?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}}}},
		"mcp_url": {"method": "mcpServer/elicitation/request", "params": map[string]any{"serverName": "github", "mode": "url",
			"message": "Sign in", "url": "https://github.com/login/device", "elicitationId": "el_1"}},
		"exec": {"method": "execCommandApproval", "params": map[string]any{"conversationId": "c1", "callId": "call1",
			"command": []any{"rm", "-rf", "build"}, "cwd": "/repo", "reason": "clean"}},
		"patch": {"method": "applyPatchApproval", "params": map[string]any{"conversationId": "c1", "callId": "call2",
			"fileChanges": map[string]any{"a.go": map[string]any{"type": "add"}}, "reason": "refactor"}},
	}
}

// TestCodexHookEachMethodAndAction parks every method over HTTP, resolves it with each
// action and checks the exact JSON-RPC result, the phase on the stream and that the
// prompt id is the deterministic one (computed here independently).
func TestCodexHookEachMethodAndAction(t *testing.T) {
	remember := map[string]any{"remember": true}
	cases := []struct {
		req, phase, action string
		content            map[string]any
		want               string
	}{
		{"command", "codex_command_approval", "accept", nil, `{"decision":"accept"}`},
		{"command", "codex_command_approval", "accept", remember, `{"decision":"acceptForSession"}`},
		{"command", "codex_command_approval", "decline", nil, `{"decision":"decline"}`},
		{"command", "codex_command_approval", "cancel", nil, `{"decision":"cancel"}`},
		{"file", "codex_file_change_approval", "accept", nil, `{"decision":"accept"}`},
		{"file", "codex_file_change_approval", "accept", remember, `{"decision":"acceptForSession"}`},
		{"file", "codex_file_change_approval", "decline", nil, `{"decision":"decline"}`},
		{"file", "codex_file_change_approval", "cancel", nil, `{"decision":"cancel"}`},
		{"permissions", "codex_permissions_approval", "accept", nil, `{"permissions":{"network":{"enabled":true}},"scope":"turn"}`},
		{"permissions", "codex_permissions_approval", "decline", nil, `{"permissions":{},"scope":"turn"}`},
		{"permissions", "codex_permissions_approval", "cancel", nil, `{"permissions":{},"scope":"turn"}`},
		{"input", "codex_request_user_input", "accept", map[string]any{"Database": "postgres", "langs": []string{"Go", "SQL"}},
			`{"answers":{"db":{"answers":["postgres"]},"langs":{"answers":["Go","SQL"]}}}`},
		{"input", "codex_request_user_input", "decline", nil, `{"answers":{}}`},
		{"input", "codex_request_user_input", "cancel", nil, `{"answers":{}}`},
		{"mcp_form", "codex_mcp_elicitation", "accept", map[string]any{"env": "staging"}, `{"_meta":null,"action":"accept","content":{"env":"staging"}}`},
		{"mcp_form", "codex_mcp_elicitation", "decline", nil, `{"_meta":null,"action":"decline","content":null}`},
		{"mcp_form", "codex_mcp_elicitation", "cancel", nil, `{"_meta":null,"action":"cancel","content":null}`},
		{"mcp_url", "codex_mcp_elicitation", "accept", nil, `{"_meta":null,"action":"accept","content":null}`},
		{"exec", "codex_command_approval", "accept", nil, `{"decision":"approved"}`},
		{"exec", "codex_command_approval", "accept", remember, `{"decision":"approved_for_session"}`},
		{"exec", "codex_command_approval", "decline", nil, `{"decision":"denied"}`},
		{"exec", "codex_command_approval", "cancel", nil, `{"decision":"abort"}`},
		{"patch", "codex_file_change_approval", "accept", nil, `{"decision":"approved"}`},
		{"patch", "codex_file_change_approval", "decline", nil, `{"decision":"denied"}`},
		{"patch", "codex_file_change_approval", "cancel", nil, `{"decision":"abort"}`},
	}
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		for i, tc := range cases {
			body := codexRequests()[tc.req]
			body["id"] = 100 + i
			parked, eid, ev := c.ParkAt(t, sid, codexPath(sid), body)
			wantID := codexID(t, body["method"].(string), fmt.Sprint(100+i), sid)
			params := ev["params"].(map[string]any)
			if eid != wantID || params["phase"] != tc.phase || params["vendor"] != "Codex" || params["policy_name"] != "codex_app_server" {
				t.Fatalf("%s/%s: event %s params %v (want id %s)", tc.req, tc.action, eid, params, wantID)
			}
			resolve := map[string]any{"action": tc.action}
			if tc.content != nil {
				resolve["content"] = tc.content
			}
			if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", resolve); r.Status != http.StatusAccepted {
				t.Fatalf("resolve: %d %s", r.Status, r.Body)
			}
			ans := parked.Wait(t, 10*time.Second)
			if ans.Status != http.StatusOK || string(ans.Body) == "" {
				t.Fatalf("%s/%s: hook answered %d %q", tc.req, tc.action, ans.Status, ans.Body)
			}
			if got := canonJSON(t, ans.Body); got != tc.want {
				t.Errorf("%s/%s %v:\n got %s\nwant %s", tc.req, tc.action, tc.content, got, tc.want)
			}
		}
	})
}

// codexID is the deterministic id of §5.4, computed from the literal canonical JSON.
func codexID(t *testing.T, method, requestIDJSON, sid string) string {
	t.Helper()
	key := fmt.Sprintf(`{"method":%q,"request_id":%s,"session_id":%q}`, method, requestIDJSON, sid)
	sum := sha256.Sum256([]byte(key))
	return "elicit_codex_" + hex.EncodeToString(sum[:])[:32]
}

// TestCodexHookRetryReattaches: a bridge that hangs up and retries the same request
// re-attaches to the same prompt (one pending prompt, no second card); a retry after
// the verdict was given while nobody waited gets that verdict at once; a different
// request reusing the id is refused; a retry after the prompt was abandoned gets "no
// verdict".
func TestCodexHookRetryReattaches(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--disconnect-grace", "1m")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		body := testserver.CodexCommandBody("req-1", []string{"make", "deploy"})

		first, eid, _ := c.ParkAt(t, sid, codexPath(sid), body)
		if eid != codexID(t, "item/commandExecution/requestApproval", `"req-1"`, sid) {
			t.Fatalf("id %s is not the deterministic one", eid)
		}
		first.Cancel()
		<-first.DoneChan()

		second := c.ParkAsync(codexPath(sid), body)
		pending := pendingOf(t, c, sid)
		if len(pending) != 1 || pending[0].(map[string]any)["elicitation_id"] != eid {
			t.Fatalf("after a retry the session must still have exactly the one prompt: %v", pending)
		}
		c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"})
		if ans := second.Wait(t, 10*time.Second); canonJSON(t, ans.Body) != `{"decision":"decline"}` {
			t.Fatalf("retried request answered %d %s", ans.Status, ans.Body)
		}

		// Decided while nobody waited: the next retry answers at once with the verdict.
		again := c.Do(t, http.MethodPost, codexPath(sid), body)
		if again.Status != http.StatusOK || canonJSON(t, again.Body) != `{"decision":"decline"}` {
			t.Fatalf("retry of a decided request: %d %s", again.Status, again.Body)
		}

		// The same JSON-RPC id for a different command must not inherit that verdict.
		other := testserver.CodexCommandBody("req-1", []string{"rm", "-rf", "/"})
		if r := c.Do(t, http.MethodPost, codexPath(sid), other); r.Status != http.StatusConflict {
			t.Fatalf("a different request under a used id: %d %s", r.Status, r.Body)
		}
		// The integer 1 and the string "1" are different requests.
		p1, e1, _ := c.ParkAt(t, sid, codexPath(sid), testserver.CodexCommandBody(1, []string{"ls"}))
		p2, e2, _ := c.ParkAt(t, sid, codexPath(sid), testserver.CodexCommandBody("1", []string{"ls"}))
		if e1 == e2 {
			t.Fatalf("id 1 and id \"1\" share a prompt")
		}
		c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+e1+"/resolve", map[string]any{"action": "accept"})
		c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+e2+"/resolve", map[string]any{"action": "cancel"})
		if a := p1.Wait(t, 10*time.Second); canonJSON(t, a.Body) != `{"decision":"accept"}` {
			t.Fatalf("id 1: %s", a.Body)
		}
		if a := p2.Wait(t, 10*time.Second); canonJSON(t, a.Body) != `{"decision":"cancel"}` {
			t.Fatalf("id \"1\": %s", a.Body)
		}
	})
}

// TestCodexHookRetryAfterAbandonGetsNoVerdict: once the grace period after a hang-up
// has passed, the prompt is abandoned and a retry gets the empty "no verdict" answer.
func TestCodexHookRetryAfterAbandonGetsNoVerdict(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--disconnect-grace", "100ms")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		body := testserver.CodexCommandBody(3, []string{"date"})
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		p := c.ParkAsync(codexPath(sid), body)
		eid := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)["elicitation_id"]
		p.Cancel()
		if ev := st.WaitFor(t, "response.elicitation_resolved", 10*time.Second).Map(t); ev["elicitation_id"] != eid {
			t.Fatalf("resolved event for %v, want %v", ev["elicitation_id"], eid)
		}
		r := c.Do(t, http.MethodPost, codexPath(sid), body)
		if r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("retry after abandon: %d %q, want an empty 200", r.Status, r.Body)
		}
	})
}

// TestCodexHookNoVerdictIsEmpty200: a timeout answers an empty 200 (Codex falls back).
func TestCodexHookNoVerdictIsEmpty200(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--elicitation-timeout", "200ms")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		r := c.Do(t, http.MethodPost, codexPath(sid), testserver.CodexCommandBody(1, []string{"date"}))
		if r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("timeout: %d %q, want an empty 200", r.Status, r.Body)
		}
	})
}

// TestCodexHookBadInput: bad envelopes and unsupported methods are 400s with the error
// envelope; wrong content type 415; unknown session 404; nothing parks.
func TestCodexHookBadInput(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		cases := []struct {
			name, body, want string
		}{
			{"not json", `{"id":`, "JSON-RPC request object"},
			{"array", `[{"id":1}]`, "JSON-RPC request object"},
			{"no id", `{"method":"item/fileChange/requestApproval","params":{}}`, "id is required"},
			{"null id", `{"id":null,"method":"item/fileChange/requestApproval","params":{}}`, "id is required"},
			{"float id", `{"id":1.5,"method":"item/fileChange/requestApproval","params":{}}`, "integer or a string"},
			{"object id", `{"id":{"x":1},"method":"item/fileChange/requestApproval","params":{}}`, "integer or a string"},
			{"no method", `{"id":1,"params":{}}`, "method is required"},
			{"unsupported", `{"id":1,"method":"turn/start","params":{}}`, `unsupported method "turn/start"`},
			{"other notification", `{"method":"turn/completed","params":{"threadId":"t"}}`, "id is required"},
			{"resolved without requestId", `{"method":"serverRequest/resolved","params":{"threadId":"t"}}`, "params.requestId"},
			{"no params", `{"id":1,"method":"item/fileChange/requestApproval"}`, "params is required"},
			{"params list", `{"id":1,"method":"item/fileChange/requestApproval","params":[1]}`, "params is required"},
			{"bad command", `{"id":1,"method":"item/commandExecution/requestApproval","params":{"command":{"argv":["ls"]}}}`, "params.command"},
			{"no questions", `{"id":1,"method":"item/tool/requestUserInput","params":{"questions":[]}}`, "params.questions"},
			{"url without url", `{"id":1,"method":"mcpServer/elicitation/request","params":{"mode":"url","message":"m"}}`, "params.url"},
		}
		for _, tc := range cases {
			r, err := c.SendRaw(context.Background(), http.MethodPost, codexPath(sid), "application/json", []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			env := r.JSON(t)["error"].(map[string]any)
			if r.Status != http.StatusBadRequest || env["code"] != "invalid_input" || !strings.Contains(env["message"].(string), tc.want) {
				t.Errorf("%s: %d %s, want 400 mentioning %q", tc.name, r.Status, r.Body, tc.want)
			}
		}
		r, _ := c.SendRaw(context.Background(), http.MethodPost, codexPath(sid), "text/plain", []byte(`{"id":1}`))
		if r.Status != http.StatusUnsupportedMediaType {
			t.Errorf("text/plain: %d", r.Status)
		}
		if r := c.Do(t, http.MethodPost, codexPath("conv_does_not_exist"), testserver.CodexCommandBody(1, []string{"ls"})); r.Status != http.StatusNotFound {
			t.Errorf("unknown session: %d", r.Status)
		}
		if n := len(pendingOf(t, c, sid)); n != 0 {
			t.Errorf("bad requests parked %d prompts", n)
		}
	})
}

// TestCodexHookReaderGetsNoVerdictWithoutParking: a caller with read access only gets
// the empty answer at once and no prompt is opened.
func TestCodexHookReaderGetsNoVerdictWithoutParking(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		if r := bob.Do(t, http.MethodPost, codexPath(sid), testserver.CodexCommandBody(1, []string{"ls"})); r.Status != http.StatusNotFound {
			t.Fatalf("no access: %d, want 404", r.Status)
		}
		alice.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": "bob@example.com", "level": "read"})
		r := bob.Do(t, http.MethodPost, codexPath(sid), testserver.CodexCommandBody(1, []string{"ls"}))
		if r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("reader: %d %q, want an empty 200", r.Status, r.Body)
		}
		if n := len(pendingOf(t, alice, sid)); n != 0 {
			t.Fatalf("a reader's hook parked %d prompts", n)
		}
	})
}
