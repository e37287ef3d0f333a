package codexcli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Bodies as Codex 0.171 sends them (`codex exec --approve-for-me`, captured by the
// real-client tests in internal/testkit/clienttest).
const (
	permissionBody = `{"session_id":"01a2316b-a717-75b3-9a75-e38b7072e047","turn_id":"01a2316b-a739-7802-8df5-282ded863613","transcript_path":null,"cwd":"/work/repo","hook_event_name":"PermissionRequest","model":"gpt-5.1-codex","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"touch /tmp/x","description":"Create the marker file"}}`
	preToolUseBody = `{"session_id":"01a2316b-a717-75b3-9a75-e38b7072e047","turn_id":"01a2316b-a739-7802-8df5-282ded863613","transcript_path":null,"cwd":"/work/repo","hook_event_name":"PreToolUse","model":"gpt-5.1-codex","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"touch /tmp/x"},"tool_use_id":"call_1"}`
	mcpBody        = `{"session_id":"s","turn_id":"t","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"mcp__docs__search","tool_input":{"q":"deploy"},"tool_use_id":"call_2","future_field":{"x":1}}`
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

// TestAnswers pins every hook output per event and action: exactly the fields Codex
// documents, nothing it would fail closed on.
func TestAnswers(t *testing.T) {
	cases := []struct {
		name, body, action string
		content            map[string]any
		want               string
	}{
		{"permission allow", permissionBody, "accept", nil,
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"permission allow ignores remember", permissionBody, "accept", map[string]any{"remember": true, "feedback": "ok"},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"permission deny", permissionBody, "decline", nil,
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied by bob@example.com in Gatehouse."},"hookEventName":"PermissionRequest"}}`},
		{"permission deny reason", permissionBody, "decline", map[string]any{"feedback": "  use staging  "},
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"use staging"},"hookEventName":"PermissionRequest"}}`},
		{"permission cancel", permissionBody, "cancel", map[string]any{"feedback": " "},
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied by bob@example.com in Gatehouse."},"hookEventName":"PermissionRequest"}}`},
		{"pre allow decides nothing", preToolUseBody, "accept", map[string]any{"remember": true}, `{}`},
		{"pre deny", preToolUseBody, "decline", nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by bob@example.com in Gatehouse."}}`},
		{"pre deny reason", preToolUseBody, "decline", map[string]any{"feedback": "no"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{"pre cancel", preToolUseBody, "cancel", nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by bob@example.com in Gatehouse."}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := jsonOf(t, decodeOrFail(t, tc.body).Answer(models.Verdict{Action: tc.action, Content: tc.content}, "bob@example.com"))
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			for _, banned := range []string{"updatedInput", "updatedPermissions", "interrupt", `"allow","permissionDecisionReason"`, `"ask"`} {
				if strings.Contains(got, banned) {
					t.Fatalf("answer carries %s, which Codex fails closed on: %s", banned, got)
				}
			}
		})
	}
}

// TestParams: what a person is shown; the description is the model's reason, kept
// apart from what is approved.
func TestParams(t *testing.T) {
	p := decodeOrFail(t, permissionBody).Params()
	want := map[string]any{
		"message": "Codex wants to run **touch /tmp/x**", "vendor": "Codex", "command": "touch /tmp/x",
		"reason": "Create the marker file", "tool_name": "Bash", "cwd": "/work/repo", "codex_event": "PermissionRequest",
		"content_preview": "touch /tmp/x", "allow_remember": false, "model": "gpt-5.1-codex",
		"codex_session_id": "01a2316b-a717-75b3-9a75-e38b7072e047", "codex_turn_id": "01a2316b-a739-7802-8df5-282ded863613",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %#v, want %#v", k, p[k], v)
		}
	}
	if got := jsonOf(t, p["tool_input"]); got != `{"command":"touch /tmp/x"}` {
		t.Errorf("tool_input = %s", got)
	}
	for _, s := range []string{jsonOf(t, p)} {
		if strings.Contains(s, "Claude") {
			t.Errorf("a Codex prompt mentions Claude: %s", s)
		}
	}

	m := decodeOrFail(t, mcpBody).Params()
	if m["message"] != "Codex wants to call **mcp__docs__search**" || m["content_preview"] != `mcp__docs__search({"q":"deploy"})` {
		t.Errorf("mcp params = %v", m)
	}
	if _, ok := m["command"]; ok {
		t.Errorf("a non-Bash tool has a command: %v", m)
	}

	long := strings.Replace(permissionBody, "touch /tmp/x", "echo "+strings.Repeat("a ", 200)+"\\n  done", 1)
	lp := decodeOrFail(t, long).Params()
	if msg := lp["message"].(string); !strings.HasSuffix(msg, "…**") || strings.Contains(msg, "\n") {
		t.Errorf("long message = %q", msg)
	}
}

// TestKeySharedAcrossEvents: PreToolUse and PermissionRequest for one command share a
// key (one prompt); another command, turn, directory or Gatehouse session does not.
func TestKeySharedAcrossEvents(t *testing.T) {
	pre, perm := decodeOrFail(t, preToolUseBody), decodeOrFail(t, permissionBody)
	if !bytes.Equal(pre.Key("conv_1"), perm.Key("conv_1")) {
		t.Fatalf("keys differ:\n%s\n%s", pre.Key("conv_1"), perm.Key("conv_1"))
	}
	if bytes.Equal(pre.Key("conv_1"), pre.Key("conv_2")) {
		t.Fatal("the Gatehouse session is not part of the key")
	}
	for _, change := range [][2]string{{"touch /tmp/x", "rm -rf /tmp/x"}, {`"turn_id":"01a2316b-a739`, `"turn_id":"01a2316b-ffff`}, {"/work/repo", "/other"}} {
		other := decodeOrFail(t, strings.Replace(permissionBody, change[0], change[1], 1))
		if bytes.Equal(other.Key("conv_1"), perm.Key("conv_1")) {
			t.Errorf("changing %q leaves the key alone", change[0])
		}
	}
}

// TestDecodeBadInput: every refusal names the field; unknown fields are ignored.
func TestDecodeBadInput(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"not json", `nope`, "JSON object"},
		{"array", `[1]`, "JSON object"},
		{"no event", `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, "hook_event_name is required"},
		{"stop event", `{"hook_event_name":"Stop"}`, `does not handle "Stop"`},
		{"event number", `{"hook_event_name":3}`, "hook_event_name has the wrong type"},
		{"no tool", `{"hook_event_name":"PreToolUse","tool_input":{}}`, "tool_name"},
		{"input string", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"}`, "tool_input"},
		{"input null", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":null}`, "tool_input"},
		{"no command", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"description":"x"}}`, "tool_input.command"},
		{"blank command", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"  "}}`, "tool_input.command"},
		{"command array", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["ls"]}}`, "tool_input.command"},
	}
	for _, tc := range cases {
		if _, err := Decode([]byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := Decode([]byte(mcpBody)); err != nil {
		t.Errorf("unknown fields refused: %v", err)
	}
}
