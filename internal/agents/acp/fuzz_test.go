package acp

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzDecode: no request makes the decoder, params, key or answers panic, and every
// answer is one of the request's own options.
func FuzzDecode(f *testing.F) {
	for _, b := range []string{bashBody, geminiBody} {
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
		_ = p.Key("sess_x")
		for _, a := range []string{"accept", "decline", "cancel"} {
			out := p.Answer(models.Verdict{Action: a}, "")
			id := out["outcome"].(map[string]any)["optionId"]
			found := false
			for _, o := range p.Options {
				found = found || o.OptionID == id
			}
			if !found {
				t.Fatalf("%s answered option %v, not one the request offered", a, id)
			}
		}
	})
}
