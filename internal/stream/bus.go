// Package stream fans session events out to live subscribers (SSE streams, pages) and
// carries "this elicitation was decided" notes to parked waiters.
//
// The Bus interface has an in-process implementation (Local) used with SQLite on one
// node; a Postgres LISTEN/NOTIFY implementation can stand behind the same interface for
// many replicas. Publishers never block: a subscriber whose buffer is full is dropped and
// its channel closed, so it reconnects instead of stalling everyone else.
package stream

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Event is one frame on a session stream.
type Event struct {
	// Type is the SSE event name, e.g. "response.elicitation_request".
	Type string
	// Data is the JSON payload, exactly as sent.
	Data json.RawMessage
	// ElicitationID names the prompt the event is about, when there is one.
	ElicitationID string
	// Seq is the event's per-session sequence number in the durable log (0: none).
	Seq int64
	// Stage, when set, marks the event as a step of ElicitationID's lifecycle
	// (models.LoggedRequest, models.LoggedResolved) that the log holds exactly once:
	// a durable bus logs it only if the prompt is not that far yet, and drops it
	// otherwise (it was logged before, by this or another replica).
	Stage int
	// memo holds the frame every subscriber of one publication writes (Frame).
	memo *frameMemo
}

// Bus publishes session events and decision notes.
type Bus interface {
	// Publish delivers ev to the subscribers of each session id in order.
	// events[i] goes to sessions[i], so ancestors can get their own copy.
	Publish(sessions []string, events []Event)
	// PublishIn is Publish for events a caller logs in its own transaction, beside
	// writes of its own (one commit instead of two): write appends the events it is
	// given (with notify, when set, as EventLog.AppendEvents) and commits. When write
	// returns without an error the events are delivered as Publish delivers them, in log
	// order; otherwise nothing is, and its error is returned.
	PublishIn(sessions []string, events []Event, write AppendFunc) error
	// Subscribe registers a subscriber on a session. Cancel must be called when done.
	Subscribe(session string, buffer int) *Subscription
	// SubscribeMany registers one subscriber on several sessions (the inbox follows the
	// roots of the trees it lists). Its set can be changed later with Retarget, keeping
	// the same channel.
	SubscribeMany(sessions []string, buffer int) *Subscription
	// Decided announces that elicitation id has left pending (on any replica).
	Decided(id string)
	// OnDecided registers the callback run for every Decided note. Set once at wiring.
	// An empty id means "anything may have been decided" (after a lost connection):
	// every waiter should re-read its row.
	OnDecided(func(id string))
	// Resume returns a session's logged events after seq, oldest first. ok is false
	// when events after seq are no longer retained (the caller must resynchronise).
	Resume(ctx context.Context, session string, after int64) (events []Event, ok bool, err error)
	// GrantChanged announces, after the change is committed, that user's grant on the
	// tree rooted at root was created, changed or removed — on every replica, so open
	// streams of that person on that tree re-check their access at once. An empty root
	// with a user means every tree of that person: one of their credentials (an API
	// token, a browser sign-in) ended, and each of their streams re-checks the
	// credential it was opened with.
	GrantChanged(root, user string)
	// OnGrantChanged registers the callback run for every GrantChanged note (from any
	// replica). Set once at wiring. Empty root and user mean "any grant may have
	// changed" (after a lost connection): every stream should re-check.
	OnGrantChanged(func(root, user string))
	// Head returns the sequence number of a session's latest logged event (0: none, or
	// no log). A new live-tail subscriber skips events up to it: on a bus that delivers
	// through the database, events published just before it subscribed may still be
	// on their way, and they are not news to it.
	Head(ctx context.Context, session string) (int64, error)
}

// Delivery is an event together with the session it was published on. Every
// subscriber of that session gets the same one, which none may change: subscriptions
// carry pointers, so an open stream's buffer costs a pointer a slot, not an event.
type Delivery struct {
	Session string
	Event   Event
}

// Subscription is one live subscriber. C is closed when the subscriber is dropped
// (too slow) or cancelled.
type Subscription struct {
	C <-chan *Delivery
	c chan *Delivery
	// sessions are the keys the subscription is registered under (guarded by the
	// bus's lock); closed is set once C is closed.
	sessions []string
	closed   bool
	cancel   func()
	retarget func([]string)
	once     sync.Once
}

// Cancel unregisters the subscription. Safe to call more than once.
func (s *Subscription) Cancel() { s.once.Do(s.cancel) }

// Retarget moves the subscription to another set of sessions, keeping its channel: an
// event published on a session of both the old and the new set is not missed while the
// set changes. A dropped or cancelled subscription stays closed.
func (s *Subscription) Retarget(sessions []string) { s.retarget(sessions) }

// Local is the in-process Bus. Subscribers are indexed by session, so publishing costs
// the subscribers of the sessions published on, not every subscriber of the process.
type Local struct {
	mu        sync.Mutex
	subs      map[string]map[*Subscription]struct{}
	onDecided func(string)
	onGrant   func(root, user string)
}

// NewLocal returns an empty in-process bus.
func NewLocal() *Local {
	return &Local{subs: map[string]map[*Subscription]struct{}{}}
}

// Subscribe implements Bus.
func (b *Local) Subscribe(session string, buffer int) *Subscription {
	return b.SubscribeMany([]string{session}, buffer)
}

// SubscribeMany implements Bus.
func (b *Local) SubscribeMany(sessions []string, buffer int) *Subscription {
	if buffer < 1 {
		buffer = 64
	}
	c := make(chan *Delivery, buffer)
	s := &Subscription{C: c, c: c}
	s.cancel = func() { b.remove(s) }
	s.retarget = func(sessions []string) { b.retarget(s, sessions) }
	b.mu.Lock()
	b.addLocked(s, sessions)
	b.mu.Unlock()
	return s
}

func (b *Local) addLocked(s *Subscription, sessions []string) {
	s.sessions = dedupe(sessions)
	for _, sid := range s.sessions {
		set := b.subs[sid]
		if set == nil {
			set = map[*Subscription]struct{}{}
			b.subs[sid] = set
		}
		set[s] = struct{}{}
	}
}

func (b *Local) unindexLocked(s *Subscription) {
	for _, sid := range s.sessions {
		set := b.subs[sid]
		delete(set, s)
		if len(set) == 0 {
			delete(b.subs, sid)
		}
	}
	s.sessions = nil
}

func (b *Local) retarget(s *Subscription, sessions []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.closed {
		return
	}
	b.unindexLocked(s)
	b.addLocked(s, sessions)
}

// remove unregisters s and closes its channel exactly once (under the lock, so no
// publisher can send on a closed channel).
func (b *Local) remove(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(s)
}

func (b *Local) removeLocked(s *Subscription) {
	if s.closed {
		return
	}
	b.unindexLocked(s)
	s.closed = true
	close(s.c)
}

// Publish implements Bus. Sends are non-blocking and happen under the lock, which is
// short (no I/O); a full subscriber is dropped.
func (b *Local) Publish(sessions []string, events []Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, sid := range sessions {
		subs := b.subs[sid]
		if len(subs) == 0 {
			continue
		}
		d := &Delivery{Session: sid, Event: events[i]}
		d.Event.memo = &frameMemo{}
		for s := range subs {
			b.offer(s, d)
		}
	}
}

// AppendFunc appends evs to the durable log in its caller's transaction and returns
// their rows, aligned with evs; notify as for EventLog.AppendEvents.
type AppendFunc func(evs []models.LoggedEvent, notify *models.Notice) ([]models.SessionEvent, error)

// PublishIn implements Bus: with no log, nothing is given to write.
func (b *Local) PublishIn(sessions []string, events []Event, write AppendFunc) error {
	if _, err := write(nil, nil); err != nil {
		return err
	}
	b.Publish(sessions, events)
	return nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func (b *Local) offer(s *Subscription, d *Delivery) {
	select {
	case s.c <- d:
	default:
		b.removeLocked(s)
	}
}

// Decided implements Bus: in one process the note goes straight to the callback.
func (b *Local) Decided(id string) {
	b.mu.Lock()
	f := b.onDecided
	b.mu.Unlock()
	if f != nil {
		f(id)
	}
}

// OnDecided implements Bus.
func (b *Local) OnDecided(f func(string)) {
	b.mu.Lock()
	b.onDecided = f
	b.mu.Unlock()
}

// GrantChanged implements Bus: in one process the note goes straight to the callback.
func (b *Local) GrantChanged(root, user string) {
	b.mu.Lock()
	f := b.onGrant
	b.mu.Unlock()
	if f != nil {
		f(root, user)
	}
}

// OnGrantChanged implements Bus.
func (b *Local) OnGrantChanged(f func(root, user string)) {
	b.mu.Lock()
	b.onGrant = f
	b.mu.Unlock()
}

// Resume implements Bus: the plain in-process bus keeps no log.
func (b *Local) Resume(context.Context, string, int64) ([]Event, bool, error) {
	return nil, false, nil
}

// Head implements Bus: the plain in-process bus keeps no log.
func (b *Local) Head(context.Context, string) (int64, error) { return 0, nil }

// DropAll disconnects every subscriber (they reconnect and resume from the log).
func (b *Local) DropAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, set := range b.subs {
		for s := range set {
			b.removeLocked(s)
		}
	}
}

// Watched reports whether any subscriber is registered, on any session.
func (b *Local) Watched() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs) > 0
}

// Count reports the number of live subscribers (for metrics and tests).
func (b *Local) Count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[*Subscription]struct{}{}
	for _, set := range b.subs {
		for s := range set {
			seen[s] = struct{}{}
		}
	}
	return len(seen)
}
