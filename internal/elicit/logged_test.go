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

// TestLifecycleEventsLoggedExactlyOnce: a decision committed without its resolved
// event — the process killed between the two, as the chaos test caught — is logged by
// the repair sweep, on the prompt's session and its parent, exactly once however often
// (and however concurrently) replicas sweep; events logged the normal way are never
// logged again.
func TestLifecycleEventsLoggedExactlyOnce(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, "")
	root := newSession(t, st, "")
	child := newSession(t, st, root.ID)
	log := quietLog()
	later := &offsetClock{}
	core := elicit.New(st, stream.NewDurable(st, log), elicit.Options{Log: log, Clock: later})

	normal, err := core.Open(ctx, elicit.Prompt{Session: child, Origin: models.OriginClaudePermission, Params: map[string]any{"message": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Resolve(ctx, child.ID, normal.ID, models.Verdict{Action: models.ActionAccept}, "local", models.ViaAPI); err != nil {
		t.Fatal(err)
	}
	crashed, err := core.Open(ctx, elicit.Prompt{Session: child, Origin: models.OriginClaudePermission, Params: map[string]any{"message": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	// The decision commits; the process dies before its event is logged.
	if row, err := st.DecideElicitation(ctx, crashed.ID, child.ID, models.Decision{Status: models.StatusResolved, Action: "decline",
		By: "local", Via: models.ViaAPI, At: time.Now().UTC()}); err != nil || row == nil {
		t.Fatalf("decide: %v %v", row, err)
	}

	later.skip(time.Minute)
	done := make(chan struct{})
	for range 3 { // three replicas sweeping at once
		go func() {
			defer func() { done <- struct{}{} }()
			if _, err := core.RepublishUnlogged(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	for range 3 {
		<-done
	}
	if _, err := core.RepublishUnlogged(ctx); err != nil {
		t.Fatal(err)
	}
	// A replica that read the prompt as unlogged a moment ago logs its step again: the
	// log takes it only once.
	again, err := st.AppendEvents(ctx, []models.LoggedEvent{{SessionID: child.ID, Type: elicit.EventResolved, Data: []byte(`{}`),
		ElicitationID: crashed.ID, Stage: models.LoggedResolved}}, nil)
	if err != nil || again[0].ID != 0 {
		t.Fatalf("a step logged twice: %+v %v", again, err)
	}
	for _, sid := range []string{child.ID, root.ID} {
		evs, err := st.EventsSince(ctx, sid, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, ev := range evs {
			if ev.ElicitationID != nil {
				count[*ev.ElicitationID+" "+ev.Type]++
			}
		}
		for _, k := range []string{normal.ID + " " + elicit.EventRequest, normal.ID + " " + elicit.EventResolved,
			crashed.ID + " " + elicit.EventRequest, crashed.ID + " " + elicit.EventResolved} {
			if count[k] != 1 {
				t.Errorf("session %s logged %q %d times, want once (log: %v)", sid, k, count[k], count)
			}
		}
	}
}
