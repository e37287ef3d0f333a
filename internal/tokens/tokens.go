// Package tokens is personal API tokens: a person makes a named
// bearer secret that acts as them in every auth mode, from any machine, optionally
// limited to the hook routes ("hooks" scope).
//
// The secret is 256 random bits behind a recognizable prefix (ght_), shown once and
// stored only as its SHA-256: for a high-entropy secret a fast hash is enough, and a
// lookup by hash compares nothing secret-dependent in variable time. Every request reads
// the token's row (one unique-index lookup), so a revocation on any replica holds on
// every replica at once; there is no cache to invalidate. Last use is written at most
// once a minute per token.
package tokens

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Prefix starts every token secret, so leaked tokens are recognizable (secret scanners,
// logs) and a mistyped credential is refused without a database read.
const Prefix = "ght_"

// IDPrefix starts every token id.
const IDPrefix = "tok_"

// secretBytes is the randomness of a secret: 256 bits.
const secretBytes = 32

// secretLen is the length of a whole secret: the prefix and the base64url body.
var secretLen = len(Prefix) + base64.RawURLEncoding.EncodedLen(secretBytes)

// shownPrefixLen is how much of a secret lists show (the prefix and 8 characters).
const shownPrefixLen = 12

// touchEvery is how stale a token's recorded last use may get before a request
// writes it again.
const touchEvery = time.Minute

// MaxPerOwner bounds the live tokens one person may hold.
const MaxPerOwner = 100

// maxNameRunes bounds a token's name.
const maxNameRunes = 100

// BadTokenMessage is the one answer for a malformed, unknown, revoked or expired token
// (and one whose owner is no valid identity here): it never says which.
const BadTokenMessage = "the bearer token is not valid"

// Store is what the service reads and writes (internal/store implements it).
type Store interface {
	InsertAPIToken(ctx context.Context, t *models.APIToken) error
	APITokenByHash(ctx context.Context, hash string) (*models.APIToken, error)
	ListAPITokens(ctx context.Context, owner string) ([]models.APIToken, error)
	APITokenByID(ctx context.Context, id string) (*models.APIToken, error)
	// RevokeAPIToken revokes owner's live token id; on a database shared by replicas
	// it also tells the others, with the revocation itself, that owner's credential
	// ended (so their streams re-check).
	RevokeAPIToken(ctx context.Context, id, owner string, at time.Time) (bool, error)
	TouchAPIToken(ctx context.Context, id string, at, staleBefore time.Time) error
}

// Service is the tokens use case.
type Service struct {
	store Store
	now   func() time.Time
	// revoked is told, after commit, of each revocation (OnRevoked).
	revoked func(owner string)
}

// New builds the service; now is the clock (nil: the wall clock, UTC).
func New(st Store, now func() time.Time) *Service {
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	return &Service{store: st, now: now}
}

// OnRevoked registers f to be told, after the revocation has committed, that one of
// owner's tokens was revoked. The wiring passes this replica's stream guard, so the
// owner's open streams here re-check the token they were opened with at once (other
// replicas hear of it from the store, with the revocation). Set once at wiring.
func (s *Service) OnRevoked(f func(owner string)) { s.revoked = f }

// Input is the body of POST /v1/me/tokens (and the settings page's form).
type Input struct {
	Name string `json:"name"`
	// Scope is "all" (the default) or "hooks".
	Scope string `json:"scope"`
	// ExpiresIn, optional, ends the token after a duration: "30d", "720h".
	ExpiresIn string `json:"expires_in"`
}

// View is a token as the API lists it; the secret is never part of it.
type View struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Scope      string     `json:"scope"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
}

// Created is the answer to a create: the view plus the secret, shown this once.
type Created struct {
	View
	Token string `json:"token"`
}

// ViewOf is the listing form of t.
func ViewOf(t *models.APIToken) View {
	return View{ID: t.ID, Name: t.Name, Prefix: t.Prefix, Scope: t.Scope, CreatedAt: t.CreatedAt,
		LastUsedAt: t.LastUsedAt, ExpiresAt: t.ExpiresAt}
}

// Principal is who a valid bearer token speaks for.
type Principal struct {
	TokenID string
	Owner   string
	Scope   string
	// ExpiresAt is when the token stops working (nil: never, unless revoked): a stream
	// opened with it ends then.
	ExpiresAt *time.Time
}

// HooksOnly reports whether the token is limited to the hook routes.
func (p Principal) HooksOnly() bool { return p.Scope == models.ScopeHooks }

// Create makes a token for owner and returns it with its secret (the only time the
// secret exists outside the caller's hands).
func (s *Service) Create(ctx context.Context, owner string, in Input) (*Created, error) {
	name := strings.TrimSpace(in.Name)
	switch {
	case name == "":
		return nil, errs.Invalid("name", "name is required")
	case utf8.RuneCountInString(name) > maxNameRunes:
		return nil, errs.Invalid("name", "name is longer than %d characters", maxNameRunes)
	case !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return nil, errs.Invalid("name", "name must be text without control characters")
	}
	scope := strings.TrimSpace(in.Scope)
	switch scope {
	case "":
		scope = models.ScopeAll
	case models.ScopeAll, models.ScopeHooks:
	default:
		return nil, errs.Invalid("scope", "scope must be %q or %q", models.ScopeAll, models.ScopeHooks)
	}
	now := s.now()
	var expires *time.Time
	if e := strings.TrimSpace(in.ExpiresIn); e != "" {
		d, err := parseDuration(e)
		if err != nil || d <= 0 {
			return nil, errs.Invalid("expires_in", "expires_in must be a positive duration such as 30d or 12h")
		}
		at := now.Add(d)
		expires = &at
	}
	live, err := s.store.ListAPITokens(ctx, owner)
	if err != nil {
		return nil, err
	}
	if len(live) >= MaxPerOwner {
		return nil, errs.Conflict("you have %d tokens, the most one person may hold; revoke one first", len(live))
	}
	secret := newSecret()
	t := &models.APIToken{ID: ids.New(IDPrefix), Owner: owner, Name: name, Prefix: secret[:shownPrefixLen],
		Hash: hashOf(secret), Scope: scope, CreatedAt: now, ExpiresAt: expires}
	if err := s.store.InsertAPIToken(ctx, t); err != nil {
		return nil, err
	}
	return &Created{View: ViewOf(t), Token: secret}, nil
}

// List returns owner's live (unrevoked) tokens, newest first. Expired ones are listed
// too, with their expiry, until revoked.
func (s *Service) List(ctx context.Context, owner string) ([]models.APIToken, error) {
	return s.store.ListAPITokens(ctx, owner)
}

// Revoke ends owner's token id at once on every replica, and every stream opened
// with it. Another person's token, an
// unknown id and an already revoked token are all not found.
func (s *Service) Revoke(ctx context.Context, owner, id string) error {
	ok, err := s.store.RevokeAPIToken(ctx, id, owner, s.now())
	if err != nil {
		return err
	}
	if !ok {
		return errs.NotFound("token not found")
	}
	if s.revoked != nil {
		s.revoked(owner)
	}
	return nil
}

// Check reports whether token id still authenticates: a live stream opened with it
// asks before it sends more (after a revocation note, at its expiry and on every
// heartbeat). A revoked, expired or vanished token is the same unauthorized error as
// a bad token.
func (s *Service) Check(ctx context.Context, id string) error {
	t, err := s.store.APITokenByID(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return errs.Unauthorized(BadTokenMessage)
	}
	if err != nil {
		return err
	}
	if !t.Live(s.now()) {
		return errs.Unauthorized(BadTokenMessage)
	}
	return nil
}

// Authenticate returns who secret speaks for. A malformed, unknown, revoked or expired
// secret is the same unauthorized error, whichever it was.
func (s *Service) Authenticate(ctx context.Context, secret string) (Principal, error) {
	if !wellFormed(secret) {
		return Principal{}, errs.Unauthorized(BadTokenMessage)
	}
	h := hashOf(secret)
	t, err := s.store.APITokenByHash(ctx, h)
	if errors.Is(err, errs.ErrNotFound) {
		return Principal{}, errs.Unauthorized(BadTokenMessage)
	}
	if err != nil {
		return Principal{}, err
	}
	now := s.now()
	if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(h)) != 1 || !t.Live(now) {
		return Principal{}, errs.Unauthorized(BadTokenMessage)
	}
	if t.LastUsedAt == nil || t.LastUsedAt.Before(now.Add(-touchEvery)) {
		// Best effort: a failed write of the last-use time must not refuse a valid token.
		_ = s.store.TouchAPIToken(ctx, t.ID, now, now.Add(-touchEvery))
	}
	return Principal{TokenID: t.ID, Owner: t.Owner, Scope: t.Scope, ExpiresAt: t.ExpiresAt}, nil
}

// newSecret returns Prefix + 256 random bits in base64url.
func newSecret() string {
	var b [secretBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return Prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// wellFormed checks a secret's shape: the prefix and a base64url body of the right
// length. It reads nothing secret-dependent beyond the shape.
func wellFormed(secret string) bool {
	if len(secret) != secretLen || !strings.HasPrefix(secret, Prefix) {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(secret[len(Prefix):])
	return err == nil
}

// hashOf is the stored form of a secret: hex SHA-256.
func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// parseDuration reads a Go duration or a whole number of days ("30d").
func parseDuration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 3650 {
			return 0, errors.New("bad days")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}
