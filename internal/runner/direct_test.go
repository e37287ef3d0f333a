package runner_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/runner"
)

// TestCallsShareConnections: calls one after the other reuse one kept-alive
// connection, and calls at the same time each get their own.
func TestCallsShareConnections(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]int{}
	release := make(chan struct{})
	held := make(chan struct{}, 3)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr]++
		mu.Unlock()
		if r.URL.Path == "/v1/sessions/hold/mcp/execute" {
			held <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, `{"result":{}}`)
	}))
	defer ts.Close()
	c, err := runner.New(ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := c.Execute(context.Background(), "s", "tools/list", nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(conns) != 1 {
		t.Fatalf("5 calls in a row used %d connections, want 1", len(conns))
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Go(func() {
			if _, err := c.Execute(context.Background(), "hold", "tools/list", nil); err != nil {
				t.Error(err)
			}
		})
	}
	for i := 0; i < 3; i++ {
		<-held // all three are in the runner at once
	}
	close(release)
	wg.Wait()
	if len(conns) != 3 {
		t.Fatalf("3 calls at once used %d connections in all, want 3 (one of them the kept one)", len(conns))
	}
}

// TestRunnerClosesIdleConnection: a kept connection the runner closed is not used;
// the next call goes out on a new one.
func TestRunnerClosesIdleConnection(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"result":{"n":1}}`)
	}))
	defer ts.Close()
	c, err := runner.New(ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Execute(context.Background(), "s", "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	ts.CloseClientConnections()
	for i := 0; i < 3; i++ {
		if raw, err := c.Execute(context.Background(), "s", "tools/list", nil); err != nil || string(raw) != `{"result":{"n":1}}` {
			t.Fatalf("after the runner closed the idle connection: %s %v", raw, err)
		}
	}
}

// TestChunkedAndClosedAnswers: an answer without a length (chunked, or up to the
// close) is read whole; one over the cap is refused.
func TestChunkedAndClosedAnswers(t *testing.T) {
	big := strings.Repeat("x", 16<<20)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/sessions/chunked/mcp/execute":
			_, _ = io.WriteString(w, `{"result":`)
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, `"ok"}`)
		case "/v1/sessions/close/mcp/execute":
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, `{"result":"closed"}`)
		case "/v1/sessions/big/mcp/execute":
			_, _ = io.WriteString(w, `"`+big+`"`)
		}
	}))
	defer ts.Close()
	c, err := runner.New(ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for sid, want := range map[string]string{"chunked": `{"result":"ok"}`, "close": `{"result":"closed"}`} {
		for i := 0; i < 2; i++ {
			if raw, err := c.Execute(context.Background(), sid, "tools/list", nil); err != nil || string(raw) != want {
				t.Fatalf("%s: %s %v", sid, raw, err)
			}
		}
	}
	var re *runner.Error
	if _, err := c.Execute(context.Background(), "big", "tools/list", nil); !errors.As(err, &re) || re.Msg != "the runner's answer is too large" {
		t.Fatalf("a 16 MiB answer: %v", err)
	}
}

// TestCancelWhileRunning: a call whose caller goes away ends at once with the
// context's error, while the runner still holds it.
func TestCancelWhileRunning(t *testing.T) {
	arrived := make(chan struct{})
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-done
	}))
	defer ts.Close()
	defer close(done)
	c, err := runner.New(ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	if _, err := c.Execute(ctx, "s", "tools/call", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while the runner ran the tool: %v", err)
	}
}

// TestUnreachableRunner: nobody listening is a *runner.Error a client may read.
func TestUnreachableRunner(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := runner.New("http://"+addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var re *runner.Error
	if _, err := c.Execute(context.Background(), "s", "tools/list", nil); !errors.As(err, &re) || re.Msg != "the runner could not be reached" {
		t.Fatalf("nobody listening: %v", err)
	}
}
