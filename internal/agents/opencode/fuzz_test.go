package opencode

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzDecode: no body makes the decoder, params, answers or the deny panic, and
// every answer encodes.
func FuzzDecode(f *testing.F) {
	for _, b := range []string{bashBody, externalBody, editBody, readBody, fetchBody, globBody, childBody, repliedBody,
		`{"type":"permission.asked","properties":` + bashBody + `}`, `{"id":"p","sessionID":"s","permission":"bash","patterns":[],"metadata":{"command":"\u0000"}}`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = Agent{}.Deny(body, "x")
		r, err := Agent{}.Decode("", body)
		if err != nil {
			return
		}
		if r.Retire != nil {
			_ = r.Retire(map[string]any{"opencode_request_id": "per_1"})
			return
		}
		if _, err := json.Marshal(r.Params); err != nil {
			t.Fatalf("params do not encode: %v", err)
		}
		if r.Tool == nil || r.Tool.Input == nil || r.ExternalSession == "" {
			t.Fatal("a decoded request has no tool input or session")
		}
		for _, a := range []string{"accept", "decline", "cancel"} {
			if _, err := json.Marshal(r.Answer(models.Verdict{Action: a, Content: map[string]any{"feedback": 1, "remember": true}}, "")); err != nil {
				t.Fatalf("answer does not encode: %v", err)
			}
		}
	})
}
