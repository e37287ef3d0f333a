package elicit_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestShutdownWhileRequestsArrive shuts the core down while requests are still being
// parked. Every Park returns "no verdict" without error, and under -race the waiter
// count (a WaitGroup that must not gain its first Add while Shutdown waits) is clean.
func TestShutdownWhileRequestsArrive(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open("sqlite://" + filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	svc := sessions.New(st, &auth.Checker{Mode: auth.ModeNone, Grants: st})
	agent, err := svc.CreateAgent(ctx, auth.LocalUser, sessions.AgentInput{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := svc.CreateSession(ctx, auth.LocalUser, sessions.SessionInput{AgentID: agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	core := elicit.New(st, stream.NewLocal(), elicit.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})

	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	verdicts := make(chan elicit.Verdict, n)
	first := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first <- struct{}{}
			v, err := core.Park(ctx, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission,
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
	got := 0
	for v := range verdicts {
		got++
		if v.Decided() || v.Status != models.StatusAbandoned {
			t.Errorf("verdict at shutdown = %+v, want abandoned (no verdict)", v.Status)
		}
	}
	if got != n {
		t.Errorf("%d of %d parks returned a verdict", got, n)
	}
}
