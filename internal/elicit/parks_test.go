package elicit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestParkedCapGivesEverySlotBack: with MaxParkedPerPerson 2, a person's third wait is
// refused with errs.ErrTooManyRequests before anything is opened, another person is not
// held back, and every way a wait ends — a verdict, the client hanging up, the prompt
// expiring, Close without a wait, WaitAtMost returning — gives exactly its one slot back.
func TestParkedCapGivesEverySlotBack(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := newSession(t, st, "")
		core := elicit.New(st, stream.NewLocal(), elicit.Options{MaxParkedPerPerson: 2, Log: quietLog()})
		prompt := func(person string) elicit.Prompt {
			return elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission, Person: person,
				Params: map[string]any{"message": "m"}}
		}
		attach := func(person string) *elicit.Waiter {
			t.Helper()
			w, err := core.Attach(ctx, prompt(person))
			if err != nil {
				t.Fatalf("attach for %s: %v", person, err)
			}
			return w
		}
		refused := func(why string) {
			t.Helper()
			before, err := st.PendingInSubtree(ctx, sess.Path)
			if err != nil {
				t.Fatal(err)
			}
			w, err := core.Attach(ctx, prompt("alice"))
			if !errors.Is(err, errs.ErrTooManyRequests) || err.Error() != "too many parked requests: 2 of yours are waiting for a person here (at most 2 per person); answer or cancel some first" {
				if w != nil {
					w.Close()
				}
				t.Fatalf("%s: third attach = %v, want the cap's refusal", why, err)
			}
			if after, _ := st.PendingInSubtree(ctx, sess.Path); len(after) != len(before) {
				t.Fatalf("%s: a refused attach opened a prompt", why)
			}
		}
		// wait runs w.Wait on ctx in the background; the channel gets its result.
		wait := func(ctx context.Context, w *elicit.Waiter) <-chan error {
			done := make(chan error, 1)
			go func() { _, err := w.Wait(ctx); done <- err }()
			return done
		}
		within := func(done <-chan error) error {
			t.Helper()
			select {
			case err := <-done:
				return err
			case <-time.After(10 * time.Second):
				t.Fatal("the wait did not end")
				return nil
			}
		}

		a1, a2 := attach("alice"), attach("alice")
		refused("two parked")
		attach("bob").Close() // another person parks

		// A verdict.
		done := wait(ctx, a1)
		if _, err := core.Resolve(ctx, sess.ID, a1.ID(), models.Verdict{Action: models.ActionAccept}, "alice", models.ViaAPI); err != nil {
			t.Fatal(err)
		}
		if err := within(done); err != nil {
			t.Fatal(err)
		}
		a3 := attach("alice")
		refused("after a verdict, parked again")

		// The client hanging up.
		gone, hangUp := context.WithCancel(ctx)
		done = wait(gone, a3)
		hangUp()
		if err := within(done); !errors.Is(err, elicit.ErrClientGone) {
			t.Fatalf("hung-up wait = %v", err)
		}
		a4 := attach("alice")
		refused("after a hang-up, parked again")

		// Close without waiting.
		a4.Close()
		a4.Close() // twice gives back one slot, not two
		short := prompt("alice")
		short.Timeout = 50 * time.Millisecond
		a5, err := core.Attach(ctx, short)
		if err != nil {
			t.Fatal(err)
		}
		refused("after Close, parked again")

		// The prompt expiring.
		if err := within(wait(ctx, a5)); err != nil {
			t.Fatal(err)
		}
		a6 := attach("alice")
		refused("after expiry, parked again")

		// WaitAtMost waits in a slot of its own and gives it back.
		a6.Close()
		pending, err := core.Open(ctx, prompt("alice"))
		if err != nil {
			t.Fatal(err)
		}
		if row, err := core.WaitAtMost(ctx, "alice", pending.ID, 10*time.Millisecond); err != nil || !row.IsPending() {
			t.Fatalf("WaitAtMost = %v, %v", row, err)
		}
		a7 := attach("alice")
		if _, err := core.WaitAtMost(ctx, "alice", pending.ID, time.Second); !errors.Is(err, errs.ErrTooManyRequests) {
			t.Fatalf("WaitAtMost at the cap = %v, want the cap's refusal", err)
		}
		a2.Close()
		a7.Close()
	})
}
