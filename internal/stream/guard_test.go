package stream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

func signalled(l *Lease) bool {
	select {
	case <-l.Changed():
		return true
	default:
		return false
	}
}

// A person holds at most max leases; releasing one (twice is harmless) frees a slot,
// and other people are not affected.
func TestGuardCapsPerPerson(t *testing.T) {
	g := NewGuard(2)
	a1, err1 := g.Acquire("alice", "r1")
	_, err2 := g.Acquire("alice", "")
	if err1 != nil || err2 != nil {
		t.Fatalf("first two leases: %v, %v", err1, err2)
	}
	if _, err := g.Acquire("alice", "r2"); !errors.Is(err, errs.ErrTooManyRequests) {
		t.Fatalf("third lease: %v, want too many requests", err)
	}
	if _, err := g.Acquire("bob", "r1"); err != nil {
		t.Fatalf("bob's lease: %v", err)
	}
	a1.Release()
	a1.Release()
	if _, err := g.Acquire("alice", "r2"); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if n := g.Open(); n != 3 {
		t.Fatalf("Open = %d, want 3", n)
	}
}

// A grant change signals exactly the leases it concerns: the person's on that tree and
// their all-tree lease; a public change everyone's on the tree; an empty note all.
func TestGuardSignalsGrantChanges(t *testing.T) {
	g := NewGuard(10)
	bobR1, _ := g.Acquire("bob", "r1")
	bobR2, _ := g.Acquire("bob", "r2")
	bobAll, _ := g.Acquire("bob", "")
	carolR1, _ := g.Acquire("carol", "r1")
	g.GrantChanged("r1", "bob")
	if !signalled(bobR1) || !signalled(bobAll) || signalled(bobR2) || signalled(carolR1) {
		t.Fatal("bob's change on r1 signalled the wrong leases")
	}
	g.GrantChanged("r1", auth.PublicUser)
	if !signalled(bobR1) || !signalled(carolR1) || !signalled(bobAll) || signalled(bobR2) {
		t.Fatal("a public change on r1 signalled the wrong leases")
	}
	g.GrantChanged("", "")
	for _, l := range []*Lease{bobR1, bobR2, bobAll, carolR1} {
		if !signalled(l) {
			t.Fatal("a lost-notes resync did not signal every lease")
		}
	}
	// Signals coalesce and never block.
	g.GrantChanged("r1", "bob")
	g.GrantChanged("r1", "bob")
	if !signalled(bobR1) || signalled(bobR1) {
		t.Fatal("signals did not coalesce into one")
	}
}

// Retarget moves a subscription between sessions without closing its channel.
// A credential ending (empty root, one person) signals all of that person's leases,
// on every tree, and nobody else's.
func TestGuardSignalsACredentialEnding(t *testing.T) {
	g := NewGuard(0)
	onR1, _ := g.Acquire("alice", "r1")
	onR2, _ := g.Acquire("alice", "r2")
	everywhere, _ := g.Acquire("alice", "")
	bobs, _ := g.Acquire("bob", "r1")
	g.GrantChanged("", "alice")
	if !signalled(onR1) || !signalled(onR2) || !signalled(everywhere) {
		t.Fatal("every one of alice's leases should be told her credential ended")
	}
	if signalled(bobs) {
		t.Fatal("bob's lease was told of alice's credential")
	}
}

// SignalAt signals the lease when its credential runs out, and not before.
func TestLeaseSignalsAtItsCredentialsEnd(t *testing.T) {
	g := NewGuard(0)
	l, _ := g.Acquire("alice", "r1")
	defer l.Release()
	at := time.Now().Add(50 * time.Millisecond)
	l.SignalAt(at)
	select {
	case <-l.Changed():
		if time.Now().Before(at) {
			t.Fatal("signalled before the credential ran out")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no signal when the credential ran out")
	}
	never, _ := g.Acquire("alice", "r2")
	never.SignalAt(time.Time{}) // no end: nothing armed
	never.Release()
}

func TestRetargetKeepsChannel(t *testing.T) {
	b := NewLocal()
	s := b.SubscribeMany([]string{"a"}, 10)
	s.Retarget([]string{"b", "c"})
	b.Publish([]string{"a", "b"}, []Event{ev("for-a"), ev("for-b")})
	if d := <-s.C; d.Session != "b" {
		t.Fatalf("got %+v, want the event on b only", d)
	}
	select {
	case d := <-s.C:
		t.Fatalf("unexpected %+v", d)
	default:
	}
	s.Cancel()
	s.Retarget([]string{"a"}) // no effect on a cancelled subscription
	if n := b.Count(); n != 0 {
		t.Fatalf("Count = %d after cancel", n)
	}
}

// The pacer renders the first change at once and folds changes within the interval
// into one render at its end.
func TestPacerFoldsBursts(t *testing.T) {
	p := NewPacer(time.Hour)
	now := time.Now()
	p.Rendered(now.Add(-2 * time.Hour))
	p.Note()
	if !p.Due(now) {
		t.Fatal("the first change after a quiet spell was not due at once")
	}
	for range 100 {
		p.Note()
		if p.Due(now) {
			t.Fatal("a change within the interval was due at once")
		}
	}
	if p.C() == nil {
		t.Fatal("no timer for the folded change")
	}
	if !p.Due(now.Add(time.Hour)) {
		t.Fatal("the folded changes were not due at the end of the interval")
	}
	if p.Due(now.Add(2*time.Hour)) || p.C() != nil {
		t.Fatal("a render was due with nothing changed")
	}
	p.Stop()
}

// A bound stream's context ends when the guard closes (the server stops) — those open
// then and those opened after — and when its lease is released; its parent request's
// context is left alone.
func TestGuardCloseEndsBoundStreams(t *testing.T) {
	g := NewGuard(0)
	released, _ := g.Acquire("alice", "r1")
	relCtx := released.Bind(context.Background())
	released.Release()
	if relCtx.Err() == nil {
		t.Fatal("a released lease's context is still live")
	}

	open, _ := g.Acquire("alice", "r1")
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	ctx := open.Bind(parent)
	if ctx.Err() != nil {
		t.Fatal("a stream's context ended before anything ended it")
	}
	g.Close()
	<-ctx.Done()
	if parent.Err() != nil {
		t.Fatal("closing the guard ended the request's own context")
	}
	late, _ := g.Acquire("bob", "")
	lateCtx := late.Bind(context.Background())
	<-lateCtx.Done()
	open.Release()
	late.Release()
	g.Close() // twice is harmless
}
