package park_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestAskFindsTheCallsPrompt: a call asked about opens one prompt; every retry of it —
// answered at once, waiting the retry wait, or held — finds that prompt by its call key
// instead of opening another, and once decided the retry gets the decided row. A call
// the client cannot be asked about opens nothing.
func TestAskFindsTheCallsPrompt(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		svc := sessions.New(st, &auth.Checker{Mode: auth.ModeNone, Grants: st})
		agent, err := svc.CreateAgent(ctx, auth.LocalUser, sessions.AgentInput{Name: "a"})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := svc.CreateSession(ctx, auth.LocalUser, sessions.SessionInput{AgentID: agent.ID})
		if err != nil {
			t.Fatal(err)
		}
		core := elicit.New(st, stream.NewLocal(), elicit.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		s := park.New(core, nil, 2)
		call := func(key string) park.Call {
			return park.Call{Prompt: elicit.Prompt{Session: sess, Origin: models.OriginPolicy, CallKey: key, Person: auth.LocalUser,
				Params: map[string]any{"message": "deploy?"}, Timeout: time.Hour},
				Tool: "deploy", Args: map[string]any{"env": "prod"}, DeclinedSince: time.Now().Add(-time.Hour)}
		}
		pending := func() int {
			t.Helper()
			rows, err := st.PendingInSubtree(ctx, sess.Path)
			if err != nil {
				t.Fatal(err)
			}
			return len(rows)
		}
		ask := func(c park.Call) park.Asked {
			t.Helper()
			a, err := s.Ask(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}

		first := ask(call("k1"))
		if first.Row == nil || !first.Row.IsPending() || first.Waiter != nil {
			t.Fatalf("first ask = %+v, want a pending row", first)
		}
		again := ask(call("k1")) // a retry: RetryWait 0 answers as the prompt stands
		if again.Row == nil || again.Row.ID != first.Row.ID || !again.Row.IsPending() {
			t.Fatalf("retry = %+v, want prompt %s still pending", again.Row, first.Row.ID)
		}
		held := call("k1")
		held.Hold = true
		h := ask(held)
		if h.Waiter == nil || h.Waiter.ID() != first.Row.ID {
			t.Fatalf("held retry = %+v, want a wait on %s", h, first.Row.ID)
		}
		h.Waiter.Close()
		if n := pending(); n != 1 {
			t.Fatalf("%d prompts pending after three asks of one call, want 1", n)
		}

		if _, err := core.Resolve(ctx, sess.ID, first.Row.ID, models.Verdict{Action: models.ActionDecline}, auth.LocalUser, models.ViaAPI); err != nil {
			t.Fatal(err)
		}
		decided := ask(call("k1"))
		if decided.Row == nil || decided.Row.ID != first.Row.ID || decided.Row.Status != models.StatusResolved {
			t.Fatalf("retry after the decline = %+v, want the declined row", decided.Row)
		}

		cannot := call("k2")
		cannot.RulesOnly = true
		if a := ask(cannot); a.Row != nil || a.Waiter != nil {
			t.Fatalf("a client that cannot be asked got %+v", a)
		}
		if n := pending(); n != 0 {
			t.Fatalf("%d prompts pending, want none", n)
		}
	})
}
