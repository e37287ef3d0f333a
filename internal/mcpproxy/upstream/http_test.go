package upstream

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingHTTP runs the real server-everything in its streamable-HTTP mode on a
// free port and returns its endpoint and process.
func everythingHTTP(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	stdio := everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	l.Close()

	cmd := exec.Command(stdio.Command, stdio.Args[0], "streamableHttp")
	cmd.Env = serverEnv(map[string]string{"PORT": port})
	cmd.Stdout, cmd.Stderr = t.Output(), t.Output()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	eventually(t, 15*time.Second, "server-everything listens on "+addr, func() bool {
		select {
		case <-exited:
			t.Fatalf("server-everything exited: %v", cmd.ProcessState)
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/mcp", cmd
}

// goUpstream is an official Go SDK server on httptest that requires a bearer token
// and answers echo with structured content too.
func goUpstream(t *testing.T, token string) (string, *atomic.Int64) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-upstream", Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	type out struct {
		Echo string `json:"echo"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes back the input string"},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + a.Message}}}, out{Echo: a.Message}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var authorized atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL + "/mcp", &authorized
}

// TestHTTPUpstreams: a streamable-HTTP server lists and answers through the pool,
// whether it speaks the 2025 protocol with sessions (server-everything, TypeScript
// SDK) or 2026-07-28 (Go SDK, which also checks the configured header).
func TestHTTPUpstreams(t *testing.T) {
	everythingURL, _ := everythingHTTP(t)
	goURL, authorized := goUpstream(t, "s3cret")
	for _, tc := range []struct {
		name    string
		server  Server
		wantOut string
		check   func(t *testing.T, res json.RawMessage)
	}{
		{name: "server-everything", server: Server{Name: "remote", URL: everythingURL, Timeout: 30 * time.Second}},
		{
			name:   "go sdk with a bearer token",
			server: Server{Name: "remote", URL: goURL, Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: 30 * time.Second},
			check: func(t *testing.T, res json.RawMessage) {
				var r struct{ StructuredContent map[string]string }
				if err := json.Unmarshal(res, &r); err != nil || r.StructuredContent["echo"] != "over http" {
					t.Errorf("structuredContent lost: %s", res)
				}
				if authorized.Load() == 0 {
					t.Error("no request carried the configured Authorization header")
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, Options{}, tc.server)
			tools, err := p.Tools(t.Context(), "s", "tester")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, raw := range tools {
				var tool struct{ Name string }
				json.Unmarshal(raw, &tool)
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "remote__echo") {
				t.Fatalf("tools %v lack remote__echo", names)
			}
			res, err := p.Call(t.Context(), "s", "tester", "remote__echo", json.RawMessage(`{"message":"over http"}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "Echo: over http" {
				t.Errorf("echo answered %q", got)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
			if s := live(t, p, "s", "remote"); s.cs.ID() == "" && tc.name == "server-everything" {
				t.Error("no MCP session with server-everything")
			}
		})
	}
}

// TestHTTPUpstreamWrongHeader: a remote server that refuses Gatehouse is an *Error,
// not a hang, and is left out of the listing.
func TestHTTPUpstreamWrongHeader(t *testing.T) {
	url, _ := goUpstream(t, "s3cret")
	p := newPool(t, Options{}, Server{Name: "remote", URL: url, Headers: map[string]string{"Authorization": "Bearer wrong"}, Timeout: 30 * time.Second})
	_, err := p.Call(t.Context(), "s", "tester", "remote__echo", json.RawMessage(`{"message":"x"}`))
	asError(t, err, "MCP server remote could not be reached")
	tools, err := p.Tools(t.Context(), "s", "tester")
	if err != nil || len(tools) != 0 {
		t.Errorf("Tools = %d tools, %v; want none, no error", len(tools), err)
	}
}

// TestHTTPUpstreamKilled: the remote server dying gives an *Error promptly.
func TestHTTPUpstreamKilled(t *testing.T) {
	url, cmd := everythingHTTP(t)
	p := newPool(t, Options{}, Server{Name: "remote", URL: url, Timeout: 30 * time.Second})
	if _, err := p.Call(t.Context(), "s", "tester", "remote__echo", json.RawMessage(`{"message":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := p.Call(t.Context(), "s", "tester", "remote__echo", json.RawMessage(`{"message":"x"}`))
	asError(t, err, "MCP server remote")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("reported after %v", d)
	}
	t.Log(strconv.Quote(err.Error()))
}
