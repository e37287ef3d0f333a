package codexcli

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzDecode: no hook body makes the decoder, params, key or answers panic, and every
// answer encodes.
func FuzzDecode(f *testing.F) {
	for _, b := range []string{permissionBody, preToolUseBody, mcpBody, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"\u0000"}}`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := Decode(body)
		if err != nil {
			return
		}
		if _, err := json.Marshal(p.Params()); err != nil {
			t.Fatalf("params do not encode: %v", err)
		}
		_ = p.Key("conv_x")
		for _, a := range []string{"accept", "decline", "cancel"} {
			if _, err := json.Marshal(p.Answer(models.Verdict{Action: a, Content: map[string]any{"feedback": 1}}, "")); err != nil {
				t.Fatalf("answer does not encode: %v", err)
			}
		}
	})
}
