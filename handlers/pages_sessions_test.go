package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSessionsPage: the sessions list shows the person's sessions, newest root first,
// each followed by its sub-agents (indented), with what waits in each; another
// person's session is not listed.
func TestSessionsPage(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		agent := alice.CreateAgent(t)
		alpha := alice.CreateSession(t, agent, "", "alpha")
		worker := alice.CreateSession(t, agent, alpha, "alpha-worker")
		beta := alice.CreateSession(t, agent, "", "beta")
		bobs := bob.CreateSession(t, bob.CreateAgent(t), "", "bob's")
		p, _, _ := alice.ParkClaude(t, worker, alpha, "Bash", map[string]any{"command": "make test"})
		defer p.Cancel()

		page := newBrowser(t, srv, "alice@example.com").get(t, "/sessions")
		mustStatus(t, page, http.StatusOK)
		var order []string
		page.testid("session-row").Each(func(_ int, s *goquery.Selection) { order = append(order, s.AttrOr("data-sid", "")) })
		if strings.Join(order, ",") != strings.Join([]string{beta, alpha, worker}, ",") {
			t.Fatalf("rows %v, want beta, alpha, alpha-worker (%s %s %s; not bob's %s)", order, beta, alpha, worker, bobs)
		}
		row := page.Doc.Find(`[data-sid="` + worker + `"]`)
		if !row.HasClass("depth-1") || !strings.Contains(row.Find(`[data-testid="session-pending"]`).Text(), "1 waiting") {
			t.Fatalf("sub-agent row: class %q, pending %q", row.AttrOr("class", ""), row.Find(`[data-testid="session-pending"]`).Text())
		}
		if empty := newBrowser(t, srv, "carol@example.com").get(t, "/sessions"); empty.testid("sessions-empty").Length() != 1 {
			t.Fatalf("a person with no sessions sees no empty state")
		}
	})
}
