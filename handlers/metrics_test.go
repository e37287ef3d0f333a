package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testserver"
)

// TestMetricsCountPromptsAndDecisions parks a prompt, decides it and reads the
// Prometheus counters back from /metrics.
func TestMetricsCountPromptsAndDecisions(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t))
	c := srv.Client("")
	sid := c.CreateSession(t, c.CreateAgent(t), "", "")
	parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})

	scrape := func() string {
		r := c.Do(t, http.MethodGet, "/metrics", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("/metrics: %d", r.Status)
		}
		return string(r.Body)
	}
	body := scrape()
	for _, want := range []string{
		`gatehouse_elicitations_created_total{origin="claude_permission"} 1`,
		`gatehouse_elicitations_pending 1`,
		`gatehouse_parked_waiters 1`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %q", want)
		}
	}
	c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"})
	parked.Wait(t, 10*time.Second)
	body = scrape()
	for _, want := range []string{
		`gatehouse_elicitations_decided_total{action="decline",origin="claude_permission",status="resolved"} 1`,
		`gatehouse_elicitations_pending 0`,
		`gatehouse_time_to_decision_seconds_count{origin="claude_permission"} 1`,
		`gatehouse_verdict_commit_seconds_count 1`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %q:\n%s", want, body)
		}
	}
}
