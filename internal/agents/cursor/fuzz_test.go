package cursor

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzDecode: no hook body makes the decoder, params, key or answers panic, and every
// answer encodes.
func FuzzDecode(f *testing.F) {
	for _, b := range []string{shellBody, mcpBody, preShell, preEditBody, `{"hook_event_name":"beforeMCPExecution","conversation_id":"c","tool_name":"MCP::","tool_input":"\"{}\""}`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := Decode("", body)
		if err != nil {
			return
		}
		if _, err := json.Marshal(p.Params()); err != nil {
			t.Fatalf("params do not encode: %v", err)
		}
		_ = p.Key("sess_x")
		for _, a := range []string{"accept", "decline", "cancel"} {
			if _, err := json.Marshal(p.Answer(models.Verdict{Action: a, Content: map[string]any{"feedback": 1}}, "")); err != nil {
				t.Fatalf("answer does not encode: %v", err)
			}
		}
	})
}
