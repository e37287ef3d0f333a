package claude

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

func decodeOrFail(t *testing.T, body string) *Payload {
	t.Helper()
	p, err := Decode([]byte(body))
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

const (
	bashBody = `{"session_id":"s","cwd":"/w","permission_mode":"default","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"npm test"},"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test"}],"behavior":"allow","destination":"localSettings"}],"effort":{"level":"high"}}`
	askBody  = `{"session_id":"s","hook_event_name":"PreToolUse","tool_use_id":"toolu_1","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which DB?","header":"DB","multiSelect":true,"options":[{"label":"pg","description":"Postgres","preview":"x"},{"label":"lite"}]}]}}`
	planBody = `{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"ExitPlanMode","tool_input":{"plan":"# Plan\n1. do it"}}`
)

// TestDecisionsPerToolAndAction pins every hook answer per tool and action.
func TestDecisionsPerToolAndAction(t *testing.T) {
	cases := []struct {
		name, body, event, action string
		content                   map[string]any
		want                      string
	}{
		{"allow", bashBody, EventPermissionRequest, "accept", nil,
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"allow remember", bashBody, EventPermissionRequest, "accept", map[string]any{"remember": true},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test"}],"behavior":"allow","destination":"localSettings"}]},"hookEventName":"PermissionRequest"}}`},
		{"remember false", bashBody, EventPermissionRequest, "accept", map[string]any{"remember": false},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"deny", bashBody, EventPermissionRequest, "decline", nil,
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied by bob@example.com in Gatehouse."},"hookEventName":"PermissionRequest"}}`},
		{"deny feedback", bashBody, EventPermissionRequest, "decline", map[string]any{"feedback": "  no  "},
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"no"},"hookEventName":"PermissionRequest"}}`},
		{"deny blank feedback", bashBody, EventPermissionRequest, "cancel", map[string]any{"feedback": "   "},
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied by bob@example.com in Gatehouse."},"hookEventName":"PermissionRequest"}}`},
		{"ask answers", askBody, EventPermissionRequest, "accept", map[string]any{"Which DB?": []string{"pg", "lite"}},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedInput":{"answers":{"Which DB?":["pg","lite"]},"questions":[{"header":"DB","multiSelect":true,"options":[{"description":"Postgres","label":"pg","preview":"x"},{"label":"lite"}],"question":"Which DB?"}]}},"hookEventName":"PermissionRequest"}}`},
		{"ask no answers", askBody, EventPermissionRequest, "accept", map[string]any{"remember": true},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"plan accept remember", planBody, EventPermissionRequest, "accept", map[string]any{"remember": true},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"plan feedback", planBody, EventPermissionRequest, "decline", map[string]any{"feedback": "smaller steps"},
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"smaller steps"},"hookEventName":"PermissionRequest"}}`},
		{"pre allow", bashBody, EventPreToolUse, "accept", map[string]any{"remember": true},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Approved in Gatehouse"}}`},
		{"pre deny", bashBody, EventPreToolUse, "decline", nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by bob@example.com in Gatehouse."}}`},
		{"pre cancel", bashBody, EventPreToolUse, "cancel", nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by bob@example.com in Gatehouse."}}`},
		{"pre deny feedback", bashBody, EventPreToolUse, "decline", map[string]any{"feedback": "use make"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use make"}}`},
		{"pre ask", askBody, EventPreToolUse, "accept", map[string]any{"DB": "pg"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Approved in Gatehouse","updatedInput":{"answers":{"DB":"pg"},"questions":[{"header":"DB","multiSelect":true,"options":[{"description":"Postgres","label":"pg","preview":"x"},{"label":"lite"}],"question":"Which DB?"}]}}}`},
	}
	for _, tc := range cases {
		p := decodeOrFail(t, tc.body)
		v := models.Verdict{Action: tc.action, Content: tc.content}
		var got map[string]any
		if tc.event == EventPreToolUse {
			got = p.PreToolUseDecision(v, "bob@example.com")
		} else {
			got = p.PermissionDecision(v, "bob@example.com")
		}
		if s := jsonOf(t, got); s != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, s, tc.want)
		}
	}
}

func TestElicitationDecision(t *testing.T) {
	cases := []struct {
		action  string
		content map[string]any
		want    string
	}{
		{"accept", map[string]any{"env": "prod", "n": json.Number("2")}, `{"hookSpecificOutput":{"action":"accept","content":{"env":"prod","n":2},"hookEventName":"Elicitation"}}`},
		{"accept", nil, `{"hookSpecificOutput":{"action":"accept","content":{},"hookEventName":"Elicitation"}}`},
		{"decline", map[string]any{"env": "prod"}, `{"hookSpecificOutput":{"action":"decline","hookEventName":"Elicitation"}}`},
		{"cancel", nil, `{"hookSpecificOutput":{"action":"cancel","hookEventName":"Elicitation"}}`},
	}
	for _, tc := range cases {
		if got := jsonOf(t, ElicitationDecision(models.Verdict{Action: tc.action, Content: tc.content})); got != tc.want {
			t.Errorf("%s: got %s want %s", tc.action, got, tc.want)
		}
	}
}

func TestParams(t *testing.T) {
	p := decodeOrFail(t, bashBody).Params()
	for k, want := range map[string]any{"mode": "form", "message": "Claude wants to call **Bash**", "phase": "pre_tool_use",
		"policy_name": "claude_native_permission", "content_preview": `Bash({"command":"npm test"})`, "tool_name": "Bash",
		"cwd": "/w", "permission_mode": "default", "vendor": "Claude Code"} {
		if p[k] != want {
			t.Errorf("params[%q] = %v, want %v", k, p[k], want)
		}
	}
	if _, ok := p["tool_use_id"]; ok {
		t.Errorf("PermissionRequest has no tool_use_id: %v", p)
	}
	ask := decodeOrFail(t, askBody).Params()
	if ask["tool_use_id"] != "toolu_1" {
		t.Errorf("tool_use_id = %v", ask["tool_use_id"])
	}
	if got := jsonOf(t, ask["ask_user_question"]); got != `{"questions":[{"header":"DB","multiSelect":true,"options":[{"description":"Postgres","label":"pg"},{"description":"","label":"lite"}],"question":"Which DB?"}]}` {
		t.Errorf("ask_user_question = %s", got)
	}
	plan := decodeOrFail(t, planBody).Params()
	if got := jsonOf(t, plan["exit_plan_mode"]); got != `{"plan":"# Plan\n1. do it"}` {
		t.Errorf("exit_plan_mode = %s", got)
	}
	long := decodeOrFail(t, `{"tool_name":"Write","tool_input":{"content":"`+strings.Repeat("é", 5000)+`"}}`).Params()
	if n := len([]rune(long["content_preview"].(string))); n != PreviewLimit {
		t.Errorf("preview has %d characters, want %d", n, PreviewLimit)
	}
}

func TestElicitationParams(t *testing.T) {
	p, err := DecodeElicitation([]byte(`{"hook_event_name":"Elicitation","mcp_server_name":"deploy","message":"Env?","mode":"form","requested_schema":{"type":"object","properties":{"env":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	params := p.ElicitationParams()
	if jsonOf(t, params["requestedSchema"]) != `{"properties":{"env":{"type":"string"}},"type":"object"}` ||
		params["server_name"] != "deploy" || params["mode"] != "form" || params["message"] != "Env?" {
		t.Errorf("params = %v", params)
	}
	p, _ = DecodeElicitation([]byte(`{"message":"Proceed?"}`))
	if got := jsonOf(t, p.ElicitationParams()["requestedSchema"]); got != `{"properties":{},"type":"object"}` {
		t.Errorf("no schema must give an empty object schema, got %s", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	for body, want := range map[string]string{
		`[]`:                                    "JSON object",
		`{`:                                     "JSON object",
		`{"tool_input":{}}`:                     "tool_name is required",
		`{"tool_name":" ","tool_input":{}}`:     "tool_name is required",
		`{"tool_name":5,"tool_input":{}}`:       "tool_name has the wrong type",
		`{"tool_name":"Bash"}`:                  "tool_input must be an object",
		`{"tool_name":"Bash","tool_input":[]}`:  "tool_input must be an object",
		`{"tool_name":"Bash","tool_input":"x"}`: "tool_input must be an object",
	} {
		if _, err := Decode([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) = %v, want %q", body, err, want)
		}
	}
	for body, want := range map[string]string{
		`{}`:                                     "message is required",
		`{"message":"m","requested_schema":"x"}`: "requested_schema must be an object",
		`{"message":"m","mode":"url"}`:           `mode "url" is not supported`,
		`{"message":["m"]}`:                      "message has the wrong type",
	} {
		if _, err := DecodeElicitation([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeElicitation(%s) = %v, want %q", body, err, want)
		}
	}
}

// TestDenyWithoutAPersonStillSaysWhere: a deny whose verdict names nobody still
// carries a message.
func TestDenyWithoutAPersonStillSaysWhere(t *testing.T) {
	p := decodeOrFail(t, bashBody)
	if got := jsonOf(t, p.PermissionDecision(models.Verdict{Action: "decline"}, "")); got !=
		`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied in Gatehouse."},"hookEventName":"PermissionRequest"}}` {
		t.Fatalf("got %s", got)
	}
}
