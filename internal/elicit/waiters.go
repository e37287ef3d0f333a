package elicit

import (
	"sync"
	"sync/atomic"

	"github.com/gatehouse-dev/gatehouse/models"
)

// waiters maps an elicitation id to the parked requests waiting on it. A wake carries
// either nothing — a signal to re-read the row — or, when this process committed the
// decision itself, the decided row, which saves the woken request a database read.
// Each waiting channel may come with a notify function, called after a wake is put
// in it: a parked request with no goroutine of its own learns that way that it has
// something to read (Waiter.poke).
type waiters struct {
	mu sync.Mutex
	m  map[string]waiterSet
	// deciding is the prompts this process is deciding right now, each with how many
	// decisions are in flight and whether a wake for it came meanwhile (see
	// startDeciding).
	deciding map[string]*deciding
}

// deciding is one prompt's decisions in flight here.
type deciding struct {
	n       int
	noticed bool
}

// waiterSet is the waits on one prompt: nearly always one, so a slice rather than a
// map of its own — with thousands parked, a map each was a tenth of what a parked
// request kept.
type waiterSet = []waiting

// waiting is one registered wait: its channel and what to call after a wake is put
// in it.
type waiting struct {
	c      chan wake
	notify func()
}

// wake is what a woken waiter receives. row is the decided row (nil: re-read it);
// answered, set with row, is to be called once the woken request has sent its answer
// (see Waiter.WaitToAnswer).
type wake struct {
	row      *models.Elicitation
	answered func()
}

func newWaiters() *waiters {
	return &waiters{m: map[string]waiterSet{}, deciding: map[string]*deciding{}}
}

// startDeciding marks id as being decided by this process until doneDeciding. A wake
// for id meanwhile — on Postgres the decision's own NOTIFY, which reaches this
// process's listener before the deciding statement's answer reaches the decider — is
// held back: woken by it, the parked request re-read the row from the database, a
// round trip before its answer that the decider, about to hand over the decided row
// (wakeWith), saves.
func (w *waiters) startDeciding(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.deciding[id]
	if d == nil {
		d = &deciding{}
		w.deciding[id] = d
	}
	d.n++
}

// doneDeciding ends a startDeciding and reports whether a wake for id was held back
// meanwhile: one the caller must give (wake) unless it hands over a decided row —
// the wake may have been another process's decision, which won.
func (w *waiters) doneDeciding(id string) (heldBack bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.deciding[id]
	if d == nil {
		return false
	}
	if d.n--; d.n == 0 {
		delete(w.deciding, id)
	}
	heldBack, d.noticed = d.noticed, false
	return heldBack
}

// ids lists the prompts someone here waits on (whose leases this process renews).
func (w *waiters) ids() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.m))
	for id := range w.m {
		out = append(out, id)
	}
	return out
}

// has reports whether someone here waits on id.
func (w *waiters) has(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m[id]) > 0
}

// add registers a wait on id: wakes come on the returned channel, each followed by a
// call to notify when it is not nil. notify runs with the registry locked: it must not
// block or call back into it.
func (w *waiters) add(id string, notify func()) chan wake {
	c := make(chan wake, 1)
	w.mu.Lock()
	w.m[id] = append(w.m[id], waiting{c, notify})
	w.mu.Unlock()
	return c
}

// remove unregisters c. A decider's wake it never took is acknowledged, so the
// decider does not hold back publishing for it.
func (w *waiters) remove(id string, c chan wake) {
	w.mu.Lock()
	set := w.m[id]
	for i := range set {
		if set[i].c != c {
			continue
		}
		if len(set) == 1 {
			delete(w.m, id)
			break
		}
		last := len(set) - 1
		set[i], set[last] = set[last], waiting{}
		w.m[id] = set[:last]
		break
	}
	w.mu.Unlock()
	select {
	case wk := <-c:
		if wk.answered != nil {
			wk.answered()
		}
	default:
	}
}

// total reports how many requests are parked right now.
func (w *waiters) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, set := range w.m {
		n += len(set)
	}
	return n
}

// wake signals the waiters of id; an empty id signals every waiter (after a lost bus
// connection anything may have been decided).
func (w *waiters) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id == "" {
		for _, set := range w.m {
			signal(set, nil)
		}
		return
	}
	if d := w.deciding[id]; d != nil {
		d.noticed = true // given by doneDeciding's caller, or answered by its row
		return
	}
	signal(w.m[id], nil)
}

// wakeWith hands a row this process just decided to its waiters. The returned channel
// closes once every woken request has sent its answer.
func (w *waiters) wakeWith(row *models.Elicitation) <-chan struct{} {
	answered := make(chan struct{})
	var pending atomic.Int64
	pending.Store(1) // released below, once every waiter was handed the row
	ack := func() {
		if pending.Add(-1) == 0 {
			close(answered)
		}
	}
	w.mu.Lock()
	for _, wt := range w.m[row.ID] {
		pending.Add(1)
		var once sync.Once
		select {
		case wt.c <- wake{row: row, answered: func() { once.Do(ack) }}:
			if wt.notify != nil {
				wt.notify()
			}
		default: // already signalled: it re-reads the row and answers on its own time
			ack()
		}
	}
	w.mu.Unlock()
	ack()
	return answered
}

func signal(set waiterSet, row *models.Elicitation) {
	for _, wt := range set {
		select {
		case wt.c <- wake{row: row}:
			if wt.notify != nil {
				wt.notify()
			}
		default: // already signalled
		}
	}
}

// notifyAll calls every notify function: the server is shutting down, which each
// parked request checks for once notified.
func (w *waiters) notifyAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, set := range w.m {
		for _, wt := range set {
			if wt.notify != nil {
				wt.notify()
			}
		}
	}
}
