package elicit

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
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
func (s *Service) RunLeases(ctx context.Context) {
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
				s.log.Warn("renew leases", "count", len(ids), "err", err)
			}
		}
		if _, err := s.AbandonLapsed(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("abandon lapsed prompts", "err", err)
		}
	}
}

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
		done, err := s.decide(ctx, row.ID, row.SessionID, store.Decision{
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
