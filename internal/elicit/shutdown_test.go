package elicit_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestShutdownWhileRequestsArrive shuts the core down while requests are still being
// parked. Every Park returns "no verdict" without error, and under -race the waiter
// count (a WaitGroup that must not gain its first Add while Shutdown waits) is clean.
// The prompts stay pending with a lease one grace ahead (a rolling restart loses
// none): a restarted core hands a verdict given meanwhile to a client that re-parks
// with the same id, and abandons the others once their leases lapse.
func TestShutdownWhileRequestsArrive(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, "")
	sess := newSession(t, st, "")
	core := elicit.New(st, stream.NewLocal(), elicit.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})

	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	verdicts := make(chan elicit.Ended, n)
	first := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first <- struct{}{}
			v, err := park(ctx, core, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission,
				Params: map[string]any{"message": "m"}})
			if err != nil {
				errs <- err
				return
			}
			verdicts <- v
		}()
	}
	<-first // some requests are on their way in; shut down in the middle of the stream
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	core.Shutdown(sctx)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("parked requests did not return after Shutdown")
	}
	close(errs)
	close(verdicts)
	for err := range errs {
		t.Errorf("Park during shutdown: %v", err)
	}
	var ids []string
	for v := range verdicts {
		if v.Decided() || v.Status != models.StatusPending || v.Row == nil {
			t.Fatalf("verdict at shutdown = %+v, want no verdict with the prompt still pending", v.Status)
		}
		ids = append(ids, v.Row.ID)
	}
	if len(ids) != n {
		t.Fatalf("%d of %d parks returned a verdict", len(ids), n)
	}
	for _, id := range ids {
		row, err := st.GetElicitation(ctx, id)
		if err != nil || !row.IsPending() || row.LeaseUntil == nil || !row.LeaseUntil.After(time.Now()) {
			t.Fatalf("after shutdown %s = %+v, %v; want pending with a lease ahead", id, row, err)
		}
	}

	// The next process on the same database.
	later := &offsetClock{}
	next := elicit.New(st, stream.NewLocal(), elicit.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Clock: later})
	if out, err := next.Resolve(ctx, sess.ID, ids[0], models.Verdict{Action: models.ActionAccept}, "local", models.ViaAPI); err != nil || out.Outcome != elicit.OutcomeResolved {
		t.Fatalf("resolve after restart: %+v %v", out, err)
	}
	v, err := park(ctx, next, elicit.Prompt{Session: sess, ID: ids[0], Origin: models.OriginClaudePermission, Params: map[string]any{"message": "m"}})
	if err != nil || !v.Decided() || v.Verdict.Action != models.ActionAccept {
		t.Fatalf("re-park after restart: %+v %v; want the verdict given meanwhile", v, err)
	}
	// Nobody came back for the others: once the grace is over, they are abandoned.
	if n, err := next.AbandonLapsed(ctx); err != nil || n != 0 {
		t.Fatalf("abandoned %d (%v) before the grace ran out", n, err)
	}
	later.skip(time.Hour)
	if got, err := next.AbandonLapsed(ctx); err != nil || got != n-1 {
		t.Fatalf("abandoned %d (%v), want %d", got, err, n-1)
	}
	row, _ := st.GetElicitation(ctx, ids[1])
	if row.Status != models.StatusAbandoned || row.ResolvedVia == nil || *row.ResolvedVia != models.ViaGrace {
		t.Fatalf("lapsed prompt = %+v", row)
	}
}

// park attaches a waiter and waits, as a handler does.
func park(ctx context.Context, core *elicit.Service, p elicit.Prompt) (elicit.Ended, error) {
	w, err := core.Attach(ctx, p)
	if err != nil {
		return elicit.Ended{}, err
	}
	return w.Wait(ctx)
}

// offsetClock is the real clock moved forward by what the test skips.
type offsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().UTC().Add(c.off)
}

func (c *offsetClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (c *offsetClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

func (c *offsetClock) skip(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}
