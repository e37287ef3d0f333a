package elicit_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestVerdictPublishedAfterTheAnswer: a person's verdict reaches the streams (and the
// person's own request returns) only once the request it woke says its answer is out,
// so publishing never competes with the answer someone is blocked on; a request that
// never says so holds it back no longer than AnswerWait.
func TestVerdictPublishedAfterTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wait     time.Duration
		answers  bool
		heldBack bool
	}{
		{name: "held until answered", wait: time.Minute, answers: true, heldBack: true},
		{name: "bounded when never answered", wait: 10 * time.Millisecond, answers: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := testserver.OpenStore(t, "")
			sess := newSession(t, st, "")
			bus := stream.NewLocal()
			core := elicit.New(st, bus, elicit.Options{Log: quietLog(), AnswerWait: tc.wait})
			sub := bus.Subscribe(sess.ID, 16)
			defer sub.Cancel()
			w, err := core.Attach(ctx, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission,
				Params: map[string]any{"message": "m"}})
			if err != nil {
				t.Fatal(err)
			}
			select { // the prompt's own request event
			case d := <-sub.C:
				if d.Event.Type != elicit.EventRequest {
					t.Fatalf("first event %s", d.Event.Type)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the prompt was not published")
			}
			verdict := make(chan elicit.Ended, 1)
			go func() {
				v, err := w.WaitToAnswer(ctx)
				if err != nil {
					t.Error(err)
				}
				verdict <- v
			}()
			resolved := make(chan error, 1)
			go func() {
				_, err := core.Resolve(ctx, sess.ID, w.ID(), models.Verdict{Action: models.ActionAccept}, "alice", models.ViaAPI)
				resolved <- err
			}()
			var v elicit.Ended
			select {
			case v = <-verdict:
			case <-time.After(10 * time.Second):
				t.Fatal("the parked request was not woken")
			}
			if !v.Decided() || v.Verdict.Action != models.ActionAccept {
				t.Fatalf("verdict %+v", v)
			}
			if tc.heldBack {
				// Not published while the answer is not out (AnswerWait is a minute here).
				select {
				case d := <-sub.C:
					t.Fatalf("%s published before the woken request answered", d.Event.Type)
				case <-resolved:
					t.Fatal("Resolve returned before the woken request answered")
				case <-time.After(100 * time.Millisecond):
				}
			}
			if tc.answers {
				v.Answered()
			}
			deadline := time.After(10 * time.Second)
			for seen := false; !seen; {
				select {
				case d := <-sub.C:
					seen = d.Event.Type == elicit.EventResolved
				case <-deadline:
					t.Fatal("the verdict was never published")
				}
			}
			select {
			case err := <-resolved:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Resolve did not return")
			}
		})
	}
}
