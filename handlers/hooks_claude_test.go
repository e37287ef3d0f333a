package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// claudeHookBody is a realistic Claude Code hook body for event (PermissionRequest,
// PreToolUse) with the fields 2.1.x sends; PreToolUse also carries tool_use_id.
func claudeHookBody(event, tool string, input map[string]any) map[string]any {
	b := testserver.ClaudeBody(tool, input)
	b["hook_event_name"] = event
	b["prompt_id"] = "prompt_1"
	b["effort"] = map[string]any{"level": "high"}
	if event == "PreToolUse" {
		b["tool_use_id"] = "toolu_01ABC"
	}
	return b
}

// claudeElicitationBody is Claude Code's Elicitation hook body: one of its MCP servers
// asks for form input.
func claudeElicitationBody() map[string]any {
	return map[string]any{
		"session_id": "7d1f0a52-5b6e-4f8e-9a51-2f0f6c2b1c11", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp/cwd",
		"permission_mode": "default", "hook_event_name": "Elicitation", "mcp_server_name": "deploy",
		"message": "Which environment should I deploy to?", "mode": "form",
		"requested_schema": map[string]any{"type": "object", "properties": map[string]any{
			"env":      map[string]any{"type": "string", "enum": []any{"staging", "prod"}},
			"replicas": map[string]any{"type": "integer", "minimum": 1},
			"confirm":  map[string]any{"type": "boolean"},
		}, "required": []any{"env"}},
	}
}

func askUserQuestionInput() map[string]any {
	return map[string]any{"questions": []any{map[string]any{
		"question": "Which database should the worker target?", "header": "Database", "multiSelect": false,
		"options": []any{
			map[string]any{"label": "postgres", "description": "the shared cluster"},
			map[string]any{"label": "sqlite", "description": "a local file"},
		},
	}}}
}

func resolveAs(t *testing.T, c *testserver.Client, sid, eid, action string, content map[string]any) {
	t.Helper()
	body := map[string]any{"action": action}
	if content != nil {
		body["content"] = content
	}
	r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", body)
	if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "resolved" {
		t.Fatalf("resolve %s %s: %d %s", eid, action, r.Status, r.Body)
	}
}

// TestClaudePreToolUseVerdicts: PreToolUse parks like PermissionRequest and answers
// with permissionDecision; a decline's feedback becomes the reason Claude sees;
// AskUserQuestion answers travel in updatedInput.answers.
func TestClaudePreToolUseVerdicts(t *testing.T) {
	cases := []struct {
		name, tool, action string
		input, content     map[string]any
		want               string
	}{
		{"allow", "Bash", "accept", map[string]any{"command": "ls -la"}, nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Approved in Gatehouse"}}`},
		{"deny with feedback", "Bash", "decline", map[string]any{"command": "rm -rf /"}, map[string]any{"feedback": "use a temp dir instead"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use a temp dir instead"}}`},
		{"deny", "Edit", "decline", map[string]any{"file_path": "/etc/hosts"}, nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by local in Gatehouse."}}`},
		{"cancel", "Bash", "cancel", map[string]any{"command": "ls"}, nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by local in Gatehouse."}}`},
		{"ask user question", "AskUserQuestion", "accept", askUserQuestionInput(),
			map[string]any{"Which database should the worker target?": "postgres"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Approved in Gatehouse",` +
				`"updatedInput":{"answers":{"Which database should the worker target?":"postgres"},"questions":[{"header":"Database","multiSelect":false,` +
				`"options":[{"description":"the shared cluster","label":"postgres"},{"description":"a local file","label":"sqlite"}],"question":"Which database should the worker target?"}]}}}`},
	}
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		for _, tc := range cases {
			parked, eid, ev := c.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/pre-tool-use", claudeHookBody("PreToolUse", tc.tool, tc.input))
			params := ev["params"].(map[string]any)
			if params["tool_name"] != tc.tool || params["phase"] != "pre_tool_use" || params["mode"] != "form" {
				t.Fatalf("%s: params %v", tc.name, params)
			}
			if tc.tool == "AskUserQuestion" {
				q := params["ask_user_question"].(map[string]any)["questions"].([]any)[0].(map[string]any)
				if q["question"] != "Which database should the worker target?" {
					t.Fatalf("ask_user_question = %v", params["ask_user_question"])
				}
			}
			resolveAs(t, c, sid, eid, tc.action, tc.content)
			ans := parked.Wait(t, 10*time.Second)
			if ans.Status != http.StatusOK || canonJSON(t, ans.Body) != tc.want {
				t.Errorf("%s:\n got %d %s\nwant %s", tc.name, ans.Status, ans.Body, tc.want)
			}
		}
	})
}

// TestClaudeHooksNoVerdictIsEmpty200: on timeout each Claude route answers an empty 200.
func TestClaudeHooksNoVerdictIsEmpty200(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--elicitation-timeout", "150ms")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		for path, body := range map[string]any{
			"/v1/sessions/" + sid + "/hooks/pre-tool-use":       claudeHookBody("PreToolUse", "Bash", map[string]any{"command": "ls"}),
			"/v1/sessions/" + sid + "/hooks/permission-request": claudeHookBody("PermissionRequest", "Bash", map[string]any{"command": "ls"}),
			"/v1/sessions/" + sid + "/hooks/elicitation":        claudeElicitationBody(),
		} {
			r := c.Do(t, http.MethodPost, path, body)
			if r.Status != http.StatusOK || len(r.Body) != 0 {
				t.Errorf("%s: %d %q, want an empty 200", path, r.Status, r.Body)
			}
		}
	})
}

// TestClaudeElicitationHook: the MCP server's schema is the prompt's requestedSchema;
// accept returns the content, decline none; non-form modes and bad bodies are 400s.
func TestClaudeElicitationHook(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		path := "/v1/sessions/" + sid + "/hooks/elicitation"

		parked, eid, ev := c.ParkAt(t, sid, path, claudeElicitationBody())
		params := ev["params"].(map[string]any)
		if !jsonEqual(params["requestedSchema"], claudeElicitationBody()["requested_schema"]) ||
			params["mode"] != "form" || params["message"] != "Which environment should I deploy to?" || params["server_name"] != "deploy" {
			t.Fatalf("params = %v", params)
		}
		resolveAs(t, c, sid, eid, "accept", map[string]any{"env": "staging", "replicas": 3, "confirm": true})
		ans := parked.Wait(t, 10*time.Second)
		want := `{"hookSpecificOutput":{"action":"accept","content":{"confirm":true,"env":"staging","replicas":3},"hookEventName":"Elicitation"}}`
		if canonJSON(t, ans.Body) != want {
			t.Fatalf("accept answer = %s", ans.Body)
		}

		parked, eid, _ = c.ParkAt(t, sid, path, claudeElicitationBody())
		resolveAs(t, c, sid, eid, "decline", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"hookSpecificOutput":{"action":"decline","hookEventName":"Elicitation"}}` {
			t.Fatalf("decline answer = %s", got)
		}

		for name, mutate := range map[string]func(m map[string]any){
			"url mode":       func(m map[string]any) { m["mode"] = "url" },
			"no message":     func(m map[string]any) { delete(m, "message") },
			"schema list":    func(m map[string]any) { m["requested_schema"] = []any{1} },
			"message number": func(m map[string]any) { m["message"] = 5 },
		} {
			b := claudeElicitationBody()
			mutate(b)
			if r := c.Do(t, http.MethodPost, path, b); r.Status != http.StatusBadRequest {
				t.Errorf("%s: %d %s, want 400", name, r.Status, r.Body)
			}
		}
	})
}

// TestClaudePermissionRequestExitPlanModeAndRemember: ExitPlanMode carries the plan and
// a decline's feedback reaches Claude as the deny message; remember keeps the first
// suggestion, and nothing when Claude Code sent none.
func TestClaudePermissionRequestExitPlanModeAndRemember(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		path := "/v1/sessions/" + sid + "/hooks/permission-request"

		plan := "## Plan\n1. Add the migration\n2. Backfill"
		parked, eid, ev := c.ParkAt(t, sid, path, claudeHookBody("PermissionRequest", "ExitPlanMode", map[string]any{"plan": plan}))
		epm, _ := ev["params"].(map[string]any)["exit_plan_mode"].(map[string]any)
		if epm["plan"] != plan {
			t.Fatalf("exit_plan_mode = %v", ev["params"])
		}
		resolveAs(t, c, sid, eid, "decline", map[string]any{"feedback": "Backfill in batches first"})
		want := `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Backfill in batches first"},"hookEventName":"PermissionRequest"}}`
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != want {
			t.Fatalf("ExitPlanMode decline = %s", got)
		}

		bash := claudeHookBody("PermissionRequest", "Bash", map[string]any{"command": "npm test"})
		bash["permission_suggestions"] = []any{map[string]any{"type": "addRules",
			"rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "npm test"}}, "behavior": "allow", "destination": "session"}}
		parked, eid, _ = c.ParkAt(t, sid, path, bash)
		resolveAs(t, c, sid, eid, "accept", map[string]any{"remember": true})
		want = `{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedPermissions":[{"behavior":"allow","destination":"session",` +
			`"rules":[{"ruleContent":"npm test","toolName":"Bash"}],"type":"addRules"}]},"hookEventName":"PermissionRequest"}}`
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != want {
			t.Fatalf("remember = %s", got)
		}

		// Without suggestions there is nothing to remember: a plain allow, never a rule
		// without content (which would allow every Bash command).
		parked, eid, _ = c.ParkAt(t, sid, path, claudeHookBody("PermissionRequest", "Bash", map[string]any{"command": "npm test"}))
		resolveAs(t, c, sid, eid, "accept", map[string]any{"remember": true})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}` {
			t.Fatalf("remember without suggestions = %s", got)
		}

		// remember means nothing for ExitPlanMode: a plain allow.
		parked, eid, _ = c.ParkAt(t, sid, path, claudeHookBody("PermissionRequest", "ExitPlanMode", map[string]any{"plan": plan}))
		resolveAs(t, c, sid, eid, "accept", map[string]any{"remember": true})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}` {
			t.Fatalf("ExitPlanMode accept = %s", got)
		}
	})
}

// TestClaudeZeroConfig: POST /v1/hooks/claude maps Claude's session_id to a session
// created on first sight and owned by the caller, reuses it afterwards, and parks a
// sub-agent's prompt on a child session that mirrors to the parent's stream.
func TestClaudeZeroConfig(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		// The first payload has no session to watch yet, so it runs into the (short)
		// timeout; that also shows the zero-config "no verdict" answer.
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--elicitation-timeout", "5s")
		c := srv.Client("alice@example.com")
		const path = "/v1/hooks/claude"
		first := claudeHookBody("PermissionRequest", "Bash", map[string]any{"command": "ls"})
		if r := c.Do(t, http.MethodPost, path, first); r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("first payload: %d %q, want the empty no-verdict 200", r.Status, r.Body)
		}
		list := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)
		sessions, _ := list["sessions"].([]any)
		if len(sessions) != 1 {
			t.Fatalf("sessions after the first payload: %s", mustJSON(list))
		}
		root := sessions[0].(map[string]any)
		sid := root["id"].(string)
		if root["created_by"] != "alice@example.com" || !strings.Contains(root["title"].(string), "Claude Code") {
			t.Fatalf("created session = %v", root)
		}

		// Same Claude session: the same Gatehouse session.
		parked, eid, ev := c.ParkAt(t, sid, path, claudeHookBody("PermissionRequest", "Bash", map[string]any{"command": "make"}))
		if _, mirrored := ev["params"].(map[string]any)["target_session_id"]; mirrored {
			t.Fatalf("a top-level prompt must not carry target_session_id: %v", ev)
		}
		resolveAs(t, c, sid, eid, "accept", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}` {
			t.Fatalf("second payload answer = %s", got)
		}
		if s, _ := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any); len(s) != 1 {
			t.Fatalf("the second payload created another session: %v", s)
		}

		// A sub-agent's PreToolUse: a child session, mirrored to the parent.
		sub := claudeHookBody("PreToolUse", "Bash", map[string]any{"command": "go test ./..."})
		sub["agent_id"], sub["agent_type"] = "a1b2c3", "Explore"
		parked, eid, ev = c.ParkAt(t, sid, path, sub)
		child, _ := ev["params"].(map[string]any)["target_session_id"].(string)
		if child == "" || child == sid {
			t.Fatalf("the parent's copy must name the child: %v", ev)
		}
		kids, _ := c.Do(t, http.MethodGet, "/v1/sessions?parent_session_id="+sid, nil).JSON(t)["sessions"].([]any)
		if len(kids) != 1 || kids[0].(map[string]any)["id"] != child || kids[0].(map[string]any)["title"] != "Explore:a1b2c3" {
			t.Fatalf("children = %v", kids)
		}
		resolveAs(t, c, child, eid, "decline", map[string]any{"feedback": "not in CI"})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not in CI"}}` {
			t.Fatalf("sub-agent answer = %s", got)
		}

		// The same sub-agent again reuses its child; an Elicitation parks there too.
		el := claudeElicitationBody()
		el["agent_id"], el["agent_type"] = "a1b2c3", "Explore"
		parked, eid, ev = c.ParkAt(t, sid, path, el)
		if ev["params"].(map[string]any)["target_session_id"] != child {
			t.Fatalf("the same agent_id must reuse its child: %v", ev)
		}
		resolveAs(t, c, child, eid, "accept", map[string]any{"env": "prod"})
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"hookSpecificOutput":{"action":"accept","content":{"env":"prod"},"hookEventName":"Elicitation"}}` {
			t.Fatalf("elicitation answer = %s", got)
		}
	})
}

// TestClaudeZeroConfigIsPerUser: the same Claude session id from two people maps to
// two sessions, each owned by its sender and invisible to the other.
func TestClaudeZeroConfigIsPerUser(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--elicitation-timeout", "100ms")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		body := claudeHookBody("PermissionRequest", "Bash", map[string]any{"command": "ls"})
		for _, c := range []*testserver.Client{alice, bob} {
			if r := c.Do(t, http.MethodPost, "/v1/hooks/claude", body); r.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", c.User, r.Status, r.Body)
			}
		}
		as, _ := alice.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any)
		bs, _ := bob.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any)
		if len(as) != 1 || len(bs) != 1 {
			t.Fatalf("alice sees %d sessions, bob %d; want 1 each", len(as), len(bs))
		}
		aid := as[0].(map[string]any)["id"].(string)
		if aid == bs[0].(map[string]any)["id"] {
			t.Fatalf("two users share one session")
		}
		if r := bob.Do(t, http.MethodGet, "/v1/sessions/"+aid, nil); r.Status != http.StatusNotFound {
			t.Fatalf("bob reads alice's session: %d", r.Status)
		}
	})
}

// TestClaudeZeroConfigBadInput: unhandled or missing events, missing session ids and
// bad tool payloads are 400s that create nothing.
func TestClaudeZeroConfigBadInput(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		with := func(k string, v any) map[string]any {
			m := claudeHookBody("PermissionRequest", "Bash", map[string]any{"command": "ls"})
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			return m
		}
		cases := []struct {
			name string
			body any
			want string
		}{
			{"stop event", with("hook_event_name", "Stop"), `does not handle "Stop" hooks`},
			{"no event", with("hook_event_name", nil), "hook_event_name"},
			{"event number", with("hook_event_name", 3), "hook_event_name"},
			{"no session id", with("session_id", nil), "session_id"},
			{"blank session id", with("session_id", "  "), "session_id"},
			{"long session id", with("session_id", strings.Repeat("s", 201)), "session_id"},
			{"no tool", with("tool_name", nil), "tool_name"},
			{"input string", with("tool_input", "ls"), "tool_input"},
			{"bad reattach id", with("_gatehouse_elicitation_id", "elicit_0123"), "_gatehouse_elicitation_id"},
			{"array body", []any{1}, "JSON object"},
		}
		for _, tc := range cases {
			r := c.Do(t, http.MethodPost, "/v1/hooks/claude", tc.body)
			msg, _ := r.JSON(t)["error"].(map[string]any)["message"].(string)
			if r.Status != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
				t.Errorf("%s: %d %s, want 400 mentioning %q", tc.name, r.Status, r.Body, tc.want)
			}
		}
		r, err := c.SendRaw(context.Background(), http.MethodPost, "/v1/hooks/claude", "text/plain", []byte("{}"))
		if err != nil || r.Status != http.StatusUnsupportedMediaType {
			t.Errorf("text/plain: %v %v", r, err)
		}
		if s, _ := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any); len(s) != 0 {
			t.Fatalf("bad payloads created sessions: %v", s)
		}
	})
}

// TestClaudeSessionHooksReaderAndBadInput: per-session routes give a reader the empty
// answer without parking, and refuse bad bodies with 400.
func TestClaudeSessionHooksReaderAndBadInput(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		alice.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": "bob@example.com", "level": "read"})
		for _, path := range []string{"pre-tool-use", "elicitation", "permission-request"} {
			body := any(claudeHookBody("PreToolUse", "Bash", map[string]any{"command": "ls"}))
			if path == "elicitation" {
				body = claudeElicitationBody()
			}
			r := bob.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/hooks/"+path, body)
			if r.Status != http.StatusOK || len(r.Body) != 0 {
				t.Errorf("reader on %s: %d %q, want an empty 200", path, r.Status, r.Body)
			}
			if r := alice.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/hooks/"+path, map[string]any{"tool_input": 1}); r.Status != http.StatusBadRequest {
				t.Errorf("bad body on %s: %d %s", path, r.Status, r.Body)
			}
			if r := alice.Do(t, http.MethodPost, "/v1/sessions/conv_does_not_exist/hooks/"+path, body); r.Status != http.StatusNotFound {
				t.Errorf("unknown session on %s: %d", path, r.Status)
			}
		}
		if n := len(pendingOf(t, alice, sid)); n != 0 {
			t.Fatalf("%d prompts parked", n)
		}
	})
}
