package copilot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Bodies as Copilot CLI 1.0.102 sends them (`copilot -p`, captured from the real
// client against a fake model).
const (
	permissionBody = `{"hookName":"permissionRequest","sessionId":"ce148d37-02c4-4ee4-85c0-1792c6c1709d","timestamp":1796360181403,"cwd":"/work/repo","toolName":"bash","toolInput":{"command":"touch /tmp/x"},"permissionSuggestions":[]}`
	preToolUseBody = `{"sessionId":"ce148d37-02c4-4ee4-85c0-1792c6c1709d","timestamp":1796360181349,"cwd":"/work/repo","toolName":"bash","toolArgs":{"command":"touch /tmp/x","description":"Create the marker file"}}`
	viewBody       = `{"sessionId":"d7b1479e-6182-4ff9-bac6-cd3ea4c6ce07","timestamp":1796360279403,"cwd":"/work/repo","toolName":"view","toolArgs":{"path":"/tmp","view_range":[1,20]}}`
	editBody       = `{"sessionId":"s1","timestamp":1,"cwd":"/work/repo","toolName":"edit","toolArgs":{"path":"/work/repo/main.go","old_str":"a := 1","new_str":"a := 2"}}`
	createBody     = `{"sessionId":"s1","timestamp":1,"cwd":"/work/repo","toolName":"create","toolArgs":{"path":"/work/repo/new.txt","file_text":"hello\n"}}`
	otherBody      = `{"hookName":"permissionRequest","sessionId":"s1","cwd":"/w","toolName":"github-mcp-server-get_issue","toolInput":{"issue":7},"permissionSuggestions":[{"kind":"tool","name":"github-mcp-server-get_issue"}],"future":{"x":1}}`
	stringArgsBody = `{"sessionId":"s1","timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"rm -rf dist\",\"description\":\"Clean build directory\"}"}`
)

func decodeOrFail(t *testing.T, body string) *Payload {
	t.Helper()
	p, err := Decode("", []byte(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return p
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAnswers pins the hook output per event and action: exactly the fields Copilot
// reads, never "ask" (a headless Copilot fails on it).
func TestAnswers(t *testing.T) {
	cases := []struct {
		name, body, action string
		content            map[string]any
		want               string
	}{
		{"permission allow", permissionBody, "accept", nil, `{"behavior":"allow"}`},
		{"permission allow ignores remember", permissionBody, "accept", map[string]any{"remember": true}, `{"behavior":"allow"}`},
		{"permission deny", permissionBody, "decline", nil, `{"behavior":"deny","message":"Denied by bob@example.com in Gatehouse."}`},
		{"permission deny reason", permissionBody, "decline", map[string]any{"feedback": "  use staging  "}, `{"behavior":"deny","message":"use staging"}`},
		{"permission cancel", permissionBody, "cancel", map[string]any{"feedback": " "}, `{"behavior":"deny","message":"Denied by bob@example.com in Gatehouse."}`},
		{"pre allow", preToolUseBody, "accept", nil, `{"permissionDecision":"allow"}`},
		{"pre deny", preToolUseBody, "decline", nil, `{"permissionDecision":"deny","permissionDecisionReason":"Denied by bob@example.com in Gatehouse."}`},
		{"pre deny reason", preToolUseBody, "decline", map[string]any{"feedback": "no"}, `{"permissionDecision":"deny","permissionDecisionReason":"no"}`},
		{"pre cancel", preToolUseBody, "cancel", nil, `{"permissionDecision":"deny","permissionDecisionReason":"Denied by bob@example.com in Gatehouse."}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := jsonOf(t, decodeOrFail(t, tc.body).Answer(models.Verdict{Action: tc.action, Content: tc.content}, "bob@example.com"))
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestDeny: the forwarder's deny has each event's shape; a payload of neither event
// has none.
func TestDeny(t *testing.T) {
	for body, want := range map[string]string{
		permissionBody: `{"behavior":"deny","message":"late"}`,
		preToolUseBody: `{"permissionDecision":"deny","permissionDecisionReason":"late"}`,
	} {
		got, ok := Agent{}.Deny([]byte(body), "late")
		if !ok || string(got) != want {
			t.Errorf("Deny = %s %v, want %s", got, ok, want)
		}
	}
	for _, body := range []string{`{"sessionId":"s","toolName":"bash","toolArgs":{},"toolResult":{}}`, `{"hookName":"sessionStart"}`, `nope`} {
		if got, ok := (Agent{}).Deny([]byte(body), "x"); ok {
			t.Errorf("Deny(%s) = %s, want none", body, got)
		}
	}
}

// TestMapping: Copilot's tools become the names, kinds and fields rules and prompts
// know, so Bash(…) rules and the risk assessment see a Copilot command as a Claude one.
func TestMapping(t *testing.T) {
	cases := []struct {
		body, tool string
		kind       models.ToolKind
		input      string
	}{
		{preToolUseBody, "Bash", models.KindShell, `{"command":"touch /tmp/x"}`},
		{permissionBody, "Bash", models.KindShell, `{"command":"touch /tmp/x"}`},
		{stringArgsBody, "Bash", models.KindShell, `{"command":"rm -rf dist"}`},
		{viewBody, "Read", models.KindRead, `{"file_path":"/tmp","view_range":[1,20]}`},
		{editBody, "Edit", models.KindEdit, `{"file_path":"/work/repo/main.go","new_string":"a := 2","old_string":"a := 1"}`},
		{createBody, "Write", models.KindWrite, `{"content":"hello\n","file_path":"/work/repo/new.txt"}`},
		{otherBody, "github-mcp-server-get_issue", models.KindOther, `{"issue":7}`},
	}
	for _, tc := range cases {
		r, err := Agent{}.Decode("", []byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if r.Tool.Name != tc.tool || r.Tool.Kind != tc.kind || jsonOf(t, r.Tool.Input) != tc.input {
			t.Errorf("%s: tool %s %s %s, want %s %s %s", tc.body, r.Tool.Name, r.Tool.Kind, jsonOf(t, r.Tool.Input), tc.tool, tc.kind, tc.input)
		}
		if r.Params["tool_name"] != tc.tool || jsonOf(t, r.Params["tool_input"]) != tc.input {
			t.Errorf("%s: params name the call %v %v", tc.body, r.Params["tool_name"], r.Params["tool_input"])
		}
		if r.ExternalSession == "" || r.ExternalKey != "copilot:"+r.ExternalSession || r.Origin != Origin || r.Vendor != "Copilot CLI" {
			t.Errorf("%s: request %+v", tc.body, r)
		}
	}
}

// TestParams: what a person is shown says who asks and what; the description is the
// model's reason, kept apart from what is approved.
func TestParams(t *testing.T) {
	p := decodeOrFail(t, preToolUseBody).Params()
	want := map[string]any{
		"message": "Copilot CLI wants to run **touch /tmp/x**", "vendor": "Copilot CLI", "command": "touch /tmp/x",
		"reason": "Create the marker file", "tool_name": "Bash", "copilot_tool": "bash", "cwd": "/work/repo",
		"copilot_event": "preToolUse", "content_preview": "touch /tmp/x", "allow_remember": false,
		"copilot_session_id": "ce148d37-02c4-4ee4-85c0-1792c6c1709d",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %#v, want %#v", k, p[k], v)
		}
	}
	if strings.Contains(jsonOf(t, p), "Claude") {
		t.Errorf("a Copilot prompt mentions Claude: %v", p)
	}
	if m := decodeOrFail(t, editBody).Params()["message"]; m != "Copilot CLI wants to edit **/work/repo/main.go**" {
		t.Errorf("edit message = %v", m)
	}
	o := decodeOrFail(t, otherBody).Params()
	if o["message"] != "Copilot CLI wants to call **github-mcp-server-get_issue**" || o["copilot_event"] != "permissionRequest" ||
		jsonOf(t, o["permission_suggestions"]) != `[{"kind":"tool","name":"github-mcp-server-get_issue"}]` {
		t.Errorf("other params = %v", o)
	}
	long := strings.Replace(preToolUseBody, "touch /tmp/x", "echo "+strings.Repeat("a ", 200)+"\\n  done", 1)
	if msg := decodeOrFail(t, long).Params()["message"].(string); !strings.HasSuffix(msg, "…**") || strings.Contains(msg, "\n") {
		t.Errorf("long message = %q", msg)
	}
}

// TestDecodeEvent: the route's event wins; otherwise hookName, otherwise toolArgs
// means preToolUse.
func TestDecodeEvent(t *testing.T) {
	for _, tc := range []struct{ event, body, want string }{
		{"", permissionBody, EventPermissionRequest},
		{"", preToolUseBody, EventPreToolUse},
		{EventPreToolUse, preToolUseBody, EventPreToolUse},
		{"", `{"hookName":"preToolUse","sessionId":"s","toolName":"bash","toolArgs":{"command":"ls"}}`, EventPreToolUse},
	} {
		p, err := Decode(tc.event, []byte(tc.body))
		if err != nil || p.Event != tc.want {
			t.Errorf("Decode(%q, %s) = %v, %v; want %s", tc.event, tc.body, p, err, tc.want)
		}
	}
}

// TestDecodeBadInput: every refusal names the field; unknown fields are ignored.
func TestDecodeBadInput(t *testing.T) {
	cases := []struct{ name, event, body, want string }{
		{"not json", "", `nope`, "JSON object"},
		{"array", "", `[1]`, "JSON object"},
		{"no event", "", `{"sessionId":"s","toolName":"bash","toolInput":{"command":"ls"}}`, "hookName is required"},
		{"post tool use", "", `{"sessionId":"s","toolName":"bash","toolArgs":{"command":"ls"},"toolResult":{"resultType":"success"}}`, "toolResult: this is a postToolUse payload"},
		{"session start", "", `{"hookName":"sessionStart","sessionId":"s"}`, `does not handle "sessionStart"`},
		{"route event", "postToolUse", preToolUseBody, `does not handle "postToolUse"`},
		{"hookName number", "", `{"hookName":3}`, "hookName has the wrong type"},
		{"no tool", "", `{"hookName":"permissionRequest","sessionId":"s","toolInput":{}}`, "toolName is required"},
		{"no session", "", `{"hookName":"permissionRequest","toolName":"bash","toolInput":{"command":"ls"}}`, "sessionId is required"},
		{"args string", "", `{"sessionId":"s","toolName":"bash","toolArgs":"ls"}`, "toolArgs must be an object"},
		{"args null", "", `{"sessionId":"s","toolName":"bash","toolArgs":null}`, "toolArgs must be an object"},
		{"input missing", "", `{"hookName":"permissionRequest","sessionId":"s","toolName":"bash"}`, "toolInput must be an object"},
		{"input list", "", `{"hookName":"permissionRequest","sessionId":"s","toolName":"bash","toolInput":[]}`, "toolInput must be an object"},
		{"no command", "", `{"sessionId":"s","toolName":"bash","toolArgs":{"description":"x"}}`, "toolArgs.command must be a non-empty string"},
		{"blank command", "", `{"hookName":"permissionRequest","sessionId":"s","toolName":"bash","toolInput":{"command":"  "}}`, "toolInput.command must be a non-empty string"},
		{"command list", "", `{"sessionId":"s","toolName":"bash","toolArgs":{"command":["ls"]}}`, "toolArgs.command"},
		{"edit no path", "", `{"sessionId":"s","toolName":"edit","toolArgs":{"old_str":"a"}}`, "toolArgs.path must be a non-empty string"},
		{"suggestions object", "", `{"hookName":"permissionRequest","sessionId":"s","toolName":"x","toolInput":{},"permissionSuggestions":{}}`, "permissionSuggestions must be a list"},
		{"session number", "", `{"sessionId":5,"toolName":"bash","toolArgs":{"command":"ls"}}`, "sessionId has the wrong type"},
	}
	for _, tc := range cases {
		if _, err := (Agent{}).Decode(tc.event, []byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	for _, b := range []string{otherBody, viewBody, stringArgsBody} {
		if _, err := Decode("", []byte(b)); err != nil {
			t.Errorf("%s refused: %v", b, err)
		}
	}
}
