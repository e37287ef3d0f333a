package testserver

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/models"
)

// OIDCProvider is a real OpenID Connect provider (mockoidc) on loopback: discovery,
// authorization with PKCE, token and JWKS endpoints, signing real RS256 ID tokens. Each
// authorization signs in the next queued user (Queue), or jane.doe@example.com.
type OIDCProvider struct {
	*mockoidc.MockOIDC
}

// StartOIDCProvider runs a provider until the test ends.
func StartOIDCProvider(t testing.TB) *OIDCProvider {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatalf("start OpenID provider: %v", err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return &OIDCProvider{MockOIDC: m}
}

// Queue makes email the person the next authorization signs in (e-mail verified).
func (p *OIDCProvider) Queue(email string) {
	p.QueueUser(&mockoidc.MockUser{Subject: "sub-" + email, Email: email, EmailVerified: true})
}

// StartOIDC runs Gatehouse with --auth oidc against p, its --public-url the address it
// listens on (so the provider's redirects come back to it), allowing example.com
// addresses unless flags say otherwise.
func StartOIDC(t testing.TB, dbURL string, p *OIDCProvider, flags ...string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	cfg := p.Config()
	args := []string{"--auth", "oidc", "--public-url", "http://" + ln.Addr().String(),
		"--oidc-issuer", cfg.Issuer, "--oidc-client-id", cfg.ClientID, "--oidc-client-secret", cfg.ClientSecret}
	allow := true
	for _, f := range flags {
		if f == "--oidc-allowed-domains" || f == "--oidc-allowed-emails" {
			allow = false
		}
	}
	if allow {
		args = append(args, "--oidc-allowed-domains", "example.com")
	}
	return StartOn(t, ln, dbURL, append(args, flags...)...)
}

// SignInClient is a cookie-keeping client that stops at every redirect, so a test
// can walk (and tamper with) the sign-in flow one hop at a time.
func SignInClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Hop sends one GET with hc and returns the response (body read and closed) and the
// Location header, as sent ("" when it does not redirect).
func Hop(t testing.TB, hc *http.Client, rawURL string) (*Response, string) {
	t.Helper()
	resp, err := hc.Get(rawURL)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, resp.Header.Get("Location")
}

// SignIn walks the whole redirect flow for email with hc (from SignInClient) and
// returns where Gatehouse sent the browser afterwards.
func (s *Server) SignIn(t testing.TB, hc *http.Client, p *OIDCProvider, email, next string) string {
	t.Helper()
	p.Queue(email)
	_, toProvider := Hop(t, hc, s.URL+"/auth/signin?next="+url.QueryEscape(next))
	_, back := Hop(t, hc, toProvider)
	r, after := Hop(t, hc, back)
	if r.Status != http.StatusSeeOther {
		t.Fatalf("sign-in callback: %d %s", r.Status, r.Body)
	}
	return after
}

// SeedSession creates a top-level session owned by owner straight in the database (for
// --auth oidc tests, where the API needs tokens) and returns its id.
func (s *Server) SeedSession(t testing.TB, owner, title string) string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	a := &models.Agent{ID: ids.New(ids.AgentPrefix), Name: "seeded", Config: json.RawMessage("{}"), CreatedBy: owner, CreatedAt: now, UpdatedAt: now}
	if err := s.App.Store.CreateAgent(ctx, a); err != nil {
		t.Fatalf("seed agent: %v", err)
	}
	id := ids.New(ids.SessionPrefix)
	sess := &models.Session{ID: id, AgentID: a.ID, Title: title, Kind: models.KindDefault, RootID: id, Path: "/" + id + "/",
		CreatedBy: owner, CreatedAt: now, UpdatedAt: now}
	if err := s.App.Store.CreateSession(ctx, sess, &models.Permission{SessionID: id, User: owner, Level: int(auth.Owner), CreatedAt: now}); err != nil {
		t.Fatalf("seed session: %v", err)
	}
	return id
}
