package models

import (
	"encoding/json"
	"testing"
)

// TestVerdictJSON: a verdict travels as an MCP ElicitationResult — lower-case
// "action", "content" left out when empty, and nothing about who gave it.
func TestVerdictJSON(t *testing.T) {
	for _, tc := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Action: ActionAccept}, `{"action":"accept"}`},
		{Verdict{Action: ActionDecline, Content: map[string]any{"feedback": "no"}}, `{"action":"decline","content":{"feedback":"no"}}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.v, b, err, tc.want)
		}
		var back Verdict
		if err := json.Unmarshal([]byte(tc.want), &back); err != nil || back.Action != tc.v.Action || len(back.Content) != len(tc.v.Content) {
			t.Errorf("Unmarshal(%s) = %+v, %v", tc.want, back, err)
		}
	}
}

// TestVerdictHelpers: the content readers, and a deny's reason — the feedback, else
// who denied.
func TestVerdictHelpers(t *testing.T) {
	v := Verdict{Action: ActionDecline, Content: map[string]any{"flag": true, "off": "true", "feedback": "  use make  "}}
	if !v.Bool("flag") || v.Bool("off") || v.Bool("missing") {
		t.Errorf("Bool: flag %v off %v missing %v", v.Bool("flag"), v.Bool("off"), v.Bool("missing"))
	}
	if v.String("off") != "true" || v.String("flag") != "" {
		t.Errorf("String: off %q flag %q", v.String("off"), v.String("flag"))
	}
	if v.Accepted() || !(Verdict{Action: ActionAccept}).Accepted() {
		t.Error("Accepted is wrong")
	}
	for _, tc := range []struct {
		v        Verdict
		by, want string
	}{
		{v, "bob", "use make"},
		{Verdict{Action: ActionDecline, Content: map[string]any{"feedback": " "}}, "bob", "Denied by bob in Gatehouse."},
		{Verdict{Action: ActionCancel}, "", "Denied in Gatehouse."},
	} {
		if got := tc.v.DenyReason(tc.by); got != tc.want {
			t.Errorf("DenyReason(%q) of %+v = %q, want %q", tc.by, tc.v, got, tc.want)
		}
	}
}
