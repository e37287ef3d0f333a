package prompt

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzSubmit feeds hostile params (schemas, questions) and form posts through
// Describe and Submit: they may refuse, never panic, and an accepted decision only
// carries the content types an ElicitationResult allows.
func FuzzSubmit(f *testing.F) {
	f.Add(mcpSchema, "action=accept&field.email=a%40b.co&field.env=dev&field.tags=a")
	f.Add(`{"ask_user_question":{"questions":[{"question":"q","options":[{"label":"a"}],"multiSelect":true}]}}`, "action=accept&q0=a&q0_other=x")
	f.Add(`{"tool_name":"Bash","tool_input":{"command":"ls"}}`, "action=accept_remember")
	f.Add(`{"requestedSchema":{"properties":{"n":{"type":"number","minimum":1e308}}}}`, "action=accept&field.n=1e309")
	f.Add(`{"requestedSchema":{"properties":{"a":{"$ref":"#/x"},"b":{"enum":[1,true,null,{"x":1}]}},"required":[1]}}`, "action=accept&field.b=1")
	f.Add(`{"exit_plan_mode":{"plan":"<script>"}, "mode":"url","url":"%"}`, "action=decline&feedback=no")
	md := markdown.New()
	f.Fuzz(func(t *testing.T, params, form string) {
		var m map[string]any
		if json.Unmarshal([]byte(params), &m) != nil {
			return
		}
		vals, err := url.ParseQuery(form)
		if err != nil {
			return
		}
		p := Describe("mcp_event", m, md)
		d, ok := p.Submit(vals)
		if !ok {
			return
		}
		switch d.Action {
		case models.ActionAccept, models.ActionDecline, models.ActionCancel:
		default:
			t.Fatalf("action %q", d.Action)
		}
		for k, v := range d.Content {
			switch v.(type) {
			case string, bool, json.Number, []string:
			default:
				t.Fatalf("content %q has type %T", k, v)
			}
		}
	})
}
