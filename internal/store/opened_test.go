package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestAnOpenedPromptIsStoredWithItsAnnouncement: InsertOpened stores a new prompt as
// the ORM's insert does (every column alike), with the events announcing it, in one
// transaction — an event that cannot be stored leaves no prompt behind — and refuses
// an id already taken.
func TestAnOpenedPromptIsStoredWithItsAnnouncement(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := testserver.NewSession(t, st)
		now := time.Now().UTC().Truncate(time.Microsecond)
		lease, key, rule, token := now.Add(time.Minute), "call_1", "rule_1", "tok_1"
		row := func(id string) *models.Elicitation {
			return &models.Elicitation{ID: id, SessionID: sess.ID, Origin: models.OriginMCPEvent,
				Params: []byte(`{"message":"run?","tool_input":{"command":"make deploy"}}`), Status: models.StatusPending,
				CreatedAt: now, ExpiresAt: now.Add(time.Hour), LeaseUntil: &lease, Logged: models.LoggedRequest,
				Notified: models.NotifiedNone, CallKey: &key, RuleID: &rule, TokenID: &token}
		}
		evs := []models.LoggedEvent{{SessionID: sess.ID, Type: "response.elicitation_request", ElicitationID: "elicit_opened",
			Data: []byte(`{"elicitation_id":"elicit_opened"}`)}}
		logged, err := st.InsertOpened(ctx, row("elicit_opened"), evs)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.InsertElicitation(ctx, row("elicit_by_orm")); err != nil {
			t.Fatal(err)
		}
		got, err := st.GetElicitation(ctx, "elicit_opened")
		if err != nil {
			t.Fatal(err)
		}
		orm, err := st.GetElicitation(ctx, "elicit_by_orm")
		if err != nil {
			t.Fatal(err)
		}
		orm.ID = got.ID
		if a, b := describe(got), describe(orm); a != b {
			t.Fatalf("stored as\n%s\nthe ORM stores\n%s", a, b)
		}
		if len(logged) != 1 {
			t.Fatalf("%d event rows back, want 1", len(logged))
		}
		back, err := st.EventsByID(ctx, []int64{logged[0].ID})
		if err != nil || len(back) != 1 || back[0].Data != string(evs[0].Data) || back[0].Seq != logged[0].Seq {
			t.Fatalf("the announcement came back as %+v (%v), want %s at seq %d", back, err, evs[0].Data, logged[0].Seq)
		}

		if _, err := st.InsertOpened(ctx, row("elicit_opened"), nil); !errors.Is(err, errs.ErrConflict) {
			t.Fatalf("a taken id: %v, want a conflict", err)
		}
		nowhere := []models.LoggedEvent{{SessionID: "conv_missing", Type: "response.elicitation_request", Data: []byte(`{}`)}}
		if _, err := st.InsertOpened(ctx, row("elicit_unannounced"), nowhere); err == nil {
			t.Fatal("an announcement to a session that does not exist was stored")
		}
		if _, err := st.GetElicitation(ctx, "elicit_unannounced"); !errors.Is(err, errs.ErrNotFound) {
			t.Fatalf("the prompt whose announcement failed: %v, want it not stored", err)
		}
	})
}

// describe is every column of e, for comparing two rows.
func describe(e *models.Elicitation) string {
	return fmt.Sprintf("%s %s %s %s %s %v %s %v %v %s %v %s %v %v %d %d %v %v %v", e.ID, e.SessionID, e.Origin, e.Params, e.Status,
		deref(e.Action), e.Content, deref(e.ResolvedBy), deref(e.ResolvedVia), e.CreatedAt.UTC(), e.ResolvedAt,
		e.ExpiresAt.UTC(), e.ConsumedAt, e.LeaseUntil.UTC(), e.Logged, e.Notified, deref(e.CallKey), deref(e.RuleID), deref(e.TokenID))
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
