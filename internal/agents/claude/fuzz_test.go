package claude

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzDecode: no hook body makes the decoders, params or decisions panic.
func FuzzDecode(f *testing.F) {
	for _, b := range []string{bashBody, askBody, planBody, deployBody,
		`{"tool_name":"AskUserQuestion","tool_input":{"questions":[1,{"options":[null,{"label":3}]}]}}`,
		`{"message":"m","requested_schema":{"type":"object"}}`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v := models.Verdict{Action: "accept", Content: map[string]any{"remember": true, "q": "a"}}
		if p, err := Decode(body); err == nil {
			if _, err := json.Marshal(p.Params()); err != nil {
				t.Fatalf("params do not encode: %v", err)
			}
			_, _ = json.Marshal(p.PermissionDecision(v, ""))
			edited := models.Verdict{Action: "accept", Content: map[string]any{"remember": map[string]any{"suggestion": 0, "ruleContent": "npm run deploy --prod"}}}
			if _, err := json.Marshal(p.PermissionDecision(edited, "")); err != nil {
				t.Fatalf("decision does not encode: %v", err)
			}
			_, _ = json.Marshal(p.PreToolUseDecision(v, ""))
		}
		if p, err := DecodeElicitation(body); err == nil {
			if _, err := json.Marshal(p.ElicitationParams()); err != nil {
				t.Fatalf("params do not encode: %v", err)
			}
		}
	})
}
