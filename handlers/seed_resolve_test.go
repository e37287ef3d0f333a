package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testserver"
)

// TestSeedResolveURLAllowRoundTrip: resolve accept → 202 and the hook answers exactly
// the allow decision.
func TestSeedResolveURLAllowRoundTrip(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls -la"})

		r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if got := r.JSON(t)["outcome"]; got != "resolved" {
			t.Fatalf("outcome = %v, want resolved", got)
		}
		ans := parked.Wait(t, 10*time.Second)
		if ans.Status != http.StatusOK {
			t.Fatalf("hook: %d %s", ans.Status, ans.Body)
		}
		var got, want any
		_ = json.Unmarshal(ans.Body, &got)
		_ = json.Unmarshal([]byte(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`), &want)
		if !jsonEqual(got, want) {
			t.Fatalf("hook answer = %s", ans.Body)
		}
	})
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
