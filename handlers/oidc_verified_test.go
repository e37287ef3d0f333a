package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// verifiedClaimUser is a person whose ID token carries email_verified exactly as
// given: absent (nil), a JSON boolean, or the string some providers send.
type verifiedClaimUser struct {
	*mockoidc.MockUser
	verified any
}

func (u verifiedClaimUser) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	return &struct {
		*mockoidc.IDTokenClaims
		Email    string `json:"email"`
		Verified any    `json:"email_verified,omitempty"`
	}{IDTokenClaims: base, Email: u.Email, Verified: u.verified}, nil
}

// signInAs walks the sign-in flow for user in a fresh browser and returns the
// callback's answer and the browser.
func signInAs(t *testing.T, srv *testserver.Server, p *testserver.OIDCProvider, user mockoidc.User) (*testserver.Response, *http.Client) {
	t.Helper()
	hc := testserver.SignInClient()
	_, toProvider := testserver.Hop(t, hc, srv.URL+"/auth/signin?next=%2Finbox")
	p.QueueUser(user)
	_, back := testserver.Hop(t, hc, toProvider)
	if !strings.HasPrefix(back, srv.URL+"/auth/callback?") {
		t.Fatalf("provider did not send back: %q", back)
	}
	r, _ := testserver.Hop(t, hc, back)
	return r, hc
}

// TestOIDCEmailVerifiedRequired: an ID token whose email_verified claim is absent does
// not sign anyone in (a provider that lets people claim any address would otherwise
// let them in as its owner), nor does an explicit false; true — as a boolean or the
// string "true" — does. --oidc-accept-missing-email-verified admits the absent claim
// and still refuses an explicit false.
func TestOIDCEmailVerifiedRequired(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		p := testserver.StartOIDCProvider(t)
		strict := testserver.StartOIDC(t, db.NewURL(t), p)
		lenient := testserver.StartOIDC(t, db.NewURL(t), p, "--oidc-accept-missing-email-verified")
		victim := func(verified any) mockoidc.User {
			return verifiedClaimUser{&mockoidc.MockUser{Subject: "sub-attacker", Email: "victim@example.com"}, verified}
		}
		for _, tc := range []struct {
			name     string
			srv      *testserver.Server
			verified any
			status   int
			says     string
		}{
			{"absent", strict, nil, http.StatusForbidden, "no email_verified claim"},
			{"false", strict, false, http.StatusForbidden, "has not verified"},
			{"string false", strict, "false", http.StatusForbidden, "has not verified"},
			{"not a boolean", strict, 1, http.StatusForbidden, "has not verified"},
			{"true", strict, true, http.StatusSeeOther, ""},
			{"string true", strict, "true", http.StatusSeeOther, ""},
			{"absent, accepted by the flag", lenient, nil, http.StatusSeeOther, ""},
			{"false, even with the flag", lenient, false, http.StatusForbidden, "has not verified"},
		} {
			r, hc := signInAs(t, tc.srv, p, victim(tc.verified))
			if r.Status != tc.status {
				t.Fatalf("%s: callback %d, want %d\n%s", tc.name, r.Status, tc.status, r.Body)
			}
			if tc.status != http.StatusSeeOther {
				if msg := doc(t, r).Find(`[data-testid="error-message"]`).Text(); !strings.Contains(msg, tc.says) {
					t.Fatalf("%s: message %q, want it to say %q", tc.name, msg, tc.says)
				}
				wantSignedOut(t, tc.srv, hc)
				continue
			}
			page, _ := testserver.Hop(t, hc, tc.srv.URL+"/inbox")
			if page.Status != http.StatusOK || doc(t, page).Find(`[data-testid="user"]`).Text() != "victim@example.com" {
				t.Fatalf("%s: inbox after sign-in: %d", tc.name, page.Status)
			}
		}
	})
}
