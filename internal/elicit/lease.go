package elicit

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Leases make the disconnect grace independent of the process that parked a request.
// A prompt with a waiter carries lease_until; the replica holding the waiter pushes it
// one grace ahead, several times per grace. When the waiter goes — the client hung up,
// the server stopped gracefully, or the process was killed — the renewals stop, and
// once lease_until passes, any live replica abandons the prompt. A client that re-parks
// with the same id before then (anywhere) renews the lease and keeps its prompt.

// leaseFromNow is the lease a waiter holds from now: one grace, at microsecond
// precision so that it compares equal when Postgres gives it back.
func (s *Service) leaseFromNow() time.Time {
	return s.clock.Now().Add(s.grace).Truncate(time.Microsecond)
}

// LeaseInterval is how often RunLeases renews and sweeps: a third of the grace, so a
// lease is renewed well before it lapses and a lapsed one ends soon after.
func (s *Service) LeaseInterval() time.Duration { return max(s.grace/3, 20*time.Millisecond) }

// RunLeases renews the leases of the prompts this process waits on and abandons prompts
// whose lease lapsed (on any replica), every LeaseInterval, until ctx ends.
//
// Renewing and sweeping run on goroutines of their own: a sweep that is slow (many
// lapsed prompts, a busy database) must not delay the renewals of prompts whose agents
// are still connected, or their leases would lapse under them.
//
// Leases also lapse while the database is unavailable (a restart, a failover), with
// their waiters alive: nobody could renew them. So after the sweep last met the
// database unavailable, it judges no lease for outageHold graces — time for every
// replica to renew its waiters' leases (every LeaseInterval, assuming replicas share
// --disconnect-grace) — and only checks that the database answers. Leases of replicas
// that died meanwhile are abandoned after that. The same holds after this process
// itself stalled (a tick that came more than a grace late: a paused VM, a machine out
// of CPU): other replicas may have stalled alike, so it gives them a grace to renew
// before it judges their leases.
func (s *Service) RunLeases(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.renewLoop(ctx)
	}()
	s.sweepLoop(ctx)
	<-done
}

// renewLoop pushes the leases of the prompts waited on here one grace ahead, every
// LeaseInterval.
func (s *Service) renewLoop(ctx context.Context) {
	t := time.NewTicker(s.LeaseInterval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.shutdown:
			return
		case <-t.C:
		}
		if ids := s.waiters.ids(); len(ids) > 0 {
			if err := s.store.RenewLeases(ctx, ids, s.leaseFromNow()); err != nil && ctx.Err() == nil {
				s.log.Warn("renew leases", "err", err)
			}
		}
	}
}

// sweepLoop abandons lapsed prompts and logs missing prompt events, every
// LeaseInterval (see RunLeases for when it holds back).
func (s *Service) sweepLoop(ctx context.Context) {
	t := time.NewTicker(s.LeaseInterval())
	defer t.Stop()
	var holdUntil time.Time // judge no lease before this (zero: no hold)
	// A stall is measured on the machine's own monotonic clock, not the core's (which
	// tests move forward at will), from the end of one round to the next tick: it is
	// this process that was late, not its last sweep that was long.
	last, stallHold := time.Now(), time.Time{}
	noteFailure := func(what string, err error) {
		if err == nil || ctx.Err() != nil {
			return
		}
		s.log.Warn(what, "err", err)
		if errors.Is(err, errs.ErrUnavailable) {
			holdUntil = s.clock.Now().Add(outageHold * s.grace)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.shutdown:
			return
		case <-t.C:
		}
		if real := time.Now(); real.Sub(last) > s.grace {
			stallHold = real.Add(s.grace) // this process stalled: let every replica renew first
		}
		s.sweep(ctx, holdUntil, stallHold, noteFailure)
		last = time.Now()
	}
}

// sweep is one round of sweepLoop: while a hold lasts it only checks that the
// database answers.
func (s *Service) sweep(ctx context.Context, holdUntil, stallHold time.Time, noteFailure func(string, error)) {
	now := s.clock.Now()
	if now.Before(holdUntil) || time.Now().Before(stallHold) {
		_, err := s.store.LapsedLeases(ctx, now, 1) // is the database back?
		noteFailure("check database", err)
		return
	}
	_, err := s.AbandonLapsed(ctx)
	noteFailure("abandon lapsed prompts", err)
	_, err = s.RepublishUnlogged(ctx)
	noteFailure("log missing prompt events", err)
}

// outageHold is how many graces RunLeases waits, after the database was last
// unavailable, before it abandons prompts whose lease lapsed.
const outageHold = 2

// AbandonLapsed abandons pending prompts whose lease ran out, with the resolved event,
// and reports how many. A renewal that lands first (a client re-attached, on any
// replica) wins: the decision only applies to the lease this sweep saw. A prompt that
// someone in this process still waits on is never abandoned, however late its renewal
// was: its lease is renewed instead.
func (s *Service) AbandonLapsed(ctx context.Context) (int, error) {
	rows, err := s.store.LapsedLeases(ctx, s.clock.Now(), 500)
	if err != nil {
		return 0, err
	}
	var ours []string
	n := 0
	for i := range rows {
		row := &rows[i]
		if row.LeaseUntil == nil {
			continue
		}
		if s.waiters.has(row.ID) {
			ours = append(ours, row.ID)
			continue
		}
		done, err := s.decide(ctx, row.ID, row.SessionID, models.Decision{
			Status: models.StatusAbandoned, By: "gatehouse", Via: models.ViaGrace, At: s.clock.Now(),
			OnlyIfLeaseAsSeen: true, SeenLease: *row.LeaseUntil,
		})
		if err != nil {
			return n, err
		}
		if done != nil {
			n++
		}
	}
	if len(ours) > 0 {
		if err := s.store.RenewLeases(ctx, ours, s.leaseFromNow()); err != nil {
			return n, err
		}
	}
	return n, nil
}

// unloggedAfter is how old a prompt must be before the repair sweep logs its events:
// younger ones are still on their way through the normal path.
const unloggedAfter = 2 * time.Second

// RepublishUnlogged logs (and so delivers, on every replica) the lifecycle events that
// the durable log lacks: a request or resolved event lost between its prompt's commit
// and the event's own — a process killed in that moment, or the database gone. Logging
// is idempotent per prompt and step, so replicas sweeping at once log each event once.
func (s *Service) RepublishUnlogged(ctx context.Context) (int, error) {
	rows, err := s.store.UnloggedElicitations(ctx, s.clock.Now().Add(-unloggedAfter), 200)
	if err != nil {
		return 0, err
	}
	for i := range rows {
		row := &rows[i]
		sess, err := s.store.GetSession(ctx, row.SessionID)
		if err != nil {
			return i, err
		}
		if row.Logged < models.LoggedRequest {
			s.publishRequest(sess, row.ID, row.DecodeParams().All, nil)
		}
		if !row.IsPending() {
			s.publishResolved(sess, row.ID)
		}
	}
	return len(rows), nil
}
