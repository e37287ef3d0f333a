package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/handlers"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testserver"
)

// runnerStandIn stands in for the external runner process: it records the control
// events Gatehouse forwards to it.
type runnerStandIn struct{ events chan map[string]any }

func (r *runnerStandIn) Execute(context.Context, string, string, any) (json.RawMessage, error) {
	return nil, io.EOF
}

func (r *runnerStandIn) PostEvent(_ context.Context, sid string, event any) error {
	raw, _ := json.Marshal(event)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	m["_session"] = sid
	r.events <- m
	return nil
}

// startWithRunner serves the real handlers over a real database with a runner stand-in
// (the app does not wire a runner client from --runner-url yet).
func startWithRunner(t *testing.T, dbURL string, runner handlers.Runner) *testserver.Client {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus := stream.NewDurable(st, log)
	core := elicit.New(st, bus, elicit.Options{Timeout: time.Minute, Log: log})
	ident, err := auth.NewIdentifier(auth.ModeNone, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := handlers.New(handlers.Deps{
		Sessions: sessions.New(st, &auth.Checker{Mode: auth.ModeNone, Grants: st}), Elicit: core, Bus: bus,
		Ident: ident, Log: log, Ping: func(*http.Request) error { return nil }, MaxBodyBytes: 1 << 20,
		ElicitationMode: "form", Runner: runner,
	})
	ts := httptest.NewServer(e)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		core.Shutdown(sctx)
		ts.Close()
	})
	return &testserver.Client{Base: ts.URL, HC: ts.Client()}
}

// TestCodexHookDeclineInterruptsRunner: a declined Codex prompt answers Codex with
// "decline" and forwards {"type":"interrupt"} for that session to the runner; an
// accepted one forwards nothing.
func TestCodexHookDeclineInterruptsRunner(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		runner := &runnerStandIn{events: make(chan map[string]any, 8)}
		c := startWithRunner(t, db.NewURL(t), runner)
		agent := c.CreateAgent(t)
		accepted, declined := c.CreateSession(t, agent, "", ""), c.CreateSession(t, agent, "", "")

		parked, eid, _ := c.ParkAt(t, accepted, codexPath(accepted), testserver.CodexCommandBody(1, []string{"ls"}))
		resolveAs(t, c, accepted, eid, "accept", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"decision":"accept"}` {
			t.Fatalf("accept answer = %s", got)
		}

		parked, eid, _ = c.ParkAt(t, declined, codexPath(declined), testserver.CodexCommandBody(2, []string{"rm", "-rf", "/"}))
		resolveAs(t, c, declined, eid, "decline", nil)
		if got := canonJSON(t, parked.Wait(t, 10*time.Second).Body); got != `{"decision":"decline"}` {
			t.Fatalf("decline answer = %s", got)
		}
		select {
		case ev := <-runner.events:
			if ev["type"] != "interrupt" || ev["_session"] != declined {
				t.Fatalf("runner got %v, want an interrupt for the declined session %s", ev, declined)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the runner never got the interrupt")
		}
		// An accept forwards nothing: had it, its event (sent a whole round trip
		// earlier) would be queued by now.
		if n := len(runner.events); n != 0 {
			t.Fatalf("the runner got %d more events: %v", n, <-runner.events)
		}
	})
}
