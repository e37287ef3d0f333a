package elicit

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
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
// short-lived goroutine, and wait on none: Then runs its continuation on a fresh
// goroutine once something happens — a wake, the deadline, a hang-up, the server
// stopping. With thousands of requests parked at once, a goroutine's stack each was
// most of what a parked request cost.
type Waiter struct {
	s  *Service
	ch chan wake
	// row is the prompt as last read, without its params (not needed to finish it).
	row *models.Elicitation
	// done is set when the prompt was already decided at attach time.
	done bool
	// person is whose parked request this is; holdsSlot, that the wait still counts
	// as one of theirs (see parkCounts).
	person    string
	holdsSlot atomic.Bool

	// While waiting (Then): ctx is the wait's context; armed, proceed is to run once
	// something may have happened (poke); expired and recheck are set by the wait's
	// timers.
	mu      sync.Mutex
	ctx     context.Context
	armed   bool
	expired atomic.Bool
	recheck atomic.Bool

	// Then's: f to call at the end, whether it counted as parked, and how to stop
	// what it registered. Only the continuation (one run at a time) touches finished
	// and stopRecheck.
	then                  func(Ended, error)
	counted, finished     bool
	stopDeadline, stopCtx func() bool
	stopRecheck           func() bool
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
		p.ID = ids.NewOrdered(ids.ElicitationPrefix)
	}
	w := &Waiter{s: s, person: p.Person}
	if err := s.parks.take(p.Person); err == nil {
		w.holdsSlot.Store(true)
	} else if minted || !s.endedPrompt(ctx, p) {
		return nil, err
	} // else answered at once: it does not wait
	w.ch = s.waiters.add(p.ID, w.poke)
	row, err := s.open(ctx, p, minted, true)
	if err != nil {
		s.waiters.remove(p.ID, w.ch)
		w.giveSlot()
		return nil, err
	}
	w.setRow(row)
	if w.done {
		w.giveSlot() // answered at once: it does not wait
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

// setRow keeps row, as read when attaching, without its params.
func (w *Waiter) setRow(row *models.Elicitation) {
	trimmed := *row
	trimmed.Params = nil
	w.row, w.done = &trimmed, !row.IsPending()
}

// ID is the prompt's id.
func (w *Waiter) ID() string { return w.row.ID }

// Ended reports that the prompt was no longer pending when attached: Wait returns at
// once.
func (w *Waiter) Ended() bool { return w.done }

// Close unregisters a waiter that will not Wait, and gives back its person's slot.
func (w *Waiter) Close() {
	w.s.waiters.remove(w.row.ID, w.ch)
	w.giveSlot()
}

// giveSlot gives back the person's parked-request slot, if the wait still holds it.
func (w *Waiter) giveSlot() {
	if w.holdsSlot.Swap(false) {
		w.s.parks.give(w.person)
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
// someone is blocked on, and was most of the resolve → answer tail.
func (w *Waiter) WaitToAnswer(ctx context.Context) (Ended, error) {
	type result struct {
		v   Ended
		err error
	}
	got := make(chan result, 1)
	w.Then(ctx, func(v Ended, err error) { got <- result{v, err} })
	r := <-got
	return r.v, r.err
}

// Then is WaitToAnswer without a goroutine waiting: it returns at once, and f is
// called with what WaitToAnswer would return — on a goroutine started when the wait
// ends, or on the caller's when the prompt had ended already. Until then the wait is
// a registered channel, a timer and the Waiter itself: what the continuation needs is
// kept in its fields, not in closures of their own, each of which a parked request
// would keep.
func (w *Waiter) Then(ctx context.Context, f func(Ended, error)) {
	s := w.s
	if w.done {
		w.Close()
		f(endedOf(w.row), nil)
		return
	}
	w.then, w.counted = f, s.enterPark()
	w.stopDeadline = s.clock.AfterFunc(w.row.ExpiresAt.Sub(s.clock.Now()), w.expire)
	w.stopCtx = afterDone(ctx, w.poke)
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
	w.arm()
}

// afterDone is context.AfterFunc, through ctx's own AfterFunc when it has one (a held
// request's context): context.AfterFunc would derive a cancellable context from it,
// a few hundred bytes more for each parked request.
func afterDone(ctx context.Context, f func()) (stop func() bool) {
	if a, ok := ctx.(interface{ AfterFunc(func()) func() bool }); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(ctx, f)
}

// expire is the deadline timer's news.
func (w *Waiter) expire() {
	w.expired.Store(true)
	w.poke()
}

// recheckSoon is the news that the row can be read again (after the database was
// unavailable).
func (w *Waiter) recheckSoon() {
	w.recheck.Store(true)
	w.poke()
}

// proceed is the wait's continuation: it looks at what happened and either finishes
// the wait or arms itself again. On a goroutine of its own (poke), beyond any Recover
// middleware: a panic is the wait's error.
func (w *Waiter) proceed() {
	defer func() {
		if r := recover(); r != nil {
			w.finish(Ended{}, fmt.Errorf("panic while waiting for a verdict: %v\n%s", r, debug.Stack()))
		}
	}()
	done, reread := w.step()
	switch {
	case done != nil:
		w.finish(done.v, done.err)
		return
	case !reread:
		w.arm()
		return
	}
	// Woken: re-read the row, the truth. While the database is unavailable (a
	// restart, a failover) the request stays parked and reads again shortly; a
	// verdict given once it is back still reaches it.
	s := w.s
	w.mu.Lock()
	ctx := w.ctx
	w.mu.Unlock()
	cur, err := s.store.GetElicitation(context.WithoutCancel(ctx), w.row.ID)
	switch {
	case errors.Is(err, errs.ErrUnavailable):
		s.log.Warn("parked request cannot read its prompt; retrying", "elicitation_id", w.row.ID, "err", err)
		w.stopRecheck = s.clock.AfterFunc(unavailableRecheck, w.recheckSoon)
	case err != nil:
		w.finish(Ended{}, err)
		return
	case !cur.IsPending():
		w.finish(endedOf(cur), nil)
		return
	}
	w.arm()
}

// finish ends the wait once: its timers and registrations go, then Then's f runs.
func (w *Waiter) finish(v Ended, err error) {
	if w.finished {
		return
	}
	w.finished = true
	w.stopDeadline()
	w.stopCtx()
	if w.stopRecheck != nil {
		w.stopRecheck()
	}
	if w.counted {
		w.s.parked.Done()
	}
	w.Close()
	w.then(v, err)
}

// outcome is how a wait ended.
type outcome struct {
	v   Ended
	err error
}

// step looks at what woke the wait, in a fixed order: a wake (with the decided row,
// or asking for a re-read), a recheck after the database was unavailable, the
// deadline, the server stopping, the client hanging up. It returns the outcome when
// the wait is over, or reread when the row must be read again; neither when nothing
// happened.
func (w *Waiter) step() (done *outcome, reread bool) {
	s := w.s
	w.mu.Lock()
	ctx := w.ctx
	w.mu.Unlock()
	bg := context.WithoutCancel(ctx)
	select {
	case wk := <-w.ch:
		if wk.row != nil && !wk.row.IsPending() {
			v := endedOf(wk.row)
			v.answered = wk.answered
			return &outcome{v: v}, false
		}
		if wk.answered != nil {
			wk.answered()
		}
		return nil, true
	default:
	}
	if w.recheck.Swap(false) {
		return nil, true
	}
	if w.expired.Load() {
		v, err := s.finish(bg, w.row, models.StatusExpired, models.ViaTimeout)
		return &outcome{v, err}, false
	}
	select {
	case <-s.shutdown:
		w.Close() // before the grace starts, so no renewal from here outlives it
		return &outcome{v: s.leave(bg, w.row)}, false
	default:
	}
	if ctx.Err() == nil {
		return nil, false
	}
	w.Close()
	s.leave(bg, w.row)
	select {
	case <-s.shutdown:
		// At shutdown the server ends request contexts too (so streams close): a
		// request that sees both is owed the "no verdict" answer.
		return &outcome{v: Ended{Status: models.StatusPending, Row: w.row}}, false
	default:
	}
	return &outcome{err: ErrClientGone}, false
}

// arm readies the wait's continuation (proceed): it runs, on a goroutine of its own,
// as soon as something may have happened — at once when something already has.
func (w *Waiter) arm() {
	w.mu.Lock()
	w.armed = true
	w.mu.Unlock()
	w.poke()
}

// poke starts the armed continuation when there is something for it to look at. Every
// source of news calls it after making its news visible (a wake in the channel, a
// timer's flag, the shutdown channel closed, the context done), so whichever of arm
// and the news comes second sees the other.
func (w *Waiter) poke() {
	w.mu.Lock()
	if !w.armed || !w.newsLocked() {
		w.mu.Unlock()
		return
	}
	w.armed = false
	w.mu.Unlock()
	go w.proceed()
}

// newsLocked reports whether the wait has something to look at.
func (w *Waiter) newsLocked() bool {
	if len(w.ch) > 0 || w.recheck.Load() || w.expired.Load() || w.ctx.Err() != nil {
		return true
	}
	select {
	case <-w.s.shutdown:
		return true
	default:
		return false
	}
}

// unavailableRecheck is how soon a woken waiter that could not read its row (the
// database unavailable) tries again.
const unavailableRecheck = time.Second
