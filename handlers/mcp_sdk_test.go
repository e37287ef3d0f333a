package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestMCPInteropGoSDK drives /mcp with the official Go SDK client over its streamable
// HTTP transport: connect (server/discover on 2026-07-28, initialize on an older
// revision), list tools, call a tool, see a policy DENY as an error, and complete a
// policy ASK through the SDK's own multi round-trip handling — the person approving
// in Gatehouse while the client's elicitation handler waits.
func TestMCPInteropGoSDK(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		// A 2026-07-28 client declares its capabilities on every request, so in URL
		// mode the proxy sees it can only do forms and asks in form mode, through the
		// SDK's multi round-trip loop. An older client that declared form mode only
		// never sees input_required: its call is held open until a person decides.
		for _, tc := range []struct{ version, mode string }{{"", "url"}, {"2025-06-18", "form"}} {
			t.Run("protocol "+tc.version+" "+tc.mode, func(t *testing.T) {
				runner := echoRunner(t)
				srv := testserver.Start(t, db.NewURL(t), "--runner-url", runner.URL, "--policy-file", policyFile(t, mcpPolicies),
					"--elicitation-mode", tc.mode)
				c := srv.Client("")
				sid := c.CreateSession(t, c.CreateAgent(t), "", "")
				sdkRoundTrip(t, c, srv.URL+"/v1/sessions/"+sid+"/mcp", sid, tc.version)
			})
		}
	})
}

func sdkRoundTrip(t *testing.T, c *testserver.Client, endpoint, sid, version string) {
	var asked atomic.Int32
	client := sdk.NewClient(&sdk.Implementation{Name: "interop-test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			if !strings.HasPrefix(req.Params.Message, "ask_deploy:") || req.Params.Mode == "url" {
				t.Errorf("elicitation = %+v", req.Params)
			}
			// The person decides in Gatehouse (inbox, stream, API) meanwhile.
			resolvePending(t, c, sid, "accept")
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opts *sdk.ClientSessionOptions
	if version != "" {
		opts = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	want := version
	if want == "" {
		want = "2026-07-28"
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("negotiated %q, want %q", got, want)
	}
	if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "gatehouse" {
		t.Fatalf("server info = %+v", info)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Fatalf("list tools: %v %+v", err, tools)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("call echo: %v %+v", err, res)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; text != `ran echo {"text":"hi"}` {
		t.Fatalf("echo text = %q", text)
	}

	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "nuke", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), "Denied by policy: nobody nukes") {
		t.Fatalf("nuke: err = %v", err)
	}

	if version != "" {
		// Held call: the person decides in Gatehouse while the call waits.
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		defer st.Close()
		st.WaitHeartbeat(t)
		type called struct {
			res *sdk.CallToolResult
			err error
		}
		done := make(chan called, 1)
		go func() {
			r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod"}})
			done <- called{r, err}
		}()
		st.WaitFor(t, "response.elicitation_request", 10*time.Second)
		resolvePending(t, c, sid, "accept")
		r := <-done
		res, err = r.res, r.err
		if asked.Load() != 0 {
			t.Fatalf("a held call ran the client's elicitation handler %d times", asked.Load())
		}
	} else {
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "deploy", Arguments: map[string]any{"env": "prod"}})
	}
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("call deploy: %v %+v", err, res)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; text != `ran deploy {"env":"prod"}` {
		t.Fatalf("deploy text = %q", text)
	}
	if version == "" && asked.Load() != 1 {
		t.Fatalf("the elicitation handler ran %d times, want once", asked.Load())
	}
}

// resolvePending decides the session's only pending prompt through the API.
func resolvePending(t *testing.T, c *testserver.Client, sid, action string) {
	r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil)
	list, _ := r.JSON(t)["pending_elicitations"].([]any)
	if len(list) != 1 {
		t.Errorf("pending prompts = %d, want 1", len(list))
		return
	}
	eid := dig(t, list[0], "elicitation_id").(string)
	if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": action}); r.Status != 202 {
		t.Errorf("resolve: %d %s", r.Status, r.Body)
	}
}
