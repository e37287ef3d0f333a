package prompt

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/models"
)

func params(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("bad params: %v", err)
	}
	return m
}

func describe(t *testing.T, origin, js string) *Prompt {
	t.Helper()
	return Describe(origin, params(t, js), markdown.New())
}

func TestDescribeKinds(t *testing.T) {
	cases := []struct {
		name, origin, params string
		kind                 Kind
		vendor, policy       string
		remember             bool
	}{
		{"claude bash", models.OriginClaudePermission,
			`{"message":"Claude wants to call **Bash**","policy_name":"claude_native_permission","vendor":"Claude Code","tool_name":"Bash","tool_input":{"command":"ls"},` +
				`"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"ls"}],"behavior":"allow","destination":"session"}]}`,
			KindPlain, "Claude Code", "", true},
		{"claude bash without suggestions cannot remember", models.OriginClaudePermission,
			`{"tool_name":"Bash","tool_input":{"command":"ls"}}`, KindPlain, "Claude Code", "", false},
		{"claude pre tool use cannot remember", models.OriginClaudePreToolUse,
			`{"tool_name":"Bash","tool_input":{"command":"ls"}}`, KindPlain, "Claude Code", "", false},
		{"ask user question", models.OriginClaudePermission,
			`{"tool_name":"AskUserQuestion","ask_user_question":{"questions":[{"question":"Which?","header":"Pick","multiSelect":false,"options":[{"label":"a"},{"label":"b"}]}]}}`,
			KindQuestion, "Claude Code", "", false},
		{"plan", models.OriginClaudePermission,
			`{"tool_name":"ExitPlanMode","exit_plan_mode":{"plan":"# Do it"}}`, KindPlan, "Claude Code", "", false},
		{"codex command", models.OriginCodex,
			`{"vendor":"Codex","policy_name":"codex_app_server","command":"git push","cwd":"/repo","reason":"ship","allow_remember":true}`,
			KindPlain, "Codex", "", true},
		{"mcp form", models.OriginMCPEvent,
			`{"vendor":"MCP server","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`,
			KindForm, "MCP server", "", false},
		{"mcp empty schema is plain", models.OriginPolicy,
			`{"policy_name":"admin__ask_bash","requestedSchema":{},"mode":"url","url":"/approve/conv_x/elicit_y"}`,
			KindPlain, "Gatehouse policy", "admin__ask_bash", false},
		{"approval flag schema is plain", models.OriginMCPInput,
			`{"requestedSchema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}}`,
			KindPlain, "MCP server", "", false},
		{"url mode", models.OriginCodex,
			`{"vendor":"Codex","mode":"url","url":"https://github.com/login/device","message":"Sign in"}`,
			KindURL, "Codex", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := describe(t, c.origin, c.params)
			if p.Kind != c.kind || p.Vendor != c.vendor || p.Policy != c.policy || p.CanRemember != c.remember {
				t.Fatalf("got kind=%s vendor=%q policy=%q remember=%v, want %s %q %q %v",
					p.Kind, p.Vendor, p.Policy, p.CanRemember, c.kind, c.vendor, c.policy, c.remember)
			}
		})
	}
}

func TestURLModeHost(t *testing.T) {
	p := describe(t, models.OriginCodex, `{"mode":"url","url":"https://evil.example.net:8443/login?next=/x"}`)
	if p.URLHost != "evil.example.net:8443" || !p.URLSafe {
		t.Fatalf("host = %q safe=%v", p.URLHost, p.URLSafe)
	}
	p = describe(t, models.OriginCodex, `{"mode":"url","url":"javascript:alert(1)"}`)
	if p.URLSafe {
		t.Fatalf("javascript: URL marked safe")
	}
}

func TestSubmitPlain(t *testing.T) {
	p := describe(t, models.OriginClaudePermission, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`)
	d, ok := p.Submit(url.Values{"action": {"decline"}, "feedback": {"  use rg instead "}})
	if !ok || d.Action != "decline" || d.Content["feedback"] != "use rg instead" {
		t.Fatalf("decline = %+v ok=%v", d, ok)
	}
	if _, ok = p.Submit(url.Values{"action": {"accept_remember"}}); ok || p.FormError == "" {
		t.Fatalf("remember accepted without suggestions")
	}
	d, ok = p.Submit(url.Values{"action": {"accept"}, "feedback": {"ignored"}})
	if !ok || d.Action != "accept" || d.Content != nil {
		t.Fatalf("accept = %+v ok=%v", d, ok)
	}
	if _, ok = p.Submit(url.Values{"action": {"approve"}}); ok || p.FormError == "" {
		t.Fatalf("unknown action accepted")
	}
	q := describe(t, models.OriginClaudePermission, `{"tool_name":"ExitPlanMode","exit_plan_mode":{"plan":"x"}}`)
	if _, ok := q.Submit(url.Values{"action": {"accept_remember"}}); ok {
		t.Fatalf("remember accepted on a plan")
	}
}

func TestSubmitQuestions(t *testing.T) {
	p := describe(t, models.OriginClaudePermission, `{"tool_name":"AskUserQuestion","ask_user_question":{"questions":[
		{"question":"Which database?","header":"DB","multiSelect":false,"options":[{"label":"postgres"},{"label":"sqlite"}]},
		{"question":"Which languages?","header":"Langs","multiSelect":true,"options":[{"label":"Go"},{"label":"SQL"},{"label":"Rust"}]}]}}`)
	if _, ok := p.Submit(url.Values{"action": {"accept"}, "q0": {"postgres"}}); ok {
		t.Fatal("accepted with a question unanswered")
	}
	if p.Questions[1].Error == "" || p.Questions[0].Error != "" || !p.Questions[0].Options[0].Selected {
		t.Fatalf("errors/selection not bound: %+v", p.Questions)
	}
	p = describe(t, models.OriginClaudePermission, `{"tool_name":"AskUserQuestion","ask_user_question":{"questions":[
		{"question":"Which database?","header":"DB","multiSelect":false,"options":[{"label":"postgres"},{"label":"sqlite"}]},
		{"question":"Which languages?","header":"Langs","multiSelect":true,"options":[{"label":"Go"},{"label":"SQL"},{"label":"Rust"}]}]}}`)
	d, ok := p.Submit(url.Values{"action": {"accept"}, "q0": {"__other__"}, "q0_other": {"mysql"}, "q1": {"Go", "SQL"}, "q1_other": {"Zig"}})
	want := map[string]any{"Which database?": "mysql", "Which languages?": "Go, SQL, Zig"}
	if !ok || !reflect.DeepEqual(d.Content, want) {
		t.Fatalf("answers = %#v ok=%v, want %#v", d.Content, ok, want)
	}
	if _, ok := p.Submit(url.Values{"action": {"accept"}, "q0": {"oracle"}, "q1": {"Go"}}); ok {
		t.Fatal("accepted a label that is not an option")
	}
}

const mcpSchema = `{"requestedSchema":{"type":"object","properties":{
	"email":{"type":"string","format":"email","title":"Email"},
	"name":{"type":"string","minLength":2,"maxLength":10,"default":"ann"},
	"count":{"type":"integer","minimum":1,"maximum":5,"default":2},
	"ratio":{"type":"number","minimum":0.5},
	"ok":{"type":"boolean","default":true},
	"env":{"type":"string","enum":["dev","prod"],"enumNames":["Development","Production"]},
	"tier":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
	"tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]},"minItems":1},
	"when":{"type":"string","format":"date-time"},
	"level":{"type":"integer","enum":[1,2,3]}
},"required":["email","env","tags"]}}`

func TestFieldsFromSchema(t *testing.T) {
	p := describe(t, models.OriginMCPEvent, mcpSchema)
	got := map[string]Field{}
	for _, f := range p.Fields {
		got[f.Name] = f
	}
	if f := got["email"]; f.InputType != "email" || !f.Required || f.Label != "Email" {
		t.Errorf("email = %+v", f)
	}
	if f := got["name"]; f.MinLength != "2" || f.MaxLength != "10" || f.Value != "ann" {
		t.Errorf("name = %+v", f)
	}
	if f := got["count"]; f.Min != "1" || f.Max != "5" || f.Step != "1" || f.Value != "2" {
		t.Errorf("count = %+v", f)
	}
	if f := got["ok"]; f.Type != TypeBoolean || !f.Checked {
		t.Errorf("ok = %+v", f)
	}
	if f := got["env"]; f.Type != TypeEnum || f.Options[1].Label != "Production" || f.Options[1].Value != "prod" {
		t.Errorf("env = %+v", f)
	}
	if f := got["tier"]; f.Type != TypeEnum || f.Options[0].Label != "Small" {
		t.Errorf("tier = %+v", f)
	}
	if f := got["tags"]; f.Type != TypeMulti || len(f.Options) != 2 || f.MinItems != 1 {
		t.Errorf("tags = %+v", f)
	}
}

func TestSubmitFormValidates(t *testing.T) {
	p := describe(t, models.OriginMCPEvent, mcpSchema)
	_, ok := p.Submit(url.Values{"action": {"accept"}, "field.email": {"not-an-email"}, "field.name": {"x"},
		"field.count": {"9"}, "field.env": {"prod"}, "field.when": {"tomorrow"}})
	if ok {
		t.Fatal("invalid form accepted")
	}
	errsBy := map[string]string{}
	for _, f := range p.Fields {
		errsBy[f.Name] = f.Error
	}
	for _, name := range []string{"email", "name", "count", "tags", "when"} {
		if errsBy[name] == "" {
			t.Errorf("no error on %s: %#v", name, errsBy)
		}
	}
	if errsBy["env"] != "" || errsBy["ok"] != "" {
		t.Errorf("unexpected errors: %#v", errsBy)
	}
	if p.Fields[0].Name != "count" || p.Fields[0].Value != "9" {
		t.Errorf("typed value not kept: %+v", p.Fields[0])
	}

	p = describe(t, models.OriginMCPEvent, mcpSchema)
	d, ok := p.Submit(url.Values{"action": {"accept"}, "field.email": {"a@example.com"}, "field.name": {"bob"},
		"field.count": {"3"}, "field.ratio": {"0.75"}, "field.env": {"dev"}, "field.tier": {"l"},
		"field.tags": {"a", "b"}, "field.when": {"2026-01-31T09:30:00Z"}, "field.level": {"2"}})
	if !ok {
		t.Fatalf("valid form refused: %s %+v", p.FormError, p.Fields)
	}
	raw, _ := json.Marshal(d.Content)
	want := `{"count":3,"email":"a@example.com","env":"dev","level":2,"name":"bob","ok":false,"ratio":0.75,"tags":["a","b"],"tier":"l","when":"2026-01-31T09:30:00Z"}`
	if string(raw) != want {
		t.Fatalf("content = %s\nwant      %s", raw, want)
	}
}

func TestHostileSchemasDoNotPanic(t *testing.T) {
	for _, js := range []string{
		`{"requestedSchema":{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}}`,
		`{"requestedSchema":{"properties":{"a":5,"b":null,"c":{"type":["string","null"]},"d":{"enum":"x"}},"required":"a"}}`,
		`{"requestedSchema":{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}}`,
	} {
		p := describe(t, models.OriginMCPEvent, js)
		_, _ = p.Submit(url.Values{"action": {"accept"}, "field.a": {"x"}})
		if p.Kind == KindForm && len(p.Fields) == 0 {
			t.Fatalf("form without fields for %s", js)
		}
	}
	if !strings.Contains(describe(t, "", `{}`).Message, "approval") {
		t.Fatal("empty params give no message")
	}
}
