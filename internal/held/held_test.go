package held

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const deadline = 10 * time.Second

// holdServer serves every request by holding it: wait runs on the held goroutine;
// returned is signalled when the handler has returned.
func holdServer(t *testing.T, set *Set, wait func(ctx context.Context) Answer) (addr string, returned <-chan bool) {
	t.Helper()
	ret := make(chan bool, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("X-Request-Id", "req_1")
		ret <- set.Hold(w, r, func(ctx context.Context, answer func(Answer)) { answer(wait(ctx)) })
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), ret
}

func post(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, "POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	return conn
}

func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("no %s within %v", what, deadline)
		panic("unreachable")
	}
}

// TestHoldAnswersOnTheConnection: the handler returns while the request is held; the
// answer comes later on the same connection with the headers the handler set, a
// Content-Length, and Connection: close, and then the connection closes.
func TestHoldAnswersOnTheConnection(t *testing.T) {
	var set Set
	release := make(chan struct{})
	sent := make(chan error, 1)
	addr, returned := holdServer(t, &set, func(ctx context.Context) Answer {
		<-release
		return Answer{Status: http.StatusOK, ContentType: "application/json", Body: []byte(`{"behavior":"allow"}`),
			Header: http.Header{"Retry-After": {"2"}}, Sent: func(err error) { sent <- err }}
	})
	conn := post(t, addr)
	if !within(t, returned, "handler return") {
		t.Fatal("Hold refused an HTTP/1.1 request")
	}
	close(release) // only now, with the handler long returned, is there an answer
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != `{"behavior":"allow"}` || resp.ContentLength != int64(len(body)) {
		t.Fatalf("answer %d %q (Content-Length %d)", resp.StatusCode, body, resp.ContentLength)
	}
	if !resp.Close || resp.Header.Get("X-Request-Id") != "req_1" || resp.Header.Get("Retry-After") != "2" ||
		resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v (close %v)", resp.Header, resp.Close)
	}
	if err := within(t, sent, "Sent"); err != nil {
		t.Fatalf("Sent(%v)", err)
	}
	conn.SetReadDeadline(time.Now().Add(deadline))
	if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after the answer: read %d, %v; want the connection closed", n, err)
	}
}

// TestHoldSeesTheClientHangUp: a client that hangs up ends the wait's context; its
// answer (none) is not written, and Sent still runs.
func TestHoldSeesTheClientHangUp(t *testing.T) {
	var set Set
	ended := make(chan struct{})
	sent := make(chan error, 1)
	addr, returned := holdServer(t, &set, func(ctx context.Context) Answer {
		<-ctx.Done()
		close(ended)
		return Answer{Sent: func(err error) { sent <- err }}
	})
	conn := post(t, addr)
	within(t, returned, "handler return")
	select {
	case <-ended:
		t.Fatal("the wait ended while the client was still there")
	default:
	}
	conn.Close()
	within(t, ended, "end of the wait after the hang-up")
	within(t, sent, "Sent")
}

// TestWaitWaitsForHeldAnswers: Wait returns once every held request has answered, and
// afterwards nothing more is held.
func TestWaitWaitsForHeldAnswers(t *testing.T) {
	var set Set
	release := make(chan struct{})
	addr, returned := holdServer(t, &set, func(ctx context.Context) Answer {
		<-release
		return Answer{Status: http.StatusOK}
	})
	conn := post(t, addr)
	within(t, returned, "handler return")
	waited := make(chan struct{})
	go func() { set.Wait(context.Background()); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned with a request still held")
	case <-time.After(50 * time.Millisecond): // proving a negative: Wait must still be blocked
	}
	close(release)
	within(t, waited, "Wait")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 200 || resp.ContentLength != 0 {
		t.Fatalf("answer %v %v", resp, err)
	}
	post(t, addr)
	if within(t, returned, "handler return") {
		t.Fatal("Hold held a request after Wait")
	}
}

// TestHangUpEndsOnlyItsOwnWait: with several requests held at once (one poller watches
// them all), the client that hangs up ends its own wait and no other; bytes a client
// sends while it waits (a pipelined request) are dropped and do not end its wait, and
// it still gets its answer.
func TestHangUpEndsOnlyItsOwnWait(t *testing.T) {
	var set Set
	ended := make(chan string, 4)
	release := make(chan struct{})
	addr, returned := holdServer(t, &set, func(ctx context.Context) Answer {
		select {
		case <-ctx.Done():
			ended <- "hung up"
			return Answer{}
		case <-release:
			return Answer{Status: http.StatusOK, ContentType: "application/json", Body: []byte(`{}`)}
		}
	})
	stays, chatty, leaves := post(t, addr), post(t, addr), post(t, addr)
	for range 3 {
		within(t, returned, "handler return")
	}
	if _, err := io.WriteString(chatty, "GET /more HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	leaves.Close()
	if got := within(t, ended, "end of the wait after the hang-up"); got != "hung up" {
		t.Fatalf("ended %q", got)
	}
	close(release)
	for _, conn := range []net.Conn{stays, chatty} {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("a client still waiting got %v %v, want its answer", resp, err)
		}
	}
	select {
	case got := <-ended:
		t.Fatalf("another wait ended too: %q", got)
	default:
	}
}

// TestWatchByReadingStops: the goroutine watcher (where there is no poller) reports a
// hang-up, and once stopped it neither reports one nor keeps reading: the connection
// can be read again by its owner.
func TestWatchByReadingStops(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	hung := make(chan struct{}, 1)
	stop := watchByReading(server, func() { hung <- struct{}{} })
	stop()
	go client.Write([]byte("x"))
	b := make([]byte, 1)
	server.SetReadDeadline(time.Now().Add(deadline))
	if n, err := server.Read(b); n != 1 || err != nil {
		t.Fatalf("read after stop: %d %v", n, err)
	}
	select {
	case <-hung:
		t.Fatal("a stopped watcher reported a hang-up")
	default:
	}
	stop = watchByReading(server, func() { hung <- struct{}{} })
	defer stop()
	client.Close()
	within(t, hung, "hang-up")
}
