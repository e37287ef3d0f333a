package clienttest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// goVersions are the protocol revisions the official Go SDK client speaks: the
// 2026-07-28 default (server/discover, multi round-trip) and two initialize-era ones.
var goVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// Handler styles of the Go client's elicitation handler:
//   - waits: the handler returns only after the person decided on the approval page
//     (an app that opens the link and waits for the user to come back);
//   - consents: the handler returns accept at once — in URL mode that only means "I
//     opened the link", so the server must hold (or re-ask) the retry, never run the
//     tool on it and never open a second prompt.
const (
	waits    = "waits"
	consents = "consents"
)

// TestGoSDKURLMode: a Go SDK client that declares form and URL elicitation, at every
// protocol revision, with both handler styles, approved and declined. At 2026-07-28 it
// gets an input_required URL request and retries with requestState; older revisions get
// -32042 and re-send the same call. Either way: one prompt, an absolute approval link,
// and the tool's output exactly once (or an error result and no run).
func TestGoSDKURLMode(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		for _, version := range goVersions {
			for _, style := range []string{waits, consents} {
				for _, action := range []string{"accept", "decline"} {
					t.Run(version+"/"+style+"/"+action, func(t *testing.T) {
						caps := &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}
						goSDKDeploy(t, startProxy(t, db, "--public-url", publicURL), version, caps, style, action)
					})
				}
			}
		}
	})
}

// TestGoSDKFormOnly: a Go SDK client that declares `elicitation: {}` (form only, like
// older Claude Code). At 2026-07-28 it gets a form input request its handler answers
// after the person decided (always "approved": the page's verdict wins, so a decline
// still must not run the tool); older revisions never see an elicitation: the tools/call
// answer is an SSE stream held open (with progress) until the person decides.
func TestGoSDKFormOnly(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		for _, version := range goVersions {
			for _, action := range []string{"accept", "decline"} {
				t.Run(version+"/"+action, func(t *testing.T) {
					goSDKDeploy(t, startProxy(t, db, "--public-url", publicURL), version, &sdk.ElicitationCapabilities{}, waits, action)
				})
			}
		}
	})
}

// TestGoSDKRetryWhilePending: with --mcp-retry-wait 1s, a client that consents at once
// retries while nobody has decided yet. The held retry must give up after the wait and
// hand the client the same prompt again (the same link; at older revisions the same
// elicitationId) — never a second prompt, never a run — and once the person approves,
// the next retry runs the tool exactly once.
func TestGoSDKRetryWhilePending(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		for _, version := range goVersions {
			t.Run(version, func(t *testing.T) {
				p := startProxy(t, db, "--public-url", publicURL, "--mcp-retry-wait", "1s")
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				asked := make(chan *sdk.ElicitParams, 16)
				handle := func(_ context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
					select {
					case asked <- params:
					default:
					}
					return &sdk.ElicitResult{Action: "accept"}, nil // consent only
				}
				caps := &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}
				cs, _ := connectGo(ctx, t, p, version, caps, handle)
				defer cs.Close()
				done := callDeployAsync(ctx, cs, handle)
				eid := p.waitPrompt(t)
				for i := 1; i <= 2; i++ {
					select {
					case params := <-asked:
						p.checkURL(t, params.URL, eid)
					case o := <-done:
						t.Fatalf("the call ended while the prompt was pending (ask %d): %+v %v", i, o.res, o.err)
					case <-time.After(20 * time.Second):
						t.Fatalf("the client was not asked a %d. time within 20s of a 1s retry wait", i)
					}
				}
				if n := p.runner.runs.Load(); n != 0 {
					t.Fatalf("deploy ran %d times before anyone decided", n)
				}
				p.decide(t, eid, "accept")
				var o outcome
				select {
				case o = <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("the client got no answer within 30s of the approval")
				}
				if o.err != nil {
					t.Errorf("call deploy: %v", o.err)
				} else {
					checkToolResult(t, o.res.IsError, toolText(o.res), "accept")
				}
				checkSameIDs(t, o.ids)
				p.checkOutcome(t, eid, "accept")
			})
		}
	})
}

// goSDKDeploy connects a Go SDK client at version with the given elicitation
// capabilities, calls deploy in the background, lets the person decide on the
// approval page, and checks what the client got and what the runner did.
func goSDKDeploy(t *testing.T, p *proxy, version string, caps *sdk.ElicitationCapabilities, style, action string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	urlMode := caps.URL != nil
	modern := version == "2026-07-28"

	asked := make(chan *sdk.ElicitParams, 8)
	decided := make(chan struct{})
	var calls atomic.Int32
	handle := func(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
		calls.Add(1)
		select {
		case asked <- params:
		default: // asked far too often; the count below reports it
		}
		if style == waits {
			select {
			case <-decided:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if params.Mode == "url" {
			return &sdk.ElicitResult{Action: "accept"}, nil // consent: the link was opened
		}
		// The verdict is the one given on the approval page. The client's own form
		// answer comes after it and says "go on" even after a decline: it must not
		// turn the person's decline into a run.
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}, nil
	}
	cs, progress := connectGo(ctx, t, p, version, caps, handle)
	defer cs.Close()

	done := callDeployAsync(ctx, cs, handle)

	eid := p.waitPrompt(t)
	// What the client is handed depends on the revision and what it declared.
	wantAsked := modern || urlMode
	if wantAsked {
		var params *sdk.ElicitParams
		select {
		case params = <-asked:
		case o := <-done:
			t.Fatalf("the call ended before the client was asked anything: %+v %v", o.res, o.err)
		case <-time.After(20 * time.Second):
			t.Fatal("the elicitation handler was never called")
		}
		switch {
		case urlMode:
			if params.Mode != "url" || params.Message == "" || params.RequestedSchema != nil {
				t.Errorf("url elicitation = %+v", params)
			}
			p.checkURL(t, params.URL, eid)
			if !modern && params.ElicitationID == "" {
				t.Errorf("-32042 elicitation without elicitationId: %+v", params)
			}
		default:
			schema, _ := json.Marshal(params.RequestedSchema)
			if params.Mode != "form" || !strings.Contains(string(schema), `"approved"`) || !strings.Contains(string(schema), `"boolean"`) {
				t.Errorf("form elicitation = %+v, schema %s", params, schema)
			}
		}
	}
	p.decide(t, eid, action)
	close(decided)

	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the client got no answer within 60s of the decision")
	}
	if o.err != nil {
		t.Errorf("call deploy: %v", o.err)
	} else {
		checkToolResult(t, o.res.IsError, toolText(o.res), action)
	}
	switch n := calls.Load(); {
	case wantAsked && n > 1:
		t.Errorf("the elicitation handler ran %d times: the retry was asked again instead of waiting for the decision", n)
	case !wantAsked && n != 0:
		t.Errorf("the elicitation handler ran %d times: a %s client without URL mode must not be asked (its call is held open)", n, version)
	}
	checkSameIDs(t, o.ids)
	p.checkOutcome(t, eid, action)
	t.Logf("progress notifications: %d", progress.Load())
}

// outcome is how a Go client's deploy call ended.
type outcome struct {
	res *sdk.CallToolResult
	ids []string // elicitationIds of every -32042 the client got
	err error
}

// callDeployAsync calls deploy (with a progress token) in the background.
func callDeployAsync(ctx context.Context, cs *sdk.ClientSession,
	handle func(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error)) <-chan outcome {
	done := make(chan outcome, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "deploy", Arguments: map[string]any{"target": "prod"}}
		params.SetProgressToken("deploy-prod")
		res, ids, err := callFollowingURLErrors(ctx, cs, params, handle)
		done <- outcome{res, ids, err}
	}()
	return done
}

// connectGo connects a Go SDK client to the proxy at version (2026-07-28 is the SDK's
// default) declaring caps, with handle as its elicitation handler, and checks the
// negotiated revision and the tool list. It returns the session and a counter of the
// progress notifications it received.
func connectGo(ctx context.Context, t *testing.T, p *proxy, version string, caps *sdk.ElicitationCapabilities,
	handle func(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error)) (*sdk.ClientSession, *atomic.Int32) {
	t.Helper()
	progress := new(atomic.Int32)
	client := sdk.NewClient(&sdk.Implementation{Name: "gatehouse-clienttest", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: caps},
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return handle(ctx, req.Params)
		},
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	opts := &sdk.ClientSessionOptions{}
	if version != "2026-07-28" {
		opts.ProtocolVersion = version
	}
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: p.endpoint, MaxRetries: -1}, opts)
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		cs.Close()
		t.Fatalf("negotiated %q, want %q", got, version)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "deploy" {
		cs.Close()
		t.Fatalf("tools/list: %v %+v", err, tools)
	}
	return cs, progress
}

// callFollowingURLErrors calls a tool the way a Go SDK app that supports URL mode on
// pre-2026 revisions must: on -32042 it shows each link (runs elicit) and re-sends the
// same call. The SDK leaves this to the app (its own middleware for it is unexported
// and waits for notifications/elicitation/complete). It returns the elicitationIds seen.
func callFollowingURLErrors(ctx context.Context, cs *sdk.ClientSession, params *sdk.CallToolParams,
	elicit func(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error)) (*sdk.CallToolResult, []string, error) {
	var ids []string
	for try := 0; try < 5; try++ {
		res, err := cs.CallTool(ctx, params)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeURLElicitationRequired {
			return res, ids, err
		}
		var data struct {
			Elicitations []*sdk.ElicitParams `json:"elicitations"`
		}
		if err := json.Unmarshal(rpcErr.Data, &data); err != nil || len(data.Elicitations) == 0 {
			return nil, ids, errors.New("-32042 without elicitations: " + string(rpcErr.Data))
		}
		for _, e := range data.Elicitations {
			ids = append(ids, e.ElicitationID)
			if _, err := elicit(ctx, e); err != nil {
				return nil, ids, err
			}
		}
	}
	return nil, ids, errors.New("still -32042 after 5 tries")
}

// checkSameIDs fails unless every -32042 a call got named the same elicitation.
func checkSameIDs(t testing.TB, ids []string) {
	t.Helper()
	for _, id := range ids {
		if id != ids[0] {
			t.Errorf("-32042 elicitationIds changed between retries: %v", ids)
			return
		}
	}
}

// toolText joins a tool result's text blocks.
func toolText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// checkToolResult asserts the result a client got for deploy: the runner's output
// after an approval; an error result naming the decline and its reason otherwise.
func checkToolResult(t testing.TB, isError bool, text, action string) {
	t.Helper()
	if action == "accept" {
		if isError || text != "deployed prod" {
			t.Errorf("approved deploy: isError=%v text=%q, want the runner's output %q", isError, text, "deployed prod")
		}
		return
	}
	if !isError || !strings.Contains(text, "Declined") || !strings.Contains(text, declineReason) {
		t.Errorf("declined deploy: isError=%v text=%q, want an error result saying who declined and %q", isError, text, declineReason)
	}
}
