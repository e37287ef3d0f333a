package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioListAndCall: the real server-everything over stdio lists its tools under
// its server name, answers a call, keeps one process per Gatehouse session and a
// process of its own for another session.
func TestStdioListAndCall(t *testing.T) {
	p := newPool(t, Options{}, everything(t))
	ctx := t.Context()

	tools, err := p.Tools(ctx, "s1", "tester")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, raw := range tools {
		var tool struct {
			Name        string
			InputSchema map[string]any
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		if tool.InputSchema == nil {
			t.Errorf("%s has no inputSchema: %s", tool.Name, raw)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"everything__echo", "everything__get-sum", "everything__trigger-long-running-operation"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	res, err := p.Call(ctx, "s1", "tester", "everything__echo", json.RawMessage(`{"message":"hello upstream"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != "Echo: hello upstream" {
		t.Errorf("echo answered %q (%s)", got, res)
	}
	pid := pidOf(t, p, "s1", "everything")

	res, err = p.Call(ctx, "s1", "tester", "everything__get-sum", json.RawMessage(`{"a":2,"b":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !strings.Contains(got, "5") {
		t.Errorf("get-sum answered %q", got)
	}
	if again := pidOf(t, p, "s1", "everything"); again != pid {
		t.Errorf("second call ran in process %d, first in %d: want the same process", again, pid)
	}

	if _, err := p.Call(ctx, "s2", "tester", "everything__echo", json.RawMessage(`{"message":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if other := pidOf(t, p, "s2", "everything"); other == pid {
		t.Errorf("session s2 shares process %d with s1", pid)
	}
}

// TestCallRefusals: what never reaches a server, and what a server refuses, are
// *Errors with the reason.
func TestCallRefusals(t *testing.T) {
	p := newPool(t, Options{}, everything(t))
	for _, tc := range []struct {
		name, tool, args, want string
	}{
		{"unknown server", "nowhere__echo", `{}`, `unknown tool "nowhere__echo"`},
		{"not namespaced", "echo", `{}`, `unknown tool "echo"`},
		{"arguments not an object", "everything__echo", `["x"]`, "must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Call(t.Context(), "s", "tester", tc.tool, json.RawMessage(tc.args))
			asError(t, err, tc.want)
		})
	}

	// A tool the server does not have is the server's to answer; this one answers
	// with an error result, which is passed on as it is.
	res, err := p.Call(t.Context(), "s", "tester", "everything__no-such-tool", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ IsError bool }
	if err := json.Unmarshal(res, &answer); err != nil || !answer.IsError || !strings.Contains(text(t, res), "not found") {
		t.Errorf("unknown tool answered %s", res)
	}
}

// TestStdioCrashMidCall: the server process dies during a long call; the call fails
// promptly with an *Error (not after the operation's 30s), the dead process is
// reaped, and the next call runs in a new process.
func TestStdioCrashMidCall(t *testing.T) {
	p := newPool(t, Options{}, everything(t))
	ctx := t.Context()
	if _, err := p.Call(ctx, "s", "tester", "everything__echo", json.RawMessage(`{"message":"warm up"}`)); err != nil {
		t.Fatal(err)
	}
	s := live(t, p, "s", "everything")
	pid := s.cmd.Process.Pid

	type answer struct {
		res json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := p.Call(ctx, "s", "tester", "everything__trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":30}`))
		done <- answer{res, err}
	}()
	eventually(t, 5*time.Second, "the long call is in flight", func() bool { return s.callingTool() != "" })
	start := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		if a.err == nil {
			t.Fatalf("call succeeded after the server was killed: %s", a.res)
		}
		asError(t, a.err, "MCP server everything crashed during the call")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("crash reported after %v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call hung after its server was killed")
	}
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the killed server's connection never closed")
	}
	if alive(pid) {
		t.Errorf("killed server %d was not reaped", pid)
	}

	res, err := p.Call(ctx, "s", "tester", "everything__echo", json.RawMessage(`{"message":"after the crash"}`))
	if err != nil {
		t.Fatalf("call after the crash: %v", err)
	}
	if got := text(t, res); got != "Echo: after the crash" {
		t.Errorf("echo answered %q", got)
	}
	if again := pidOf(t, p, "s", "everything"); again == pid {
		t.Errorf("the call after the crash ran in the dead process %d", pid)
	}
}

// TestStdioSlowCallTimesOut: a call longer than the server's timeout gives an *Error
// at the timeout, and the server, which is merely slow, keeps serving the session.
func TestStdioSlowCallTimesOut(t *testing.T) {
	srv := everything(t)
	// The timeout bounds the handshake too, so it must cover node starting on a loaded
	// machine (5 s did not, with every test binary of the suite running under -race),
	// and stay well short of the 60 s operation.
	srv.Timeout = 15 * time.Second
	p := newPool(t, Options{}, srv)
	ctx := t.Context()
	if _, err := p.Call(ctx, "s", "tester", "everything__echo", json.RawMessage(`{"message":"warm up"}`)); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, p, "s", "everything")
	start := time.Now()
	_, err := p.Call(ctx, "s", "tester", "everything__trigger-long-running-operation", json.RawMessage(`{"duration":60,"steps":2}`))
	asError(t, err, "MCP server everything did not answer within 15s")
	if d := time.Since(start); d > 19*time.Second {
		t.Errorf("timeout reported after %v", d)
	}
	if _, err := p.Call(ctx, "s", "tester", "everything__echo", json.RawMessage(`{"message":"still here"}`)); err != nil {
		t.Fatal(err)
	}
	if again := pidOf(t, p, "s", "everything"); again != pid {
		t.Errorf("a slow call replaced process %d with %d", pid, again)
	}
}

// TestHangingServer: a stdio server that never answers, not even the handshake,
// costs each call its timeout and no more; listing leaves it out and still lists the
// healthy server; its process is reaped.
func TestHangingServer(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "hang.pid")
	hang := Server{Name: "hang", Command: everything(t).Command, Args: []string{"testdata/hang.js"},
		Env: map[string]string{"PIDFILE": pidFile}, Timeout: time.Second}
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	hang.Cwd = cwd
	p := newPool(t, Options{}, everything(t), hang)
	ctx := t.Context()

	start := time.Now()
	_, err = p.Call(ctx, "s", "tester", "hang__anything", json.RawMessage(`{}`))
	asError(t, err, "MCP server hang did not answer within 1s")
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("hang reported after %v", d)
	}

	tools, err := p.Tools(ctx, "s", "tester")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) == 0 {
		t.Fatal("the healthy server's tools were left out with the hung one's")
	}
	for _, raw := range tools {
		if strings.Contains(string(raw), `"hang__`) {
			t.Errorf("hung server listed a tool: %s", raw)
		}
	}

	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("hang.js never started: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close hung on a hung server")
	}
	if alive(pid) {
		t.Errorf("hung server %d outlived Close", pid)
	}
}

// TestEndSessionReaps: ending a Gatehouse session waits for its servers' processes
// and leaves other sessions' processes running until Close.
func TestEndSessionReaps(t *testing.T) {
	p := newPool(t, Options{}, everything(t))
	ctx := t.Context()
	for _, sid := range []string{"a", "b"} {
		if _, err := p.Call(ctx, sid, "tester", "everything__echo", json.RawMessage(`{"message":"x"}`)); err != nil {
			t.Fatal(err)
		}
	}
	a, b := live(t, p, "a", "everything"), live(t, p, "b", "everything")
	pidA, pidB := a.cmd.Process.Pid, b.cmd.Process.Pid

	p.EndSession("a")
	select {
	case <-a.exited:
	default:
		t.Fatal("EndSession returned before the connection closed")
	}
	if alive(pidA) {
		t.Errorf("process %d of the ended session was not reaped", pidA)
	}
	if !alive(pidB) {
		t.Fatalf("process %d of another session died with it", pidB)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(pidB) {
		t.Errorf("process %d outlived Close", pidB)
	}
	_, err := p.Call(ctx, "b", "tester", "everything__echo", json.RawMessage(`{"message":"x"}`))
	asError(t, err, "shutting down")
}

// TestEndSessionDuringCall: ending the session of a call in flight fails that call
// at once with an *Error instead of waiting for the server.
func TestEndSessionDuringCall(t *testing.T) {
	p := newPool(t, Options{}, everything(t))
	ctx := t.Context()
	if _, err := p.Call(ctx, "s", "tester", "everything__echo", json.RawMessage(`{"message":"warm up"}`)); err != nil {
		t.Fatal(err)
	}
	s := live(t, p, "s", "everything")
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, "s", "tester", "everything__trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":30}`))
		done <- err
	}()
	eventually(t, 5*time.Second, "the long call is in flight", func() bool { return s.callingTool() != "" })
	p.EndSession("s")
	if alive(s.cmd.Process.Pid) {
		t.Error("process outlived EndSession")
	}
	select {
	case err := <-done:
		asError(t, err, "MCP server everything was stopped: the session ended")
	case <-time.After(5 * time.Second):
		t.Fatal("the call outlived its session")
	}
}

// TestIdleReap: a session unused for the idle timeout loses its process.
func TestIdleReap(t *testing.T) {
	p := newPool(t, Options{IdleTimeout: 200 * time.Millisecond}, everything(t))
	if _, err := p.Call(t.Context(), "s", "tester", "everything__echo", json.RawMessage(`{"message":"x"}`)); err != nil {
		t.Fatal(err)
	}
	s := live(t, p, "s", "everything")
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("idle session was never reaped")
	}
	if alive(s.cmd.Process.Pid) {
		t.Error("idle process was not waited")
	}
}

// TestElicitation: server-everything's elicitation tool reaches Options.Elicit with
// the session, server and tool, and the answer reaches the tool; without Elicit the
// request is declined.
func TestElicitation(t *testing.T) {
	type asked struct{ sid, server, tool, message string }
	got := make(chan asked, 1)
	elicit := func(ctx context.Context, sid, _, server, tool string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		got <- asked{sid, server, tool, params.Message}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace"}}, nil
	}
	p := newPool(t, Options{Elicit: elicit}, everything(t))
	if _, err := p.Tools(t.Context(), "s", "tester"); err != nil { // the tool is registered once the client's capabilities are known
		t.Fatal(err)
	}
	res, err := p.Call(t.Context(), "s", "tester", "everything__trigger-elicitation-request", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if out := text(t, res); !strings.Contains(out, "Name: Ada Lovelace") {
		t.Errorf("tool answered %q", out)
	}
	select {
	case a := <-got:
		if a.sid != "s" || a.server != "everything" || a.tool != "trigger-elicitation-request" || a.message == "" {
			t.Errorf("Elicit saw %+v", a)
		}
	default:
		t.Error("Elicit was not asked")
	}

	declining := newPool(t, Options{}, everything(t))
	res, err = declining.Call(t.Context(), "s", "tester", "everything__trigger-elicitation-request", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if out := text(t, res); !strings.Contains(out, "declined") {
		t.Errorf("without Elicit the tool answered %q", out)
	}
}

// TestConcurrentFirstCalls: calls racing to open the same upstream session share one
// process.
func TestConcurrentFirstCalls(t *testing.T) {
	var started atomic.Int64
	p := New(&Config{Servers: []Server{everything(t)}}, Options{Log: slog.New(countingHandler{
		Handler: slog.NewTextHandler(t.Output(), nil), msg: "mcp server started", n: &started,
	})})
	t.Cleanup(func() { p.Close() })
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			msg := fmt.Sprintf("call %d", i)
			res, err := p.Call(t.Context(), "s", "tester", "everything__echo", json.RawMessage(fmt.Sprintf(`{"message":%q}`, msg)))
			if err != nil {
				t.Error(err)
				return
			}
			if got := text(t, res); got != "Echo: "+msg {
				t.Errorf("echo answered %q, want %q", got, "Echo: "+msg)
			}
		})
	}
	wg.Wait()
	if n := started.Load(); n != 1 {
		t.Errorf("%d processes started for one session", n)
	}
}

// countingHandler counts the log records with one message.
type countingHandler struct {
	slog.Handler
	msg string
	n   *atomic.Int64
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return h.Handler.Handle(ctx, r)
}

func (h countingHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return countingHandler{h.Handler.WithAttrs(a), h.msg, h.n}
}

func (h countingHandler) WithGroup(g string) slog.Handler {
	return countingHandler{h.Handler.WithGroup(g), h.msg, h.n}
}
