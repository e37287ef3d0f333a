package stream

import (
	"context"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// Guard keeps live streams from outliving the access that opened them, and keeps one
// person from holding more than their share of them.
//
// Every stream (API session streams and page streams alike) holds a Lease while it is
// open. A person may hold at most max leases in this process: each open stream costs a
// goroutine, a subscription and, for pages, re-renders, so an unbounded number is a way
// to exhaust the server. When a grant changes (Bus.GrantChanged, heard from any
// replica), the leases of that person on that tree are signalled at once, so a revoked
// stream ends within moments instead of at its next heartbeat.
//
// The cap is per process: with many replicas a person may hold max on each.
//
// A stopping server ends its streams through the guard (Close) rather than by ending
// every request's context: a stream never finishes by itself, while a request that is
// writing a prompt or an answer should finish its work, not fail half-way.
type Guard struct {
	max    int
	mu     sync.Mutex
	byUser map[string]map[*Lease]struct{}
	count  int
	// closed ends when the server stops serving streams (Close).
	closed       context.Context
	closeStreams context.CancelFunc
}

// DefaultMaxStreamsPerUser is the cap when none is configured.
const DefaultMaxStreamsPerUser = 32

// NewGuard returns a guard allowing maxPerUser open streams per person (≤ 0: the default).
func NewGuard(maxPerUser int) *Guard {
	if maxPerUser <= 0 {
		maxPerUser = DefaultMaxStreamsPerUser
	}
	closed, closeStreams := context.WithCancel(context.Background())
	return &Guard{max: maxPerUser, byUser: map[string]map[*Lease]struct{}{}, closed: closed, closeStreams: closeStreams}
}

// Close ends every stream's context (Lease.Bind), those open now and those opened
// after: the server is stopping, and their clients reconnect to another replica or
// to this one once it is back. Safe to call more than once.
func (g *Guard) Close() { g.closeStreams() }

// Lease is one open stream's place in the guard. Release it when the stream ends.
type Lease struct {
	g    *Guard
	user string
	// root is the tree the stream shows; "" for a stream over every tree the person
	// can see (the inbox), which hears of all of the person's grant changes.
	root    string
	changed chan struct{}
	once    sync.Once
	// timer signals changed when the stream's credential runs out (SignalAt).
	timer *time.Timer
	// unbind undoes Bind (nil: never bound).
	unbind func()
}

// Acquire takes a stream slot for user, watching the tree rooted at root ("" for all of
// the person's trees). A person already holding the maximum gets a TooManyRequests
// error and no lease.
func (g *Guard) Acquire(user, root string) (*Lease, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	set := g.byUser[user]
	if len(set) >= g.max {
		return nil, errs.TooManyRequests("too many open streams (at most %d per person): close one first", g.max)
	}
	if set == nil {
		set = map[*Lease]struct{}{}
		g.byUser[user] = set
	}
	l := &Lease{g: g, user: user, root: root, changed: make(chan struct{}, 1)}
	set[l] = struct{}{}
	g.count++
	return l, nil
}

// Changed receives a signal when the person's grant on the lease's tree may have
// changed: the stream must re-check access (and end without it) before it sends
// anything else. Signals coalesce; one pending signal stands for any number.
func (l *Lease) Changed() <-chan struct{} { return l.changed }

// SignalAt signals Changed at t as well: the credential the stream was opened with (an
// API token, a browser sign-in) runs out then, and the stream must re-check it at that
// moment, not at its next heartbeat. A zero t does nothing. Call it from the goroutine
// that holds the lease, before Release (which stops the timer).
func (l *Lease) SignalAt(t time.Time) {
	if t.IsZero() {
		return
	}
	if l.timer != nil {
		l.timer.Stop()
	}
	l.timer = time.AfterFunc(time.Until(t), l.signal)
}

// Bind returns the stream's context: parent, ended as well when the guard closes (the
// server stops). Call it once, from the goroutine that holds the lease, before
// Release (which ends the context).
func (l *Lease) Bind(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(l.g.closed, cancel)
	l.unbind = func() {
		stop()
		cancel()
	}
	return ctx
}

// signal leaves one pending signal on changed (they coalesce); it never blocks.
func (l *Lease) signal() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// Release frees the slot. Safe to call more than once.
func (l *Lease) Release() {
	l.once.Do(func() {
		if l.timer != nil {
			l.timer.Stop()
		}
		if l.unbind != nil {
			l.unbind()
		}
		g := l.g
		g.mu.Lock()
		defer g.mu.Unlock()
		set := g.byUser[l.user]
		delete(set, l)
		if len(set) == 0 {
			delete(g.byUser, l.user)
		}
		g.count--
	})
}

// GrantChanged signals the leases a grant change concerns: user's leases on root (and
// user's all-tree leases). A change of the public grant concerns everyone on root; an
// empty root with a user (one of their credentials ended) concerns all of user's
// leases; an empty root and user (notifications were lost) concerns every lease. Signalling never
// blocks and does no I/O, so it is safe from the bus's listener.
func (g *Guard) GrantChanged(root, user string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	signal := func(set map[*Lease]struct{}) {
		for l := range set {
			if root == "" || l.root == "" || l.root == root {
				l.signal()
			}
		}
	}
	if user == "" || user == auth.PublicUser {
		for _, set := range g.byUser {
			signal(set)
		}
		return
	}
	signal(g.byUser[user])
}

// Open reports how many streams are open in this process (for metrics).
func (g *Guard) Open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.count
}
