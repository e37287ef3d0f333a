package testserver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/tokens"
)

// TokenClient returns a client that sends "Authorization: Bearer token" on every
// request and no identity header.
func (s *Server) TokenClient(token string) *Client {
	var next http.RoundTripper = http.DefaultTransport
	if s.openapi != nil {
		next = s.openapi // checked against the described API, as Client's are
	}
	return &Client{Base: s.URL, HC: &http.Client{Transport: bearer{token: token, next: next}}}
}

// IssueToken makes a personal API token for owner straight through the tokens service
// on the server's database (standing in for a person making one in the browser, where a
// test cannot be signed in) and returns its id and secret. With at before now the token
// is made at that time, so an expires_in in the past yields an expired token.
func (s *Server) IssueToken(t testing.TB, owner, scope, expiresIn string, at time.Time) (id, secret string) {
	t.Helper()
	var clock func() time.Time
	if !at.IsZero() {
		clock = func() time.Time { return at }
	}
	c, err := tokens.New(s.App.Store, clock).Create(context.Background(), owner,
		tokens.Input{Name: "issued in test", Scope: scope, ExpiresIn: expiresIn})
	if err != nil {
		t.Fatalf("issue token: %v", err)
	}
	return c.ID, c.Token
}

// bearer adds the Authorization header.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
