package store_test

import (
	"context"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestStatementDeadlinesEndWithTheStatement: on Postgres every statement without a
// deadline of its own runs under one, and that deadline's context is over once the
// statement has run — GORM's own statement timeout left it, with its timer, alive for
// the whole timeout (a few hundred bytes a statement, with thousands parking).
func TestStatementDeadlinesEndWithTheStatement(t *testing.T) {
	for _, db := range testserver.Databases(t) {
		if db.Name != "postgres" {
			continue
		}
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		var mu sync.Mutex
		var seen []context.Context
		watch := func(db *gorm.DB) {
			mu.Lock()
			seen = append(seen, db.Statement.Context)
			mu.Unlock()
		}
		g := store.GormOf(st)
		if err := g.Callback().Query().Before("gorm:query").Register("test:watch", watch); err != nil {
			t.Fatal(err)
		}
		if err := g.Callback().Raw().Before("gorm:raw").Register("test:watch", watch); err != nil {
			t.Fatal(err)
		}
		if _, err := st.GetElicitation(ctx, "elicit_00000000000000000000000000000000"); err == nil {
			t.Fatal("a prompt that was never stored was found")
		}
		if err := st.ForgetJournaled(ctx, []string{"elicit_00000000000000000000000000000000"}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 {
			t.Fatal("no statement was watched")
		}
		for i, c := range seen {
			if _, ok := c.Deadline(); !ok {
				t.Fatalf("statement %d ran without a deadline", i)
			}
			if c.Err() == nil {
				t.Fatalf("statement %d's deadline is still running after the statement", i)
			}
		}
	}
}
