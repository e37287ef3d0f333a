package handlers_test

import (
	"net/http"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestMCPDuplicateArgumentKeys: a tools/call whose arguments repeat a key (here
// "env": the policy and the person would see "prod" under Go's last-wins reading while
// a first-wins tool ran "staging") is refused with -32602 before anything else happens:
// no policy ASK is parked, the runner runs nothing, and the retry path cannot be used
// to slip it through either.
func TestMCPDuplicateArgumentKeys(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f := newMRTRFixture(t, db)
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"env":"staging","env":"prod"}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","opts":{"dry":true,"dry":false}}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{"env":"prod","env":"prod"},"requestState":"gh1.x.y"}}`,
		} {
			r, err := f.c.SendRaw(t.Context(), http.MethodPost, "/v1/sessions/"+f.sid+"/mcp", "application/json", []byte(body))
			if err != nil || r.Status != http.StatusOK {
				t.Fatalf("post: %v %+v", err, r)
			}
			if code, msg := rpcError(t, r.JSON(t)); code != -32602 {
				t.Fatalf("%s → %d %q, want -32602", body, code, msg)
			}
		}
		if n := len(f.runner.Calls()); n != 0 {
			t.Fatalf("the runner was called %d times", n)
		}
		if n := len(dig(t, f.c.Do(t, http.MethodGet, "/v1/sessions/"+f.sid, nil).JSON(t), "pending_elicitations").([]any)); n != 0 {
			t.Fatalf("%d prompts were parked for refused calls", n)
		}
	})
}
