package elicit

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

func TestParseResult(t *testing.T) {
	ok := []struct {
		body, action string
		content      map[string]any
	}{
		{`{"action":"accept"}`, "accept", nil},
		{`{"action":"decline","content":null}`, "decline", nil},
		{`{"action":"cancel"}`, "cancel", nil},
		{`{"action":"accept","content":{"s":"x","n":3,"b":true,"l":["a","b"]}}`, "accept",
			map[string]any{"s": "x", "n": json.Number("3"), "b": true, "l": []string{"a", "b"}}},
	}
	for _, tc := range ok {
		r, err := ParseResult([]byte(tc.body))
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
	}
	for _, body := range bad {
		_, err := ParseResult([]byte(body))
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

// FuzzParseResult: any input either parses into a valid verdict or is a
// ValidationError — never a panic, never another error kind.
func FuzzParseResult(f *testing.F) {
	for _, s := range []string{`{"action":"accept"}`, `{"action":"decline","content":{"feedback":"no"}}`,
		`{"action":"accept","content":{"a":["x"],"n":1.5,"b":false}}`, `{"action":"cancel","content":null}`, `{`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseResult(data)
		if err != nil {
			var ve *errs.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("non-validation error %T: %v", err, err)
			}
			return
		}
		switch r.Action {
		case ActionAccept, ActionDecline, ActionCancel:
		default:
			t.Fatalf("parsed an invalid action %q", r.Action)
		}
		for k, v := range r.Content {
			switch v.(type) {
			case string, bool, json.Number, []string:
			default:
				t.Fatalf("content %q has type %T", k, v)
			}
		}
	})
}
