package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// sqlExec returns a function running raw SQL (with ? placeholders) on st's database,
// as someone with write access to the database would.
func sqlExec(t *testing.T, db testserver.DB, st *store.Store) func(q string, args ...any) {
	t.Helper()
	sqlDB, err := st.SQL()
	if err != nil {
		t.Fatal(err)
	}
	return func(q string, args ...any) {
		t.Helper()
		if _, err := sqlDB.ExecContext(context.Background(), rebind(db, q), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// decideAll decides each prompt through the store's deciding statement.
func decideAll(t *testing.T, st *store.Store, sess *models.Session, ids []string, d models.Decision) {
	t.Helper()
	for _, id := range ids {
		if row, err := st.DecideElicitation(context.Background(), id, sess.ID, d); err != nil || row == nil {
			t.Fatalf("decide %s: %v %v", id, row, err)
		}
	}
}

func decline(by string) models.Decision {
	return models.Decision{Status: models.StatusResolved, Action: "decline", By: by, Via: models.ViaPage, At: time.Now()}
}

// chain reads the whole chain.
func chain(t *testing.T, st *store.Store) []audit.Record {
	t.Helper()
	rows, err := st.ChainPage(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// unchainedDecision stands for a decision the chain lacks: written straight into
// the row, as a version without the chain wrote it (chained stays false).
func unchainedDecision(exec func(string, ...any), id string, at time.Time) {
	exec(`UPDATE elicitations SET status = 'resolved', action = 'accept', resolved_by = 'old', resolved_via = 'api',
		resolved_at = ?, content = '{"x": 1}' WHERE id = ?`, at.UTC(), id)
}
