package store_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestLiveRulesAreAsRightAsTheTable: the live rules a store keeps in memory follow every
// change made through it at once, leave out a rule once the asking time is past its
// expiry, and — on Postgres — are used only while the store is told it hears every
// other replica's change: a change made elsewhere shows once the store drops them (on
// the note the change sends with its commit), and at once while it is not listening.
func TestLiveRulesAreAsRightAsTheTable(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		url := db.NewURL(t)
		a := openStore(t, url)
		if err := a.Migrate(ctx, nil); err != nil {
			t.Fatal(err)
		}
		var listening atomic.Bool
		listening.Store(true)
		a.CacheRulesWhile(listening.Load)
		now := time.Now().UTC().Truncate(time.Millisecond)
		live := func(st *store.Store, at time.Time) []string {
			t.Helper()
			rows, err := st.LiveRulesForTool(ctx, "Bash", at)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range rows {
				if r.FireCount != 0 || r.LastFiredAt != nil {
					t.Fatalf("live rule %s carries a fire count", r.ID)
				}
				ids = append(ids, r.ID)
			}
			return ids
		}
		want := func(got []string, ids ...string) {
			t.Helper()
			if !slices.Equal(got, ids) {
				t.Fatalf("live rules %q, want %q", got, ids)
			}
		}
		insert := func(st *store.Store, id string, created time.Time, expires *time.Time) {
			t.Helper()
			r := &models.Rule{ID: id, Effect: models.EffectAllow, Tool: "Bash", MatchKind: "exact", Pattern: "make",
				ScopeKind: "global", CreatedBy: "local", CreatedAt: created, ExpiresAt: expires}
			if err := st.InsertRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}

		want(live(a, now)) // read (and kept): none
		hour := now.Add(time.Hour)
		insert(a, "rule_hour", now.Add(-2*time.Second), &hour)
		want(live(a, now), "rule_hour")
		insert(a, "rule_ever", now.Add(-time.Second), nil)
		if err := a.RuleFired(ctx, "rule_hour", now); err != nil {
			t.Fatal(err)
		}
		want(live(a, now), "rule_hour", "rule_ever")
		want(live(a, now.Add(2*time.Hour)), "rule_ever") // past its expiry
		if ok, err := a.RevokeRule(ctx, "rule_ever", "local", now); err != nil || !ok {
			t.Fatalf("revoke: %v %v", ok, err)
		}
		want(live(a, now), "rule_hour")
		if got, err := a.GetRule(ctx, "rule_hour"); err != nil || got.FireCount != 1 {
			t.Fatalf("the table's fire count: %+v %v", got, err)
		}
		if db.Name != "postgres" {
			return
		}

		// Another replica's change, sent with its commit on RulesChannel.
		notes := listen(t, url, stream.RulesChannel)
		b := openStore(t, url)
		if ok, err := b.RevokeRule(ctx, "rule_hour", "local", now); err != nil || !ok {
			t.Fatalf("revoke on b: %v %v", ok, err)
		}
		if got := nextNote(t, notes); got != "rule_hour" {
			t.Fatalf("rules note %q, want the revoked rule's id", got)
		}
		want(live(a, now), "rule_hour") // not heard yet: what a kept
		a.DropRules()
		want(live(a, now))

		// Not listening: every read goes to the table.
		listening.Store(false)
		insert(b, "rule_b", now, nil)
		if got := nextNote(t, notes); got != "rule_b" {
			t.Fatalf("rules note %q, want the new rule's id", got)
		}
		want(live(a, now), "rule_b")
	})
}

func nextNote(t *testing.T, notes <-chan string) string {
	t.Helper()
	select {
	case n := <-notes:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no rules note within 10s")
		return ""
	}
}

func openStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// listen LISTENs on channel and passes on the payloads it hears.
func listen(t *testing.T, url, channel string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		cancel()
		t.Fatal(err)
	}
	out := make(chan string, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			out <- n.Payload
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		conn.Close(context.Background())
	})
	return out
}
