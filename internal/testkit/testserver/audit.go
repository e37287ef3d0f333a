package testserver

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/store"
)

// SeedAuditRows writes n decided prompts of session sid and their audit chain rows
// straight into the database (store.SeedAudit): export tests need many rows fast.
func SeedAuditRows(t testing.TB, st *store.Store, sid string, n, paramBytes int) {
	t.Helper()
	if err := st.SeedAudit(context.Background(), sid, n, paramBytes); err != nil {
		t.Fatal(err)
	}
}
