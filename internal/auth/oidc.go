package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// CallbackPath is where the OpenID provider sends the browser back (--public-url +
// CallbackPath is the redirect URL to register with the provider).
const CallbackPath = "/auth/callback"

// OIDCConfig is what --auth oidc needs.
type OIDCConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is --public-url + CallbackPath.
	RedirectURL string
	// AllowedDomains and AllowedEmails admit an e-mail address when it is listed or its
	// domain is; "*" in AllowedDomains admits every verified address.
	AllowedDomains []string
	AllowedEmails  []string
	// AcceptMissingEmailVerified admits an address whose ID token carries no
	// email_verified claim at all (--oidc-accept-missing-email-verified), for providers
	// that never send one and vouch for every address they issue. Off, the claim must be
	// present and true; an explicit false is refused either way.
	AcceptMissingEmailVerified bool
	// HTTPClient talks to the provider (nil: one with a 10 s timeout).
	HTTPClient *http.Client
	// Now is the clock ID tokens are checked against (nil: time.Now).
	Now func() time.Time
}

// ErrProviderUnreachable means the OpenID provider could not be asked (network,
// discovery or a 5xx): the sign-in did not fail on anything the browser sent.
var ErrProviderUnreachable = errors.New("the sign-in provider could not be reached")

// OIDC signs people in with an OpenID Connect provider: authorization code flow with
// PKCE, state and nonce. The provider's metadata is discovered on first use and again
// after a failure, so Gatehouse starts while the provider is down.
type OIDC struct {
	cfg     OIDCConfig
	client  *http.Client
	domains map[string]bool
	emails  map[string]bool
	anyone  bool

	mu       sync.Mutex
	provider *oidc.Provider
}

// NewOIDC checks the settings; it does not contact the provider.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("oidc: issuer, client id and redirect URL are required")
	}
	o := &OIDC{cfg: cfg, client: cfg.HTTPClient, domains: map[string]bool{}, emails: map[string]bool{}}
	if o.client == nil {
		o.client = &http.Client{Timeout: 10 * time.Second}
	}
	for _, d := range cfg.AllowedDomains {
		d = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@"))
		if d == "*" {
			o.anyone = true
		} else if d != "" {
			o.domains[d] = true
		}
	}
	for _, e := range cfg.AllowedEmails {
		if e = strings.ToLower(strings.TrimSpace(e)); e != "" {
			o.emails[e] = true
		}
	}
	if !o.anyone && len(o.domains) == 0 && len(o.emails) == 0 {
		return nil, errors.New("oidc: allow some people: --oidc-allowed-domains or --oidc-allowed-emails (\"*\" for every verified address)")
	}
	return o, nil
}

// PendingSignIn is what the browser keeps (in its signed, encrypted cookie) between
// leaving for the provider and coming back: the checks for the callback.
type PendingSignIn struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Next     string    `json:"r"`
	Started  time.Time `json:"t"`
}

// PendingLifetime is how long a started sign-in may take at the provider.
const PendingLifetime = 10 * time.Minute

func (o *OIDC) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, o.client)
}

// discover returns the provider, fetching its metadata when not yet known.
func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	// The key set remembers this context for its later fetches: not the request's.
	p, err := oidc.NewProvider(o.ctx(context.WithoutCancel(ctx)), o.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProviderUnreachable, err)
	}
	o.provider = p
	return p, nil
}

func (o *OIDC) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, RedirectURL: o.cfg.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// Begin starts a sign-in that returns to next: the provider URL to send the browser
// to, and the checks the browser must keep for Finish.
func (o *OIDC) Begin(ctx context.Context, next string, now time.Time) (string, PendingSignIn, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return "", PendingSignIn{}, err
	}
	ps := PendingSignIn{State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(), Next: next, Started: now}
	u := o.oauth(p).AuthCodeURL(ps.State, oidc.Nonce(ps.Nonce), oauth2.S256ChallengeOption(ps.Verifier))
	return u, ps, nil
}

// Finish completes a sign-in: the callback's state must be the pending one's, the
// code is exchanged with the PKCE verifier, the ID token must verify (signature,
// issuer, audience, expiry) and carry the pending nonce and an allowed, verified
// e-mail address, which is returned lower-cased as the identity.
//
// Refusals are errs.Invalid (the callback does not belong to this sign-in or its token
// does not verify) or errs.Forbidden (a real person Gatehouse does not admit, or an
// address the provider does not vouch for: see checkVerified);
// ErrProviderUnreachable when the provider could not be asked.
func (o *OIDC) Finish(ctx context.Context, pending PendingSignIn, state, code string, now time.Time) (string, error) {
	if pending.State == "" || subtle.ConstantTimeCompare([]byte(state), []byte(pending.State)) != 1 {
		return "", errs.Invalid("", "This sign-in did not start in this browser, or it was already used (the state does not match). Sign in again.")
	}
	if now.Sub(pending.Started) > PendingLifetime {
		return "", errs.Invalid("", "This sign-in took too long. Sign in again.")
	}
	if code == "" {
		return "", errs.Invalid("", "The provider sent no authorization code. Sign in again.")
	}
	p, err := o.discover(ctx)
	if err != nil {
		return "", err
	}
	tok, err := o.oauth(p).Exchange(o.ctx(ctx), code, oauth2.VerifierOption(pending.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			return "", errs.Invalid("", "The provider did not accept the authorization code (%s). Sign in again.", clipText(re.ErrorCode, 64))
		}
		return "", fmt.Errorf("%w: %w", ErrProviderUnreachable, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", errs.Invalid("", "The provider sent no ID token.")
	}
	clock := o.cfg.Now
	if clock == nil {
		clock = time.Now
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID, Now: clock}).Verify(o.ctx(ctx), raw)
	if err != nil {
		return "", tokenRefusal(err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(pending.Nonce)) != 1 {
		return "", errs.Invalid("", "The ID token was not issued for this sign-in (the nonce does not match). Sign in again.")
	}
	var claims struct {
		Email         string          `json:"email"`
		EmailVerified json.RawMessage `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		return "", errs.Invalid("", "The ID token's claims could not be read.")
	}
	email := strings.ToLower(strings.TrimSpace(claims.Email))
	if email == "" || !strings.Contains(email, "@") {
		return "", errs.Forbidden("The provider did not say which e-mail address you signed in with; Gatehouse needs it (scope \"email\").")
	}
	if err := o.checkVerified(claims.EmailVerified, email); err != nil {
		return "", err
	}
	if email == LocalUser || email == PublicUser || strings.ContainsAny(email, ", \t\r\n") {
		return "", errs.Forbidden("%q is not a valid identity.", email)
	}
	if !o.Allowed(email) {
		return "", errs.Forbidden("%s may not sign in to this Gatehouse. Ask its administrator to allow your address or domain.", email)
	}
	return email, nil
}

// checkVerified insists that the provider vouches for the address: email_verified
// must be present and true (JSON true, or the string "true" some providers send). An
// absent claim is refused unless AcceptMissingEmailVerified is on — otherwise anyone
// who can make an account at such a provider with someone else's address would sign
// in as them. An explicit false, or anything else, is always refused.
func (o *OIDC) checkVerified(raw json.RawMessage, email string) error {
	v := strings.TrimSpace(string(raw))
	switch {
	case v == "true" || v == `"true"`:
		return nil
	case (v == "" || v == "null") && o.cfg.AcceptMissingEmailVerified:
		return nil
	case v == "" || v == "null":
		return errs.Forbidden("The provider did not say whether it verified the e-mail address %s (no email_verified claim), "+
			"so Gatehouse cannot trust it. An administrator can accept such providers with --oidc-accept-missing-email-verified.", email)
	}
	return errs.Forbidden("The provider has not verified the e-mail address %s.", email)
}

// Allowed reports whether email (lower-case) is admitted by the allowed domains and
// e-mail addresses.
func (o *OIDC) Allowed(email string) bool {
	if o.anyone || o.emails[email] {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	return at >= 0 && o.domains[email[at+1:]]
}

// tokenRefusal words why an ID token did not verify.
func tokenRefusal(err error) error {
	var expired *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return errs.Invalid("", "The ID token has expired. Sign in again.")
	case strings.Contains(msg, "audience"):
		return errs.Invalid("", "The ID token was issued for another application (wrong audience).")
	case strings.Contains(msg, "different provider"), strings.Contains(msg, "issuer"):
		return errs.Invalid("", "The ID token was issued by another provider (wrong issuer).")
	case strings.Contains(msg, "signature"):
		return errs.Invalid("", "The ID token's signature does not verify.")
	}
	return errs.Invalid("", "The ID token does not verify.")
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
