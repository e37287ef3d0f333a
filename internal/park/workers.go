package park

import (
	"sync/atomic"
	"time"
)

// workerIdle is how long a worker waits for the next request's work before it ends.
const workerIdle = time.Second

// workers runs each slot's work on a goroutine that lives on for a moment after it,
// so the next request's work starts on a stack already grown. Decoding a hook, the
// rules and the database driver take a goroutine's stack to tens of KiB: a goroutine
// of its own for each request grew (copied) its stack several times over, a
// twentieth of the server's CPU under a steady stream of requests a rule answers.
// There are about as many workers as slots in use, and an idle one ends after
// workerIdle, so a burst leaves nothing behind.
type workers struct {
	ready   chan func()  // unbuffered: a send succeeds only when a worker is waiting
	started atomic.Int64 // workers started, ever
	waiting atomic.Int64 // workers waiting for work now
	ended   atomic.Int64 // workers ended idle, ever
	idleFor time.Duration
}

func newWorkers() *workers { return &workers{ready: make(chan func()), idleFor: workerIdle} }

// run runs f on an idle worker, or on a new one when none is idle.
func (w *workers) run(f func()) {
	select {
	case w.ready <- f:
	default:
		w.started.Add(1)
		go w.serve(f)
	}
}

// serve runs f, then whatever work comes next, until it has waited workerIdle for it.
func (w *workers) serve(f func()) {
	idle := time.NewTimer(w.idleFor)
	defer idle.Stop()
	for {
		f()
		idle.Reset(w.idleFor)
		w.waiting.Add(1)
		select {
		case f = <-w.ready:
			w.waiting.Add(-1)
		case <-idle.C:
			w.waiting.Add(-1)
			w.ended.Add(1)
			return
		}
	}
}
