package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestAVerdictFindsItsPromptByID: right after a burst of prompts parked in one session,
// before Postgres has analyzed the table, a verdict's statement still finds its prompt
// through the primary key — not by scanning every pending prompt of the session, which
// took 80 ms a verdict with 5,000 pending while holding the audit chain's head lock.
func TestAVerdictFindsItsPromptByID(t *testing.T) {
	ctx := context.Background()
	st := testserver.OpenStore(t, testserver.PostgresDB(t).NewURL(t))
	sess := testserver.NewSession(t, st)
	db, err := st.SQL()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		// The statistics stay as they were before the burst, as they do until
		// autovacuum comes round.
		`ALTER TABLE elicitations SET (autovacuum_enabled = false)`,
		`INSERT INTO elicitations (id, session_id, origin, params, status, created_at, expires_at)
			SELECT 'elicit_' || i, '` + sess.ID + `', 'claude_permission', '{}', 'pending', now(), now() + interval '1 hour'
			FROM generate_series(1, 5000) AS i`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []models.Decision{
		{Status: models.StatusResolved, Action: "accept", By: "alice", Via: models.ViaAPI, At: time.Now()},
		{Status: models.StatusAbandoned, By: "gatehouse", Via: models.ViaGrace, At: time.Now(), OnlyIfLeaseAsSeen: true, SeenLease: time.Now()},
	} {
		query, args := store.DecideStatement(st, "elicit_2500", sess.ID, d)
		var plan []string
		if err := store.GormOf(st).Raw("EXPLAIN "+query, args...).Scan(&plan).Error; err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		if !strings.Contains(text, "elicitations_pkey") || strings.Contains(text, "elicitations_session_status") {
			t.Fatalf("the verdict's statement (%s) does not find its prompt by id:\n%s", d.Via, text)
		}
	}
}
