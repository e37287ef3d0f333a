package copilot

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzDecode: no hook body makes the decoder, params, answers or the forwarder's deny
// panic, and every answer encodes.
func FuzzDecode(f *testing.F) {
	for _, b := range []string{permissionBody, preToolUseBody, viewBody, editBody, createBody, otherBody, stringArgsBody,
		`{"sessionId":"s","toolName":"bash","toolArgs":{"command":"\u0000"}}`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = Agent{}.Deny(body, "x")
		r, err := Agent{}.Decode("", body)
		if err != nil {
			return
		}
		if _, err := json.Marshal(r.Params); err != nil {
			t.Fatalf("params do not encode: %v", err)
		}
		if r.Tool == nil || r.Tool.Input == nil {
			t.Fatal("a decoded request has no tool input")
		}
		for _, a := range []string{"accept", "decline", "cancel"} {
			if _, err := json.Marshal(r.Answer(models.Verdict{Action: a, Content: map[string]any{"feedback": 1}}, "")); err != nil {
				t.Fatalf("answer does not encode: %v", err)
			}
		}
	})
}
