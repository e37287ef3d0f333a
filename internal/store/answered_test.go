package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestStoredRuleAnswersAreAsTheDatabaseKeepsThem: InsertDecided hands back the rows
// and events it stored as the database keeps them — on SQLite without reading them
// back — so the audit chain it links them into verifies, and each event's id names
// that event, across batches larger than one statement carries.
func TestStoredRuleAnswersAreAsTheDatabaseKeepsThem(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := testserver.NewSession(t, st)
		// Events before the batch: its ids do not start at one.
		if _, err := st.AppendEvents(ctx, []models.LoggedEvent{{SessionID: sess.ID, Type: "note", Data: []byte(`{"n":0}`)}}, nil); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		rule, by, via, action := "rule_1", "rule", models.ViaRule, "accept"
		var rows []*models.Elicitation
		var evs []models.LoggedEvent
		for i := range 45 { // two events each: more than one statement's worth
			id := fmt.Sprintf("elicit_%032d", i)
			rows = append(rows, &models.Elicitation{ID: id, SessionID: sess.ID, Origin: models.OriginClaudePermission,
				Params: []byte(fmt.Sprintf(`{"b":1,"a":"%d"}`, i)), Status: models.StatusResolved, Action: &action,
				ResolvedBy: &by, ResolvedVia: &via, ResolvedAt: &now, RuleID: &rule, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
				Logged: models.LoggedResolved, Notified: models.NotifiedAll})
			for _, typ := range []string{"request", "resolved"} {
				evs = append(evs, models.LoggedEvent{SessionID: sess.ID, Type: typ, ElicitationID: id,
					Data: []byte(fmt.Sprintf(`{"type":%q,"elicitation_id":%q}`, typ, id))})
			}
		}
		if _, err := st.JournalDecided(ctx, rows); err != nil { // as a rule's answer is
			t.Fatal(err)
		}
		stored, logged, err := st.InsertDecided(ctx, rows, evs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != len(rows) || len(logged) != len(evs) {
			t.Fatalf("%d rows and %d events back, want %d and %d", len(stored), len(logged), len(rows), len(evs))
		}
		for i, e := range stored {
			got, err := st.GetElicitation(ctx, rows[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			if e.ID != got.ID || string(e.Params) != string(got.Params) || !e.CreatedAt.Equal(got.CreatedAt) ||
				!e.ResolvedAt.Equal(*got.ResolvedAt) || !e.ExpiresAt.Equal(got.ExpiresAt) {
				t.Fatalf("row %d came back as %+v, the database keeps %+v", i, e, got)
			}
		}
		for i, ev := range logged {
			got, err := st.EventsByID(ctx, []int64{ev.ID})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Data != string(evs[i].Data) || got[0].Seq != ev.Seq || got[0].SessionID != sess.ID {
				t.Fatalf("event %d came back with id %d, which names %+v", i, ev.ID, got)
			}
		}
		res, err := audit.Verify(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		if res.Problem != nil || res.Rows != int64(len(rows)) {
			t.Fatalf("the chain over the stored answers: %d rows, problem %+v", res.Rows, res.Problem)
		}
	})
}
