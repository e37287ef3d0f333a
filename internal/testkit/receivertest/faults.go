// Package receivertest is what the notification receivers for tests (webhooktest,
// ntfytest) share: misbehaviour to inject into the next requests they get.
package receivertest

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Fault is how a receiver misbehaves: answer Status, or hang for Hang (until the
// client gives up or the receiver closes) and then answer Status (503 when 0).
type Fault struct {
	Status int
	Hang   time.Duration
}

// Status is a Fault that answers code.
func Status(code int) Fault { return Fault{Status: code} }

// Hang is a Fault that holds the request for d: give it longer than the client's
// timeout to see the client time out.
func Hang(d time.Duration) Fault { return Fault{Hang: d} }

// Faults counts injected faults down, request by request. The zero value injects
// nothing; it is safe for concurrent use.
type Faults struct {
	mu      sync.Mutex
	fault   Fault
	left    int       // requests the fault still applies to; -1: every one
	once    sync.Once // makes closed
	release sync.Once // closes it
	closed  chan struct{}
}

// Set makes the next n requests suffer f (n = -1: every request until Set(0, …)).
func (fs *Faults) Set(n int, f Fault) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.fault, fs.left = f, n
}

// Take reports whether the request at hand suffers a fault, and which, counting it.
func (fs *Faults) Take() (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.left == 0 {
		return Fault{}, false
	}
	if fs.left > 0 {
		fs.left--
	}
	return fs.fault, true
}

// Hold serves fault f to a request: it holds the request for f.Hang (until ctx, the
// request's, ends or Release is called) and returns the status to answer.
func (fs *Faults) Hold(ctx context.Context, f Fault) int {
	if f.Hang > 0 {
		timer := time.NewTimer(f.Hang)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
		case <-fs.done():
		}
	}
	if f.Status == 0 {
		return http.StatusServiceUnavailable
	}
	return f.Status
}

// Release lets every held request go (the receiver is closing). Safe to call twice.
func (fs *Faults) Release() { fs.release.Do(func() { close(fs.done()) }) }

func (fs *Faults) done() chan struct{} {
	fs.once.Do(func() { fs.closed = make(chan struct{}) })
	return fs.closed
}
