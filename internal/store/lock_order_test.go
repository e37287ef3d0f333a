package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestEventAppendsTakeTheirSessionsInOneOrder: two transactions appending events to the
// same two sessions, given in opposite orders, both commit. Each event takes its
// session's next sequence number, which locks the session's row until commit; taken in
// the events' order, the second transaction held one row while waiting for the other,
// which the first held while waiting for it, and Postgres broke the cycle a second later
// by failing one of them ("deadlock detected"). The transactions here are lined up so
// that, taking rows in the events' order, they must deadlock: the first waits, holding
// nothing yet, for a row a third transaction holds; the second takes the other row and
// waits for the same one; then the third lets go.
func TestEventAppendsTakeTheirSessionsInOneOrder(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, testserver.PostgresDB(t).NewURL(t))
	first := testserver.NewSession(t, st) // sess_1
	now := time.Now().UTC()
	second := &models.Session{ID: "sess_2", AgentID: first.AgentID, Kind: models.KindDefault, RootID: "sess_2",
		Path: "/sess_2/", CreatedBy: "u", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateSession(ctx, second, nil); err != nil {
		t.Fatal(err)
	}
	event := func(s *models.Session) models.LoggedEvent {
		return models.LoggedEvent{SessionID: s.ID, Type: "session.test", Data: []byte(`{}`)}
	}
	db, err := st.SQL()
	if err != nil {
		t.Fatal(err)
	}
	waiting := func(n int) func() bool {
		return func() bool {
			var w int
			err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&w)
			return err == nil && w == n
		}
	}
	hold, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `UPDATE sessions SET event_seq = event_seq WHERE id = $1`, second.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		_, err := st.AppendEvents(ctx, []models.LoggedEvent{event(second), event(first)}, nil)
		done <- err
	}()
	waitFor(t, "the first append waiting", waiting(1))
	go func() {
		_, err := st.AppendEvents(ctx, []models.LoggedEvent{event(first), event(second)}, nil)
		done <- err
	}()
	waitFor(t, "the second append waiting", waiting(2))
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("appending events to two sessions: %v", err)
		}
	}
	for _, s := range []*models.Session{first, second} {
		seq, err := st.CurrentSeq(ctx, s.ID)
		if err != nil || seq != 2 {
			t.Fatalf("session %s: last sequence number %d (%v), want 2", s.ID, seq, err)
		}
	}
}
