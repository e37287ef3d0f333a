package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestEventAppendsTakeTheirSessionsInOneOrder: two transactions appending events to the
// same two sessions, given in opposite orders, both commit. Each event takes its
// session's next sequence number, which locks the session's row until commit; taken in
// the events' order, the second transaction held one row while waiting for the other,
// which the first held while waiting for it, and Postgres broke the cycle a second later
// by failing one of them ("deadlock detected").
func TestEventAppendsTakeTheirSessionsInOneOrder(t *testing.T) {
	lockOrderRace(t, func(st *store.Store, evs []models.LoggedEvent) error {
		_, err := st.AppendEvents(context.Background(), evs, nil)
		return err
	})
}

// TestAPromptOpensTakingItsSessionsInTheAppendsOrder: on Postgres a prompt is opened,
// its events appended and announced by one statement, whose parts Postgres runs in an
// order of its own; it takes its sessions' rows in the order every append takes them,
// so an open and an append meeting on two sessions both commit.
func TestAPromptOpensTakingItsSessionsInTheAppendsOrder(t *testing.T) {
	lockOrderRace(t, func(st *store.Store, evs []models.LoggedEvent) error {
		now := time.Now().UTC()
		row := &models.Elicitation{ID: "elicit_opened", SessionID: evs[0].SessionID, Origin: models.OriginMCPEvent,
			Params: []byte(`{"message":"run?"}`), Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			Logged: models.LoggedRequest, Notified: models.NotifiedNone}
		_, err := st.InsertOpened(context.Background(), row, evs, &models.Notice{Channel: "gatehouse_test_opened"})
		return err
	})
}

// lockOrderRace runs first(evs) with evs on two sessions in the opposite of their ids'
// order, beside an append of events on the same two in id order, both lined up so that
// if first took the sessions' rows in its events' order the two would deadlock: first
// waits, holding nothing yet, for the row a third transaction holds; the append takes
// the other row and waits for the same one; then the third lets go. Both must commit,
// each session's events numbered one after another.
func lockOrderRace(t *testing.T, first func(st *store.Store, evs []models.LoggedEvent) error) {
	ctx := context.Background()
	st := testserver.OpenStore(t, testserver.PostgresDB(t).NewURL(t))
	low := testserver.NewSession(t, st) // sess_1
	now := time.Now().UTC()
	high := &models.Session{ID: "sess_2", AgentID: low.AgentID, Kind: models.KindDefault, RootID: "sess_2",
		Path: "/sess_2/", CreatedBy: "u", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateSession(ctx, high, nil); err != nil {
		t.Fatal(err)
	}
	event := func(s *models.Session) models.LoggedEvent {
		return models.LoggedEvent{SessionID: s.ID, Type: "session.test", Data: []byte(`{}`)}
	}
	db, err := st.SQL()
	if err != nil {
		t.Fatal(err)
	}
	// An update writes a row's new version at the table's end: low's now lies behind
	// high's, so a statement taking rows in the order it finds them takes high's first.
	if _, err := db.ExecContext(ctx, `UPDATE sessions SET event_seq = event_seq WHERE id = $1`, low.ID); err != nil {
		t.Fatal(err)
	}
	hold, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `UPDATE sessions SET event_seq = event_seq WHERE id = $1`, high.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- first(st, []models.LoggedEvent{event(high), event(low)}) }()
	waitFor(t, "the first transaction waiting", waitingForLocks(db, 1))
	go func() {
		_, err := st.AppendEvents(ctx, []models.LoggedEvent{event(low), event(high)}, nil)
		done <- err
	}()
	waitFor(t, "the append waiting", waitingForLocks(db, 2))
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("two transactions appending events to two sessions: %v", err)
		}
	}
	for _, s := range []*models.Session{low, high} {
		seq, err := st.CurrentSeq(ctx, s.ID)
		if err != nil || seq != 2 {
			t.Fatalf("session %s: last sequence number %d (%v), want 2", s.ID, seq, err)
		}
	}
}
