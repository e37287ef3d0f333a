package store_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/store"
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
		var notice *models.Notice // on Postgres, with the NOTIFY its bus sends
		if db.Name == "postgres" {
			notice = &models.Notice{Channel: "gatehouse_test_opened"}
		}
		logged, err := st.InsertOpened(ctx, row("elicit_opened"), evs, notice)
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

		if _, err := st.InsertOpened(ctx, row("elicit_opened"), evs, notice); !errors.Is(err, errs.ErrConflict) {
			t.Fatalf("a taken id: %v, want a conflict", err)
		}
		nowhere := []models.LoggedEvent{{SessionID: "conv_missing", Type: "response.elicitation_request", Data: []byte(`{}`)}}
		if _, err := st.InsertOpened(ctx, row("elicit_unannounced"), nowhere, notice); err == nil {
			t.Fatal("an announcement to a session that does not exist was stored")
		}
		if _, err := st.GetElicitation(ctx, "elicit_unannounced"); !errors.Is(err, errs.ErrNotFound) {
			t.Fatalf("the prompt whose announcement failed: %v, want it not stored", err)
		}
	})
}

// TestPromptsOpenedAtOnceEachGetTheirOwnAnnouncement: prompts opened concurrently
// (which share transactions on Postgres) each come back with their own events' rows,
// every row is named by a NOTIFY, and one whose id is taken fails alone.
func TestPromptsOpenedAtOnceEachGetTheirOwnAnnouncement(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := testserver.NewSession(t, st)
		child := &models.Session{ID: "sess_child", AgentID: sess.AgentID, Kind: models.KindDefault, ParentID: &sess.ID, RootID: sess.ID,
			Path: sess.Path + "sess_child/", CreatedBy: "u", CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
		if err := st.CreateSession(ctx, child, nil); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		row := func(id string) *models.Elicitation {
			return &models.Elicitation{ID: id, SessionID: sess.ID, Origin: models.OriginMCPEvent, Params: []byte(`{"message":"run?"}`),
				Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour), Logged: models.LoggedRequest}
		}
		var notice *models.Notice
		var notes <-chan string
		if db.Name == "postgres" { // SQLite's bus sends none
			notice = &models.Notice{Channel: "gatehouse_test_opened"}
			notes = listen(t, st.URL(), notice.Channel)
		}
		// named reports whether a NOTIFY heard named the event row id, waiting for
		// more notes until one does.
		named := map[int64]bool{}
		heard := func(id int64) bool {
			for !named[id] {
				select {
				case p := <-notes:
					for _, s := range strings.Split(p, ",") {
						n, _ := strconv.ParseInt(s, 10, 64)
						named[n] = true
					}
				case <-time.After(10 * time.Second):
					return false
				}
			}
			return true
		}
		// burst opens prompts with these ids at once, each announced on two sessions
		// (as a sub-agent's prompt is), and checks each got its own events back.
		burst := func(ids []string, taken string) {
			logged := make([][]models.SessionEvent, len(ids))
			failed := make([]error, len(ids))
			var wg sync.WaitGroup
			for i, id := range ids {
				evs := []models.LoggedEvent{
					{SessionID: child.ID, Type: "response.elicitation_request", ElicitationID: id, Data: []byte(`{"for":"` + id + `","on":"child"}`)},
					{SessionID: sess.ID, Type: "response.elicitation_request", ElicitationID: id, Data: []byte(`{"for":"` + id + `","on":"parent"}`)},
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					logged[i], failed[i] = st.InsertOpened(ctx, row(id), evs, notice)
				}()
			}
			wg.Wait()
			for i, id := range ids {
				if id == taken {
					if !errors.Is(failed[i], errs.ErrConflict) {
						t.Fatalf("the taken id: %v, want a conflict", failed[i])
					}
					continue
				}
				if failed[i] != nil || len(logged[i]) != 2 {
					t.Fatalf("%s: %v, %d event rows", id, failed[i], len(logged[i]))
				}
				back, err := st.EventsByID(ctx, []int64{logged[i][0].ID, logged[i][1].ID})
				if err != nil || len(back) != 2 {
					t.Fatalf("%s: its events came back as %+v (%v)", id, back, err)
				}
				for _, b := range back {
					if !strings.Contains(b.Data, `"for":"`+id+`"`) {
						t.Fatalf("%s was handed the event %s", id, b.Data)
					}
				}
				for _, r := range logged[i] {
					if notice != nil && !heard(r.ID) {
						t.Fatalf("%s: its event %d was never named by a NOTIFY", id, r.ID)
					}
				}
				if _, err := st.GetElicitation(ctx, id); err != nil {
					t.Fatalf("%s not stored: %v", id, err)
				}
			}
		}
		const n = 40
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("elicit_burst_%02d", i)
		}
		burst(ids, "")
		if db.Name == "postgres" {
			// Opened at once, they shared transactions: fewer of them than prompts.
			var txs int
			if err := store.GormOf(st).Raw(`SELECT count(DISTINCT xmin::text) FROM elicitations WHERE id LIKE 'elicit_burst_%'`).Scan(&txs).Error; err != nil {
				t.Fatal(err)
			}
			if txs >= n {
				t.Fatalf("%d prompts opened at once took %d transactions", n, txs)
			}
		}
		// A taken id among them fails alone.
		for i := range ids {
			ids[i] = fmt.Sprintf("elicit_again_%02d", i)
		}
		ids[n/2] = "elicit_burst_07"
		burst(ids, ids[n/2])
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
