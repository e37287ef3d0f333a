package runner

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"
)

// maxIdleConns bounds the connections kept open to the runner between calls: enough
// for every call of a busy server to find one (a dial per call would cost more than
// the call), few enough that an idle server holds little.
const maxIdleConns = 64

// idleTimeout is how long an unused connection is kept.
const idleTimeout = 90 * time.Second

// direct is the HTTP/1.1 client of a plain-http runner: each call writes its request
// and reads the answer on the caller's goroutine over a kept-alive connection. The
// standard library's Transport hands every request to two goroutines of the
// connection (a writer and a reader) and back over channels; for a tool call that is
// passed straight through, those hand-offs cost more CPU and wake-ups than the call
// itself. It is used only where the Transport would add nothing: http, no proxy, no
// user info in the URL.
type direct struct {
	addr string // host:port to dial
	host string // the Host header
	dial net.Dialer

	mu   sync.Mutex
	idle []*directConn // most recently used last
}

type directConn struct {
	c    net.Conn
	br   *bufio.Reader
	wbuf []byte
	used time.Time
}

// post sends body to path (escaped, from the root) and returns the status and answer.
// The error is the context's when it ended first, errTooLarge for an answer over
// maxAnswerBytes, else a failure to reach the runner or read its answer.
func (d *direct) post(ctx context.Context, path string, body []byte) (int, []byte, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, nil, err
		}
		dc, reused, err := d.get(ctx)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return 0, nil, cerr
			}
			return 0, nil, err
		}
		status, answer, sent, err := d.roundTrip(ctx, dc, path, body)
		if err != nil && reused && !sent && ctx.Err() == nil {
			continue // the runner closed it as we wrote: nothing reached it, send again
		}
		return status, answer, err
	}
}

// errTooLarge is an answer over maxAnswerBytes.
var errTooLarge = errors.New("the runner's answer is too large")

// roundTrip runs one exchange on dc, keeping dc for the next call when the answer was
// read whole and the runner did not ask to close. sent reports whether any of the
// request reached the connection.
func (d *direct) roundTrip(ctx context.Context, dc *directConn, path string, body []byte) (status int, answer []byte, sent bool, err error) {
	stop := context.AfterFunc(ctx, func() { _ = dc.c.SetDeadline(time.Unix(1, 0)) })
	keep := false
	defer func() {
		if !stop() {
			keep = false // the deadline is set: the connection is spent
			if cerr := ctx.Err(); cerr != nil {
				err = cerr
			}
		}
		if keep {
			d.put(dc)
		} else {
			_ = dc.c.Close()
		}
	}()
	w := append(dc.wbuf[:0], "POST "...)
	w = append(w, path...)
	w = append(w, " HTTP/1.1\r\nHost: "...)
	w = append(w, d.host...)
	w = append(w, "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: "...)
	w = strconv.AppendInt(w, int64(len(body)), 10)
	w = append(w, "\r\n\r\n"...)
	w = append(w, body...)
	if cap(w) <= 64<<10 {
		dc.wbuf = w
	}
	if n, werr := dc.c.Write(w); werr != nil {
		return 0, nil, n > 0, werr
	}
	status, answer, keep, err = readAnswerOn(dc.br)
	return status, answer, true, err
}

// get takes the most recently used live connection, or dials a new one.
func (d *direct) get(ctx context.Context) (*directConn, bool, error) {
	for {
		d.mu.Lock()
		n := len(d.idle)
		if n == 0 {
			d.mu.Unlock()
			break
		}
		dc := d.idle[n-1]
		d.idle[n-1] = nil
		d.idle = d.idle[:n-1]
		d.mu.Unlock()
		if time.Since(dc.used) < idleTimeout && alive(dc.c) {
			return dc, true, nil
		}
		_ = dc.c.Close()
	}
	c, err := d.dial.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, false, err
	}
	return &directConn{c: c, br: bufio.NewReaderSize(c, 4096)}, false, nil
}

// put keeps dc for the next call (or closes it when enough are kept).
func (d *direct) put(dc *directConn) {
	dc.used = time.Now()
	d.mu.Lock()
	if len(d.idle) < maxIdleConns {
		d.idle = append(d.idle, dc)
		dc = nil
	}
	d.mu.Unlock()
	if dc != nil {
		_ = dc.c.Close()
	}
}
