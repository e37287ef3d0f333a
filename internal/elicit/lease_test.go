package elicit_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestSweepNeverAbandonsAPromptWaitedOnHere: a lease can lapse while its waiter is
// alive in this very process — the renewal was late on a loaded machine, or the
// database was slow. The sweep must not abandon it (the agent is still connected and
// would be told "no verdict"); it renews the lease instead. Once the waiter is gone,
// the lapsed prompt is abandoned as before.
func TestSweepNeverAbandonsAPromptWaitedOnHere(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := newSession(t, st, "")
		clock := &offsetClock{}
		core := elicit.New(st, stream.NewLocal(), elicit.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Clock: clock, Grace: time.Minute})

		w, err := core.Attach(ctx, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission,
			Params: map[string]any{"message": "m"}})
		if err != nil {
			t.Fatal(err)
		}
		id := w.ID()
		clock.skip(time.Hour) // every renewal missed: the stored lease lapsed long ago

		if n, err := core.AbandonLapsed(ctx); err != nil || n != 0 {
			t.Fatalf("abandoned %d (%v) prompts with a live waiter here, want 0", n, err)
		}
		row, err := st.GetElicitation(ctx, id)
		if err != nil || !row.IsPending() {
			t.Fatalf("waited-on prompt = %+v, %v; want pending", row, err)
		}
		if row.LeaseUntil == nil || !row.LeaseUntil.After(clock.Now()) {
			t.Fatalf("lease = %v, want renewed past %v", row.LeaseUntil, clock.Now())
		}

		w.Close() // the agent hung up
		clock.skip(time.Hour)
		if n, err := core.AbandonLapsed(ctx); err != nil || n != 1 {
			t.Fatalf("abandoned %d (%v) after the waiter left, want 1", n, err)
		}
		if row, _ := st.GetElicitation(ctx, id); row.Status != models.StatusAbandoned {
			t.Fatalf("prompt after its waiter left = %s, want abandoned", row.Status)
		}
	})
}
