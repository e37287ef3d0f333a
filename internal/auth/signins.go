package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// SignInLifetime is how long a browser sign-in lasts before the browser signs in again.
const SignInLifetime = 24 * time.Hour

// SignInStore is what sign-ins read and write (internal/store implements it).
type SignInStore interface {
	InsertSignIn(ctx context.Context, si *models.SignIn, now time.Time) error
	SignInByHash(ctx context.Context, hash string) (*models.SignIn, error)
	// DeleteSignIn removes a sign-in and returns whose it was; on a database shared by
	// replicas it also tells the others, with the deletion itself, that this person's
	// credential ended (so their streams re-check).
	DeleteSignIn(ctx context.Context, hash string) (user string, ok bool, err error)
}

// SignIns keeps browser sign-ins (--auth oidc) in the database. The cookie, signed and
// encrypted with --session-secret, carries a random secret; the database holds its
// hash, read on every request. Signing out deletes the row, so the sign-in ends for
// every copy of the cookie, on every replica, and stays ended after a restart — which
// a cookie alone cannot do.
type SignIns struct {
	store SignInStore
	now   func() time.Time
	// ended is told, after commit, of each sign-out (OnEnded).
	ended func(user string)
}

// NewSignIns builds the service; now is the clock (nil: the wall clock, UTC).
func NewSignIns(st SignInStore, now func() time.Time) *SignIns {
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	return &SignIns{store: st, now: now}
}

// OnEnded registers f to be told, after the sign-out has committed, that one of
// user's sign-ins ended. The wiring passes this replica's stream guard, so the streams
// the browser holds here re-check at once (other replicas hear of it from the store,
// with the sign-out). Set once at wiring.
func (s *SignIns) OnEnded(f func(user string)) { s.ended = f }

// SignIn is a live browser sign-in.
type SignIn struct {
	User    string
	Expires time.Time
}

// errSignedOut is the answer for a secret with no live sign-in (never signed in,
// signed out, or run out).
var errSignedOut = errs.Unauthorized("sign in again")

// Start records a sign-in of user and returns the secret the browser keeps (256
// random bits; only its hash is stored) and when the sign-in ends. previous, when
// set, is the sign-in the browser held until now, which ends: one browser, one
// sign-in.
func (s *SignIns) Start(ctx context.Context, user, previous string) (secret string, expires time.Time, err error) {
	if err := s.End(ctx, previous); err != nil {
		return "", time.Time{}, err
	}
	secret = randomToken()
	now := s.now()
	si := &models.SignIn{Hash: signInHash(secret), User: user, CreatedAt: now, ExpiresAt: now.Add(SignInLifetime)}
	if err := s.store.InsertSignIn(ctx, si, now); err != nil {
		return "", time.Time{}, err
	}
	return secret, si.ExpiresAt, nil
}

// Check returns the live sign-in secret stands for. One that was never made, was
// signed out or ran out is errs.ErrUnauthorized; a database failure is returned as is.
func (s *SignIns) Check(ctx context.Context, secret string) (SignIn, error) {
	if secret == "" {
		return SignIn{}, errSignedOut
	}
	si, err := s.store.SignInByHash(ctx, signInHash(secret))
	if errors.Is(err, errs.ErrNotFound) {
		return SignIn{}, errSignedOut
	}
	if err != nil {
		return SignIn{}, err
	}
	if !s.now().Before(si.ExpiresAt) {
		return SignIn{}, errSignedOut
	}
	return SignIn{User: si.User, Expires: si.ExpiresAt}, nil
}

// End signs out the browser holding secret: its sign-in is deleted, for every copy of
// the cookie and on every replica, and the streams it opened end. Ending a sign-in
// that is already gone is not an error.
func (s *SignIns) End(ctx context.Context, secret string) error {
	if secret == "" {
		return nil
	}
	user, ok, err := s.store.DeleteSignIn(ctx, signInHash(secret))
	if err != nil {
		return err
	}
	if ok && s.ended != nil {
		s.ended(user)
	}
	return nil
}

// signInHash is the stored form of a sign-in secret: hex SHA-256 (the secret is 256
// random bits, so a fast hash is enough).
func signInHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
