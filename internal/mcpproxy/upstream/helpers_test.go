package upstream

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
)

// everything is the real @modelcontextprotocol/server-everything from npm as a
// stdio server.
func everything(t *testing.T) Server {
	t.Helper()
	node := testnpm.Node(t)
	js := testnpm.NodeModule(t, "@modelcontextprotocol/server-everything/dist/index.js")
	return Server{Name: "everything", Command: node, Args: []string{js, "stdio"}, Timeout: 30 * time.Second}
}

func newPool(t *testing.T, o Options, servers ...Server) *Pool {
	t.Helper()
	o.Log = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := New(&Config{Servers: servers}, o)
	t.Cleanup(func() { p.Close() })
	return p
}

// text joins the text content of a CallToolResult.
func text(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var res struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// live returns the running session of (sid, server) once its handshake is done.
func live(t *testing.T, p *Pool, sid, server string) *session {
	t.Helper()
	p.mu.Lock()
	s := p.sessions[key{sid, server}]
	p.mu.Unlock()
	if s == nil {
		t.Fatalf("no session for %s/%s", sid, server)
	}
	<-s.ready
	if s.err != nil {
		t.Fatalf("session %s/%s: %v", sid, server, s.err)
	}
	return s
}

func pidOf(t *testing.T, p *Pool, sid, server string) int {
	t.Helper()
	s := live(t, p, sid, server)
	if s.cmd == nil {
		t.Fatalf("%s/%s has no process", sid, server)
	}
	return s.cmd.Process.Pid
}

// alive reports whether pid names a process, zombies included: a process that
// exited but was not waited for still counts, so "not alive" means reaped.
func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// eventually waits for cond, checking every 10ms, failing after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// asError requires err to be an *Error whose message contains want.
func asError(t *testing.T, err error, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *Error containing %q", err, err, want)
	}
	if !strings.Contains(e.Msg, want) {
		t.Fatalf("err = %q, want it to contain %q", e.Msg, want)
	}
}
