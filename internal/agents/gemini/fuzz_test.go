package gemini

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzDecode: no hook body makes the decoder, params, answers or the forwarder's deny
// panic; every decoded request names its tool and every answer encodes.
func FuzzDecode(f *testing.F) {
	for _, b := range []string{shellBody, replaceBody, writeBody, readBody, mcpBody, globBody,
		`{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":{"command":"\u0000","dir_path":"../.."}}`} {
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
		if r.Tool == nil || r.Tool.Name == "" || r.Tool.Input == nil {
			t.Fatalf("a decoded request names no tool: %+v", r.Tool)
		}
		for _, a := range []string{"accept", "decline", "cancel"} {
			raw, err := json.Marshal(r.Answer(models.Verdict{Action: a, Content: map[string]any{"feedback": 1}}, ""))
			if err != nil {
				t.Fatalf("answer does not encode: %v", err)
			}
			if a != "accept" && string(raw) == `{"decision":"allow"}` {
				t.Fatalf("%s answered allow", a)
			}
		}
	})
}
