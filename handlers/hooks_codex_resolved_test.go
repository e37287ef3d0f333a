package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestCodexServerRequestResolvedRetiresThePrompt: when Codex settles a request
// elsewhere, the bridge forwards serverRequest/resolved; the matching prompt (and only
// it) is cancelled, its resolved event published, and the parked request answers.
func TestCodexServerRequestResolvedRetiresThePrompt(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		path := "/v1/sessions/" + sid + "/hooks/codex-elicitation-request"
		p7, e7, _ := c.ParkAt(t, sid, path, testserver.CodexCommandBody(7, []string{"date"}))
		p8, _, _ := c.ParkAt(t, sid, path, testserver.CodexCommandBody("8", []string{"uptime"}))
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)

		notify := func(requestID any) []any {
			r := c.Do(t, http.MethodPost, path, map[string]any{"method": "serverRequest/resolved",
				"params": map[string]any{"threadId": "thread_child", "requestId": requestID}})
			if r.Status != http.StatusOK {
				t.Fatalf("serverRequest/resolved: %d %s", r.Status, r.Body)
			}
			return r.JSON(t)["retired"].([]any)
		}
		if got := notify("7"); len(got) != 0 {
			t.Fatalf(`requestId "7" retired %v; only the integer 7 names the first request`, got)
		}
		if got := notify(7); len(got) != 1 || got[0] != e7 {
			t.Fatalf("retired %v, want [%s]", got, e7)
		}
		if f := st.WaitFor(t, "response.elicitation_resolved", 10*time.Second); f.Map(t)["elicitation_id"] != e7 {
			t.Fatalf("resolved event for %s", f.Data)
		}
		if ans := p7.Wait(t, 10*time.Second); strings.TrimSpace(string(ans.Body)) != `{"decision":"cancel"}` {
			t.Fatalf("retired request answered %d %s", ans.Status, ans.Body)
		}
		if p8.Done() {
			t.Fatal("the other request was retired too")
		}
		if r := c.Do(t, http.MethodPost, path, map[string]any{"method": "serverRequest/resolved", "params": map[string]any{}}); r.Status != http.StatusBadRequest {
			t.Fatalf("notification without requestId: %d %s", r.Status, r.Body)
		}
		p8.Cancel()
	})
}
