package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestVerdictsAtOnceShareOneCommit: on Postgres, verdicts given while another is being
// committed are committed together, in one transaction (their rows share its id), and
// each still decides only a pending prompt — of two verdicts on one prompt in the
// group, exactly one wins — and the audit chain holds every one of them, in order.
func TestVerdictsAtOnceShareOneCommit(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, testserver.PostgresDB(t).NewURL(t))
	now := time.Now().UTC()
	sess := testserver.NewSession(t, st)
	const n = 11 // the first verdict, then ten given while it commits
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("elicit_%02d", i)
		if err := st.InsertElicitation(ctx, &models.Elicitation{ID: ids[i], SessionID: sess.ID, Origin: "test",
			Params: []byte(`{}`), Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	db, err := st.SQL()
	if err != nil {
		t.Fatal(err)
	}
	// Hold the chain's head, as a slow commit would: the first verdict waits for it.
	hold, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `UPDATE audit_head SET seq = seq WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		row *models.Elicitation
		err error
	}
	var wg sync.WaitGroup
	decide := func(id, by string, out *outcome) {
		wg.Go(func() {
			out.row, out.err = st.DecideElicitation(ctx, id, sess.ID, models.Decision{Status: models.StatusResolved,
				Action: "accept", By: by, Via: models.ViaAPI, At: time.Now()})
		})
	}
	first := new(outcome)
	decide(ids[0], "alice", first)
	waitFor(t, "the first verdict waiting for the chain's head", waitingForLocks(db, 1))
	// Ten more, two of them on one prompt.
	later := make([]*outcome, n)
	for i := 1; i < n; i++ {
		later[i] = new(outcome)
		decide(ids[i], "bob", later[i])
	}
	rival := new(outcome)
	decide(ids[5], "carol", rival)
	waitFor(t, "the later verdicts queued", func() bool { return store.QueuedDecisions(st) == n })
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	if first.err != nil || first.row == nil || first.row.ResolvedBy == nil || *first.row.ResolvedBy != "alice" {
		t.Fatalf("first verdict: %+v %v", first.row, first.err)
	}
	for i := 1; i < n; i++ {
		if later[i].err != nil {
			t.Fatalf("verdict on %s: %v", ids[i], later[i].err)
		}
	}
	if rival.err != nil {
		t.Fatal(rival.err)
	}
	if (later[5].row == nil) == (rival.row == nil) {
		t.Fatalf("two verdicts on %s: bob won %v, carol won %v; want exactly one", ids[5], later[5].row != nil, rival.row != nil)
	}
	for i := 1; i < n; i++ {
		if i != 5 && (later[i].row == nil || later[i].row.Status != models.StatusResolved) {
			t.Fatalf("verdict on %s did not win: %+v", ids[i], later[i].row)
		}
	}
	var txs int
	if err := db.QueryRowContext(ctx, `SELECT count(DISTINCT xmin::text) FROM elicitations WHERE id = ANY($1)`,
		ids[1:]).Scan(&txs); err != nil {
		t.Fatal(err)
	}
	if txs != 1 {
		t.Fatalf("the ten verdicts given at once were committed in %d transactions, want 1", txs)
	}
	res, err := audit.Verify(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if res.Problem != nil || res.Rows != n {
		t.Fatalf("audit chain: %d rows, problem %+v; want %d rows that verify", res.Rows, res.Problem, n)
	}
}

// waitingForLocks is a waitFor condition: exactly n of the database's sessions wait
// for a lock.
func waitingForLocks(db *sql.DB, n int) func() bool {
	return func() bool {
		var waiting int
		err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting == n
	}
}

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
