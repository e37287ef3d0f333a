package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestInsertsAtOnceEachGetTheirOwnOutcome: prompts stored at once (on Postgres they
// share an INSERT) are each stored, and among them one whose id is already taken — a
// retry re-attaching — alone gets ErrConflict, whatever group it landed in.
func TestInsertsAtOnceEachGetTheirOwnOutcome(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		now := time.Now().UTC()
		sess := testserver.NewSession(t, st)
		row := func(id string) *models.Elicitation {
			return &models.Elicitation{ID: id, SessionID: sess.ID, Origin: "test", Params: []byte(`{}`),
				Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		}
		if err := st.InsertElicitation(ctx, row("elicit_taken")); err != nil {
			t.Fatal(err)
		}
		const n = 300
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			id := fmt.Sprintf("elicit_%03d", i)
			if i == n/2 {
				id = "elicit_taken"
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = st.InsertElicitation(ctx, row(id))
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			want := error(nil)
			if i == n/2 {
				want = store.ErrConflict
			}
			if !errors.Is(err, want) && err != want {
				t.Fatalf("insert %d: %v, want %v", i, err, want)
			}
			if i == n/2 {
				continue
			}
			got, err := st.GetElicitation(ctx, fmt.Sprintf("elicit_%03d", i))
			if err != nil || got.SessionID != sess.ID || got.Status != models.StatusPending {
				t.Fatalf("prompt %d not stored: %+v %v", i, got, err)
			}
		}
	})
}
