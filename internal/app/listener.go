package app

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// shedListener keeps the server answering when the process runs out of file
// descriptors (EMFILE, or the system's ENFILE) — thousands of parked requests, each
// holding its connection, can get there.
//
// net/http already survives such an accept error: it sleeps (up to a second) and tries
// again. But a connection it cannot accept waits in the kernel's backlog, unanswered,
// until its client gives up: every other person's request — an approval, a page, a
// hook — just hangs. So the listener keeps one descriptor in reserve (/dev/null, open).
// When accepting fails for want of descriptors, it gives up the reserve, accepts the
// waiting connection with it, and — if no other descriptor has come free — answers it
// 503 with the error envelope and Retry-After (gatehouse hook and other clients retry
// such an answer) and closes it, then takes the reserve back. Connections are refused
// at once for as long as descriptors run short, and served again as soon as some come
// free.
//
// Accept is called by one goroutine (http.Server.Serve), as net/http does.
type shedListener struct {
	net.Listener
	log *slog.Logger
	// spare is the descriptor held in reserve (nil while given up or not reopened).
	spare *os.File
	// buf reads what a refused client sent, so closing does not reset its connection.
	buf []byte
	// refused counts refusals since the warning was last logged (lastLog): at most one
	// line per 10 s, with the count.
	refused int
	lastLog time.Time
}

func newShedListener(ln net.Listener, log *slog.Logger) *shedListener {
	l := &shedListener{Listener: ln, log: log, buf: make([]byte, 4096)}
	l.takeSpare()
	return l
}

// Accept returns the next connection, refusing (see shedListener) the ones that arrive
// while the process has no descriptor left for them.
func (l *shedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err == nil || !outOfDescriptors(err) {
			return c, err
		}
		// Accepting fails so even with no connection waiting (the descriptor is taken
		// first). The reserve is given up only for a connection that is there to take:
		// while it is given up any other part of the process may take its descriptor.
		if (l.spare == nil && !l.takeSpare()) || !l.pending() {
			return nil, err // net/http waits a moment (5 ms, doubling to 1 s) and tries again
		}
		l.spare.Close()
		l.spare = nil
		c, err = l.Listener.Accept() // with the reserve's descriptor
		if err != nil {
			l.takeSpare()
			return nil, err
		}
		if l.takeSpare() {
			return c, nil // descriptors came free meanwhile: serve it
		}
		l.refuse(c)
		l.takeSpare()
	}
}

// pending reports whether a connection waits to be accepted (true when the listener
// cannot tell).
func (l *shedListener) pending() bool {
	sc, ok := l.Listener.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	ready := true
	if err := rc.Control(func(fd uintptr) { ready = readable(fd) }); err != nil {
		return true
	}
	return ready
}

// takeSpare reopens the reserve descriptor; false when none is free.
func (l *shedListener) takeSpare() bool {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return false
	}
	l.spare = f
	return true
}

// refuseTimeout bounds a refusal: reading what the client sent, answering, and waiting
// for it to close.
const refuseTimeout = 250 * time.Millisecond

// refusedBody is the answer to a connection refused for want of descriptors.
const refusedBody = `{"error":{"code":"unavailable","message":"the server is out of file descriptors (too many open connections); retry shortly"}}`

var refusedAnswer = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n" +
	"Connection: close\r\nContent-Length: " + strconv.Itoa(len(refusedBody)) + "\r\n\r\n" + refusedBody)

// refuse answers c 503 and closes it. It first reads what the client has sent (its
// request, usually all there already), and after answering waits briefly for the
// client to close: closing a connection with unread data resets it, and a reset can
// discard the answer before the client reads it.
func (l *shedListener) refuse(c net.Conn) {
	l.refused++
	if now := time.Now(); now.Sub(l.lastLog) >= 10*time.Second {
		l.log.Warn("refusing connections: the process is out of file descriptors (accept: too many open files); "+
			"raise the limit (ulimit -n, LimitNOFILE) or lower --max-parked-per-person",
			"refused", l.refused, "addr", l.Addr().String())
		l.refused, l.lastLog = 0, now
	}
	_ = c.SetDeadline(time.Now().Add(refuseTimeout))
	_, _ = c.Read(l.buf)
	if _, err := c.Write(refusedAnswer); err == nil {
		if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			for {
				if _, err := c.Read(l.buf); err != nil {
					break
				}
			}
		}
	}
	c.Close()
}

// outOfDescriptors reports whether an accept failed because the process (EMFILE) or
// the system (ENFILE) has no file descriptor left.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
