package handlers_test

import (
	"net/http"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestIdentityHeaderFromUntrustedPeerRefused: with loopback outside --trusted-proxies, a
// request asserting the identity header is refused with 401 on every API route kind,
// and so is one with no identity at all.
func TestIdentityHeaderFromUntrustedPeerRefused(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
		sid := "conv_" + "0123456789abcdef0123456789abcdef"
		for _, user := range []string{"alice@example.com", ""} {
			c := srv.Client(user)
			for _, req := range []struct{ method, path string }{
				{http.MethodPost, "/v1/agents"},
				{http.MethodGet, "/v1/sessions"},
				{http.MethodGet, "/v1/sessions/" + sid},
				{http.MethodPost, coreResolvePath(sid, "elicit_x")},
				{http.MethodPost, coreHookPath(sid)},
				{http.MethodGet, coreStreamPath(sid)},
			} {
				r := c.Do(t, req.method, req.path, map[string]any{"name": "x", "action": "accept"})
				if r.Status != http.StatusUnauthorized {
					t.Fatalf("user %q %s %s: %d %s", user, req.method, req.path, r.Status, r.Body)
				}
				coreWantEnvelope(t, r, http.StatusUnauthorized, "unauthorized")
			}
		}
		coreHealthy(t, srv.Client(""))
	})
}

// TestIdentityRequiredInHeaderMode: from a trusted peer, a missing or blank header and
// the reserved names "local" and "__public__" are all 401; a real identity works and is
// case-folded.
func TestIdentityRequiredInHeaderMode(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		for _, user := range []string{"", "   ", "local", "__public__", "LOCAL", " __Public__ "} {
			c := srv.Client(user)
			r := c.Do(t, http.MethodPost, "/v1/agents", map[string]any{"name": "sneaky"})
			coreWantEnvelope(t, r, http.StatusUnauthorized, "unauthorized")
			r = c.Do(t, http.MethodGet, "/v1/sessions", nil)
			coreWantEnvelope(t, r, http.StatusUnauthorized, "unauthorized")
		}

		alice := srv.Client("  Alice@Example.COM ")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		r := srv.Client("alice@example.com").Do(t, http.MethodGet, "/v1/sessions/"+sid, nil)
		if r.Status != http.StatusOK || r.JSON(t)["created_by"] != "alice@example.com" {
			t.Fatalf("case-folded identity: %d %s", r.Status, r.Body)
		}
	})
}
