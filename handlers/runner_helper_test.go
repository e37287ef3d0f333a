package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRunner is an httptest server standing in for the external MCP runner. Each
// /mcp/execute call is recorded and answered by script (n counts from 1); /events
// posts are delivered on events.
type fakeRunner struct {
	*httptest.Server
	t      testing.TB
	mu     sync.Mutex
	calls  []map[string]any
	script func(n int, body map[string]any) any
	events chan map[string]any
}

func newFakeRunner(t testing.TB, script func(n int, body map[string]any) any) *fakeRunner {
	r := &fakeRunner{t: t, script: script, events: make(chan map[string]any, 16)}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *fakeRunner) serve(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	switch {
	case strings.HasSuffix(req.URL.Path, "/mcp/execute"):
		r.mu.Lock()
		r.calls = append(r.calls, body)
		n := len(r.calls)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(r.script(n, body))
	case strings.HasSuffix(req.URL.Path, "/events"):
		body["_path"] = req.URL.Path
		r.events <- body
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, req)
	}
}

// Calls returns the execute bodies received so far.
func (r *fakeRunner) Calls() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.calls...)
}

// ToolRuns counts the tools/call executions (tool listings aside).
func (r *fakeRunner) ToolRuns() int {
	n := 0
	for _, c := range r.Calls() {
		if c["method"] == "tools/call" {
			n++
		}
	}
	return n
}

// WaitEvent returns the next /events post, failing the test after the deadline.
func (r *fakeRunner) WaitEvent(t testing.TB, within time.Duration) map[string]any {
	t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-time.After(within):
		t.Fatalf("the runner got no event within %s", within)
	}
	return nil
}

// echoRunner answers tools/list with one tool and tools/call with "ran <name>".
func echoRunner(t testing.TB) *fakeRunner {
	return newFakeRunner(t, func(_ int, body map[string]any) any {
		if body["method"] == "tools/list" {
			return map[string]any{"result": map[string]any{"tools": []any{map[string]any{
				"name": "echo", "description": "echoes its text",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
			}}}}
		}
		p := body["params"].(map[string]any)
		args, _ := json.Marshal(p["arguments"])
		return map[string]any{"result": map[string]any{"output": "ran " + p["name"].(string) + " " + string(args)}}
	})
}

// policyFile writes a policy file into the test's temp dir and returns its path.
func policyFile(t testing.TB, yml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(p, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// askBashPolicy is the seed's admin__ask_bash default policy, as a policy file.
const askBashPolicy = `policies:
  - name: admin__ask_bash
    on: [tool_call]
    when: 'data.name == "Bash"'
    action: ASK
    reason: Approve child tool call
`

// toolCallEvent is the seed's PHASE_TOOL_CALL evaluate body.
func toolCallEvent(tool string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"event": map[string]any{"type": "PHASE_TOOL_CALL", "target": "",
		"data": map[string]any{"name": tool, "arguments": args}, "context": map[string]any{}}}
}

// rpc is a JSON-RPC tools/call request.
func rpcCall(id any, name string, args map[string]any, extra map[string]any) map[string]any {
	params := map[string]any{"name": name, "arguments": args}
	for k, v := range extra {
		params[k] = v
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
}

// dig walks nested maps by keys.
func dig(t testing.TB, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("at %q: %v is not an object", k, v)
		}
		v = m[k]
	}
	return v
}
