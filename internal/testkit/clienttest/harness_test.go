// Package clienttest drives Gatehouse's MCP proxy with the real MCP clients people run
// (the official Go SDK, @modelcontextprotocol/sdk 1.x and @modelcontextprotocol/client
// 2.x from npm) against a real server, a real database and a real HTTP runner, and
// checks what a person sees: one prompt per gated call, decided on the approval page,
// and then the tool ran exactly once (approve) or never (decline).
package clienttest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// askDeployPolicy makes every call of the runner's deploy tool wait for a person.
const askDeployPolicy = `policies:
  - name: ask_deploy
    on: ["tool_call:deploy"]
    action: ASK
    reason: Deploys need a person
`

// publicURL is a --public-url for startProxy: the approval links a client is handed
// must then be absolute and start with it.
const publicURL = "https://gatehouse.example.test"

// deployRunner stands in for the external MCP runner: one tool, deploy, that counts
// how often it really ran. The count is what proves "exactly once" and "never".
type deployRunner struct {
	*httptest.Server
	runs atomic.Int32
}

func newDeployRunner(t testing.TB) *deployRunner {
	r := &deployRunner{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasSuffix(req.URL.Path, "/mcp/execute") {
			w.WriteHeader(http.StatusAccepted) // approval events the server forwards
			return
		}
		var body struct {
			Method string `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		raw, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(raw, &body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case body.Method == "tools/list":
			_ = json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"tools": []any{map[string]any{
				"name": "deploy", "description": "deploys the service",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"target": map[string]any{"type": "string"}}},
			}}}})
		case body.Method == "tools/call" && body.Params.Name == "deploy":
			r.runs.Add(1)
			target, _ := body.Params.Arguments["target"].(string)
			_ = json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"output": "deployed " + target}})
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": -32601, "message": "no such tool"}})
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// Runs is how many times the deploy tool really ran.
func (r *deployRunner) Runs() int32 { return r.runs.Load() }

// proxy is one running Gatehouse with a runner, the ASK policy and a fresh session
// whose event stream is already open (so no prompt can be missed).
type proxy struct {
	srv      *testserver.Server
	c        *testserver.Client
	runner   *deployRunner
	sid      string
	endpoint string // the session's MCP endpoint
	public   string // --public-url, or "" when links are built from the request's host
	events   *testserver.Stream
}

// startProxy starts the server with the flags of the contract, then extra flags (a
// later flag wins). With --public-url among them, approval links must be built from it
// rather than from the request's host.
func startProxy(t *testing.T, db testserver.DB, extra ...string) *proxy {
	t.Helper()
	runner := newDeployRunner(t)
	policy := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(policy, []byte(askDeployPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := append([]string{"--runner-url", runner.URL, "--policy-file", policy, "--elicitation-mode", "url",
		"--mcp-retry-wait", "30s", "--mcp-approval-ttl", "15m"}, extra...)
	p := &proxy{runner: runner}
	for i, f := range flags[:len(flags)-1] {
		if f == "--public-url" {
			p.public = flags[i+1]
		}
	}
	p.srv = testserver.Start(t, db.NewURL(t), flags...)
	p.c = p.srv.Client("")
	p.sid = p.c.CreateSession(t, p.c.CreateAgent(t), "", "")
	p.endpoint = p.srv.URL + "/v1/sessions/" + p.sid + "/mcp"
	p.events = p.c.OpenStream(t, "/v1/sessions/"+p.sid+"/stream")
	p.events.WaitHeartbeat(t)
	return p
}

// waitPrompt returns the id of the next prompt the session shows a person.
func (p *proxy) waitPrompt(t testing.TB) string {
	t.Helper()
	f := p.events.WaitFor(t, "response.elicitation_request", 20*time.Second)
	eid, _ := f.Map(t)["elicitation_id"].(string)
	if eid == "" {
		t.Fatalf("prompt event without elicitation_id: %s", f.Data)
	}
	return eid
}

// approvalURL is the absolute link a client must be handed for prompt eid.
func (p *proxy) approvalURL(eid string) string {
	base := p.srv.URL
	if p.public != "" {
		base = p.public
	}
	return base + "/approve/" + p.sid + "/" + eid
}

// checkURL fails the test unless url is the absolute approval link of eid.
func (p *proxy) checkURL(t testing.TB, url, eid string) {
	t.Helper()
	if want := p.approvalURL(eid); url != want {
		t.Errorf("approval url = %q, want %q", url, want)
	}
}

// decide answers prompt eid on its approval page, as a person does.
func (p *proxy) decide(t testing.TB, eid, action string) {
	t.Helper()
	reason := ""
	if action == "decline" {
		reason = declineReason
	}
	p.srv.DecideOnPage(t, "", p.sid, eid, action, reason)
}

// declineReason is what the person types when declining; the client must see it.
const declineReason = "not during the freeze"

// checkOutcome asserts what must hold once the client has its answer: the tool ran
// exactly once after an approval and never after a decline, the session's event log
// holds exactly one prompt (eid) for the call, and nothing is left pending.
func (p *proxy) checkOutcome(t testing.TB, eid, action string) {
	t.Helper()
	want := int32(1)
	if action == "decline" {
		want = 0
	}
	if got := p.runner.runs.Load(); got != want {
		t.Errorf("deploy ran %d times on the runner, want %d", got, want)
	}
	if got := p.promptsEver(t); len(got) != 1 || got[0] != eid {
		t.Errorf("prompts created for the call = %v, want exactly [%s]", got, eid)
	}
	r := p.c.Do(t, http.MethodGet, "/v1/sessions/"+p.sid, nil)
	if pending, _ := r.JSON(t)["pending_elicitations"].([]any); len(pending) != 0 {
		t.Errorf("prompts still pending after the call finished: %v", pending)
	}
}

// promptsEver replays the session's whole event log (resume from 0; the replay ends
// with the heartbeat) and returns the id of every prompt ever created, in order.
func (p *proxy) promptsEver(t testing.TB) []string {
	t.Helper()
	st := p.c.OpenStream(t, "/v1/sessions/"+p.sid+"/stream?last_event_id=0")
	defer st.Close()
	var ids []string
	for {
		f := st.Next(t, 10*time.Second)
		switch f.Event {
		case "session.heartbeat":
			return ids
		case "response.elicitation_request":
			eid, _ := f.Map(t)["elicitation_id"].(string)
			ids = append(ids, eid)
		}
	}
}
