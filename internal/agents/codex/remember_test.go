package codex

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

const amendBody = `{"id":21,"method":"item/commandExecution/requestApproval","params":{"threadId":"t","turnId":"u","itemId":"i",` +
	`"command":"npm run deploy --prod","cwd":"/repo","proposedExecpolicyAmendment":["npm","run","deploy"]}}`

// TestRememberSuggestions: the session grant is suggestion 0, a proposed exec policy
// amendment suggestion 1, answered with exactly the proposed words.
func TestRememberSuggestions(t *testing.T) {
	rem := func(v any) map[string]any { return map[string]any{"remember": v} }
	cases := []struct {
		name, body string
		content    map[string]any
		want       string
	}{
		{"true", amendBody, rem(true), `{"decision":"acceptForSession"}`},
		{"session", amendBody, rem(map[string]any{"suggestion": json.Number("0")}), `{"decision":"acceptForSession"}`},
		{"amendment", amendBody, rem(map[string]any{"suggestion": json.Number("1")}),
			`{"decision":{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["npm","run","deploy"]}}}`},
		{"amendment as stored", amendBody, rem(map[string]any{"suggestion": 1.0}),
			`{"decision":{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["npm","run","deploy"]}}}`},
		// An edit or an index out of range is refused upstream; here it remembers nothing.
		{"edited amendment", amendBody, rem(map[string]any{"suggestion": 1, "ruleContent": []any{"npm"}}), `{"decision":"accept"}`},
		{"no amendment proposed", fixtures()[MethodCommandApproval], rem(map[string]any{"suggestion": 1}), `{"decision":"accept"}`},
		{"file change", fixtures()[MethodFileChangeApproval], rem(map[string]any{"suggestion": 0}), `{"decision":"acceptForSession"}`},
		{"permissions", fixtures()[MethodPermissions], rem(map[string]any{"suggestion": 0}),
			`{"permissions":{"network":{"enabled":true}},"scope":"session"}`},
		{"legacy", fixtures()[MethodExecCommand], rem(map[string]any{"suggestion": 0}), `{"decision":"approved_for_session"}`},
	}
	for _, tc := range cases {
		got := asJSON(t, mustDecode(t, tc.body).Answer(models.Verdict{Action: "accept", Content: tc.content}))
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	if got := asJSON(t, mustDecode(t, amendBody).Answer(models.Verdict{Action: "decline", Content: rem(map[string]any{"suggestion": 1})})); got != `{"decision":"decline"}` {
		t.Errorf("decline with remember = %s", got)
	}
}

// TestChooseSuggestionRefusals: refusals name the content field; published params offer
// what the request's own params do.
func TestChooseSuggestionRefusals(t *testing.T) {
	r := mustDecode(t, amendBody)
	published := r.PromptParams()
	if got := Suggestions(MethodCommandApproval, published); len(got) != 2 || got[1].Kind != SuggestExecpolicy || len(got[1].Amendment) != 3 {
		t.Fatalf("published suggestions = %+v", got)
	}
	cases := []struct {
		method string
		r      models.Remember
		field  string
	}{
		{MethodCommandApproval, models.Remember{Suggestion: 2}, "content.remember.suggestion"},
		{MethodCommandApproval, models.Remember{Suggestion: 1, RuleContent: []string{"npm"}}, "content.remember.ruleContent"},
		{MethodRequestUserInput, models.Remember{}, "content.remember"},
	}
	for _, tc := range cases {
		_, err := ChooseSuggestion(tc.method, published, tc.r)
		var fe *models.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s %+v: err = %v, want field %s", tc.method, tc.r, err, tc.field)
		}
	}
}
