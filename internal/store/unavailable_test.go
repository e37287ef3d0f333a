package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// openOnCluster opens a migrated store on a fresh database of a private cluster, with
// a short statement timeout, and inserts one session with one pending prompt.
func openOnCluster(t *testing.T, timeout time.Duration) (*testserver.Cluster, string, *store.Store, *models.Elicitation) {
	t.Helper()
	cl := testserver.StartCluster(t)
	url := cl.CreateDB(t)
	st, err := store.OpenWith(url, store.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := st.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	sess := testserver.NewSession(t, st)
	e := &models.Elicitation{ID: "elicit_1", SessionID: sess.ID, Origin: "claude", Params: []byte("{}"),
		Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.InsertElicitation(ctx, e); err != nil {
		t.Fatal(err)
	}
	return cl, url, st, e
}

// TestStoreUnavailableWhileDown: with the database stopped, every kind of store call
// (read, conditional update, transaction, ping) fails fast with errs.ErrUnavailable
// rather than a bare driver error; once it is back, the same Store (its pool) works
// again and the row is as it was.
func TestStoreUnavailableWhileDown(t *testing.T) {
	cl, _, st, e := openOnCluster(t, 2*time.Second)
	ctx := context.Background()
	cl.Stop(t)

	calls := map[string]func() error{
		"ping": func() error { return st.Ping(ctx) },
		"read": func() error { _, err := st.GetElicitation(ctx, e.ID); return err },
		"decide": func() error {
			_, err := st.DecideElicitation(ctx, e.ID, e.SessionID, models.Decision{Status: models.StatusResolved,
				Action: "accept", By: "u", Via: "api", At: time.Now().UTC()})
			return err
		},
		"transaction": func() error {
			_, err := st.AppendEvents(ctx, []models.LoggedEvent{{SessionID: e.SessionID, Type: "t", Data: []byte("{}")}}, nil)
			return err
		},
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if !errors.Is(err, errs.ErrUnavailable) {
			t.Errorf("%s while the database is down: %v, want errs.ErrUnavailable", name, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s while the database is down took %s", name, took)
		}
	}

	cl.Start(t)
	// Connections the restart killed are discarded by the pool; at worst one that
	// looked idle-but-fine is found dead on first use.
	var got *models.Elicitation
	var err error
	for range 3 {
		if got, err = st.GetElicitation(ctx, e.ID); !errors.Is(err, errs.ErrUnavailable) {
			break
		}
	}
	if err != nil || !got.IsPending() {
		t.Fatalf("after restart: %+v, %v; want the prompt, still pending", got, err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("ping after restart: %v", err)
	}
}

// TestStoreStatementTimeout: a statement the database does not answer (here: blocked
// on a row lock another connection holds, as a half-open connection after a failover
// would block) ends at the statement timeout with errs.ErrUnavailable instead of
// hanging for as long as the caller is willing to wait — which for a decision is
// forever (it runs without the caller's cancellation).
func TestStoreStatementTimeout(t *testing.T) {
	const timeout = 500 * time.Millisecond
	_, url, st, e := openOnCluster(t, timeout)
	side, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	tx, err := side.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("SELECT 1 FROM elicitations WHERE id = $1 FOR UPDATE", e.ID); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		_, err := st.DecideElicitation(context.Background(), e.ID, e.SessionID, models.Decision{Status: models.StatusResolved,
			Action: "accept", By: "u", Via: "api", At: time.Now().UTC()})
		errc <- err
	}()
	select {
	case err = <-errc:
	case <-time.After(timeout + 10*time.Second):
		t.Fatalf("blocked decision still waiting after %s (statement timeout %s)", time.Since(start), timeout)
	}
	if took := time.Since(start); took < timeout {
		t.Fatalf("blocked decision returned after %s, before the statement timeout %s", took, timeout)
	}
	if !errors.Is(err, errs.ErrUnavailable) {
		t.Fatalf("blocked decision: %v, want errs.ErrUnavailable", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetElicitation(context.Background(), e.ID)
	if err != nil || !got.IsPending() {
		t.Fatalf("after the timed-out decision: %+v, %v; want still pending", got, err)
	}
}
