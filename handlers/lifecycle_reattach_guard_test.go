package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestReattachIDCannotCarryAVerdictToAnotherCall: a Claude hook that reuses the re-attach
// id of a decided prompt for a different tool call is refused (409) rather than handed
// that prompt's verdict; the same call with the same id still gets it.
func TestReattachIDCannotCarryAVerdictToAnotherCall(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		path := "/v1/sessions/" + sid + "/hooks/permission-request"
		eid := "elicit_claude_" + strings.Repeat("cd", 16)
		body := func(cmd string) map[string]any {
			b := testserver.ClaudeBody("Bash", map[string]any{"command": cmd, "timeout": 1.50})
			b["_gatehouse_elicitation_id"] = eid
			return b
		}
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		first := c.ParkAsync(path, body("ls"))
		st.WaitFor(t, "response.elicitation_request", 10*time.Second)
		c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		first.Wait(t, 10*time.Second)

		r := c.Do(t, http.MethodPost, path, body("rm -rf /"))
		if r.Status != http.StatusConflict {
			t.Fatalf("another call under a decided id: %d %s, want 409", r.Status, r.Body)
		}
		r = c.Do(t, http.MethodPost, path, body("ls"))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"behavior":"allow"`) {
			t.Fatalf("the same call re-parked: %d %s, want its stored allow", r.Status, r.Body)
		}
	})
}
