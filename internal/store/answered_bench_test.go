package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// BenchmarkInsertDecided measures storing a rule's answers as the storing goroutine
// does behind them — batches of 512 decided prompts, each with its two stream events
// and its audit link — per answer stored, on each database. Rows are shaped like a
// Claude Code hook's (about 450 bytes of params), and the table grows as it would.
func BenchmarkInsertDecided(b *testing.B) {
	const batch = 512
	for _, db := range testserver.Databases(b) {
		b.Run(db.Name, func(b *testing.B) {
			ctx := context.Background()
			st := testserver.OpenStore(b, db.NewURL(b))
			sess := testserver.NewSession(b, st)
			rule, by, via, action := "rule_1", "rule", models.ViaRule, "accept"
			params := `{"approve_path":"/approve/%s/%s","content_preview":"Bash({\"command\":\"true\"})","cwd":"/tmp",` +
				`"message":"Claude wants to call **Bash**","mode":"form","permission_mode":"default","phase":"pre_tool_use",` +
				`"policy_name":"claude_native_permission","risk":{"level":"low","reasons":[]},"tool_input":{"command":"true"},` +
				`"tool_kind":"shell","tool_name":"Bash","vendor":"Claude Code"}`
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				b.StopTimer()
				now := time.Now().UTC().Truncate(time.Microsecond)
				var rows []*models.Elicitation
				var evs []models.LoggedEvent
				for range min(batch, b.N-done) {
					id := ids.NewOrdered(ids.ElicitationPrefix)
					p := fmt.Sprintf(params, sess.ID, id)
					rows = append(rows, &models.Elicitation{ID: id, SessionID: sess.ID, Origin: models.OriginClaudePermission,
						Params: []byte(p), Status: models.StatusResolved, Action: &action, ResolvedBy: &by, ResolvedVia: &via,
						ResolvedAt: &now, RuleID: &rule, CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour),
						Logged: models.LoggedResolved, Notified: models.NotifiedAll})
					evs = append(evs,
						models.LoggedEvent{SessionID: sess.ID, Type: "response.elicitation_request", ElicitationID: id,
							Data: []byte(`{"elicitation_id":"` + id + `","method":"elicitation/create","params":` + p + `}`)},
						models.LoggedEvent{SessionID: sess.ID, Type: "response.elicitation_resolved", ElicitationID: id,
							Data: []byte(`{"elicitation_id":"` + id + `","type":"response.elicitation_resolved"}`)})
				}
				if _, err := st.JournalDecided(ctx, rows); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, _, err := st.InsertDecided(ctx, rows, evs, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
