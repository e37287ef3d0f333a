package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Bodies in the shape Gemini CLI 0.61 sends (PROTOCOLS.md; the real-client tests in
// internal/testkit/clienttest drive the real one).
const (
	shellBody   = `{"session_id":"5d1c9f0e-8a8b-4f57-9a61-2f0a3b4c5d6e","transcript_path":"/home/u/.gemini/tmp/x/chats/session.json","cwd":"/work/repo","hook_event_name":"BeforeTool","timestamp":"2026-12-02T10:00:00.000Z","tool_name":"run_shell_command","tool_input":{"command":"touch /tmp/x","description":"Create the marker file"}}`
	replaceBody = `{"session_id":"s1","cwd":"/work/repo","hook_event_name":"BeforeTool","tool_name":"replace","tool_input":{"file_path":"/work/repo/a.go","old_string":"a","new_string":"b","instruction":"Rename a to b","allow_multiple":true}}`
	writeBody   = `{"session_id":"s1","cwd":"/work/repo","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"notes.md","content":"hi"}}`
	readBody    = `{"session_id":"s1","cwd":"/work/repo","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"/etc/passwd","start_line":1}}`
	mcpBody     = `{"session_id":"s1","cwd":"/work/repo","hook_event_name":"BeforeTool","tool_name":"mcp_docs_search","tool_input":{"q":"deploy"},"mcp_context":{"server_name":"docs","tool_name":"search","command":"node","args":["srv.js"]},"future_field":{"x":1}}`
	globBody    = `{"session_id":"s1","cwd":"/work/repo","hook_event_name":"BeforeTool","tool_name":"glob","tool_input":{"pattern":"**/*.go"}}`
)

func decodeOrFail(t *testing.T, body string) *models.HookRequest {
	t.Helper()
	r, err := Agent{}.Decode("", []byte(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return r
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAnswers pins the hook output per action: allow, or deny with the reason the
// model reads; never "ask" (a headless Gemini hangs on it).
func TestAnswers(t *testing.T) {
	cases := []struct {
		name, action string
		content      map[string]any
		want         string
	}{
		{"allow", "accept", nil, `{"decision":"allow"}`},
		{"allow ignores remember", "accept", map[string]any{"remember": true, "feedback": "ok"}, `{"decision":"allow"}`},
		{"deny", "decline", nil, `{"decision":"deny","reason":"Denied by bob@example.com in Gatehouse."}`},
		{"deny reason", "decline", map[string]any{"feedback": "  use staging  "}, `{"decision":"deny","reason":"use staging"}`},
		{"cancel", "cancel", map[string]any{"feedback": " "}, `{"decision":"deny","reason":"Denied by bob@example.com in Gatehouse."}`},
	}
	r := decodeOrFail(t, shellBody)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := jsonOf(t, r.Answer(models.Verdict{Action: tc.action, Content: tc.content}, "bob@example.com"))
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if strings.Contains(got, `"ask"`) {
				t.Fatalf("answer asks: %s", got)
			}
		})
	}
}

// TestDeny: the forwarder's fail-closed answer is the same deny shape, for BeforeTool
// payloads only.
func TestDeny(t *testing.T) {
	got, ok := Agent{}.Deny([]byte(shellBody), "Gatehouse is down")
	if !ok || string(got) != `{"decision":"deny","reason":"Gatehouse is down"}` {
		t.Fatalf("Deny = %s, %v", got, ok)
	}
	for _, body := range []string{`{"hook_event_name":"AfterTool"}`, `nope`, `{}`} {
		if got, ok := (Agent{}).Deny([]byte(body), "x"); ok {
			t.Errorf("Deny(%s) = %s, want none", body, got)
		}
	}
}

// TestToolsMapOntoRules: each Gemini tool becomes the tool name, kind and input rules
// and risk know; the session is Gemini's own, namespaced.
func TestToolsMapOntoRules(t *testing.T) {
	cases := []struct {
		body, tool string
		kind       models.ToolKind
		input      string
	}{
		{shellBody, "Bash", models.KindShell, `{"command":"touch /tmp/x"}`},
		{replaceBody, "Edit", models.KindEdit, `{"file_path":"/work/repo/a.go","new_string":"b","old_string":"a","replace_all":true}`},
		{writeBody, "Write", models.KindWrite, `{"content":"hi","file_path":"notes.md"}`},
		{readBody, "Read", models.KindRead, `{"file_path":"/etc/passwd","start_line":1}`},
		{mcpBody, "mcp__docs__search", models.KindMCP, `{"q":"deploy"}`},
		{globBody, "glob", models.KindRead, `{"pattern":"**/*.go"}`},
	}
	for _, tc := range cases {
		r := decodeOrFail(t, tc.body)
		if r.Tool.Name != tc.tool || r.Tool.Kind != tc.kind || jsonOf(t, r.Tool.Input) != tc.input {
			t.Errorf("%s: tool %s %s %s, want %s %s %s", tc.tool, r.Tool.Name, r.Tool.Kind, jsonOf(t, r.Tool.Input), tc.tool, tc.kind, tc.input)
		}
		if r.Params["tool_name"] != tc.tool {
			t.Errorf("%s: params tool_name %v", tc.tool, r.Params["tool_name"])
		}
	}
	r := decodeOrFail(t, shellBody)
	if r.ExternalSession != "5d1c9f0e-8a8b-4f57-9a61-2f0a3b4c5d6e" || r.ExternalKey != "gemini:"+r.ExternalSession ||
		r.Origin != Origin || r.Vendor != "Gemini CLI" || r.Cwd != "/work/repo" || r.Event != EventBeforeTool {
		t.Errorf("request = %+v", r)
	}
	if KindOf("web_fetch") != models.KindFetch || KindOf("mcp_x_y") != models.KindMCP || KindOf("save_memory") != models.KindOther {
		t.Error("KindOf of the tools without a rule name")
	}
}

// TestParams: what a person is shown — who asks and what — with the model's own
// description kept apart from what is approved.
func TestParams(t *testing.T) {
	p := decodeOrFail(t, shellBody).Params
	want := map[string]any{
		"message": "Gemini CLI wants to run **touch /tmp/x**", "vendor": "Gemini CLI", "command": "touch /tmp/x",
		"reason": "Create the marker file", "tool_name": "Bash", "gemini_tool": "run_shell_command", "cwd": "/work/repo",
		"gemini_event": "BeforeTool", "content_preview": "touch /tmp/x", "allow_remember": false,
		"gemini_session_id": "5d1c9f0e-8a8b-4f57-9a61-2f0a3b4c5d6e",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %#v, want %#v", k, p[k], v)
		}
	}
	if s := jsonOf(t, p); strings.Contains(s, "Claude") || strings.Contains(s, "Codex") {
		t.Errorf("a Gemini prompt names another agent: %s", s)
	}

	e := decodeOrFail(t, replaceBody).Params
	if e["message"] != "Gemini CLI wants to edit **/work/repo/a.go**" || e["reason"] != "Rename a to b" {
		t.Errorf("replace params = %v", e)
	}
	m := decodeOrFail(t, mcpBody).Params
	if m["message"] != "Gemini CLI wants to call **mcp__docs__search**" || m["mcp_server"] != "docs" || m["mcp_tool"] != "search" ||
		m["content_preview"] != `mcp__docs__search({"q":"deploy"})` {
		t.Errorf("mcp params = %v", m)
	}
	if _, ok := m["command"]; ok {
		t.Errorf("an MCP call has a command: %v", m)
	}

	long := strings.Replace(shellBody, "touch /tmp/x", "echo "+strings.Repeat("a ", 200)+"\\n  done", 1)
	if msg := decodeOrFail(t, long).Params["message"].(string); !strings.HasSuffix(msg, "…**") || strings.Contains(msg, "\n") {
		t.Errorf("long message = %q", msg)
	}
}

// TestShellDirPath: a command given a dir_path is judged where it runs.
func TestShellDirPath(t *testing.T) {
	for dir, want := range map[string]string{"sub/../lib": "/work/repo/lib", "/": "/", "  ": "/work/repo"} {
		body := strings.Replace(shellBody, `"description"`, `"dir_path":"`+dir+`","description"`, 1)
		r := decodeOrFail(t, body)
		if r.Cwd != want || r.Params["cwd"] != want {
			t.Errorf("dir_path %q: cwd %q (params %v), want %q", dir, r.Cwd, r.Params["cwd"], want)
		}
	}
}

// TestDecodeBadInput: every refusal names the field; unknown fields are ignored.
func TestDecodeBadInput(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"not json", `nope`, "JSON object"},
		{"array", `[1]`, "JSON object"},
		{"no event", `{"session_id":"s","tool_name":"glob","tool_input":{}}`, "hook_event_name is required"},
		{"after tool", `{"hook_event_name":"AfterTool","session_id":"s"}`, `does not handle "AfterTool"`},
		{"claude event", `{"hook_event_name":"PreToolUse","session_id":"s"}`, `does not handle "PreToolUse"`},
		{"event number", `{"hook_event_name":3}`, "hook_event_name has the wrong type"},
		{"no session", `{"hook_event_name":"BeforeTool","tool_name":"glob","tool_input":{}}`, "session_id is required"},
		{"session number", `{"hook_event_name":"BeforeTool","session_id":7}`, "session_id has the wrong type"},
		{"no tool", `{"hook_event_name":"BeforeTool","session_id":"s","tool_input":{}}`, "tool_name"},
		{"input string", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":"ls"}`, "tool_input"},
		{"input null", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":null}`, "tool_input"},
		{"no command", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":{"description":"x"}}`, "tool_input.command"},
		{"blank command", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":{"command":"  "}}`, "tool_input.command"},
		{"command array", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":{"command":["ls"]}}`, "tool_input.command"},
		{"write no path", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"write_file","tool_input":{"content":"x"}}`, "tool_input.file_path"},
		{"replace path number", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"replace","tool_input":{"file_path":1}}`, "tool_input.file_path"},
		{"mcp context string", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"mcp_a_b","tool_input":{},"mcp_context":"a"}`, "mcp_context has the wrong type"},
		{"mcp context no server", `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"mcp_a_b","tool_input":{},"mcp_context":{"tool_name":"b"}}`, "mcp_context must name its server_name"},
	}
	for _, tc := range cases {
		if _, err := (Agent{}).Decode("", []byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := (Agent{}).Decode("BeforeTool", []byte(strings.Replace(shellBody, `"hook_event_name":"BeforeTool",`, "", 1))); err != nil {
		t.Errorf("the route's event is not used: %v", err)
	}
	if _, err := (Agent{}).Decode("", []byte(mcpBody)); err != nil {
		t.Errorf("unknown fields refused: %v", err)
	}
}
