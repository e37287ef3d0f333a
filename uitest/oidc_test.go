package uitest

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestBrowserOIDCSignIn drives the whole redirect flow in Chromium against a real
// OpenID provider: opening the inbox signs in at the provider and lands on the inbox as
// the person the provider names; the sign-out button ends it; a deep link opened while
// signed out comes back to that page after signing in, as whoever signs in then.
func TestBrowserOIDCSignIn(t *testing.T) {
	p := testserver.StartOIDCProvider(t)
	srv := testserver.StartOIDC(t, "sqlite://"+t.TempDir()+"/gatehouse.db", p)
	sid := srv.SeedSession(t, "alice@example.com", "alice's refactor")
	tb := newTab(t, srv)

	p.Queue("Alice@Example.com")
	tb.open("/inbox")
	if got := run(tb, chromedp.Location()); got != srv.URL+"/inbox" {
		t.Fatalf("after sign-in the browser is at %q, want the inbox", got)
	}
	if got := tb.text(`[data-testid="user"]`); got != "alice@example.com" {
		t.Fatalf("signed in as %q", got)
	}
	tb.screenshot("oidc-signed-in")
	tb.open("/sessions/" + sid)
	if got := tb.text("h1"); got != "alice's refactor" {
		t.Fatalf("alice's own session page: heading %q", got)
	}

	tb.do(chromedp.Click(chromedp.CSS(`[data-testid="signout"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-out"]`)))
	if got := run(tb, chromedp.Location()); got != srv.URL+"/auth/signedout" {
		t.Fatalf("after sign-out at %q", got)
	}
	if tb.eval(`!!document.querySelector('[data-testid="user"]')`) {
		t.Fatal("the signed-out page still names a user")
	}

	// Signed out, the deep link goes through the provider again and back to the page:
	// now as bob, who has no access to alice's session.
	p.Queue("bob@example.com")
	tb.open("/sessions/" + sid)
	if got := run(tb, chromedp.Location()); got != srv.URL+"/sessions/"+sid {
		t.Fatalf("after signing in again the browser is at %q, want the page it opened", got)
	}
	if got := tb.text(`[data-testid="user"]`); got != "bob@example.com" {
		t.Fatalf("signed in again as %q, want bob", got)
	}
	if tb.eval(`document.body.innerText.includes("alice's refactor")`) {
		t.Fatal("bob sees alice's session")
	}
	tb.checkConsole()
}
