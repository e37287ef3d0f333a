package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestCodexHookDeclineInterruptsRunner: a declined Codex prompt answers Codex with
// "decline" and forwards {"type":"interrupt"} for that session to the runner (the real
// runner client from --runner-url, posting to a runner that records what it gets); an
// accepted one forwards nothing.
func TestCodexHookDeclineInterruptsRunner(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner := echoRunner(t)
		srv := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL, "--elicitation-mode", "form")
		c := srv.Client("")
		agent := c.CreateAgent(t)
		accepted, declined := c.CreateSession(t, agent, "", ""), c.CreateSession(t, agent, "", "")

		parked, eid, _ := c.ParkAt(t, accepted, codexPath(accepted), testserver.CodexCommandBody(1, []string{"ls"}))
		resolveAs(t, c, accepted, eid, "accept", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"decision":"accept"}` {
			t.Fatalf("accept answer = %s", got)
		}

		parked, eid, _ = c.ParkAt(t, declined, codexPath(declined), testserver.CodexCommandBody(2, []string{"rm", "-rf", "/"}))
		resolveAs(t, c, declined, eid, "decline", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"decision":"decline"}` {
			t.Fatalf("decline answer = %s", got)
		}
		ev := runner.WaitEvent(t, 10*time.Second)
		if ev["type"] != "interrupt" || !strings.Contains(ev["_path"].(string), "/sessions/"+declined+"/") {
			t.Fatalf("runner got %v, want an interrupt for the declined session %s", ev, declined)
		}
		// An accept forwards nothing: had it, its event (sent a whole round trip
		// earlier) would be queued by now.
		if n := len(runner.events); n != 0 {
			t.Fatalf("the runner got %d more events: %v", n, <-runner.events)
		}
	})
}
