package codex

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzDecode: no body makes Decode, PromptParams or Answer panic, and whatever is
// accepted yields params and answers that encode as JSON.
func FuzzDecode(f *testing.F) {
	for _, b := range fixtures() {
		f.Add([]byte(b))
	}
	f.Add([]byte(urlElicitation))
	f.Add([]byte(`{"id":1,"method":"item/tool/requestUserInput","params":{"questions":[{"id":"q","options":[1,{"label":2}]}]}}`))
	f.Add([]byte(`{"id":"x","method":"mcpServer/elicitation/request","params":{"mode":null,"message":"m","requestedSchema":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Decode(body)
		if err != nil {
			return
		}
		if _, err := json.Marshal(r.PromptParams()); err != nil {
			t.Fatalf("params do not encode: %v", err)
		}
		_ = r.CanonicalKey("conv_x")
		_ = r.Fingerprint()
		for _, a := range []string{"accept", "decline", "cancel"} {
			content := map[string]any{"remember": true, "q": []string{"a"}, "db": "x", "n": json.Number("1")}
			if _, err := json.Marshal(r.Answer(models.Verdict{Action: a, Content: content})); err != nil {
				t.Fatalf("answer does not encode: %v", err)
			}
		}
	})
}
