package mcpproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/mcpproxy"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// noRunner fails the test if a tool runs: a call a policy asks about must not run.
type noRunner struct{ t *testing.T }

func (r noRunner) Execute(context.Context, string, string, any) (json.RawMessage, error) {
	r.t.Error("a tool ran before anyone approved it")
	return nil, errors.New("no runner")
}

// TestAskTakesAPrepareSlot: the proxy's policy ASK parks through the park use case the
// hooks share, so it takes one of its prepare slots. With every slot held, an MCP ASK
// waits for one and opens nothing; once a slot frees it opens the prompt and answers
// input_required.
func TestAskTakesAPrepareSlot(t *testing.T) {
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
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		core := elicit.New(st, stream.NewLocal(), elicit.Options{Log: quiet})
		parks := park.New(core, nil, 1)
		policies := policy.New()
		if err := policies.Register("ask_deploy", []string{"tool_call"}, func(policy.Event) policy.Decision {
			return policy.Decision{Action: policy.Ask, Reason: "deploys need a person"}
		}); err != nil {
			t.Fatal(err)
		}
		proxy := mcpproxy.New(core, policies, noRunner{t}, nil, mcp.NewStateSigner(testserver.TestSessionSecret),
			mcpproxy.Options{Mode: mcp.ModeURL, Park: parks, Log: quiet})

		release, taken := make(chan struct{}), make(chan struct{})
		go func() {
			_, _ = parks.Park(ctx, func() (*park.Job, error) {
				close(taken)
				<-release
				return &park.Job{Immediate: "held"}, nil
			})
		}()
		<-taken
		defer func() {
			select {
			case <-release:
			default:
				close(release)
			}
		}()

		type served struct {
			reply mcpproxy.Reply
			err   error
		}
		done := make(chan served, 1)
		go func() {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"env":"prod"}}}`
			reply, err := proxy.Serve(ctx, mcpproxy.Request{Session: sess, User: auth.LocalUser, Body: []byte(body),
				BaseURL: "http://gatehouse.test"}, nil)
			done <- served{reply, err}
		}()
		deadline := time.After(10 * time.Second)
		for parks.Queued() == 0 {
			select {
			case r := <-done:
				t.Fatalf("the ASK was answered while every prepare slot was held: %+v %v", r.reply.Body, r.err)
			case <-deadline:
				t.Fatal("the ASK never queued for a prepare slot")
			case <-time.After(5 * time.Millisecond):
			}
		}
		pending := func() int {
			t.Helper()
			rows, err := st.PendingInSubtree(ctx, sess.Path)
			if err != nil {
				t.Fatal(err)
			}
			return len(rows)
		}
		if n := pending(); n != 0 {
			t.Fatalf("%d prompts opened while the ASK waited for a slot", n)
		}
		close(release)
		var r served
		select {
		case r = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the ASK was not answered once a slot came free")
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		raw, _ := json.Marshal(r.reply.Body)
		var got struct {
			Result struct {
				ResultType string `json:"resultType"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || got.Result.ResultType != "input_required" {
			t.Fatalf("answer = %s, want input_required", raw)
		}
		if n := pending(); n != 1 {
			t.Fatalf("%d prompts pending after the ASK, want 1", n)
		}
	})
}
