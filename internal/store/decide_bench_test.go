package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// BenchmarkDecide measures the deciding statement (with its audit chain append), one
// decider at a time and many at once, on each database.
func BenchmarkDecide(b *testing.B) {
	for _, db := range testserver.Databases(b) {
		for _, par := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/deciders=%d", db.Name, par), func(b *testing.B) {
				ctx := context.Background()
				st, err := store.Open(db.NewURL(b))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				if err := st.Migrate(ctx, nil); err != nil {
					b.Fatal(err)
				}
				now := time.Now().UTC()
				if err := st.CreateAgent(ctx, &models.Agent{ID: "a", Name: "a", CreatedBy: "u", CreatedAt: now, UpdatedAt: now}); err != nil {
					b.Fatal(err)
				}
				sess := &models.Session{ID: "s", AgentID: "a", Kind: models.KindDefault, RootID: "s", Path: "/s/", CreatedBy: "u", CreatedAt: now, UpdatedAt: now}
				if err := st.CreateSession(ctx, sess, nil); err != nil {
					b.Fatal(err)
				}
				ids := make([]string, b.N)
				for i := range ids {
					ids[i] = fmt.Sprintf("e%d", i)
					if err := st.InsertElicitation(ctx, &models.Elicitation{ID: ids[i], SessionID: "s", Origin: models.OriginClaudePermission,
						Params: []byte(`{"message":"run?","tool_input":{"command":"make deploy"}}`), Status: models.StatusPending,
						CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
						b.Fatal(err)
					}
				}
				var next atomic.Int64
				b.SetParallelism(par)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						i := next.Add(1) - 1
						row, err := st.DecideElicitation(ctx, ids[i], "s", models.Decision{Status: models.StatusResolved, Action: "accept",
							By: "alice", Via: models.ViaAPI, At: time.Now()})
						if err != nil || row == nil {
							b.Errorf("decide: %v %v", row, err)
							return
						}
					}
				})
			})
		}
	}
}
