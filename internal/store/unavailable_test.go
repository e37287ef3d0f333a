package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testserver"
)

// TestUnavailableOnEveryStatementKind: while the database is stopped — and on the
// pooled connections a restart killed (57P01) — every kind of statement reports
// errs.ErrUnavailable (the handlers' 503), including the Raw/Select…Scan statements
// that GORM runs through its row callback, which skips the dialector's error
// translation (TestChaos found these answering 500 during a Postgres restart).
func TestUnavailableOnEveryStatementKind(t *testing.T) {
	testserver.PostgresDB(t)
	cl := testserver.StartCluster(t)
	st, err := store.OpenWith(cl.CreateDB(t), store.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := st.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	statements := map[string]func() error{
		"Take (query callback)": func() error { _, err := st.GetElicitation(ctx, "elicit_none"); return err },
		"Select…Scan (row callback)": func() error {
			_, err := st.GrantLevel(ctx, "conv_none", "someone")
			return err
		},
		"Raw…Scan (row callback)": func() error {
			_, err := st.DecideElicitation(ctx, "elicit_none", "conv_none", store.Decision{Status: "resolved", Action: "accept", By: "x", Via: "api", At: time.Now()})
			return err
		},
	}
	check := func(when string) {
		t.Helper()
		for name, run := range statements {
			if err := run(); !errors.Is(err, errs.ErrUnavailable) {
				t.Errorf("%s, %s: err = %v, want errs.ErrUnavailable", when, name, err)
			}
		}
	}
	// Warm the pool, then restart: the pool now holds connections the restart killed.
	for _, run := range statements {
		_ = run()
	}
	cl.Restart(t)
	for name, run := range statements {
		if err := run(); err != nil && !errors.Is(err, errs.ErrUnavailable) && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after a restart, %s: err = %v, want none, not found or errs.ErrUnavailable", name, err)
		}
	}
	cl.Stop(t)
	check("database stopped")
}
