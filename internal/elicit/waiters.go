package elicit

import (
	"sync"

	"github.com/gatehouse-dev/gatehouse/models"
)

// waiters maps an elicitation id to the parked requests waiting on it. A wake carries
// either nothing — a signal to re-read the row — or, when this process committed the
// decision itself, the decided row, which saves the woken request a database read.
type waiters struct {
	mu sync.Mutex
	m  map[string]map[chan *models.Elicitation]struct{}
	// graces holds, per id, the generation of the latest grace period started by a
	// hang-up; an older grace timer that fires finds a newer generation and stands down.
	graces map[string]uint64
	gen    uint64
}

type waiterSet = map[chan *models.Elicitation]struct{}

func newWaiters() *waiters { return &waiters{m: map[string]waiterSet{}, graces: map[string]uint64{}} }

// startGrace records that a waiter on id hung up and returns the generation of the
// grace period that starts now.
func (w *waiters) startGrace(id string) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	w.graces[id] = w.gen
	return w.gen
}

// graceExpired is called when the grace period gen of id runs out. It reports whether
// the prompt is now to be abandoned: gen is still the latest grace (no later hang-up
// restarted it) and nobody has re-attached.
func (w *waiters) graceExpired(id string, gen uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.graces[id] != gen {
		return false // a later hang-up started a fresh grace
	}
	delete(w.graces, id)
	return len(w.m[id]) == 0
}

func (w *waiters) add(id string) chan *models.Elicitation {
	c := make(chan *models.Elicitation, 1)
	w.mu.Lock()
	set := w.m[id]
	if set == nil {
		set = waiterSet{}
		w.m[id] = set
	}
	set[c] = struct{}{}
	w.mu.Unlock()
	return c
}

func (w *waiters) remove(id string, c chan *models.Elicitation) {
	w.mu.Lock()
	if set := w.m[id]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(w.m, id)
		}
	}
	w.mu.Unlock()
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
	signal(w.m[id], nil)
}

// wakeWith hands a row this process just decided to its waiters.
func (w *waiters) wakeWith(row *models.Elicitation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	signal(w.m[row.ID], row)
}

func signal(set waiterSet, row *models.Elicitation) {
	for c := range set {
		select {
		case c <- row:
		default: // already signalled
		}
	}
}
