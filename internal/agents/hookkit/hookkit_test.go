package hookkit

import (
	"encoding/json"
	"testing"
)

func TestDecode(t *testing.T) {
	var p struct {
		Name string `json:"tool_name"`
	}
	for body, want := range map[string]string{
		`{"tool_name":3}`: "tool_name has the wrong type (want string)",
		`[1]`:             "body is not a JSON object",
		`{`:               "body is not a JSON object",
	} {
		if err := Decode([]byte(body), &p); err == nil || err.Error() != want {
			t.Errorf("Decode(%s) = %v, want %q", body, err, want)
		}
	}
	if err := Decode([]byte(`{"tool_name":"Bash"}`), &p); err != nil || p.Name != "Bash" {
		t.Errorf("Decode = %v, %+v", err, p)
	}
}

func TestToolInput(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{" ", `{}`, "tool_name is required"},
		{"Bash", ``, "tool_input must be an object"},
		{"Bash", `[]`, "tool_input must be an object"},
		{"Bash", `{"a":`, "tool_input must be an object"},
	} {
		if _, err := ToolInput(tc.name, json.RawMessage(tc.input)); err == nil || err.Error() != tc.want {
			t.Errorf("ToolInput(%q, %s) = %v, want %q", tc.name, tc.input, err, tc.want)
		}
	}
	in, err := ToolInput("Bash", json.RawMessage(`{"command":"ls","n":12345678901234567890}`))
	if err != nil || in["command"] != "ls" || in["n"] != json.Number("12345678901234567890") {
		t.Errorf("ToolInput = %v, %v", in, err)
	}
}

// TestDeny: each event's deny shape, and no answer for an event the agent did not
// list, another event or an unreadable payload.
func TestDeny(t *testing.T) {
	all := []string{EventPermissionRequest, EventPreToolUse, EventElicitation}
	for event, want := range map[string]string{
		EventPermissionRequest: `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"no"},"hookEventName":"PermissionRequest"}}`,
		EventPreToolUse:        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`,
		EventElicitation:       `{"hookSpecificOutput":{"action":"decline","hookEventName":"Elicitation"}}`,
	} {
		got, ok := Deny([]byte(`{"hook_event_name":"`+event+`"}`), "no", all...)
		if !ok || string(got) != want {
			t.Errorf("%s: %s, %v; want %s", event, got, ok, want)
		}
	}
	for _, tc := range []struct {
		payload string
		events  []string
	}{
		{`{"hook_event_name":"Elicitation"}`, []string{EventPermissionRequest, EventPreToolUse}},
		{`{"hook_event_name":"Stop"}`, append(all, "Stop")},
		{`{"hook_event_name":`, all},
	} {
		if got, ok := Deny([]byte(tc.payload), "no", tc.events...); ok {
			t.Errorf("Deny(%s, %v) = %s, want none", tc.payload, tc.events, got)
		}
	}
}

func TestText(t *testing.T) {
	if got := Clip("héllo", 5); got != "héllo" {
		t.Errorf("Clip kept %q", got)
	}
	if got := Clip("héllo!", 5); got != "héll…" {
		t.Errorf("Clip cut to %q", got)
	}
	if got := OneLine(" a\n\tb  c "); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	for s, want := range map[string]bool{"GATEHOUSE_TOKEN": true, "_x1": true, "": false, "1A": false, "A-B": false, "A B": false} {
		if ValidEnvName(s) != want {
			t.Errorf("ValidEnvName(%q) = %v", s, !want)
		}
	}
}
