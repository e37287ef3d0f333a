package handlers

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/tokens"
)

// credential is what a request proved its identity with, as far as that can end
// while a stream it opened is still open: an API token (revoked, expired) or a
// browser sign-in (signed out, run out). An identity header or auth off proves it
// afresh on every request: there is nothing to re-check.
type credential struct {
	// ends is when it runs out by itself (zero: never).
	ends time.Time
	// check reports whether it still holds (nil: nothing to check).
	check func(ctx context.Context) error
}

// credentialOf is the credential of the request identify let through.
func (s *Server) credentialOf(c echo.Context) credential {
	if p, ok := c.Get(ctxToken).(tokens.Principal); ok && s.tokens != nil {
		cr := credential{check: func(ctx context.Context) error { return s.tokens.Check(ctx, p.TokenID) }}
		if p.ExpiresAt != nil {
			cr.ends = *p.ExpiresAt
		}
		return cr
	}
	if si, ok := c.Get(ctxSignIn).(signIn); ok && s.signIns != nil {
		return credential{ends: si.expires, check: func(ctx context.Context) error {
			_, err := s.signIns.Check(ctx, si.secret)
			return err
		}}
	}
	return credential{}
}

// liveAccess is what an open stream re-checks before it sends more: the credential it
// was opened with, then the caller's grant (authorize). Its lease signals when either
// may have changed — a grant change or a credential ended on any replica (the bus),
// or the credential's own expiry.
type liveAccess struct {
	// ctx is the stream's context: its request's, ended as well when the server stops.
	ctx       context.Context
	lease     *stream.Lease
	cred      credential
	authorize func(ctx context.Context) error
}

// openStream takes a stream slot for the caller on the tree rooted at root ("": every
// tree they see), armed to signal when the request's credential runs out. authorize
// re-checks the grant (nil: nothing beyond the credential). Release the lease when
// the stream ends.
func (s *Server) openStream(c echo.Context, root string, authorize func(ctx context.Context) error) (*liveAccess, error) {
	lease, err := s.streams.Acquire(userOf(c), root)
	if err != nil {
		return nil, err
	}
	a := &liveAccess{ctx: lease.Bind(c.Request().Context()), lease: lease, cred: s.credentialOf(c), authorize: authorize}
	lease.SignalAt(a.cred.ends)
	return a, nil
}

// Context is the stream's context: a stream runs on it, so it ends when its request
// does, when the server stops (Guard.Close), and when it is released.
func (a *liveAccess) Context() context.Context { return a.ctx }

// Changed signals that access may have changed: call Recheck.
func (a *liveAccess) Changed() <-chan struct{} { return a.lease.Changed() }

// Release frees the stream's slot.
func (a *liveAccess) Release() { a.lease.Release() }

// Recheck reports whether the stream may go on: its credential still holds and the
// grant still allows it. An error ends the stream.
func (a *liveAccess) Recheck(ctx context.Context) error {
	if a.cred.check != nil {
		if err := a.cred.check(ctx); err != nil {
			return err
		}
	}
	if a.authorize != nil {
		return a.authorize(ctx)
	}
	return nil
}

// RecheckIfChanged is Recheck when a change is signalled and not yet handled, else
// nothing. A stream calls it before it sends an event: the note that a token was
// revoked reaches the lease before any event committed after the revocation reaches
// the stream, so no such event goes out on a stream that has lost its access.
func (a *liveAccess) RecheckIfChanged(ctx context.Context) error {
	select {
	case <-a.lease.Changed():
		return a.Recheck(ctx)
	default:
		return nil
	}
}
