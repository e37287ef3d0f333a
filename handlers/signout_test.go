package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// copyOfBrowser is another browser holding a copy of hc's cookies for srv, as someone
// who lifted the cookie would.
func copyOfBrowser(t *testing.T, srv *testserver.Server, hc *http.Client) *http.Client {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	cp := testserver.SignInClient()
	cookies := hc.Jar.Cookies(u)
	if len(cookies) == 0 {
		t.Fatal("the browser holds no cookie to copy")
	}
	cp.Jar.SetCookies(u, cookies)
	return cp
}

// signOutWith signs hc out through the page header's form (CSRF token included).
func signOutWith(t *testing.T, srv *testserver.Server, hc *http.Client) {
	t.Helper()
	r, _ := testserver.Hop(t, hc, srv.URL+"/inbox")
	csrf, _ := doc(t, r).Find(`form[action="/auth/signout"] input[name="csrf"]`).Attr("value")
	if r.Status != http.StatusOK || csrf == "" {
		t.Fatalf("inbox before sign-out: %d, csrf %q", r.Status, csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/auth/signout", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/auth/signedout" {
		t.Fatalf("sign-out: %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// wantSignedIn: hc's cookie signs it in to srv as user.
func wantSignedIn(t *testing.T, srv *testserver.Server, hc *http.Client, user string) {
	t.Helper()
	r, loc := testserver.Hop(t, hc, srv.URL+"/inbox")
	if got := doc(t, r).Find(`[data-testid="user"]`).Text(); r.Status != http.StatusOK || got != user {
		t.Fatalf("GET /inbox: %d → %q as %q, want 200 as %s", r.Status, loc, got, user)
	}
}

// TestSignOutEndsCopiesOfTheCookie: signing out ends the sign-in itself, not just the
// cookie of the browser that signed out: a copy of the cookie taken before is sent to
// sign in again, the page stream it holds ends at once, and a prompt parked after the
// sign-out does not reach it.
func TestSignOutEndsCopiesOfTheCookie(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		p := testserver.StartOIDCProvider(t)
		srv := testserver.StartOIDC(t, db.NewURL(t), p)
		sid := srv.SeedSession(t, alice, "alice's work")
		_, tok := srv.IssueToken(t, alice, "", "", time.Time{})
		hc := testserver.SignInClient()
		srv.SignIn(t, hc, p, alice, "/inbox")
		stolen := copyOfBrowser(t, srv, hc)
		wantSignedIn(t, srv, stolen, alice)
		st := (&testserver.Client{Base: srv.URL, HC: stolen}).OpenStream(t, "/inbox/events")
		st.Next(t, coreWait) // the inbox's first fragment: the stream is registered

		signOutWith(t, srv, hc)
		secret := "echo parked-after-sign-out"
		parked := srv.TokenClient(tok).ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request",
			testserver.ClaudeBody("Bash", map[string]any{"command": secret}))
		wantEndedWithout(t, map[string]*testserver.Stream{"inbox of the copied cookie": st}, secret)
		wantSignedOut(t, srv, stolen)
		wantSignedOut(t, srv, hc)
		if r, loc := testserver.Hop(t, stolen, srv.URL+"/inbox/events"); r.Status != http.StatusSeeOther || !strings.HasPrefix(loc, "/auth/signin") {
			t.Fatalf("a new stream with the copied cookie: %d → %q, want 303 to sign in", r.Status, loc)
		}
		parked.Cancel()
	})
}

// TestSignOutHoldsAcrossRestarts: a sign-in survives a restart (it is in the
// database, not the server's memory), and so does its end: a copy of the cookie
// refused after a sign-out is still refused by the restarted server.
func TestSignOutHoldsAcrossRestarts(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		p := testserver.StartOIDCProvider(t)
		first := testserver.StartOIDC(t, db.NewURL(t), p)
		hc := testserver.SignInClient()
		first.SignIn(t, hc, p, alice, "/inbox")
		first.Stop()

		second := testserver.StartOIDC(t, first.DatabaseURL, p)
		wantSignedIn(t, second, hc, alice)
		stolen := copyOfBrowser(t, second, hc)
		signOutWith(t, second, hc)
		wantSignedOut(t, second, stolen)
		second.Stop()

		third := testserver.StartOIDC(t, first.DatabaseURL, p)
		wantSignedOut(t, third, stolen)
		wantSignedOut(t, third, hc)
	})
}

// TestSignOutOnOneReplicaEndsTheSignInOnEvery: two replicas on one Postgres; a browser
// signs in through A and signs out there; a copy of its cookie is refused by B, and
// the page stream the copy held open on B ends at once.
func TestSignOutOnOneReplicaEndsTheSignInOnEvery(t *testing.T) {
	t.Parallel()
	db := testserver.PostgresDB(t)
	u := db.NewURL(t)
	p := testserver.StartOIDCProvider(t)
	a := testserver.StartOIDC(t, u, p)
	b := testserver.StartOIDC(t, u, p)
	hc := testserver.SignInClient()
	a.SignIn(t, hc, p, alice, "/inbox")
	stolen := copyOfBrowser(t, a, hc)
	wantSignedIn(t, b, stolen, alice)
	st := (&testserver.Client{Base: b.URL, HC: stolen}).OpenStream(t, "/inbox/events")
	st.Next(t, coreWait)

	signOutWith(t, a, hc)
	wantEndedWithout(t, map[string]*testserver.Stream{"B's inbox of the copied cookie": st}, "nothing")
	wantSignedOut(t, b, stolen)
	wantSignedOut(t, a, stolen)
}
