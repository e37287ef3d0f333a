package elicit

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// LatestMCPApproval finds the approval an MCP tool call retried without its
// requestState may re-use (see store.LatestMCPApproval); nil when there is none.
func (s *Service) LatestMCPApproval(ctx context.Context, sessionID, callKey string, declinedSince time.Time) (*models.Elicitation, error) {
	return s.store.LatestMCPApproval(ctx, sessionID, callKey, declinedSince)
}

// WaitAtMost waits up to d for a verdict on prompt id and returns the row as it then
// stands, decided or still pending. It is for requesters that are not parked on the
// prompt but come back to ask (an MCP client retrying a call): unlike Waiter.Wait,
// running out of time, the caller leaving or a shutdown leave the prompt pending — it
// ends on its own deadline, and the next retry finds it.
//
// While it waits it is one of person's parked requests (see Prompt.Person): a person at
// the cap gets errs.TooManyRequests instead of a wait.
func (s *Service) WaitAtMost(ctx context.Context, person, id string, d time.Duration) (*models.Elicitation, error) {
	ch := s.waiters.add(id, nil)
	defer s.waiters.remove(id, ch)
	bg := context.WithoutCancel(ctx)
	// Registered first, then read: a verdict committed in between is in this read.
	cur, err := s.store.GetElicitation(bg, id)
	if err != nil || !cur.IsPending() || d <= 0 {
		return cur, err
	}
	if err := s.parks.take(person); err != nil {
		return nil, err
	}
	defer s.parks.give(person)
	deadline := s.clock.After(d)
	for {
		select {
		case wk := <-ch:
			if wk.answered != nil {
				wk.answered() // this caller answers later, on its own
			}
			if wk.row != nil && !wk.row.IsPending() {
				return wk.row, nil
			}
			if cur, err = s.store.GetElicitation(bg, id); err != nil || !cur.IsPending() {
				return cur, err
			}
		case <-deadline:
			return cur, nil
		case <-s.shutdown:
			return cur, nil
		case <-ctx.Done():
			return cur, nil
		}
	}
}

// Session loads a session by id (for requests that arrive with only its id, such as
// an upstream MCP server's input request).
func (s *Service) Session(ctx context.Context, id string) (*models.Session, error) {
	return s.store.GetSession(ctx, id)
}
