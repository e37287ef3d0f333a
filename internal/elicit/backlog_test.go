package elicit_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// stalledStore stores rule answers only once gate is closed; entered is told each time
// a batch starts being stored (when nobody has taken the last telling).
type stalledStore struct {
	elicit.Store
	gate    chan struct{}
	entered chan struct{}
}

func (s *stalledStore) InsertDecided(ctx context.Context, rows []*models.Elicitation, evs []models.LoggedEvent,
	notify *models.Notice) ([]*models.Elicitation, []models.SessionEvent, error) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.gate
	return s.Store.InsertDecided(ctx, rows, evs, notify)
}

// TestRuleAnswersWaitWhileTheBacklogIsFull: rule answers are stored behind the answer,
// but no further behind than the backlog's bound. When storing stalls, answers within
// the bound still leave at once; the one past it waits until the stored ones make
// room, and every answer is stored in the end. Without the bound the backlog — and
// the memory it holds — grew for as long as answers came faster than they were
// stored. The batch being stored counts: here the first answer is in a commit that
// stalls, and the third is past the bound of two (counting only the queue, it left).
func TestRuleAnswersWaitWhileTheBacklogIsFull(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, "")
	sess := newSession(t, st, "")
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	core := elicit.New(&stalledStore{Store: st, gate: gate, entered: entered}, stream.NewLocal(), elicit.Options{Log: quietLog(), MaxBacklog: 2})
	answer := func() (*models.Elicitation, error) {
		e, err := core.DecideByRule(ctx, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission,
			Params: map[string]any{"message": "m"}}, models.Verdict{Action: models.ActionAccept}, "rule", "rule_backlog")
		return e.Row, err
	}
	var ids []string
	for i := range 2 {
		row, err := answer()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, row.ID)
		if i == 0 {
			select {
			case <-entered: // the first answer's batch is being stored (and stalls)
			case <-time.After(10 * time.Second):
				t.Fatal("the first answer was never stored")
			}
		}
	}
	third := make(chan *models.Elicitation, 1)
	go func() {
		row, err := answer()
		if err != nil {
			t.Error(err)
		}
		third <- row
	}()
	deadline := time.Now().Add(10 * time.Second)
	for elicit.HeldForRoom(core) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the answer past the backlog's bound did not wait for room")
		}
		runtime.Gosched()
	}
	select {
	case <-third:
		t.Fatal("the answer past the bound left while nothing could be stored")
	default:
	}
	close(gate)
	select {
	case row := <-third:
		ids = append(ids, row.ID)
	case <-time.After(10 * time.Second):
		t.Fatal("the held answer did not leave once the backlog was stored")
	}
	core.Settle(ctx)
	for _, id := range ids {
		e, err := st.GetElicitation(ctx, id)
		if err != nil {
			t.Fatalf("answer %s not stored: %v", id, err)
		}
		if e.ResolvedVia == nil || *e.ResolvedVia != models.ViaRule {
			t.Fatalf("answer %s stored as %+v", id, e)
		}
	}
	if n := elicit.HeldForRoom(core); n != 0 {
		t.Fatalf("%d answers still held", n)
	}
}
