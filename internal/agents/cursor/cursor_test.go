package cursor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Bodies written from Cursor's published hook reference (no Cursor client runs here).
const (
	shellBody   = `{"hook_event_name":"beforeShellExecution","conversation_id":"c0a1-77","generation_id":"g-1","workspace_roots":["/work/app"],"model":"gpt-5","cursor_version":"2.1.0","command":"npm run deploy","cwd":"/work/app"}`
	mcpBody     = `{"hook_event_name":"beforeMCPExecution","conversation_id":"c0a1-77","generation_id":"g-2","workspace_roots":["/work/app"],"tool_name":"MCP:github:delete_repo","tool_input":"{\"repo\":\"acme/site\"}","url":"https://mcp.example/github"}`
	preShell    = `{"hook_event_name":"preToolUse","conversation_id":"c0a1-77","generation_id":"g-1","workspace_roots":["/work/app"],"tool_name":"Shell","tool_input":{"command":"npm run deploy","is_background":false}}`
	preEditBody = `{"hook_event_name":"preToolUse","conversation_id":"c0a1-77","generation_id":"g-3","workspace_roots":["/work/app"],"tool_name":"StrReplace","tool_input":{"file_path":"/work/app/.env.production","old_string":"A=1","new_string":"A=2"},"future":{"x":1}}`
)

func decode(t *testing.T, body string) *Payload {
	t.Helper()
	p, err := Decode("", []byte(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return p
}

// TestToolsMapOntoKinds: each event names a tool rules and risk know — a shell
// command is Bash with only its command, an MCP tool is mcp__server__tool with its
// input (sent as an object or as a string holding one), a StrReplace is an edit.
func TestToolsMapOntoKinds(t *testing.T) {
	for _, tc := range []struct {
		body, tool string
		kind       models.ToolKind
		input      string
	}{
		{shellBody, "Bash", models.KindShell, `{"command":"npm run deploy"}`},
		{preShell, "Bash", models.KindShell, `{"command":"npm run deploy"}`},
		{mcpBody, "mcp__github__delete_repo", models.KindMCP, `{"repo":"acme/site"}`},
		{preEditBody, "Edit", models.KindEdit, `{"file_path":"/work/app/.env.production","new_string":"A=2","old_string":"A=1"}`},
	} {
		p := decode(t, tc.body)
		tool := p.Tool()
		raw, _ := json.Marshal(tool.Input)
		if tool.Name != tc.tool || tool.Kind != tc.kind || string(raw) != tc.input {
			t.Errorf("%s: tool %s %s %s, want %s %s %s", p.HookEventName, tool.Name, tool.Kind, raw, tc.tool, tc.kind, tc.input)
		}
	}
}

// TestOnePromptPerCommand: Cursor's preToolUse and beforeShellExecution for one command
// in one generation are one prompt (one key); another generation is another prompt.
func TestOnePromptPerCommand(t *testing.T) {
	a, b := decode(t, shellBody).Key("sess_1"), decode(t, preShell).Key("sess_1")
	if !bytes.Equal(a, b) {
		t.Fatalf("keys differ:\n%s\n%s", a, b)
	}
	other := strings.Replace(preShell, `"g-1"`, `"g-9"`, 1)
	if bytes.Equal(a, decode(t, other).Key("sess_1")) {
		t.Fatal("another generation shares the key")
	}
}

// TestParamsSayWhoAsks: the prompt names Cursor and the command, in the project the
// command runs in.
func TestParamsSayWhoAsks(t *testing.T) {
	p := decode(t, shellBody).Params()
	if p["message"] != "Cursor wants to run **npm run deploy**" || p["vendor"] != "Cursor" || p["cwd"] != "/work/app" || p["command"] != "npm run deploy" {
		t.Fatalf("params %v", p)
	}
	m := decode(t, mcpBody).Params()
	if m["message"] != "Cursor wants to call **mcp__github__delete_repo**" || m["mcp_server_url"] != "https://mcp.example/github" {
		t.Fatalf("mcp params %v", m)
	}
}

// TestAnswers pins the answer shape for every event.
func TestAnswers(t *testing.T) {
	for _, body := range []string{shellBody, mcpBody, preShell} {
		p := decode(t, body)
		if got, _ := json.Marshal(p.Answer(models.Verdict{Action: "accept"}, "bob@example.com")); string(got) != `{"permission":"allow"}` {
			t.Errorf("%s allow: %s", p.HookEventName, got)
		}
		got, _ := json.Marshal(p.Answer(models.Verdict{Action: "decline", Content: map[string]any{"feedback": "use staging"}}, "bob@example.com"))
		if string(got) != `{"agent_message":"use staging","permission":"deny","user_message":"use staging"}` {
			t.Errorf("%s deny: %s", p.HookEventName, got)
		}
		got, _ = json.Marshal(p.Answer(models.Verdict{Action: "decline"}, "bob@example.com"))
		if !strings.Contains(string(got), `"agent_message":"Denied by bob@example.com in Gatehouse."`) {
			t.Errorf("%s deny without a reason names who: %s", p.HookEventName, got)
		}
	}
	deny, ok := Agent{}.Deny([]byte(mcpBody), "Gatehouse is down")
	if !ok || string(deny) != `{"agent_message":"Gatehouse is down","permission":"deny","user_message":"Gatehouse is down"}` {
		t.Fatalf("fail-closed deny: %s %v", deny, ok)
	}
	if _, ok := (Agent{}).Deny([]byte(`{"hook_event_name":"afterFileEdit"}`), "x"); ok {
		t.Fatal("a deny for an event Gatehouse does not park")
	}
}

// TestBadPayloadsNameTheField: what cannot be a request is refused naming the field.
func TestBadPayloadsNameTheField(t *testing.T) {
	for body, want := range map[string]string{
		`[]`: "not a JSON object",
		`{"hook_event_name":"beforeShellExecution","command":"ls"}`:                                              "conversation_id is required",
		`{"conversation_id":"c","command":"ls"}`:                                                                 "hook_event_name is required",
		`{"hook_event_name":"afterFileEdit","conversation_id":"c"}`:                                              `does not handle "afterFileEdit"`,
		`{"hook_event_name":"beforeShellExecution","conversation_id":"c","command":"  "}`:                        "command must be a non-empty string",
		`{"hook_event_name":"beforeShellExecution","conversation_id":"c","command":5}`:                           "command has the wrong type",
		`{"hook_event_name":"beforeMCPExecution","conversation_id":"c","tool_input":{}}`:                         "tool_name is required",
		`{"hook_event_name":"beforeMCPExecution","conversation_id":"c","tool_name":"x","tool_input":"not json"}`: "tool_input must be an object",
		`{"hook_event_name":"preToolUse","conversation_id":"c","tool_name":"Shell","tool_input":{"command":[]}}`: "tool_input.command must be a non-empty string",
		`{"hook_event_name":"preToolUse","conversation_id":"c","tool_name":"Write","tool_input":[1]}`:            "tool_input must be an object",
	} {
		if _, err := Decode("", []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", body, err, want)
		}
	}
}

// TestSettingsFailClosed: the installed hooks run `gatehouse hook cursor` with the URL
// and token variable, wait longer than the server does, and fail closed; a bad option
// names itself.
func TestSettingsFailClosed(t *testing.T) {
	s, err := Agent{}.Settings(models.SettingsOptions{URL: "https://gh.example", Command: "/usr/local/bin/gatehouse", TokenEnv: "GATEHOUSE_TOKEN", Wait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "hooks": {
    "beforeMCPExecution": [
      {
        "command": "/usr/local/bin/gatehouse hook cursor --url https://gh.example --token-env GATEHOUSE_TOKEN",
        "failClosed": true,
        "timeout": 3630
      }
    ],
    "beforeShellExecution": [
      {
        "command": "/usr/local/bin/gatehouse hook cursor --url https://gh.example --token-env GATEHOUSE_TOKEN",
        "failClosed": true,
        "timeout": 3630
      }
    ]
  }
}
`
	if s.Text != want || s.File.Name != "hooks.json" || s.File.Dir != ".cursor" {
		t.Fatalf("settings:\n%s\nfile %+v", s.Text, s.File)
	}
	for o, want := range map[*models.SettingsOptions]string{
		{URL: "u", Command: "gatehouse", TokenEnv: "1BAD"}: "--token-env",
		{URL: "u", Command: "my gatehouse"}:                "--command",
	} {
		if _, err := (Agent{}).Settings(*o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: err %v, want %q", *o, err, want)
		}
	}
}
