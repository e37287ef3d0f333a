package handlers_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// tamperedUser signs in through the provider with ID token claims changed before
// signing, as a provider misconfigured (or a token meant for someone else) would.
type tamperedUser struct {
	*mockoidc.MockUser
	tamper func(*jwt.RegisteredClaims)
}

func (u tamperedUser) Claims(scope []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	u.tamper(base.RegisteredClaims)
	return u.MockUser.Claims(scope, base)
}

func person(email string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: "sub-" + email, Email: email, EmailVerified: true}
}

func doc(t *testing.T, r *testserver.Response) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// wantSignedOut: the browser is not signed in (a page sends it to sign in).
func wantSignedOut(t *testing.T, srv *testserver.Server, hc *http.Client) {
	t.Helper()
	r, loc := testserver.Hop(t, hc, srv.URL+"/inbox")
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(loc, "/auth/signin?next=%2Finbox") {
		t.Fatalf("GET /inbox when signed out: %d → %q, want 303 to sign in", r.Status, loc)
	}
}

// TestOIDCSignInAndOut walks the real redirect flow against a real provider: a page
// without a sign-in is sent to the provider and back to the page, as the person the
// ID token names; the API still wants a token; sign-out needs the CSRF token and
// ends the sign-in.
func TestOIDCSignInAndOut(t *testing.T) {
	t.Parallel()
	p := testserver.StartOIDCProvider(t)
	srv := testserver.StartOIDC(t, testserver.Databases(t)[0].NewURL(t), p)
	hc := testserver.SignInClient()

	r, toSignIn := testserver.Hop(t, hc, srv.URL+"/sessions/conv_0123456789abcdef0123456789abcdef?x=1")
	if r.Status != http.StatusSeeOther || toSignIn != "/auth/signin?next="+url.QueryEscape("/sessions/conv_0123456789abcdef0123456789abcdef?x=1") {
		t.Fatalf("page without sign-in: %d → %q", r.Status, toSignIn)
	}
	p.QueueUser(person("Alice@Example.com"))
	_, toProvider := testserver.Hop(t, hc, srv.URL+"/auth/signin?next=%2Finbox")
	au, _ := url.Parse(toProvider)
	q := au.Query()
	if !strings.HasPrefix(toProvider, p.AuthorizationEndpoint()) || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("nonce") == "" ||
		q.Get("redirect_uri") != srv.URL+"/auth/callback" {
		t.Fatalf("sign-in should go to the provider with PKCE, state and nonce: %s", toProvider)
	}
	_, back := testserver.Hop(t, hc, toProvider)
	r, after := testserver.Hop(t, hc, back)
	if r.Status != http.StatusSeeOther || after != "/inbox" {
		t.Fatalf("callback: %d → %q %s", r.Status, after, r.Body)
	}
	for _, ck := range r.Header.Values("Set-Cookie") {
		if !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Lax") {
			t.Fatalf("session cookie should be HttpOnly and SameSite=Lax: %s", ck)
		}
	}
	r, _ = testserver.Hop(t, hc, srv.URL+"/inbox")
	d := doc(t, r)
	if r.Status != http.StatusOK || d.Find(`[data-testid="user"]`).Text() != "alice@example.com" {
		t.Fatalf("inbox after sign-in: %d user %q", r.Status, d.Find(`[data-testid="user"]`).Text())
	}
	csrf, _ := d.Find(`form[action="/auth/signout"] input[name="csrf"]`).Attr("value")
	if csrf == "" {
		t.Fatal("no sign-out form with a CSRF token in the page")
	}

	// The API is for tokens: the browser cookie does not work there.
	api, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/sessions", nil)
	resp, err := hc.Do(api)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("API with only the browser cookie: %d %s, want 401 envelope", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	coreWantEnvelope(t, srv.Client("").Do(t, http.MethodGet, "/v1/sessions", nil), http.StatusUnauthorized, "unauthorized")

	// A token made on the settings page works on the API as the signed-in person.
	r, _ = testserver.Hop(t, hc, srv.URL+"/settings/tokens")
	tokCSRF, _ := doc(t, r).Find(`form[action="/settings/tokens"] input[name="csrf"]`).Attr("value")
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/settings/tokens", strings.NewReader(url.Values{"csrf": {tokCSRF}, "name": {"laptop"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	secret := strings.TrimSpace(doc(t, &testserver.Response{Body: buf.Bytes()}).Find(`[data-testid="token-secret"]`).Text())
	if resp.StatusCode != http.StatusOK || secret == "" {
		t.Fatalf("create a token on the page: %d %s", resp.StatusCode, buf.String())
	}
	api, _ = http.NewRequest(http.MethodPost, srv.URL+"/v1/agents", strings.NewReader(`{"name":"laptop agent"}`))
	api.Header.Set("Authorization", "Bearer "+secret)
	api.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(api)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || !strings.Contains(buf.String(), `"created_by":"alice@example.com"`) {
		t.Fatalf("API with the token: %d %s", resp.StatusCode, buf.String())
	}

	post := func(form url.Values) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/auth/signout", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
	if st, _ := post(url.Values{"csrf": {"forged"}}); st != http.StatusForbidden {
		t.Fatalf("sign-out with a forged CSRF token: %d, want 403", st)
	}
	if r, _ := testserver.Hop(t, hc, srv.URL+"/inbox"); r.Status != http.StatusOK {
		t.Fatalf("a refused sign-out must leave the sign-in: %d", r.Status)
	}
	if st, loc := post(url.Values{"csrf": {csrf}}); st != http.StatusSeeOther || loc != "/auth/signedout" {
		t.Fatalf("sign-out: %d → %q", st, loc)
	}
	r, _ = testserver.Hop(t, hc, srv.URL+"/auth/signedout")
	if r.Status != http.StatusOK || doc(t, r).Find(`[data-testid="signed-out"]`).Length() != 1 {
		t.Fatalf("signed-out page: %d", r.Status)
	}
	wantSignedOut(t, srv, hc)
}

// TestOIDCBadCallbacks: callbacks that do not belong to the sign-in, or whose ID token
// does not verify, or that name someone not admitted, are refused with a page saying
// why (4xx, never 500), and the browser stays signed out.
func TestOIDCBadCallbacks(t *testing.T) {
	t.Parallel()
	p := testserver.StartOIDCProvider(t)
	srv := testserver.StartOIDC(t, testserver.Databases(t)[0].NewURL(t), p, "--oidc-allowed-domains", "example.com",
		"--oidc-allowed-emails", "guest@partner.org")

	// begin starts a sign-in and returns the provider URL Gatehouse sent to.
	begin := func(hc *http.Client) string {
		_, toProvider := testserver.Hop(t, hc, srv.URL+"/auth/signin")
		return toProvider
	}
	// provider signs user in at the provider and returns the callback it sends back to.
	provider := func(hc *http.Client, toProvider string, user mockoidc.User) string {
		p.QueueUser(user)
		_, back := testserver.Hop(t, hc, toProvider)
		if !strings.HasPrefix(back, srv.URL+"/auth/callback?") {
			t.Fatalf("provider did not send back: %q", back)
		}
		return back
	}
	withQuery := func(raw, key, val string) string {
		u, _ := url.Parse(raw)
		q := u.Query()
		q.Set(key, val)
		u.RawQuery = q.Encode()
		return u.String()
	}
	for _, tc := range []struct {
		name   string
		status int
		says   string
		// callback walks the flow with hc and returns the callback URL to open.
		callback func(hc *http.Client) string
	}{
		{"wrong state", 400, "state does not match", func(hc *http.Client) string {
			return withQuery(provider(hc, begin(hc), person("alice@example.com")), "state", "forged")
		}},
		{"no sign-in started in this browser", 400, "state does not match", func(hc *http.Client) string {
			back := provider(hc, begin(hc), person("alice@example.com"))
			hc.Jar = testserver.SignInClient().Jar // another browser
			return back
		}},
		{"replayed callback", 400, "state does not match", func(hc *http.Client) string {
			back := provider(hc, begin(hc), person("alice@example.com"))
			if r, _ := testserver.Hop(t, hc, back); r.Status != http.StatusSeeOther {
				t.Fatalf("first use: %d %s", r.Status, r.Body)
			}
			hc.Jar = testserver.SignInClient().Jar
			_ = begin(hc) // a fresh pending sign-in of its own
			return back
		}},
		{"wrong nonce", 400, "nonce does not match", func(hc *http.Client) string {
			return provider(hc, withQuery(begin(hc), "nonce", "someone-elses-nonce"), person("alice@example.com"))
		}},
		{"expired ID token", 400, "expired", func(hc *http.Client) string {
			back := provider(hc, begin(hc), person("alice@example.com"))
			p.AccessTTL = -time.Hour // tokens the exchange mints are already expired
			t.Cleanup(func() { p.AccessTTL = 10 * time.Minute })
			return back
		}},
		{"foreign audience", 400, "another application", func(hc *http.Client) string {
			return provider(hc, begin(hc), tamperedUser{person("alice@example.com"), func(c *jwt.RegisteredClaims) {
				c.Audience = jwt.ClaimStrings{"some-other-client"}
			}})
		}},
		{"foreign issuer", 400, "another provider", func(hc *http.Client) string {
			return provider(hc, begin(hc), tamperedUser{person("alice@example.com"), func(c *jwt.RegisteredClaims) {
				c.Issuer = "https://evil.example.net/oidc"
			}})
		}},
		{"wrong code", 400, "did not accept the authorization code", func(hc *http.Client) string {
			return withQuery(provider(hc, begin(hc), person("alice@example.com")), "code", "made-up")
		}},
		{"domain not allowed", 403, "may not sign in", func(hc *http.Client) string {
			return provider(hc, begin(hc), person("mallory@other.org"))
		}},
		{"provider refused", 403, "access_denied", func(hc *http.Client) string {
			u, _ := url.Parse(begin(hc))
			return srv.URL + "/auth/callback?error=access_denied&state=" + url.QueryEscape(u.Query().Get("state"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := testserver.SignInClient()
			cb := tc.callback(hc)
			r, loc := testserver.Hop(t, hc, cb)
			if tc.name == "expired ID token" {
				p.AccessTTL = 10 * time.Minute
			}
			d := doc(t, r)
			msg := d.Find(`[data-testid="error-message"]`).Text()
			if r.Status != tc.status || d.Find(`[data-testid="signin-error"]`).Length() != 1 || !strings.Contains(msg, tc.says) {
				t.Fatalf("status %d (want %d), location %q, message %q (want %q)\n%s", r.Status, tc.status, loc, msg, tc.says, r.Body)
			}
			wantSignedOut(t, srv, hc)
		})
	}

	// An allowed e-mail outside the allowed domains signs in.
	hc := testserver.SignInClient()
	if after := srv.SignIn(t, hc, p, "Guest@Partner.org", "/rules?x=1"); after != "/rules?x=1" {
		t.Fatalf("allowed e-mail: sent to %q", after)
	}
	// The return address stays on this server.
	for _, next := range []string{"//evil.example/x", "/\\evil.example", "https://evil.example/", "/auth/signout"} {
		if after := srv.SignIn(t, testserver.SignInClient(), p, "alice@example.com", next); after != "/inbox" {
			t.Errorf("sign-in with next %q sent the browser to %q, want /inbox", next, after)
		}
	}
}

// TestAdminsSeeEverySession: --admins see and manage sessions they hold no grant on,
// with --auth header (API) and --auth oidc (pages); others still do not.
func TestAdminsSeeEverySession(t *testing.T) {
	t.Parallel()
	t.Run("header", func(t *testing.T) {
		srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header", "--admins", " Carol@Example.com ")
		alice, bob, carol := srv.Client("alice@example.com"), srv.Client("bob@example.com"), srv.Client("carol@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "alice's work")
		coreWantEnvelope(t, bob.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil), http.StatusNotFound, "not_found")
		if r := carol.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil); r.Status != http.StatusOK {
			t.Fatalf("admin GET another's session: %d %s", r.Status, r.Body)
		}
		if r := carol.Do(t, http.MethodGet, "/v1/sessions", nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), sid) {
			t.Fatalf("admin's session list should hold alice's session: %d %s", r.Status, r.Body)
		}
		if r := bob.Do(t, http.MethodGet, "/v1/sessions", nil); strings.Contains(string(r.Body), sid) {
			t.Fatalf("bob's list shows alice's session: %s", r.Body)
		}
		if r := carol.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": "bob@example.com", "level": "read"}); r.Status >= 300 {
			t.Fatalf("admin grants on another's session: %d %s", r.Status, r.Body)
		}
		if r := bob.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil); r.Status != http.StatusOK {
			t.Fatalf("bob after the admin's grant: %d %s", r.Status, r.Body)
		}
	})
	t.Run("oidc", func(t *testing.T) {
		p := testserver.StartOIDCProvider(t)
		srv := testserver.StartOIDC(t, testserver.Databases(t)[0].NewURL(t), p, "--admins", "carol@example.com")
		sid := srv.SeedSession(t, "alice@example.com", "alice's work")
		carol, bob := testserver.SignInClient(), testserver.SignInClient()
		srv.SignIn(t, carol, p, "carol@example.com", "/inbox")
		srv.SignIn(t, bob, p, "bob@example.com", "/inbox")
		if r, _ := testserver.Hop(t, carol, srv.URL+"/sessions/"+sid); r.Status != http.StatusOK || !strings.Contains(string(r.Body), "alice&#39;s work") {
			t.Fatalf("admin opens alice's session page: %d", r.Status)
		}
		if r, _ := testserver.Hop(t, bob, srv.URL+"/sessions/"+sid); r.Status != http.StatusNotFound {
			t.Fatalf("bob opens alice's session page: %d, want 404", r.Status)
		}
	})
}
