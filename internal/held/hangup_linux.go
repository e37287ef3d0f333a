package held

import (
	"errors"
	"net"
	"sync"
	"syscall"
)

// On Linux one goroutine watches every held connection for its client hanging up, with
// an epoll set of its own beside the Go runtime's: a goroutine blocked reading each
// connection cost a parked request a stack and its goroutine (about 3 KiB), where an
// epoll registration costs the kernel a few dozen bytes. The Go runtime's own poller
// has no way to say "tell me when this connection is readable" without a goroutine
// waiting in Read.

// poller is the process's hang-up watcher; nil (after start) when epoll is unavailable,
// and each connection is then watched by a goroutine of its own (watchByReading).
type poller struct {
	epfd int
	mu   sync.Mutex
	next int32
	// conns maps a registration's token (the epoll event's data) to its connection;
	// a token, unlike the descriptor's number, is never reused while registered, so a
	// stale event cannot reach a connection that took over a closed one's number.
	conns map[int32]*watched
}

type watched struct {
	rc     syscall.RawConn
	hungUp func()
}

var (
	pollerOnce sync.Once
	thePoller  *poller
)

// watchHangUp calls hungUp once conn's client hangs up (or closes its side), until
// stop is called; stop must be called before conn is read again or closed.
func watchHangUp(conn net.Conn, hungUp func()) (stop func()) {
	pollerOnce.Do(startPoller)
	if thePoller != nil {
		if stop, ok := thePoller.add(conn, hungUp); ok {
			return stop
		}
	}
	return watchByReading(conn, hungUp)
}

func startPoller() {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	thePoller = &poller{epfd: epfd, conns: map[int32]*watched{}}
	go thePoller.run()
}

// add registers conn; false when it has no descriptor to watch (not a TCP or Unix
// connection).
func (p *poller) add(conn net.Conn, hungUp func()) (stop func(), ok bool) {
	sc, isSys := conn.(syscall.Conn)
	if !isSys {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	tok := p.token()
	var cerr error
	err = rc.Control(func(fd uintptr) {
		// Level-triggered: bytes a client sends while it waits are read and dropped
		// (run), and a hang-up is seen however late the poller gets to it.
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: tok}
		cerr = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if err != nil || cerr != nil {
		return nil, false
	}
	p.conns[tok] = &watched{rc: rc, hungUp: hungUp}
	var once sync.Once
	return func() { once.Do(func() { p.remove(tok) }) }, true
}

// token is a registration token not in use; p.mu is held.
func (p *poller) token() int32 {
	for {
		p.next++
		if _, used := p.conns[p.next]; !used {
			return p.next
		}
	}
}

// remove stops watching tok's connection.
func (p *poller) remove(tok int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.conns[tok]
	if w == nil {
		return
	}
	delete(p.conns, tok)
	w.rc.Control(func(fd uintptr) { syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil) })
}

// run waits for events for as long as the process lives: one goroutine for all held
// connections, whatever their number.
func (p *poller) run() {
	events := make([]syscall.EpollEvent, 128)
	buf := make([]byte, 4096)
	for {
		n, err := syscall.EpollWait(p.epfd, events, -1)
		if err != nil {
			continue // EINTR
		}
		for _, ev := range events[:n] {
			if hungUp := p.check(ev.Fd, buf); hungUp != nil {
				hungUp()
			}
		}
	}
}

// check reads what tok's connection has: bytes a client sent while it waits (the rest
// of an oversized body, a pipelined request) are not a request to serve here and are
// dropped; end of stream or an error is the client hanging up, and check then stops
// watching it and returns its hungUp.
func (p *poller) check(tok int32, buf []byte) (hungUp func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.conns[tok]
	if w == nil {
		return nil // stopped since the event was queued
	}
	gone := false
	err := w.rc.Control(func(fd uintptr) {
		// The descriptor is non-blocking (the Go runtime's): this never waits.
		n, err := syscall.Read(int(fd), buf)
		gone = n == 0 && err == nil || err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR)
		if gone {
			syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
		}
	})
	if err != nil || gone {
		delete(p.conns, tok)
		return w.hungUp
	}
	return nil
}
