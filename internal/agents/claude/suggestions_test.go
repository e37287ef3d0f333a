package claude

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// deployBody is a PermissionRequest as Claude Code 2.1 sends it for `npm run deploy`,
// with three suggestions: a prefix rule, a directory and a mode switch.
const deployBody = `{"session_id":"s","cwd":"/w","permission_mode":"default","hook_event_name":"PermissionRequest",` +
	`"tool_name":"Bash","tool_input":{"command":"npm run deploy"},"permission_suggestions":[` +
	`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm run deploy:*"}],"behavior":"allow","destination":"localSettings"},` +
	`{"type":"addDirectories","directories":["/w/dist"],"destination":"session"},` +
	`{"type":"setMode","mode":"acceptEdits","destination":"session"},` +
	`"not an object",` +
	`{"type":"addRules","rules":[{"toolName":"Read","ruleContent":"/w/docs/**"},{"toolName":"Bash","ruleContent":"git status"}],"behavior":"allow","destination":"session"}]}`

// updatedPermissions runs a verdict through PermissionDecision and returns the raw
// updatedPermissions it carries ("" for none).
func updatedPermissions(t *testing.T, body string, content map[string]any) string {
	t.Helper()
	d := decodeOrFail(t, body).PermissionDecision(models.Verdict{Action: "accept", Content: content}, "")
	dec := d["hookSpecificOutput"].(map[string]any)["decision"].(map[string]any)
	up, ok := dec["updatedPermissions"]
	if !ok {
		return ""
	}
	raw, err := json.Marshal(up)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestRememberEchoesTheChosenSuggestion: the answer holds exactly the chosen entry, as
// sent or as edited, and never a rule without content.
func TestRememberEchoesTheChosenSuggestion(t *testing.T) {
	rem := func(v map[string]any) map[string]any { return map[string]any{"remember": v} }
	cases := []struct {
		name    string
		body    string
		content map[string]any
		want    string
	}{
		{"true is the first", deployBody, map[string]any{"remember": true},
			`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm run deploy:*"}],"behavior":"allow","destination":"localSettings"}]`},
		{"index 0", deployBody, rem(map[string]any{"suggestion": json.Number("0")}),
			`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm run deploy:*"}],"behavior":"allow","destination":"localSettings"}]`},
		{"directory", deployBody, rem(map[string]any{"suggestion": 1.0}),
			`[{"type":"addDirectories","directories":["/w/dist"],"destination":"session"}]`},
		{"mode", deployBody, rem(map[string]any{"suggestion": 2}),
			`[{"type":"setMode","mode":"acceptEdits","destination":"session"}]`},
		{"non-objects are skipped", deployBody, rem(map[string]any{"suggestion": 3}),
			`[{"type":"addRules","rules":[{"toolName":"Read","ruleContent":"/w/docs/**"},{"toolName":"Bash","ruleContent":"git status"}],"behavior":"allow","destination":"session"}]`},
		{"edited", deployBody, rem(map[string]any{"suggestion": 0, "ruleContent": "npm run deploy --prod"}),
			`[{"behavior":"allow","destination":"localSettings","rules":[{"ruleContent":"npm run deploy --prod","toolName":"Bash"}],"type":"addRules"}]`},
		{"edited, several rules", deployBody, rem(map[string]any{"suggestion": 3, "ruleContent": []any{"/w/docs/api/**", "git status"}}),
			`[{"behavior":"allow","destination":"session","rules":[{"ruleContent":"/w/docs/api/**","toolName":"Read"},{"ruleContent":"git status","toolName":"Bash"}],"type":"addRules"}]`},
		{"same as shown", deployBody, rem(map[string]any{"suggestion": 0, "ruleContent": "npm run deploy:*"}),
			`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm run deploy:*"}],"behavior":"allow","destination":"localSettings"}]`},
		// Refused edits and bad indexes remember nothing (the page and API refuse them first).
		{"too wide", deployBody, rem(map[string]any{"suggestion": 0, "ruleContent": "*"}), ""},
		{"empty", deployBody, rem(map[string]any{"suggestion": 0, "ruleContent": ""}), ""},
		{"out of range", deployBody, rem(map[string]any{"suggestion": 9}), ""},
		{"edit of a directory", deployBody, rem(map[string]any{"suggestion": 1, "ruleContent": "/"}), ""},
		{"false", deployBody, map[string]any{"remember": false}, ""},
		// No suggestions: nothing is remembered, never a rule without content.
		{"no suggestions", `{"tool_name":"Bash","tool_input":{"command":"npm run deploy"}}`, map[string]any{"remember": true}, ""},
		{"suggestions not a list", `{"tool_name":"Bash","tool_input":{"command":"x"},"permission_suggestions":{"type":"addRules"}}`, map[string]any{"remember": true}, ""},
	}
	for _, tc := range cases {
		if got := updatedPermissions(t, tc.body, tc.content); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestParamsKeepSuggestions: the prompt stores the object suggestions in order.
func TestParamsKeepSuggestions(t *testing.T) {
	params := decodeOrFail(t, deployBody).Params()
	list := Suggestions(params)
	if len(list) != 4 || str(list[1]["type"]) != SuggestionAddDirectories || str(list[3]["destination"]) != "session" {
		t.Fatalf("suggestions = %v", params[ParamSuggestions])
	}
	if info := InfoOf(list[0]); !info.Editable || info.Rules[0].Content != "npm run deploy:*" {
		t.Fatalf("info = %+v", info)
	}
	if InfoOf(list[1]).Editable || InfoOf(list[2]).Editable {
		t.Fatalf("directories and modes offered for editing")
	}
	deny := map[string]any{"type": "addRules", "behavior": "deny", "rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "rm:*"}}}
	if InfoOf(deny).Editable {
		t.Fatalf("a deny rule is editable (narrowing it would allow more)")
	}
	bare := map[string]any{"type": "addRules", "behavior": "allow", "rules": []any{map[string]any{"toolName": "mcp__db__query"}}}
	if InfoOf(bare).Editable {
		t.Fatalf("a rule without content is editable")
	}
	if _, ok := decodeOrFail(t, bashBody[:len(bashBody)-1]+`,"permission_suggestions":[]}`).Params()[ParamSuggestions]; ok {
		t.Fatalf("empty suggestions stored")
	}
}

// TestCheckNarrower pins which edits Claude Code's rule syntax lets through.
func TestCheckNarrower(t *testing.T) {
	cases := []struct {
		suggested, edited string
		ok                bool
	}{
		{"npm run deploy:*", "npm run deploy:*", true},
		{"npm run deploy:*", "npm run deploy", true},
		{"npm run deploy:*", "npm run deploy --prod", true},
		{"npm run deploy:*", "npm run deploy --prod:*", true},
		{"npm run deploy:*", "npm run deploy --prod *", true},
		{"npm run deploy:*", "npm run deploy *", true},
		{"npm run deploy *", "npm run deploy staging", true},
		{"src/**", "src/app/**", true},
		{"/w/docs/**", "/w/docs/readme.md", true},

		{"npm run deploy:*", "*", false},
		{"npm run deploy:*", "", false},
		{"npm run deploy:*", "   ", false},
		{"npm run deploy:*", "npm run:*", false},                  // shorter prefix: wider
		{"npm run deploy:*", "npm run deploy-all:*", false},       // not on a word boundary
		{"npm run deploy:*", "npm:*", false},                      // wider
		{"npm run deploy:*", "npm run deploy *:*", false},         // a wildcard added
		{"npm run deploy:*", "npm run deploy && rm -rf /", false}, // a compound command
		{"npm run deploy:*", "npm run deploy; rm -rf /", false},
		{"npm run deploy:*", "npm run deploy $(rm -rf /)", false},
		{"npm run deploy:*", "npm run deploy\nrm -rf /", false},
		{"npm run deploy:*", "npm run deploy ", false},
		{"npm run deploy:*", "yarn deploy", false},
		{"npm test", "npm test:*", false}, // exact rules cannot change
		{"npm test", "npm", false},
		{"domain:example.com", "domain:*", false},
		{"src/**", "src/../etc/passwd", false},
		{"src/**", "src/", false},
		{"src/**", "src/*.go", false},
		{"src/**", "**", false},
		{"/**", "/etc/**", false}, // a bare root prefix is not narrowed by text
		{"git *log:*", "git *log --all", false},
		{"npm run deploy:*", "npm run deploy " + strings.Repeat("x", MaxRuleContent), false},
	}
	for _, tc := range cases {
		err := CheckNarrower("Bash", tc.suggested, tc.edited)
		if (err == nil) != tc.ok {
			t.Errorf("CheckNarrower(%q → %q) = %v, want ok=%v", tc.suggested, tc.edited, err, tc.ok)
		}
	}
}

// TestChooseSuggestionErrors: refusals name the content field.
func TestChooseSuggestionErrors(t *testing.T) {
	p := decodeOrFail(t, deployBody)
	cases := []struct {
		r     models.Remember
		field string
	}{
		{models.Remember{Suggestion: 7}, "content.remember.suggestion"},
		{models.Remember{Suggestion: 0, RuleContent: []string{"*"}}, "content.remember.ruleContent"},
		{models.Remember{Suggestion: 0, RuleContent: []string{"a", "b"}}, "content.remember.ruleContent"},
		{models.Remember{Suggestion: 3, RuleContent: []string{"/w/docs/**", "git status --all"}}, "content.remember.ruleContent[1]"},
		{models.Remember{Suggestion: 2, RuleContent: []string{"x"}}, "content.remember.ruleContent"},
	}
	for _, tc := range cases {
		_, err := ChooseSuggestion(p.suggestions, tc.r)
		var fe *models.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: err = %v, want field %s", tc.r, err, tc.field)
		}
	}
	if _, err := ChooseSuggestion(nil, models.Remember{}); err == nil || !strings.Contains(err.Error(), "nothing to remember") {
		t.Errorf("no suggestions: err = %v", err)
	}
}
