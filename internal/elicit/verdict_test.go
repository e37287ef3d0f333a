package elicit

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

func TestParseVerdict(t *testing.T) {
	ok := []struct {
		body, action string
		content      map[string]any
	}{
		{`{"action":"accept"}`, "accept", nil},
		{`{"action":"decline","content":null}`, "decline", nil},
		{`{"action":"cancel"}`, "cancel", nil},
		{`{"action":"accept","content":{"s":"x","n":3,"b":true,"l":["a","b"]}}`, "accept",
			map[string]any{"s": "x", "n": json.Number("3"), "b": true, "l": []string{"a", "b"}}},
		// content.remember is the one object: it names a suggestion (models.RememberKey).
		{`{"action":"accept","content":{"remember":true}}`, "accept", map[string]any{"remember": true}},
		{`{"action":"accept","content":{"remember":{"suggestion":1}}}`, "accept", map[string]any{"remember": map[string]any{"suggestion": 1}}},
		{`{"action":"accept","content":{"remember":{"suggestion":0,"ruleContent":"npm test"}}}`, "accept",
			map[string]any{"remember": map[string]any{"suggestion": 0, "ruleContent": "npm test"}}},
		{`{"action":"accept","content":{"remember":{"suggestion":0,"ruleContent":["a","b"]}}}`, "accept",
			map[string]any{"remember": map[string]any{"suggestion": 0, "ruleContent": []string{"a", "b"}}}},
	}
	for _, tc := range ok {
		r, err := ParseVerdict([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if r.Action != tc.action {
			t.Fatalf("%s: action %q", tc.body, r.Action)
		}
		if a, b := mustJSON(r.Content), mustJSON(tc.content); len(tc.content) > 0 && a != b {
			t.Fatalf("%s: content %s, want %s", tc.body, a, b)
		}
	}
	bad := []string{
		``, `null`, `[]`, `"accept"`, `{}`, `{"action":"approve"}`, `{"action":1}`, `{"action":"ACCEPT"}`,
		`{"action":"accept","content":[]}`, `{"action":"accept","content":"x"}`,
		`{"action":"accept","content":{"nested":{"a":1}}}`, `{"action":"accept","content":{"l":[1,2]}}`,
		`{"action":"accept","content":{"l":[["x"]]}}`, `{"action":"accept","content":{"n":null}}`,
		`{"action":"accept"`,
		`{"action":"accept","content":{"remember":"yes"}}`, `{"action":"accept","content":{"remember":1}}`,
		`{"action":"accept","content":{"remember":{}}}`, `{"action":"accept","content":{"remember":{"suggestion":-1}}}`,
		`{"action":"accept","content":{"remember":{"suggestion":0.5}}}`, `{"action":"accept","content":{"remember":{"suggestion":"0"}}}`,
		`{"action":"accept","content":{"remember":{"suggestion":0,"ruleContent":[1]}}}`,
		`{"action":"accept","content":{"remember":{"suggestion":0,"ruleContent":[]}}}`,
		`{"action":"accept","content":{"remember":{"suggestion":0,"scope":"all"}}}`,
	}
	for _, body := range bad {
		_, err := ParseVerdict([]byte(body))
		var ve *errs.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("%q: got %v, want a ValidationError", body, err)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzParseVerdict: any input either parses into a valid verdict or is a
// ValidationError — never a panic, never another error kind.
func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{`{"action":"accept"}`, `{"action":"decline","content":{"feedback":"no"}}`,
		`{"action":"accept","content":{"a":["x"],"n":1.5,"b":false}}`, `{"action":"cancel","content":null}`, `{`, `[]`,
		`{"action":"accept","content":{"remember":{"suggestion":0,"ruleContent":"npm run deploy:*"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseVerdict(data)
		if err != nil {
			var ve *errs.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("non-validation error %T: %v", err, err)
			}
			return
		}
		switch r.Action {
		case models.ActionAccept, models.ActionDecline, models.ActionCancel:
		default:
			t.Fatalf("parsed an invalid action %q", r.Action)
		}
		for k, v := range r.Content {
			switch v.(type) {
			case string, bool, json.Number, []string:
			case map[string]any:
				if k != "remember" {
					t.Fatalf("content %q is an object", k)
				}
			default:
				t.Fatalf("content %q has type %T", k, v)
			}
		}
	})
}

// TestRememberStorable: NUL inside content.remember is refused like anywhere else in
// content (Postgres cannot store it).
func TestRememberStorable(t *testing.T) {
	for _, body := range []string{
		`{"action":"accept","content":{"remember":{"suggestion":0,"ruleContent":"npm\u0000"}}}`,
		`{"action":"accept","content":{"remember":{"suggestion":0,"ruleContent":["a","b\u0000"]}}}`,
	} {
		r, err := ParseVerdict([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var ve *errs.ValidationError
		if err := checkStorable(r.Content); !errors.As(err, &ve) || ve.Field != "content.remember" {
			t.Fatalf("%s: checkStorable = %v", body, err)
		}
	}
}
