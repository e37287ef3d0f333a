package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestEnsureSettingConcurrentFirstStartsAgree: replicas starting at once on one
// database (each with its own pool) each offer a different value for the same missing
// setting; every one of them comes back with the same stored value, one of those
// offered, and a later call keeps it.
func TestEnsureSettingConcurrentFirstStartsAgree(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		url := db.NewURL(t)
		const replicas = 4
		stores := make([]*store.Store, replicas)
		for i := range stores {
			st, err := store.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			stores[i] = st
		}
		if err := stores[0].Migrate(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for round := range 10 {
			key := fmt.Sprintf("secret_%d", round)
			got := make([]string, replicas)
			errs := make([]error, replicas)
			var ready, wg sync.WaitGroup
			start := make(chan struct{})
			for i, st := range stores {
				ready.Add(1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					ready.Done()
					<-start
					got[i], errs[i] = st.EnsureSetting(ctx, key, fmt.Sprintf("offer-%d", i))
				}()
			}
			ready.Wait()
			close(start)
			wg.Wait()
			offered := false
			for i := range got {
				if errs[i] != nil {
					t.Fatalf("round %d replica %d: %v", round, i, errs[i])
				}
				if got[i] != got[0] {
					t.Fatalf("round %d: replicas disagree: %q", round, got)
				}
				offered = offered || got[0] == fmt.Sprintf("offer-%d", i)
			}
			if !offered {
				t.Fatalf("round %d: stored %q, which no replica offered", round, got[0])
			}
			if again, err := stores[1].EnsureSetting(ctx, key, "later"); err != nil || again != got[0] {
				t.Fatalf("round %d: a later start got %q (%v), want the stored %q", round, again, err, got[0])
			}
		}
	})
}
