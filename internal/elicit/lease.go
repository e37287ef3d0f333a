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
// Leases also lapse while the database is unavailable (a restart, a failover), with
// their waiters alive: nobody could renew them. So after this loop last met the
// database unavailable, it judges no lease for outageHold graces — time for every
// replica to renew its waiters' leases (every LeaseInterval, assuming replicas share
// --disconnect-grace) — and only checks that the database answers. Leases of replicas
// that died meanwhile are abandoned after that.
func (s *Service) RunLeases(ctx context.Context) {
	t := time.NewTicker(s.LeaseInterval())
	defer t.Stop()
	var unavailableAt time.Time // when the database last failed this loop (zero: never)
	noteFailure := func(what string, err error) {
		if err == nil || ctx.Err() != nil {
			return
		}
		s.log.Warn(what, "err", err)
		if errors.Is(err, errs.ErrUnavailable) {
			unavailableAt = s.clock.Now()
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
		if ids := s.waiters.ids(); len(ids) > 0 {
			noteFailure("renew leases", s.store.RenewLeases(ctx, ids, s.leaseFromNow()))
		}
		if !unavailableAt.IsZero() && s.clock.Now().Sub(unavailableAt) < outageHold*s.grace {
			_, err := s.store.LapsedLeases(ctx, s.clock.Now(), 1) // is the database back?
			noteFailure("check database after an outage", err)
			continue
		}
		_, err := s.AbandonLapsed(ctx)
		noteFailure("abandon lapsed prompts", err)
		_, err = s.RepublishUnlogged(ctx)
		noteFailure("log missing prompt events", err)
	}
}

// outageHold is how many graces RunLeases waits, after the database was last
// unavailable, before it abandons prompts whose lease lapsed.
const outageHold = 2

// AbandonLapsed abandons pending prompts whose lease ran out, with the resolved event,
// and reports how many. A renewal that lands first (a client re-attached, on any
// replica) wins: the decision only applies to the lease this sweep saw.
func (s *Service) AbandonLapsed(ctx context.Context) (int, error) {
	rows, err := s.store.LapsedLeases(ctx, s.clock.Now(), 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range rows {
		row := &rows[i]
		if row.LeaseUntil == nil {
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
			s.publishRequest(sess, row.ID, row.DecodeParams().All)
		}
		if !row.IsPending() {
			s.publishResolved(sess, row.ID)
		}
	}
	return len(rows), nil
}
