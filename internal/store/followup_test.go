package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestAVerdictNobodyWasToldOfNeedsNoFollowUp: on SQLite a verdict on a prompt with no
// deliveries marks its notifications planned to the end in the verdict's own commit,
// so the planner takes no commit of its own to plan nothing; a prompt that was
// announced to someone keeps its stage, and the planner follows it up. On Postgres
// both keep their stage (the planner decides, see followedUpIfNobodyWasTold).
func TestAVerdictNobodyWasToldOfNeedsNoFollowUp(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := testserver.NewSession(t, st)
		now := time.Now().UTC()
		plans := map[string]models.OutboxPlan{}
		for _, id := range []string{"elicit_untold", "elicit_told"} {
			if err := st.InsertElicitation(ctx, &models.Elicitation{ID: id, SessionID: sess.ID, Origin: models.OriginClaudePermission,
				Params: []byte(`{"message":"run?"}`), Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			plans[id] = models.OutboxPlan{Stage: models.NotifiedCreated}
		}
		told := plans["elicit_told"]
		told.Add = []models.Notification{{ElicitationID: "elicit_told", User: "alice", Channel: "ntfy", Target: "https://ntfy.example/t",
			Kind: "created", State: models.DeliveryDelivered, DueAt: now, CreatedAt: now}}
		plans["elicit_told"] = told
		if n, err := st.ApplyOutboxPlans(ctx, plans, nil, nil); err != nil || n != 2 {
			t.Fatalf("announcing: %d planned, %v", n, err)
		}
		stage := map[string]int{}
		for _, id := range []string{"elicit_untold", "elicit_told"} {
			row, err := st.DecideElicitation(ctx, id, sess.ID, models.Decision{Status: models.StatusResolved, Action: "accept",
				By: "alice", Via: models.ViaAPI, At: time.Now()})
			if err != nil || row == nil {
				t.Fatalf("deciding %s: %v %v", id, row, err)
			}
			stage[id] = row.Notified
		}
		unplanned, err := st.Unplanned(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		behind := map[string]bool{}
		for _, e := range unplanned {
			behind[e.ID] = true
		}
		wantUntold := models.NotifiedAll
		if db.Name == "postgres" {
			wantUntold = models.NotifiedCreated
		}
		if stage["elicit_untold"] != wantUntold || behind["elicit_untold"] != (wantUntold != models.NotifiedAll) {
			t.Errorf("the prompt nobody was told of: stage %d, left to the planner %v; want stage %d", stage["elicit_untold"], behind["elicit_untold"], wantUntold)
		}
		if stage["elicit_told"] != models.NotifiedCreated || !behind["elicit_told"] {
			t.Errorf("the prompt announced to alice: stage %d, left to the planner %v; want %d and its follow-up planned",
				stage["elicit_told"], behind["elicit_told"], models.NotifiedCreated)
		}
	})
}
