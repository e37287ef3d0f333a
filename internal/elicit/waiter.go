package elicit

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Waiter is a registered wait on one prompt: the waiter is in the registry before the
// row was (re-)read, so no verdict committed after Attach can be missed.
//
// Attaching touches the database; waiting does not (unless another replica decides).
// Keeping the two apart lets a handler do all deep work — JSON, ORM, SQL — on a
// short-lived goroutine and wait on one whose stack stayed small: with thousands of
// requests parked at once, stack is most of what a parked request costs.
type Waiter struct {
	s  *Service
	ch chan wake
	// row is the prompt as last read, without its params (not needed to finish it).
	row *models.Elicitation
	// done is set when the prompt was already decided at attach time.
	done bool
	// release gives back the person's parked-request slot (see parkCounts); once.
	release func()
}

// Attach registers a waiter and then opens the prompt (or re-attaches to it by id).
// Registering first means the prompt is never visible — on a stream, to a resolver —
// without its waiter, and the row Open reads or inserts is already current: no verdict
// can have slipped in between. The caller must call Wait or Close.
//
// The wait is one of p.Person's parked requests: a person already at
// Options.MaxParkedPerPerson gets errs.TooManyRequests and nothing is opened — unless
// the request re-attaches to a prompt that has already ended, which is answered at once.
func (s *Service) Attach(ctx context.Context, p Prompt) (*Waiter, error) {
	minted := p.ID == ""
	if minted {
		p.ID = ids.New(ids.ElicitationPrefix)
	}
	release, err := s.parks.take(p.Person)
	if err != nil {
		if minted || !s.endedPrompt(ctx, p) {
			return nil, err
		}
		release = func() {} // answered at once: it does not wait
	}
	ch := s.waiters.add(p.ID)
	row, err := s.open(ctx, p, minted, true)
	if err != nil {
		s.waiters.remove(p.ID, ch)
		release()
		return nil, err
	}
	w := newWaiter(s, ch, row)
	w.release = release
	if w.done {
		release() // answered at once: it does not wait
	}
	return w, nil
}

// endedPrompt reports whether the prompt p re-attaches to exists in p's session and is
// no longer pending (a retry that comes for its verdict).
func (s *Service) endedPrompt(ctx context.Context, p Prompt) bool {
	row, err := s.store.GetElicitation(ctx, p.ID)
	return err == nil && row.SessionID == p.Session.ID && !row.IsPending()
}

// leave starts the grace of a prompt whose waiter goes away without a verdict: its
// lease now ends one grace from now, and nobody here renews it. The returned verdict
// is "no verdict", with the prompt still pending.
func (s *Service) leave(ctx context.Context, row *models.Elicitation) Ended {
	if err := s.store.RenewLeases(ctx, []string{row.ID}, s.leaseFromNow()); err != nil {
		s.log.Warn("start grace", "elicitation_id", row.ID, "err", err)
	}
	return Ended{Status: models.StatusPending, Row: row}
}

func newWaiter(s *Service, ch chan wake, row *models.Elicitation) *Waiter {
	trimmed := *row
	trimmed.Params = nil
	return &Waiter{s: s, ch: ch, row: &trimmed, done: !row.IsPending()}
}

// ID is the prompt's id.
func (w *Waiter) ID() string { return w.row.ID }

// Ended reports that the prompt was no longer pending when attached: Wait returns at
// once.
func (w *Waiter) Ended() bool { return w.done }

// Close unregisters a waiter that will not Wait, and gives back its person's slot.
func (w *Waiter) Close() {
	w.s.waiters.remove(w.row.ID, w.ch)
	if w.release != nil {
		w.release()
	}
}

// Wait blocks until the prompt is decided, expires, the server shuts down or ctx ends
// (ErrClientGone). In the last two cases the prompt stays pending for the grace period
// (see Service.Shutdown); at shutdown the verdict's Status is still pending, which
// callers answer as "no verdict". It unregisters the waiter when it returns.
func (w *Waiter) Wait(ctx context.Context) (Ended, error) {
	v, err := w.WaitToAnswer(ctx)
	v.Answered()
	return v, err
}

// WaitToAnswer is Wait for a caller that answers its client itself and calls
// v.Answered once the answer is out. Until then (at most Options.AnswerWait) the person's
// verdict is not published: on a small machine the decider's publishing — the event
// log write, the streams' writes and their readers — competed with the one answer
// someone is blocked on, and was most of the resolve → answer tail (issue 13).
func (w *Waiter) WaitToAnswer(ctx context.Context) (Ended, error) {
	s := w.s
	defer w.Close()
	if w.done {
		return endedOf(w.row), nil
	}
	if s.enterPark() {
		defer s.parked.Done()
	}
	deadline := s.clock.After(w.row.ExpiresAt.Sub(s.clock.Now()))
	bg := context.WithoutCancel(ctx)
	var recheck <-chan time.Time // set while the row could not be read
	for {
		select {
		case wk := <-w.ch:
			if wk.row != nil && !wk.row.IsPending() {
				v := endedOf(wk.row)
				v.answered = wk.answered
				return v, nil
			}
			if wk.answered != nil {
				wk.answered()
			}
		case <-recheck:
		case <-deadline:
			return s.finish(bg, w.row, models.StatusExpired, models.ViaTimeout)
		case <-s.shutdown:
			w.Close() // before the grace starts, so no renewal from here outlives it
			return s.leave(bg, w.row), nil
		case <-ctx.Done():
			w.Close()
			s.leave(bg, w.row)
			select {
			case <-s.shutdown:
				// At shutdown the server ends request contexts too (so streams close):
				// a request that sees both is owed the "no verdict" answer.
				return Ended{Status: models.StatusPending, Row: w.row}, nil
			default:
			}
			return Ended{}, ErrClientGone
		}
		// Woken: re-read the row, the truth. While the database is unavailable (a
		// restart, a failover) the request stays parked and reads again shortly; a
		// verdict given once it is back still reaches it.
		recheck = nil
		cur, err := s.store.GetElicitation(bg, w.row.ID)
		switch {
		case errors.Is(err, errs.ErrUnavailable):
			s.log.Warn("parked request cannot read its prompt; retrying", "elicitation_id", w.row.ID, "err", err)
			recheck = s.clock.After(unavailableRecheck)
		case err != nil:
			return Ended{}, err
		case !cur.IsPending():
			return endedOf(cur), nil
		}
	}
}

// unavailableRecheck is how soon a woken waiter that could not read its row (the
// database unavailable) tries again.
const unavailableRecheck = time.Second
