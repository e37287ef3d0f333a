package prompt

import (
	"encoding/json"
	"errors"
	"net/url"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

const deployParams = `{"tool_name":"Bash","tool_input":{"command":"npm run deploy"},"permission_suggestions":[` +
	`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm run deploy:*"}],"behavior":"allow","destination":"localSettings"},` +
	`{"type":"addDirectories","directories":["/w/dist"],"destination":"session"},` +
	`{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`

// TestDescribeSuggestions: each suggestion is offered, none preselected, and only
// allow rules with content are editable.
func TestDescribeSuggestions(t *testing.T) {
	p := describe(t, models.OriginClaudePermission, deployParams)
	if !p.CanRemember || len(p.Suggestions) != 3 || p.RememberChosen() {
		t.Fatalf("suggestions = %+v", p.Suggestions)
	}
	s := p.Suggestions[0]
	if s.Title != "Always allow" || len(s.Rules) != 1 || !s.Rules[0].Editable || s.Rules[0].Content != "npm run deploy:*" ||
		s.Rules[0].Name != "rule_0_0" || s.Where != "in this project, for you (.claude/settings.local.json)" {
		t.Fatalf("first = %+v", s)
	}
	if p.Suggestions[1].Title != "Allow access to /w/dist" || p.Suggestions[2].Title != "Switch to acceptEdits mode" {
		t.Fatalf("titles = %q, %q", p.Suggestions[1].Title, p.Suggestions[2].Title)
	}
	c := describe(t, models.OriginCodex, `{"codex_method":"item/commandExecution/requestApproval","allow_remember":true,"command":"npm run deploy","proposedExecpolicyAmendment":["npm","run","deploy"]}`)
	if len(c.Suggestions) != 2 || c.Suggestions[0].Title != "Allow this command" || c.Suggestions[1].Words != "npm run deploy" {
		t.Fatalf("codex suggestions = %+v", c.Suggestions)
	}
	pre := describe(t, models.OriginClaudePreToolUse, deployParams)
	if pre.CanRemember || len(pre.Suggestions) != 0 {
		t.Fatalf("PreToolUse offers suggestions (its answer cannot carry them)")
	}
}

// TestSubmitRemember: the form names a suggestion and may narrow its rule; a wider
// edit is refused with the rule's field marked and the typed text kept.
func TestSubmitRemember(t *testing.T) {
	cases := []struct {
		name  string
		form  url.Values
		want  string
		field bool // the error is on the rule's input
	}{
		{"default first", url.Values{}, `{"suggestion":0}`, false},
		{"unchanged", url.Values{"remember": {"0"}, "rule_0_0": {"npm run deploy:*"}}, `{"suggestion":0}`, false},
		{"narrowed", url.Values{"remember": {"0"}, "rule_0_0": {"npm run deploy --prod"}}, `{"ruleContent":"npm run deploy --prod","suggestion":0}`, false},
		{"directory", url.Values{"remember": {"1"}, "rule_0_0": {"*"}}, `{"suggestion":1}`, false}, // edits of another suggestion are ignored
		{"mode", url.Values{"remember": {"2"}}, `{"suggestion":2}`, false},
		{"star", url.Values{"remember": {"0"}, "rule_0_0": {"*"}}, "", true},
		{"empty", url.Values{"remember": {"0"}, "rule_0_0": {""}}, "", true},
		{"other prefix", url.Values{"remember": {"0"}, "rule_0_0": {"npm run:*"}}, "", true},
		{"bad index", url.Values{"remember": {"7"}}, "", false},
		{"not a number", url.Values{"remember": {"x"}}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := describe(t, models.OriginClaudePermission, deployParams)
			tc.form.Set("action", "accept_remember")
			d, ok := p.Submit(tc.form)
			if tc.want != "" {
				if !ok || d.Action != "accept" || toJSON(t, d.Content["remember"]) != tc.want {
					t.Fatalf("decision = %+v ok=%v form error %q", d, ok, p.FormError)
				}
				if p.CheckRemember(d.Content) != nil {
					t.Fatalf("the page's own verdict fails CheckRemember")
				}
				return
			}
			if ok || p.FormError == "" {
				t.Fatalf("accepted: %+v", d)
			}
			if got := p.Suggestions[0].Rules[0].Error != ""; got != tc.field {
				t.Fatalf("rule error = %q, want set=%v", p.Suggestions[0].Rules[0].Error, tc.field)
			}
			if tc.field && p.Suggestions[0].Rules[0].Content != tc.form.Get("rule_0_0") {
				t.Fatalf("typed rule not kept: %q", p.Suggestions[0].Rules[0].Content)
			}
		})
	}
}

// TestCheckRemember: the API's check names the field of a bad choice.
func TestCheckRemember(t *testing.T) {
	p := describe(t, models.OriginClaudePermission, deployParams)
	none := describe(t, models.OriginClaudePermission, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`)
	plan := describe(t, models.OriginClaudePermission, `{"tool_name":"ExitPlanMode","exit_plan_mode":{"plan":"x"}}`)
	codexP := describe(t, models.OriginCodex, `{"codex_method":"item/commandExecution/requestApproval","allow_remember":true,"proposedExecpolicyAmendment":["npm","run"]}`)
	rem := func(v any) map[string]any { return map[string]any{"remember": v} }
	cases := []struct {
		name    string
		p       *Prompt
		content map[string]any
		field   string
	}{
		{"true", p, rem(true), ""},
		{"true without suggestions", none, rem(true), ""},
		{"true on a plan", plan, rem(true), ""},
		{"nothing", p, nil, ""},
		{"index", p, rem(map[string]any{"suggestion": 2}), ""},
		{"narrowed", p, rem(map[string]any{"suggestion": 0, "ruleContent": "npm run deploy"}), ""},
		{"codex amendment", codexP, rem(map[string]any{"suggestion": 1}), ""},
		{"wider", p, rem(map[string]any{"suggestion": 0, "ruleContent": "npm:*"}), "content.remember.ruleContent"},
		{"out of range", p, rem(map[string]any{"suggestion": 3}), "content.remember.suggestion"},
		{"object without suggestions", none, rem(map[string]any{"suggestion": 0}), "content.remember"},
		{"object on a plan", plan, rem(map[string]any{"suggestion": 0}), "content.remember"},
		{"codex edit", codexP, rem(map[string]any{"suggestion": 1, "ruleContent": []any{"npm"}}), "content.remember.ruleContent"},
		{"bad shape", p, rem("yes"), "content.remember"},
		{"unknown key", p, rem(map[string]any{"suggestion": 0, "scope": "all"}), "content.remember.scope"},
	}
	for _, tc := range cases {
		err := tc.p.CheckRemember(tc.content)
		var fe *models.FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: err = %v", tc.name, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%s: err = %v, want field %s", tc.name, err, tc.field)
		}
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestOfferedSuggestion: an agent with one way to keep a grant (OpenCode's "always")
// offers it through remember_suggestion; the page and the API take index 0 as shown,
// nothing else; without allow_remember nothing is offered.
func TestOfferedSuggestion(t *testing.T) {
	const params = `{"tool_name":"Bash","tool_input":{"command":"touch x"},"allow_remember":true,` +
		`"remember_suggestion":{"title":"Always allow touch *","where":"while this OpenCode server runs"}}`
	p := describe(t, "opencode", params)
	if !p.CanRemember || len(p.Suggestions) != 1 || p.Suggestions[0].Title != "Always allow touch *" ||
		p.Suggestions[0].Where != "while this OpenCode server runs" {
		t.Fatalf("suggestions = %+v", p.Suggestions)
	}
	d, ok := p.Submit(url.Values{"action": {"accept_remember"}})
	if !ok || d.Action != "accept" || toJSON(t, d.Content["remember"]) != `{"suggestion":0}` {
		t.Fatalf("decision = %+v ok=%v form error %q", d, ok, p.FormError)
	}
	rem := func(v any) map[string]any { return map[string]any{"remember": v} }
	for content, field := range map[*map[string]any]string{
		ptr(rem(map[string]any{"suggestion": 0})): "",
		ptr(rem(true)): "",
		ptr(rem(map[string]any{"suggestion": 1})):                     "content.remember.suggestion",
		ptr(rem(map[string]any{"suggestion": 0, "ruleContent": "x"})): "content.remember.ruleContent",
	} {
		err := p.CheckRemember(*content)
		var fe *models.FieldError
		if (field == "" && err != nil) || (field != "" && (!errors.As(err, &fe) || fe.Field != field)) {
			t.Errorf("%v: err = %v, want field %q", *content, err, field)
		}
	}
	off := describe(t, "opencode", `{"tool_name":"Bash","tool_input":{"command":"touch x"},"allow_remember":false,"remember_suggestion":{"title":"Always"}}`)
	if off.CanRemember || len(off.Suggestions) != 0 {
		t.Fatalf("offered without allow_remember: %+v", off.Suggestions)
	}
}

func ptr[T any](v T) *T { return &v }
