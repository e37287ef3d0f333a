package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/onboard"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestEmptyInboxOnboarding: a person with nothing waiting sees how to connect each
// agent to this very server, and "Send a test prompt" parks a real prompt they can
// decide on its approval page; with a prompt waiting, the onboarding goes away.
func TestEmptyInboxOnboarding(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		b := newBrowser(t, srv, "dana@example.com")
		p := b.get(t, "/inbox")
		mustStatus(t, p, http.StatusOK)
		cmds := p.testid("setup-command")
		var got []string
		cmds.Each(func(_ int, s *goquery.Selection) { got = append(got, strings.TrimSpace(s.Text())) })
		for _, want := range []string{"gatehouse setup claude --install --url " + srv.URL, "gatehouse setup codex --install --url " + srv.URL,
			"gatehouse bridge opencode --server http://127.0.0.1:4096 --url " + srv.URL, "gatehouse acp --url " + srv.URL + " -- "} {
			if !strings.Contains(strings.Join(got, "\n"), want) {
				t.Errorf("onboarding lacks %q; has %q", want, got)
			}
		}

		sent := b.post(t, "/inbox/test-prompt", url.Values{"csrf": {p.csrf(t)}}, false)
		mustStatus(t, sent, http.StatusSeeOther)
		loc := sent.Header.Get("Location")
		parts := strings.Split(strings.TrimPrefix(loc, "/approve/"), "/")
		if !strings.HasPrefix(loc, "/approve/") || len(parts) != 2 {
			t.Fatalf("test prompt redirects to %q", loc)
		}
		page := b.get(t, loc)
		mustStatus(t, page, http.StatusOK)
		if !strings.Contains(page.Body, "Hello from Gatehouse") {
			t.Fatalf("the approval page does not show the test command %q", onboard.TestCommand)
		}
		api := srv.Client("dana@example.com")
		if st := elicitationStatus(t, api, parts[0], parts[1])["status"]; st != "pending" {
			t.Fatalf("test prompt status %v, want pending", st)
		}
		if inbox := b.get(t, "/inbox"); inbox.testid("onboarding").Length() != 0 || inbox.testid("card").Length() != 1 {
			t.Fatalf("with a prompt waiting the inbox shows %d onboarding, %d cards", inbox.testid("onboarding").Length(), inbox.testid("card").Length())
		}
		mustStatus(t, b.post(t, loc, url.Values{"csrf": {page.csrf(t)}, "action": {"accept"}}, false), http.StatusSeeOther)
		if st := elicitationStatus(t, api, parts[0], parts[1])["status"]; st != "resolved" {
			t.Fatalf("approving the test prompt left it %v", st)
		}

		if r := b.post(t, "/inbox/test-prompt", url.Values{}, false); r.Status != http.StatusForbidden {
			t.Fatalf("test prompt without CSRF: %d", r.Status)
		}
	})
}
