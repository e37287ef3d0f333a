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

// TestAnnouncedRunsOnceEveryoneWaitingWasTold: OnAnnounced — where the notification
// dispatcher is woken — runs for a new prompt once its request is on the streams, and
// for a verdict once the request it woke has answered and its end is on the streams:
// the notifications' database work and requests never run beside the answer someone
// is blocked on.
func TestAnnouncedRunsOnceEveryoneWaitingWasTold(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, "")
	sess := newSession(t, st, "")
	bus := stream.NewLocal()
	sub := bus.Subscribe(sess.ID, 8)
	defer sub.Cancel()
	core := elicit.New(st, bus, elicit.Options{Log: quietLog(), AnswerWait: time.Minute})

	type seen struct {
		status   string
		events   int  // events the stream's subscriber had been given by then
		answered bool // the woken request had answered by then
	}
	var answered atomic.Bool
	got := make(chan seen, 4)
	core.OnAnnounced(func(e *models.Elicitation) {
		got <- seen{status: e.Status, events: len(sub.C), answered: answered.Load()}
	})

	w, err := core.Attach(ctx, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission, Params: map[string]any{"message": "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := <-got; s.status != models.StatusPending || s.events != 1 {
		t.Fatalf("a new prompt announced as %+v; want pending, its request on the stream", s)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		v, err := w.WaitToAnswer(ctx)
		if err != nil || !v.Decided() {
			t.Errorf("wait: %+v %v", v, err)
		}
		answered.Store(true) // the answer is out
		v.Answered()
	}()
	if _, err := core.Resolve(ctx, sess.ID, w.ID(), models.Verdict{Action: models.ActionAccept}, "alice", models.ViaAPI); err != nil {
		t.Fatal(err)
	}
	<-done
	if s := <-got; s.status != models.StatusResolved || !s.answered || s.events != 2 {
		t.Fatalf("a verdict announced as %+v; want resolved, once the woken request answered and with its end on the stream", s)
	}
}
