package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestForgettingJournaledRowsKeepsTheOthers: the positions JournalDecided returns name
// exactly the rows it wrote — one statement's or several statements' worth, after rows
// before them were forgotten — so forgetting a stored batch never drops an answer that
// is still only in the journal (a crash would then lose it).
func TestForgettingJournaledRowsKeepsTheOthers(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		now := time.Now().UTC()
		journal := func(prefix string, n int) ([]string, []int64) {
			rows := make([]*models.Elicitation, n)
			ids := make([]string, n)
			for i := range rows {
				ids[i] = fmt.Sprintf("elicit_%s%04d", prefix, i)
				rows[i] = &models.Elicitation{ID: ids[i], SessionID: "conv_1", Origin: "test", Params: []byte(`{}`),
					Status: models.StatusResolved, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
			}
			at, err := st.JournalDecided(ctx, rows)
			if err != nil {
				t.Fatal(err)
			}
			if at != nil && len(at) != n {
				t.Fatalf("%d positions for %d journaled rows", len(at), n)
			}
			return ids, at
		}
		first, firstAt := journal("a", 3)
		second, secondAt := journal("b", 300) // more than one statement binds
		if db.Name == "postgres" {
			if firstAt != nil || secondAt != nil {
				t.Fatal("Postgres returned journal positions: its rows are claimed by id")
			}
			return
		}
		// Forget the first batch and every other row of the second, then journal more:
		// new rows may take rowids freed at the end, and must still be told apart.
		forget := append([]int64{}, firstAt...)
		var kept []string
		for i, at := range secondAt {
			if i%2 == 0 {
				forget = append(forget, at)
			} else {
				kept = append(kept, second[i])
			}
		}
		if err := st.ForgetJournaledAt(ctx, forget); err != nil {
			t.Fatal(err)
		}
		third, thirdAt := journal("c", 5)
		if err := st.ForgetJournaledAt(ctx, thirdAt[:2]); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, third[2:]...)

		all := append(append(append([]string{}, first...), second...), third...)
		left, err := st.StillJournaled(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != len(kept) {
			t.Fatalf("%d rows still journaled, want %d", len(left), len(kept))
		}
		for _, id := range kept {
			if !left[id] {
				t.Fatalf("row %s was forgotten though it was never stored", id)
			}
		}
	})
}
