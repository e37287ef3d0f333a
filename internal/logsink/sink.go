// Package logsink writes the server's log without making the request that logs pay
// for the write. Every answered request logs a line or two; written straight to
// stderr, each costs a system call on the request's own goroutine, a fair part of an
// answer that takes a few hundred microseconds. A Sink takes the line into memory and
// one goroutine writes what has gathered, so lines logged at once leave in one write
// and the request goes on at once.
//
// Lines are written in the order they were logged, and promptly: the writer starts as
// soon as a line is waiting, with no timer. What a crash can lose is what was logged
// in the moment before it and not yet written — the process's exit paths Close the
// sink, which writes everything first.
package logsink

import (
	"io"
	"sync"
)

// maxPending is how much a Sink holds before a writer waits for it to be written: a
// slow reader of the log (a full pipe) slows the server down, as it would without
// the sink, rather than letting the log grow in memory.
const maxPending = 1 << 20

// Sink is an io.Writer that hands its lines to one writing goroutine.
type Sink struct {
	out io.Writer

	mu      sync.Mutex
	room    *sync.Cond // signalled when pending is taken
	pending []byte     // lines logged and not yet taken by the writer
	spare   []byte     // the writer's last buffer, reused
	closed  bool
	wake    chan struct{}
	done    chan struct{}
}

// New returns a Sink writing to out and starts its writer; Close it.
func New(out io.Writer) *Sink {
	s := &Sink{out: out, wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.room = sync.NewCond(&s.mu)
	go s.run()
	return s
}

// Write takes a copy of p (a whole line, from a log handler) to be written. After
// Close it writes p itself.
func (s *Sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	for len(s.pending) >= maxPending && !s.closed {
		s.room.Wait()
	}
	if s.closed {
		s.mu.Unlock()
		<-s.done // after what was logged before Close
		return s.out.Write(p)
	}
	s.pending = append(s.pending, p...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // the writer is already due to run
	}
	return len(p), nil
}

// run writes what is pending until the sink is closed and nothing is left.
func (s *Sink) run() {
	defer close(s.done)
	for range s.wake {
		s.mu.Lock()
		b, closed := s.pending, s.closed
		s.pending, s.spare = s.spare[:0], nil
		s.room.Broadcast()
		s.mu.Unlock()
		if len(b) > 0 {
			_, _ = s.out.Write(b) // a log that cannot be written has nowhere to say so
		}
		if closed {
			return
		}
		s.mu.Lock()
		if cap(b) <= maxPending {
			s.spare = b
		}
		s.mu.Unlock()
	}
}

// Close writes every line logged before it and stops the writer; later lines are
// written directly. It is safe to call more than once.
func (s *Sink) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.done
		return nil
	}
	s.closed = true
	s.room.Broadcast()
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake is queued: the writer runs once more and sees closed
	}
	<-s.done
	return nil
}
