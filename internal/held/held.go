// Package held takes a parked HTTP/1.x request off net/http while it waits for a
// person, and answers it on the raw connection.
//
// A request parked in its handler keeps all of net/http's per-connection state: the
// connection's 4 KiB read and write buffers, the response's buffer, the request, and two
// goroutines — the connection's, whose stack grew through the middleware chain, and its
// background reader. With thousands parked that was most of what a parked request cost
// (44–50 KiB each, against 16 KiB for an asyncio peer). A held request keeps the
// connection and what its waiter needs — no goroutine: its answer is written by
// whoever calls answer (elicit.Waiter.Then starts one when the verdict comes); whether
// the client hangs up meanwhile is watched for every held connection by one poller
// (watchHangUp), not by a goroutine reading each.
//
// A held connection answers once and closes (`Connection: close`): net/http cannot take
// a hijacked connection back for keep-alive. Agents' hooks send one request per
// connection anyway.
package held

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// writeTimeout bounds writing an answer to a client that stopped reading.
const writeTimeout = 10 * time.Second

// Answer is what a held request answers: a status and a body (none when empty).
type Answer struct {
	// Status 0 answers nothing: the client is gone.
	Status int
	// ContentType is the body's type; unused without a body.
	ContentType string
	Body        []byte
	// Header, when set, adds headers (Retry-After, say).
	Header http.Header
	// Sent, when set, is called once the answer is out (err nil) or could not be
	// written, or — Status 0 — right away.
	Sent func(err error)
}

// Set tracks held requests, so a shutdown can wait until each has answered.
type Set struct {
	wg sync.WaitGroup
	mu sync.Mutex
	// closed is set by Wait: no request is held after it (Hold refuses and the request
	// waits in its handler, where the server's own shutdown tracks it).
	closed bool
}

// Hold takes the connection of r — whose body the caller has read — off net/http
// and calls start on a goroutine of its own, with a context that ends when the client
// hangs up and answer, which writes its Answer with the headers already set on w.
// answer must be called exactly once (later calls do nothing), from any goroutine:
// start may hand it on and return, so that nothing waits while the request does
// (elicit.Waiter.Then). The caller's handler must return at once and write nothing
// more.
//
// Hold returns false, having done nothing, when the connection cannot be taken
// (HTTP/2, a recorder in tests, a server shutting down): the caller waits in its
// handler instead.
func (s *Set) Hold(w http.ResponseWriter, r *http.Request, start func(ctx context.Context, answer func(Answer))) bool {
	if r.ProtoMajor != 1 {
		return false
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.wg.Add(1)
	s.mu.Unlock()
	// The headers set so far (the request id, security headers), rendered now: a few
	// hundred bytes instead of a map per held request.
	var head bytes.Buffer
	if err := w.Header().WriteSubset(&head, ownHeaders); err != nil {
		s.wg.Done()
		return false
	}
	header := bytes.Clone(head.Bytes()) // not the buffer's spare capacity: kept while waiting
	// What net/http read past this request (a pipelined request) cannot be served
	// here and is dropped; the answer's Connection: close tells the client to resend it.
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.wg.Done()
		return false
	}
	// A context of its own, not the request's: the request's chain of contexts (the
	// connection's, the request's, their values), all ended once the handler returns,
	// would be kept for nothing while the request waits.
	ctx := newHangUpCtx()
	hungUp := ctx.hangUp
	proto := r.Proto
	stop := watchHangUp(conn, hungUp)
	var once sync.Once
	answer := func(a Answer) {
		once.Do(func() {
			defer s.wg.Done()
			defer hungUp()
			stop()
			var err error
			if a.Status != 0 {
				err = write(conn, proto, header, a)
			}
			if a.Sent != nil {
				a.Sent(err)
			}
			if err == nil && a.Status != 0 {
				lingerClose(conn)
				return
			}
			conn.Close()
		})
	}
	go start(ctx, answer)
	return true
}

// lingerTimeout bounds how long a connection stays half-closed after its answer.
const lingerTimeout = 500 * time.Millisecond

// lingerClose closes conn after its answer the way net/http does when it did not read
// a whole request (an oversized body, cut off): the write side first, then — once the
// client has closed too, or after lingerTimeout — the rest. Closing at once while the
// client is still sending would reset the connection, and a reset can discard the
// answer before the client reads it.
func lingerClose(conn net.Conn) {
	if cw, ok := conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = conn.SetReadDeadline(time.Now().Add(lingerTimeout))
		drain(conn)
	}
	conn.Close()
}

// drain reads conn, dropping what it reads, until it fails (end of stream, a deadline).
func drain(conn net.Conn) {
	b := make([]byte, 512)
	for {
		if _, err := conn.Read(b); err != nil {
			return
		}
	}
}

// Wait stops holding new requests and waits, bounded by ctx, until every held request
// has answered.
func (s *Set) Wait(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// watchByReading watches conn for a hang-up from a goroutine blocked reading it: where
// there is no poller for held connections (watchHangUp). Bytes a client sends meanwhile
// (the rest of an oversized body, a pipelined request) are not a request to serve here
// and are dropped. stop ends the goroutine and returns once it has.
func watchByReading(conn net.Conn, hungUp func()) (stop func()) {
	done := make(chan struct{})
	var stopping atomic.Bool
	go func() {
		defer close(done)
		// One byte at a time while waiting — a bigger buffer would be most of what a
		// held request keeps — and only a client that does send more gets a bigger one.
		b := make([]byte, 1)
		for {
			n, err := conn.Read(b)
			if err != nil {
				if !stopping.Load() {
					hungUp()
				}
				return
			}
			if n > 0 && len(b) == 1 {
				b = make([]byte, 4096)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			stopping.Store(true)
			_ = conn.SetReadDeadline(time.Unix(1, 0)) // wakes the read
			<-done
			_ = conn.SetReadDeadline(time.Time{})
		})
	}
}

// hangUpCtx is a held request's context: done once its client hangs up (or its wait
// ends). Not a context.WithCancel: the database calls made under it while preparing
// register as its children, and a cancelCtx keeps the map they were registered in for
// as long as it lives — a few hundred bytes, for each of thousands of waits. Children
// register through AfterFunc, which keeps nothing once they are gone.
type hangUpCtx struct {
	done  chan struct{}
	mu    sync.Mutex
	ended bool
	after []*func()
}

func newHangUpCtx() *hangUpCtx { return &hangUpCtx{done: make(chan struct{})} }

// hangUp ends the context and runs what AfterFunc registered, each on a goroutine of
// its own (as context.AfterFunc does); later calls do nothing.
func (c *hangUpCtx) hangUp() {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	close(c.done)
	after := c.after
	c.after = nil
	c.mu.Unlock()
	for _, f := range after {
		go (*f)()
	}
}

// AfterFunc runs f once the context ends; stop unregisters it (false: f had already
// been started). The context package derives cancellable children through it.
func (c *hangUpCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		go f()
		return func() bool { return false }
	}
	e := &f
	c.after = append(c.after, e)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.after, e)
		if i < 0 {
			return false
		}
		if c.after = slices.Delete(c.after, i, i+1); len(c.after) == 0 {
			c.after = nil
		}
		return true
	}
}

func (c *hangUpCtx) Deadline() (deadline time.Time, ok bool) { return time.Time{}, false }
func (c *hangUpCtx) Done() <-chan struct{}                   { return c.done }
func (c *hangUpCtx) Value(any) any                           { return nil }

func (c *hangUpCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// ownHeaders are the headers write sets itself.
var ownHeaders = map[string]bool{"Content-Type": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Date": true}

// write sends a in HTTP/1.x on conn, with header (what the middleware set, such as the
// request id, rendered) and Connection: close.
func write(conn net.Conn, proto string, header []byte, a Answer) error {
	if proto != "HTTP/1.0" {
		proto = "HTTP/1.1"
	}
	var b bytes.Buffer
	b.WriteString(proto + " " + strconv.Itoa(a.Status) + " " + http.StatusText(a.Status) + "\r\n")
	b.Write(header)
	own := http.Header{}
	if len(a.Body) > 0 {
		own.Set("Content-Type", a.ContentType)
	}
	own.Set("Content-Length", strconv.Itoa(len(a.Body)))
	own.Set("Connection", "close")
	own.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	for k, vs := range a.Header {
		own[k] = vs
	}
	if err := own.Write(&b); err != nil {
		return err
	}
	b.WriteString("\r\n")
	b.Write(a.Body)
	if err := conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	_, err := conn.Write(b.Bytes())
	return err
}
