package elicit_test

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// cancellingStore ends the caller's context as its prompt is being inserted — the
// moment a server that stops ends its requests, or a client hangs up, just as the
// insert is sent.
type cancellingStore struct {
	elicit.Store
	cancel context.CancelFunc
}

func (s *cancellingStore) InsertOpened(ctx context.Context, e *models.Elicitation, evs []models.LoggedEvent,
	notify *models.Notice) ([]models.SessionEvent, error) {
	s.cancel()
	return s.Store.InsertOpened(ctx, e, evs, notify)
}

// TestAnInsertSentFinishesWhenItsRequestEnds: a prompt whose request's context ends
// while it is being inserted is stored and published all the same, and the request
// attaches without an error; its wait then sees the ended context. On Postgres the
// insert's statement was cut off after its commit (its NOTIFY already on the way to
// every stream) and the request answered 500 — a server stopping gracefully ends its
// requests' contexts just then.
func TestAnInsertSentFinishesWhenItsRequestEnds(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := newSession(t, st, "")
		ctx, cancel := context.WithCancel(context.Background())
		bus := stream.NewLocal()
		sub := bus.Subscribe(sess.ID, 4)
		defer sub.Cancel()
		core := elicit.New(&cancellingStore{Store: st, cancel: cancel}, bus, elicit.Options{Log: quietLog()})
		w, err := core.Attach(ctx, elicit.Prompt{Session: sess, Origin: models.OriginClaudePermission, Params: map[string]any{"message": "m"}})
		if err != nil {
			t.Fatalf("attach with the request ended during the insert: %v", err)
		}
		if ctx.Err() == nil {
			t.Fatal("the store did not end the request's context")
		}
		if len(sub.C) != 1 {
			t.Fatalf("%d events published, want the request's", len(sub.C))
		}
		row, err := st.GetElicitation(context.Background(), w.ID())
		if err != nil || !row.IsPending() {
			t.Fatalf("stored prompt %+v %v", row, err)
		}
		if _, err := w.Wait(ctx); err != elicit.ErrClientGone {
			t.Fatalf("wait with the request ended: %v, want ErrClientGone", err)
		}
	})
}
