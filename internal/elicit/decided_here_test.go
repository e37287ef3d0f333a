package elicit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// noticingStore is a store whose decisions are announced on the bus before the
// decider hears back — as on Postgres, where the deciding statement's NOTIFY reaches
// the process's listener before the statement's own answer — and which counts the
// prompt reads made after a decision.
type noticingStore struct {
	elicit.Store
	bus     *stream.Local
	decided atomic.Bool
	reads   atomic.Int64 // GetElicitation calls once something was decided
}

func (s *noticingStore) DecideElicitation(ctx context.Context, id, sessionID string, d models.Decision) (*models.Elicitation, error) {
	row, err := s.Store.DecideElicitation(ctx, id, sessionID, d)
	s.decided.Store(true)
	s.bus.Decided(id) // the commit's notice, ahead of the answer below
	return row, err
}

func (s *noticingStore) GetElicitation(ctx context.Context, id string) (*models.Elicitation, error) {
	if s.decided.Load() {
		s.reads.Add(1)
	}
	return s.Store.GetElicitation(ctx, id)
}

// TestAVerdictGivenHereAnswersWithoutAReadEvenWhenItsNoticeCameFirst: the request a
// person's verdict wakes is handed the decided row by the process that decided it,
// even when the decision's notice on the bus arrived first. Woken by the notice, it
// re-read the row from the database — a round trip before its answer — while the
// decider was about to hand it over. A decision this process lost to another still
// wakes its waiters to re-read (see TestAVerdictLostToAnotherStillWakes).
func TestAVerdictGivenHereAnswersWithoutAReadEvenWhenItsNoticeCameFirst(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, "")
	sess := newSession(t, st, "")
	bus := stream.NewLocal()
	ns := &noticingStore{Store: st, bus: bus}
	core := elicit.New(ns, bus, elicit.Options{Log: quietLog()})
	id, verdict := parkOne(t, core, sess)
	if _, err := core.Resolve(ctx, sess.ID, id, models.Verdict{Action: models.ActionAccept}, "alice", models.ViaAPI); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-verdict:
		if !v.Decided() || v.Verdict.Action != models.ActionAccept {
			t.Fatalf("verdict %+v", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the parked request was not woken")
	}
	if n := ns.reads.Load(); n != 0 {
		t.Fatalf("the woken request read its prompt %d times before answering; want the decider's row", n)
	}
}

// lostStore decides nothing itself: another process's decision wins first, and its
// notice comes while this process's own attempt is in flight.
type lostStore struct {
	elicit.Store
	bus *stream.Local
}

func (s *lostStore) DecideElicitation(ctx context.Context, id, sessionID string, d models.Decision) (*models.Elicitation, error) {
	won := d
	won.Action, won.By = models.ActionAccept, "bob"
	if _, err := s.Store.DecideElicitation(ctx, id, sessionID, won); err != nil {
		return nil, err
	}
	s.bus.Decided(id)                                       // the winner's notice
	return s.Store.DecideElicitation(ctx, id, sessionID, d) // ours: no longer pending
}

// TestAVerdictLostToAnotherStillWakes: a notice that arrives while this process is
// deciding the same prompt is held back, not dropped — when this process's decision
// loses, its waiters are woken to read the winner's.
func TestAVerdictLostToAnotherStillWakes(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, "")
	sess := newSession(t, st, "")
	bus := stream.NewLocal()
	core := elicit.New(&lostStore{Store: st, bus: bus}, bus, elicit.Options{Log: quietLog()})
	id, verdict := parkOne(t, core, sess)
	out, err := core.Resolve(ctx, sess.ID, id, models.Verdict{Action: models.ActionDecline}, "alice", models.ViaAPI)
	if err != nil {
		t.Fatal(err)
	}
	if out.Outcome != elicit.OutcomeAlreadyResolved || out.ResolvedBy != "bob" {
		t.Fatalf("outcome %+v, want already resolved by bob", out)
	}
	select {
	case v := <-verdict:
		if !v.Decided() || v.Verdict.Action != models.ActionAccept {
			t.Fatalf("verdict %+v, want bob's accept", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the parked request was never woken by the decision that won")
	}
}

// parkOne parks a request on a new prompt of sess and returns the prompt's id and
// where the request's ending arrives.
func parkOne(t *testing.T, core *elicit.Service, sess *models.Session) (string, <-chan elicit.Ended) {
	t.Helper()
	ctx := context.Background()
	w, err := core.Attach(ctx, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission,
		Params: map[string]any{"message": "m"}})
	if err != nil {
		t.Fatal(err)
	}
	verdict := make(chan elicit.Ended, 1)
	go func() {
		v, err := w.Wait(ctx)
		if err != nil {
			t.Error(err)
		}
		verdict <- v
	}()
	return w.ID(), verdict
}
