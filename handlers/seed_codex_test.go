package handlers_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSeedChildCodexElicitationBubblesToParentStream ports the seed's
// child_codex_elicitation_bubbles_to_parent_stream: a Codex command approval parked on
// a child shows on the parent's stream with target_session_id, the parent sees the
// exact resolved event, and the hook answers {"decision":"accept"}.
func TestSeedChildCodexElicitationBubblesToParentStream(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		parent := c.CreateSession(t, agent, "", "")
		child := c.CreateSession(t, agent, parent, "codex-child:approval")

		parked, eid, ev := c.ParkAt(t, parent, "/v1/sessions/"+child+"/hooks/codex-elicitation-request",
			testserver.CodexCommandBody(7, []string{"date"}))
		params := ev["params"].(map[string]any)
		if ev["type"] != "response.elicitation_request" || params["target_session_id"] != child ||
			params["phase"] != "codex_command_approval" || params["command"] != "date" {
			t.Fatalf("parent saw %v", ev)
		}

		st := c.OpenStream(t, "/v1/sessions/"+parent+"/stream")
		st.WaitHeartbeat(t)
		r := c.Do(t, http.MethodPost, "/v1/sessions/"+child+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		resolved := st.WaitFor(t, "response.elicitation_resolved", 10*time.Second)
		if !jsonEqual(resolved.Map(t), map[string]any{"type": "response.elicitation_resolved", "elicitation_id": eid}) {
			t.Fatalf("resolved event = %s", resolved.Data)
		}
		ans := parked.Wait(t, 10*time.Second)
		if ans.Status != http.StatusOK || !jsonEqual(ans.JSON(t), map[string]any{"decision": "accept"}) {
			t.Fatalf("hook answer = %d %s", ans.Status, ans.Body)
		}
	})
}
