package grants_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/grants"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func input(t *testing.T, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(stringsReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGrantIsSpentOnceForExactlyTheCall: a grant allows the one call it was made for,
// once; another input, tool or session, a second use and a use after the TTL find none.
func TestGrantIsSpentOnceForExactlyTheCall(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
		svc := grants.New(testserver.OpenStore(t, db.NewURL(t)), 2*time.Minute, clk.now)
		call := grants.Call{Session: "conv_a", Tool: "Bash", Input: input(t, `{"command":"rm -rf build","description":"clean","n":1.50}`)}
		if err := svc.Grant(ctx, "elicit_a", "alice", call); err != nil {
			t.Fatal(err)
		}
		// The same prompt answered again (a re-attached retry) mints no second grant.
		if err := svc.Grant(ctx, "elicit_a", "alice", call); err != nil {
			t.Fatal(err)
		}
		for name, other := range map[string]grants.Call{
			"another input":    {Session: "conv_a", Tool: "Bash", Input: input(t, `{"command":"rm -rf /","description":"clean","n":1.50}`)},
			"a number respelt": {Session: "conv_a", Tool: "Bash", Input: input(t, `{"command":"rm -rf build","description":"clean","n":1.5}`)},
			"another tool":     {Session: "conv_a", Tool: "Write", Input: call.Input},
			"another session":  {Session: "conv_b", Tool: "Bash", Input: call.Input},
		} {
			if g, err := svc.Consume(ctx, other); err != nil || g != nil {
				t.Fatalf("%s: consumed %+v (%v)", name, g, err)
			}
		}
		// Keys in another order are the same input.
		same := grants.Call{Session: "conv_a", Tool: "Bash", Input: input(t, `{"n":1.50,"description":"clean","command":"rm -rf build"}`)}
		g, err := svc.Consume(ctx, same)
		if err != nil || g == nil || g.ElicitationID != "elicit_a" || g.GrantedBy != "alice" {
			t.Fatalf("first use: %+v (%v)", g, err)
		}
		if g, err := svc.Consume(ctx, call); err != nil || g != nil {
			t.Fatalf("second use got a grant: %+v (%v)", g, err)
		}

		if err := svc.Grant(ctx, "elicit_b", "alice", call); err != nil {
			t.Fatal(err)
		}
		clk.add(2 * time.Minute)
		if g, err := svc.Consume(ctx, call); err != nil || g != nil {
			t.Fatalf("a grant outlived its TTL: %+v (%v)", g, err)
		}
	})
}

// TestGrantSpentByOneOfManyReplicas: many requests on two stores over one database (two
// replicas) present the same grant at once; exactly one spends it.
func TestGrantSpentByOneOfManyReplicas(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		url := db.NewURL(t)
		a := grants.New(testserver.OpenStore(t, url), 0, nil)
		b := grants.New(testserver.OpenStore(t, url), 0, nil)
		call := grants.Call{Session: "conv_a", Tool: "Bash", Input: map[string]any{"command": "make deploy"}}
		if err := a.Grant(ctx, "elicit_a", "alice", call); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 16 {
			svc := a
			if i%2 == 1 {
				svc = b
			}
			wg.Go(func() {
				g, err := svc.Consume(ctx, call)
				if err != nil {
					t.Error(err)
				}
				if g != nil {
					mu.Lock()
					won++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d requests spent one grant, want exactly 1", won)
		}
	})
}

func TestTTLIsBounded(t *testing.T) {
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	st := &memStore{}
	svc := grants.New(st, time.Hour, clk.now)
	if err := svc.Grant(context.Background(), "elicit_a", "alice", grants.Call{Session: "s", Tool: "Bash"}); err != nil {
		t.Fatal(err)
	}
	if got := st.last.ExpiresAt.Sub(st.last.CreatedAt); got != grants.MaxTTL {
		t.Fatalf("a 1h TTL made a grant of %s, want the %s cap", got, grants.MaxTTL)
	}
}
