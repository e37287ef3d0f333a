package handlers_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestMCPUpstreamServer puts the real @modelcontextprotocol/server-everything (npm,
// stdio) behind the proxy with no runner, and drives it with the official Go SDK
// client: the namespaced tools are listed, an ungated call runs, a call the policy
// ASKs about runs once after a person approves on the approval page (the client's
// URL handler consents at once and its retry waits for the verdict), a server killed
// mid-call is a JSON-RPC error rather than a hung call, and ending the MCP session
// (DELETE) reaps the server's process.
func TestMCPUpstreamServer(t *testing.T) {
	node := testnpm.Node(t)
	js := testnpm.NodeModule(t, "@modelcontextprotocol/server-everything/dist/index.js")
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		// The server runs in a directory of its own, so the test can find its process.
		dir := t.TempDir()
		cfg := filepath.Join(t.TempDir(), "servers.yaml")
		yml := "servers:\n  everything:\n    command: " + node + "\n    args: [" + strconv.Quote(js) + ", stdio]\n    cwd: " + strconv.Quote(dir) + "\n    timeout: 60s\n"
		if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
		policies := policyFile(t, "policies:\n  - name: ask_echo\n    on: [\"tool_call:everything__echo\"]\n    action: ASK\n    reason: Echo needs a person\n")
		srv := testserver.Start(t, db.NewURL(t), "--mcp-servers", cfg, "--policy-file", policies, "--mcp-retry-wait", "10s")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)

		var asked atomic.Int32
		client := sdk.NewClient(&sdk.Implementation{Name: "upstream-test", Version: "1"}, &sdk.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked.Add(1)
				if req.Params.Message != "ask_echo: Echo needs a person" {
					t.Errorf("elicitation = %+v", req.Params)
				}
				// The person approves on the approval page; the client's own answer
				// is never taken as the approval.
				pending, _ := dig(t, c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t), "pending_elicitations").([]any)
				if len(pending) != 1 {
					t.Errorf("pending prompts = %d, want 1", len(pending))
					return &sdk.ElicitResult{Action: "cancel"}, nil
				}
				srv.DecideOnPage(t, "", sid, dig(t, pending[0], "elicitation_id").(string), "accept", "")
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}, nil
			},
		})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/v1/sessions/" + sid + "/mcp", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()

		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		names := map[string]bool{}
		for _, tool := range tools.Tools {
			names[tool.Name] = true
		}
		if !names["everything__echo"] || !names["everything__get-sum"] {
			t.Fatalf("tools = %v", names)
		}
		sum, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "everything__get-sum", Arguments: map[string]any{"a": 1, "b": 2}})
		if err != nil || sum.IsError || !strings.Contains(sum.Content[0].(*sdk.TextContent).Text, "3") {
			t.Fatalf("get-sum: %v %+v", err, sum)
		}

		echo, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "hi"}})
		if err != nil || echo.IsError || echo.Content[0].(*sdk.TextContent).Text != "Echo: hi" {
			t.Fatalf("gated echo: %v %+v", err, echo)
		}
		if asked.Load() != 1 {
			t.Fatalf("asked %d times, want once", asked.Load())
		}
		ev := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
		if p := ev["params"].(map[string]any); p["tool_name"] != "everything__echo" {
			t.Fatalf("prompt = %v", p)
		}

		// The server's own input request (elicitation/create) becomes a prompt; the
		// person's answer reaches the server.
		type called struct {
			res *sdk.CallToolResult
			err error
		}
		callAsync := func() chan called {
			done := make(chan called, 1)
			go func() {
				r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "everything__trigger-elicitation-request", Arguments: map[string]any{}})
				done <- called{r, err}
			}()
			return done
		}
		done := callAsync()
		input := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
		if p := input["params"].(map[string]any); p["phase"] != "mcp_input" || p["message"] != "Please provide inputs for the following fields:" {
			t.Fatalf("input prompt = %v", p)
		}
		if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+input["elicitation_id"].(string)+"/resolve",
			map[string]any{"action": "decline"}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		select {
		case r := <-done:
			if r.err != nil || r.res.IsError || !strings.Contains(strings.ToLower(mustJSON(r.res.Content)), "decline") {
				t.Fatalf("elicitation tool: %v %s", r.err, mustJSON(r.res))
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the elicitation tool did not finish after the answer")
		}

		// Killed mid-call (the server is waiting for its input request's answer): an
		// error, promptly — not a hung call.
		pid := serverPID(t, dir)
		done = callAsync()
		st.WaitFor(t, "response.elicitation_request", 10*time.Second)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			if r.err == nil || !strings.Contains(r.err.Error(), "everything") {
				t.Fatalf("call to a killed server: %v %+v", r.err, r.res)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the call to a killed server hung")
		}

		// A new process serves the next call; DELETE ends the MCP session and reaps it.
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "everything__get-sum", Arguments: map[string]any{"a": 2, "b": 2}}); err != nil {
			t.Fatalf("after the crash: %v", err)
		}
		fresh := serverPID(t, dir)
		if r := c.Do(t, http.MethodDelete, "/v1/sessions/"+sid+"/mcp", nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d %s", r.Status, r.Body)
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(fresh)); err == nil {
			t.Fatalf("server process %d still exists after the MCP session ended", fresh)
		}
	})
}

// serverPID finds the process whose working directory is dir.
func serverPID(t *testing.T, dir string) int {
	t.Helper()
	var pid int
	waitUntil(t, 10*time.Second, func() bool {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			n, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && cwd == dir {
				pid = n
				return true
			}
		}
		return false
	})
	return pid
}

// waitUntil polls cond until it holds, failing the test at the deadline.
func waitUntil(t *testing.T, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMCPUpstreamToolHintsRateTheCall: an upstream tool is rated by what its server
// says of it (MCP tool annotations): server-everything's echo says it only reads and
// stays low, so a policy asking about medium-risk calls lets it run; its
// toggle-subscriber-updates says it changes things, so the same policy asks, and the
// prompt carries the reason.
func TestMCPUpstreamToolHintsRateTheCall(t *testing.T) {
	node := testnpm.Node(t)
	js := testnpm.NodeModule(t, "@modelcontextprotocol/server-everything/dist/index.js")
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		cfg := filepath.Join(t.TempDir(), "servers.yaml")
		yml := "servers:\n  everything:\n    command: " + node + "\n    args: [" + strconv.Quote(js) + ", stdio]\n    timeout: 60s\n"
		if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
		policies := policyFile(t, "policies:\n  - name: ask_medium\n    on: [tool_call]\n    when: risk.level != \"low\"\n    action: ASK\n    reason: it may change things\n")
		srv := testserver.Start(t, db.NewURL(t), "--mcp-servers", cfg, "--policy-file", policies, "--mcp-retry-wait", "10s")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)

		var asked atomic.Int32
		client := sdk.NewClient(&sdk.Implementation{Name: "hints-test", Version: "1"}, &sdk.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked.Add(1)
				pending, _ := dig(t, c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t), "pending_elicitations").([]any)
				if len(pending) != 1 {
					t.Errorf("pending prompts = %d, want 1", len(pending))
					return &sdk.ElicitResult{Action: "cancel"}, nil
				}
				srv.DecideOnPage(t, "", sid, dig(t, pending[0], "elicitation_id").(string), "decline", "")
				return &sdk.ElicitResult{Action: "decline"}, nil
			},
		})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/v1/sessions/" + sid + "/mcp", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()

		echo, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "hi"}})
		if err != nil || echo.IsError || asked.Load() != 0 {
			t.Fatalf("read-only echo: %v %+v, asked %d times; want it run without asking", err, echo, asked.Load())
		}
		toggle, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "everything__toggle-subscriber-updates", Arguments: map[string]any{}})
		if err != nil || !toggle.IsError || asked.Load() != 1 {
			t.Fatalf("toggle: %v %+v, asked %d times; want one prompt, declined", err, toggle, asked.Load())
		}
		ev := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
		if got := mustJSON(ev["risk"]); !strings.Contains(got, `"level":"medium"`) || !strings.Contains(got, `"code":"modifying_tool"`) ||
			!strings.Contains(got, "everything__toggle-subscriber-updates") {
			t.Fatalf("risk = %s, want medium, modifying_tool, naming the tool", got)
		}
	})
}
