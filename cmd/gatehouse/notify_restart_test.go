package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/webhooktest"
)

// A replica SIGKILLed while a notification is on the wire leaves its claim behind; once
// the claim lapses the restarted server (or any replica) sends it: nothing is lost.
func TestNotificationSurvivesSIGKILLMidDelivery(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		url := db.NewURL(t)
		// A long grace keeps the prompt pending while its hook is cut off by the kill.
		flags := []string{"--notify-allow-private", "--notify-send-timeout", "3s", "--notify-retry-base", "200ms", "--disconnect-grace", "2m"}
		recv := webhooktest.New(t, "")
		recv.FailNext(1, webhooktest.Hang(time.Minute)) // the first attempt never returns

		a := startServe(t, url, flags...)
		c := a.Client()
		if r := c.Do(t, http.MethodPut, "/v1/me/notifications", map[string]any{
			"webhook": map[string]any{"url": recv.URL, "secret": recv.Secret}}); r.Status != http.StatusOK {
			t.Fatalf("settings: %d %s", r.Status, r.Body)
		}
		sid := c.CreateSession(t, c.CreateAgent(t), "", "crash")
		parked := c.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request", testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}))
		defer parked.Cancel()
		waitFor(t, 20*time.Second, "the first delivery attempt to reach the receiver", func() bool {
			return recv.TotalAttempts() > 0
		})
		a.Kill(t)

		startServe(t, url, flags...)
		d := recv.WaitFor(t, func(webhooktest.Delivery) bool { return true }, 40*time.Second)
		if d.Type != "elicitation.created" {
			t.Fatalf("delivered %s", d.Type)
		}
		if n := recv.Count(d.ID); n != 1 {
			t.Fatalf("accepted %d times", n)
		}
		if n := recv.Attempts(d.ID); n < 2 {
			t.Fatalf("attempts seen by the receiver: %d, want the hung one and the one after the restart", n)
		}
	})
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling an observable condition
	}
}
